"""Grammar-aware fuzz inputs for .tg programs, and the invariant every run must keep.

Inputs come from two sources, both driven by a `random.Random`:
- programs generated from a small grammar of the language (statements, expressions,
  tensor calls, attribute chains including dunders, odd literals), and
- mutations of the sample programs (cut, duplicate, swap, insert tokens or bytes).

The invariant (autodiff's promise for any input): the run ends without an exception of
ours, with exit status 0, 1 or 2, a rendered diagnostic when it fails, stdout that is
valid UTF-8, and within the time limit.
"""

from __future__ import annotations

import io
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "samples").glob("*.tg"))

NAMES = ["x", "y", "w", "b", "loss", "g", "t", "i", "n", "f", "torch", "F", "math", "print",
         "len", "range", "open", "getattr", "__import__", "type", "eval"]
ATTRS = ["grad", "grad_fn", "data", "shape", "dtype", "T", "requires_grad", "is_leaf",
         "next_functions", "variable", "sum", "mean", "backward", "detach", "item", "tolist",
         "__class__", "__globals__", "__dict__", "_version", "array", "format", "append",
         "ones", "tensor", "zeros", "arange", "relu", "softmax", "autograd", "no_grad"]
CALLS = ["torch.tensor([1.0, 2.0], requires_grad=True)", "torch.ones(2, 3)",
         "torch.zeros(3)", "torch.arange(4.0)", "torch.randn(2, 2)", "torch.eye(2)",
         "torch.tensor(2.0, requires_grad=True)", "torch.full((2,), 7)",
         "torch.linspace(0, 1, 5)", "torch.tensor([[1, 2], [3, 4]])"]
OPS = ["+", "-", "*", "/", "//", "%", "**", "@", "<", ">", "==", "!=", "and", "or", "is",
       "in", "&", "|"]
LITERALS = ["0", "1", "-1", "2.5", "1e308", "1e-320", "10**10", "True", "None", "...",
            "'s'", "\"{0.__class__}\"", "f'{x}'", "[1, 2]", "(1,)", "[]", "()", "10**10**10",
            "'\\ud800'", "float('nan')", "2**63", "-0.0"]
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


def generated_program(rng: random.Random) -> str:
    prelude = "x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)\ny = (x * x).sum()\n"
    return prelude + "".join(statement(rng) for _ in range(1 + rng.randrange(6)))


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


def fuzz_input(rng: random.Random) -> str:
    return generated_program(rng) if rng.random() < 0.5 else mutated_sample(rng)


def check_invariant(text: str, timeout: float = 2.0) -> str | None:
    """Run `text` as the CLI does (in-process); None if every promise holds, else why not."""
    from autodiff.interpreter import run_source

    # a strict UTF-8 stream, as the real stdout is: printing a lone surrogate must fail
    # as a program error (as in Python), never as a crash
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="\n")
    err = io.StringIO()
    try:
        result = run_source(text, "fuzz.tg", out=out, err=err, timeout=timeout)
        out.flush()
    except BaseException as exc:  # noqa: BLE001 - anything escaping is a traceback of ours
        return f"escaped {type(exc).__name__}: {exc}"
    try:
        raw.getvalue().decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"stdout is not valid UTF-8: {exc}"
    if result.error is not None:
        if result.error.exit_code not in (1, 2):
            return f"exit code {result.error.exit_code}"
        try:
            rendered = result.error.render(text)
        except BaseException as exc:  # noqa: BLE001
            return f"diagnostic failed to render: {type(exc).__name__}: {exc}"
        if not rendered.startswith("fuzz.tg:") or "Traceback" in rendered:
            return f"malformed diagnostic: {rendered[:200]!r}"
    return None
