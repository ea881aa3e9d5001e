"""Grammar-aware fuzz inputs for .tg programs, and the invariant every run must keep.

Inputs come from two sources, both driven by a `random.Random`:
- programs generated from a small grammar of the language (statements, expressions,
  tensor calls, attribute chains including dunders, odd literals, the hostile inputs of
  issue 15: huge format widths, bad escapes, junk assigned to tensor attributes, class
  objects called with any `self`), and
- mutations of the sample programs (cut, duplicate, swap, insert tokens or bytes).
With `slow`, statements that only the process guard can stop (loops in C such as
`sum(range(10**12))`) are mixed in too: for the campaign, not for the CI run.

The invariant (autodiff's promise for any input): the run ends without an exception of
ours, with exit status 0, 1, 2 or 3, a rendered diagnostic when it fails, stdout that is
valid UTF-8, and within the time limit (tests/fuzz_campaign.py checks every command so).
"""

from __future__ import annotations

import io
import random
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "samples").glob("*.tg"))

NAMES = ["x", "y", "w", "b", "loss", "g", "t", "i", "n", "f", "torch", "F", "math", "print",
         "len", "range", "open", "getattr", "__import__", "type", "eval"]
ATTRS = ["parameters", "zero_grad", "step", "forward", "weight", "state_dict", "apply",
         "register_hook", "modules", "param_groups", "grad", "grad_fn", "data", "shape", "dtype", "T", "requires_grad", "is_leaf",
         "next_functions", "variable", "sum", "mean", "backward", "detach", "item", "tolist",
         "__class__", "__globals__", "__dict__", "_version", "array", "format", "append",
         "ones", "tensor", "zeros", "arange", "relu", "softmax", "autograd", "no_grad",
         "join", "replace", "numel", "expand", "clone", "Size", "Tensor", "add", "size"]
CALLS = ["torch.tensor([1.0, 2.0], requires_grad=True)", "torch.ones(2, 3)",
         "torch.zeros(3)", "torch.arange(4.0)", "torch.randn(2, 2)", "torch.eye(2)",
         "torch.tensor(2.0, requires_grad=True)", "torch.full((2,), 7)",
         "torch.linspace(0, 1, 5)", "torch.tensor([[1, 2], [3, 4]])",
         "torch.tensor([2**63])", "torch.tensor([10**4000])", "torch.tensor([1.0, 2**63])",
         "torch.Size([10**30000] * 20)", "torch.Size([2**62] * 20)", "torch.Tensor.add(1, 2)",
         "torch.Size.numel([1, 2])", "torch.ones(1).expand(20000, 20000)",
         "torch.where(torch.ones(3, 1) > 0, torch.ones(1, 3), 0.0)", "'ab' * 10**6",
         "round(123, -10**9)", "torch.ones(2, 3).expand(4, 2, 3)",
         # the model library: layers, losses, optimisers, functional autograd, hooks
         "torch.nn.Linear(3, 2)", "torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.ReLU())",
         "torch.nn.MSELoss()", "torch.optim.SGD([x], lr=0.1)", "torch.optim.Adam([x])",
         "torch.autograd.functional.jacobian(f, x)", "torch.autograd.functional.hessian(f, x)",
         "torch.func.grad(f)", "x.register_hook(f)", "torch.nn.Linear(10**6, 10**6)",
         "torch.autograd.functional.jacobian(f, torch.ones(10**5))",
         "torch.nn.functional.mse_loss(x, x)"]
OPS = ["+", "-", "*", "/", "//", "%", "**", "@", "<", ">", "==", "!=", "and", "or", "is",
       "in", "&", "|"]
LITERALS = ["0", "1", "-1", "2.5", "1e308", "1e-320", "10**10", "True", "None", "...",
            "'s'", "\"{0.__class__}\"", "f'{x}'", "[1, 2]", "(1,)", "[]", "()", "10**10**10",
            "'\\ud800'", "float('nan')", "2**63", "-0.0", "'\\N{bogus}'", "'\\N'",
            "'\\U00110000'", "'\\x4'", "'\\N{DEGREE SIGN}'", "f'{1:{2:{3}}}'",
            "f\"{'':>1000000000}\"", "'%*d' % (10**9, 1)", "'{:>1000000000}'.format(1)",
            "'a' * 10**7 + 'a' * 10**7", "''.join(['a' * 10**6] * 11)",
            "('a' * 10**4).replace('', 'a' * 10**4)", "7" * 5000, "'\u2028'",
            "1 ** 1 ** 1 ** 1 ** 1", "f'{x:>{n}}'"]
SLOW = ["print(sum(range(10**12)))", "print(max(range(10**12)))", "x = list(range(10**9))",
        "x = [[0] * 10**7] * 10**7\nprint(len(str(x)))", "while True:\n    pass",
        "print(sum([[0]] * 10**6, []))",
        "def h(g):\n    while True:\n        pass\nx.register_hook(h)\n(x * 2).sum().backward()"]
TOKENS = ["(", ")", "[", "]", ":", ",", ".", "=", "\n", "    ", "\t", "#", "'", "\"", "\\",
          "def", "if", "else", "while", "for", "in", "return", "with", "import", "lambda",
          "class", "@", "**", "->", "\x00", "\ufeff", "\r\n", "é", "λ"]


def expression(rng: random.Random, depth: int = 0) -> str:
    kind = rng.randrange(8 if depth < 4 else 3)
    if kind == 0:
        return rng.choice(NAMES)
    if kind == 1:
        return rng.choice(LITERALS)
    if kind == 2:
        return rng.choice(CALLS)
    if kind == 3:
        return f"{expression(rng, depth + 1)} {rng.choice(OPS)} {expression(rng, depth + 1)}"
    if kind == 4:
        return f"{expression(rng, depth + 1)}.{rng.choice(ATTRS)}"
    if kind == 5:
        args = ", ".join(expression(rng, depth + 1) for _ in range(rng.randrange(3)))
        return f"{expression(rng, depth + 1)}({args})"
    if kind == 6:
        return f"{expression(rng, depth + 1)}[{rng.choice(['0', '-1', ':', '1:', 'None', '...', '[0, 0]', 'x > 0'])}]"
    return f"({expression(rng, depth + 1)})"


def statement(rng: random.Random, indent: str = "", depth: int = 0) -> str:
    kind = rng.randrange(10 if depth < 3 else 5)
    target = rng.choice(["x", "y", "w", "loss", "g", "x[0]", "x.grad", "a, b"])
    if kind == 0:
        return f"{indent}{target} = {expression(rng)}\n"
    if kind == 1:
        return f"{indent}print({expression(rng)})\n"
    if kind == 2:
        return f"{indent}{target} {rng.choice(['+=', '-=', '*=', '/=', '@=', '**='])} {expression(rng)}\n"
    if kind == 3:
        return f"{indent}{expression(rng)}\n"
    if kind == 4:
        return f"{indent}{rng.choice(['y.backward()', 'x.grad.zero_()', 'pass', 'break', 'return x', 'import os', 'import torch', 'assert x'])}\n"
    inner = indent + "    "
    body = "".join(statement(rng, inner, depth + 1) for _ in range(1 + rng.randrange(3)))
    header = rng.choice([f"if {expression(rng)}:", f"while {expression(rng)}:",
                         f"for i in {rng.choice(['range(3)', 'x', '[1, 2]', 'range(10**9)'])}:",
                         "def f(a, b=1):", "with torch.no_grad():", "with torch.enable_grad():"])
    return f"{indent}{header}\n{body}"


def hostile_statement(rng: random.Random) -> str:
    """Assignments to tensor attributes, long elif chains, a line separator in a comment."""
    kind = rng.randrange(6)
    if kind == 4:
        return ("m = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
                f"for i in range({rng.choice([3, 300])}):\n    opt.zero_grad()\n"
                "    m(x).sum().backward()\n    opt.step()\n")
    if kind == 5:
        return "s = torch.nn.Sequential(torch.nn.ReLU())\ns.append(s)\nprint(s(x))\n"
    if kind == 0:
        return (f"{rng.choice(['x', 'y', 'w'])}.{rng.choice(['requires_grad', 'data', 'grad'])} = "
                f"{expression(rng)}\n")
    if kind == 1:
        chain = "".join(f"elif x is {i}:\n    pass\n" for i in range(rng.randrange(1, 300)))
        return f"if x is None:\n    pass\n{chain}else:\n    print('chain')\n"
    if kind == 2:
        return f"# a comment\u2028{expression(rng)}\n{expression(rng)}\n"
    return f"y = x\nfor i in range({rng.choice([10, 500, 3000])}):\n    y = y * 1.0\ny.sum().backward()\n"


def generated_program(rng: random.Random, slow: bool = False) -> str:
    prelude = "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)\ny = (x * x).sum()\n"
    lines = []
    for _ in range(1 + rng.randrange(6)):
        roll = rng.random()
        if slow and roll < 0.01:
            lines.append(rng.choice(SLOW) + "\n")
        elif roll < 0.2:
            lines.append(hostile_statement(rng))
        else:
            lines.append(statement(rng))
    return prelude + "".join(lines)


def mutated_sample(rng: random.Random) -> str:
    text = rng.choice(SAMPLES).read_text()
    for _ in range(1 + rng.randrange(4)):
        if not text:
            break
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        choice = rng.randrange(5)
        if choice == 0:
            text = text[:i] + text[j:]  # cut
        elif choice == 1:
            text = text[:i] + text[i:j] * 2 + text[j:]  # duplicate
        elif choice == 2:
            text = text[:i] + rng.choice(TOKENS) + text[i:]  # insert a token
        elif choice == 3:
            text = text[:i] + expression(rng) + text[j:j + 1] + text[j + 1:]  # splice an expression
        else:
            lines = text.splitlines(keepends=True)
            rng.shuffle(lines)  # reorder lines
            text = "".join(lines)
    return text


def fuzz_input(rng: random.Random, slow: bool = False) -> str:
    return generated_program(rng, slow) if rng.random() < 0.5 else mutated_sample(rng)


def check_invariant(text: str, timeout: float = 2.0) -> str | None:
    """Run `text` as `autodiff run --quiet` does, in a guarded child process (so a loop in C
    cannot hang the caller); None if every promise holds, else why not."""
    from autodiff.cli.guard import GRACE, Lost, ProcessLimits, call_in_child

    start = time.monotonic()
    try:
        problem = call_in_child(lambda: _invariant_in_process(text, timeout),
                                ProcessLimits(timeout, None))
    except Lost as lost:
        return f"the run did not end by itself: {lost.reason}"
    if time.monotonic() - start > timeout + GRACE + 1:
        return f"took {time.monotonic() - start:.1f} s with a {timeout} s limit"
    return problem


# The memory each fuzzed run may use: a program that builds a 1.6 GB tensor is refused at
# once rather than computed for seconds (past the deadline on a slow machine, where the
# guard kills it and the run looks lost).
FUZZ_MAX_BYTES = 256 * 2**20


def _invariant_in_process(text: str, timeout: float) -> str | None:
    from autodiff.engine.core.session import Session
    from autodiff.interpreter import run_source

    # a strict UTF-8 stream, as the real stdout is: printing a lone surrogate must fail
    # as a program error (as in Python), never as a crash
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="\n")
    err = io.StringIO()
    try:
        result = run_source(text, "fuzz.tg", out=out, err=err, timeout=timeout,
                            session=Session(max_bytes=FUZZ_MAX_BYTES, timeout=timeout))
        out.flush()
    except BaseException as exc:  # noqa: BLE001 - anything escaping is a traceback of ours
        return f"escaped {type(exc).__name__}: {exc}"
    try:
        raw.getvalue().decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"stdout is not valid UTF-8: {exc}"
    if result.error is not None:
        if result.error.exit_code not in (1, 2, 3):
            return f"exit code {result.error.exit_code}"
        try:
            rendered = result.error.render(text)
        except BaseException as exc:  # noqa: BLE001
            return f"diagnostic failed to render: {type(exc).__name__}: {exc}"
        if not rendered.startswith("fuzz.tg:") or "Traceback" in rendered:
            return f"malformed diagnostic: {rendered[:200]!r}"
    return None
