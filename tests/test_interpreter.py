"""Interpreter semantics. Pure-Python programs are checked against CPython running the same
text (exec is used here, in the test, only as an oracle); tensor programs inject real torch."""

import contextlib
import io
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autodiff.interpreter import MathNamespace, permissive_policy, run_source

ROOT = Path(__file__).resolve().parent.parent
PURE = {"torch": None, "math": MathNamespace()}


def run(src, modules=PURE, policy=None):
    out = io.StringIO()
    result = run_source(src, "prog.tg", out=out, modules=modules, attribute_policy=policy)
    return out.getvalue(), result


def cpython(src):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(src, "oracle", "exec"), {"__builtins__": __builtins__})  # test oracle only
    return out.getvalue()


PROGRAMS = {
    "loops": "s = 0\nfor i in range(10):\n    if i % 2:\n        continue\n    if i > 7:\n        break\n"
             "    s += i\nn = 0\nwhile n < 5:\n    n += 1\nprint(s, n)\n",
    "functions": "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n"
                 "def g(a, b=10, c=20):\n    return a + b * c\n"
                 "print(fib(12), g(1), g(1, 2), g(1, c=3), g(c=1, a=2))\n"
                 "def nothing():\n    pass\nprint(nothing())\n",
    "unpacking": "a, b = 1, 2\n(c, d) = [3, 4]\na, b = b, a\nx, (y, z) = 1, (2, 3)\nprint(a, b, c, d, x, y, z)\n"
                 "for i, (p, q) in enumerate(zip([1, 2], 'ab')):\n    print(i, p, q)\n",
    "fstrings": "v = 3.14159\nname = 'x'\nw = 8\n"
                "print(f'{v:.3f}|{name!r}|{v:>{w}.2f}|{{braces}}|{1 + 2}|{[1, 2]}')\n",
    "compare": "x = 1\nprint(1 < 2 < 3, 1 < 3 < 2, 1 == 1.0, None is None, x is not None, 2 in [1, 2], 3 not in (1,))\n"
               "print(0 or 'a', 1 and 0, not 0, 'x' if 0 else 'y')\n",
    "print_args": "print(1, 'a', [1, 'b'], (1,), sep=' | ', end='!\\n')\nprint()\nprint('a', 'b', sep='')\n",
    "arith": "print(-2**2, 2**-1, 2**3**2, 7 // 2, -7 // 2, 7 % 3, 7 / 2, 1e-3, .5, 2., 0x10)\n"
             "x = [1, 2, 3]\nx.append(4)\nprint(x.pop(), x, x[1:], x[::-1], len(x), sum(x), max(x), min(x, key=None))\n"
             "print(round(2.675, 2), abs(-3), int('7'), float(2), bool([]), str(1.5), list((1, 2)), tuple([3]))\n"
             "print(isinstance(1, int), isinstance(1.0, (int, float)), 'a,b'.split(','), ', '.join(['x', 'y']))\n",
    "strings": "s = 'Hi\\tthere\\n'\nprint(s.strip().upper(), \"{} + {}\".format(1, 2), 'ab' 'cd', '''tri\nple''')\n",
    "scope": "g = 1\ndef f():\n    x = g + 1\n    return x\nprint(f(), g)\n",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_cpython(name):
    src = PROGRAMS[name]
    out, result = run(src)
    assert result.error is None, result.error and result.error.render(src)
    assert out == cpython(src)


def test_math_namespace():
    out, result = run("import math\nprint(math.sqrt(16.0), math.pi, math.e, math.exp(0), math.log(1))\n")
    assert result.error is None and out == "4.0 3.141592653589793 2.718281828459045 1.0 0.0\n"


@pytest.mark.parametrize("src, cls, message, line, col", [
    ("print(1)\nprint(y)\n", "NameError", "name 'y' is not defined", 2, 7),
    ("x = 1 / 0\n", "ZeroDivisionError", "division by zero", 1, 5),
    ("def f(a, b):\n    return a\nf(1)\n", "TypeError", "f() missing 1 required positional argument: 'b'", 3, 1),
    ("def f(a):\n    return a\nf(1, 2)\n", "TypeError", "f() takes 1 positional argument but 2 were given", 3, 1),
    ("def f(a):\n    return a\nf(b=1)\n", "TypeError", "f() got an unexpected keyword argument 'b'", 3, 1),
    ("assert 1 == 2, 'nope'\n", "AssertionError", "nope", 1, 8),
    ("a, b = [1, 2, 3]\n", "ValueError", "too many values to unpack (expected 2)", 1, 1),
    ("x = [1]\nx[5]\n", "IndexError", "list index out of range", 2, 1),
    ("def f():\n    y = y + 1\nf()\n", "UnboundLocalError",
     "cannot access local variable 'y' where it is not associated with a value", 2, 9),
    ("def r(n):\n    return r(n + 1)\nr(0)\n", "RecursionError", "maximum recursion depth exceeded", 2, 12),
])
def test_runtime_errors(src, cls, message, line, col):
    out, result = run(src)
    e = result.error
    assert (e.error_class, e.message, e.line, e.col, e.exit_code) == (cls, message, line, col, 1)


def test_output_before_error_is_kept_and_caret_spans_call():
    src = "print('before')\nx = [1, 2]\ny = len(x, x)\n"
    out, result = run(src)
    assert out == "before\n"
    assert result.error.render(src).splitlines()[2] == "        ^^^^^^^^^"


def test_syntax_errors_come_back_in_result():
    out, result = run("x = (1 +\n")
    assert result.error.exit_code == 2 and result.globals == {}


def test_break_outside_loop_and_return_outside_function():
    assert run("break\n")[1].error.message == "'break' outside loop"
    assert run("return 1\n")[1].error.message == "'return' outside function"


def test_globals_in_order_and_first_assignment_lines():
    _, result = run("a = 1\nb = 2\na = 3\nfor i in range(2):\n    c = i\n")
    assert [k for k in result.globals if k != "torch"] == ["a", "b", "i", "c"]
    assert result.assigned_lines == {"a": 1, "b": 2, "i": 4, "c": 5}


def test_deep_expression_is_a_clean_error():
    _, result = run("x = " + "-" * 5000 + "1\n")
    assert result.error is not None and result.error.exit_code == 2


# ---- with real torch injected ----

@pytest.fixture
def torch_modules():
    torch = pytest.importorskip("torch")
    return {"torch": torch, "torch.nn": torch.nn, "torch.nn.functional": torch.nn.functional,
            "math": MathNamespace()}


TORCH_PROGRAM = """import torch
import torch.nn.functional as F
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 2).sum()
y.backward()
print(x.grad, y.grad_fn.name())
with torch.no_grad():
    z = x * 2
print(z.requires_grad, torch.is_grad_enabled())
w = x.detach().clone()
w += 1
w[0] = 10.0
print(w, F.relu(torch.tensor([-1.0, 1.0])))
for row in torch.eye(2):
    print(row)
print(f"{y:.2f}", isinstance(y, torch.Tensor))
"""


def test_torch_program_matches_python(torch_modules):
    out, result = run(TORCH_PROGRAM, torch_modules, permissive_policy)
    assert result.error is None, result.error.render(TORCH_PROGRAM)
    assert out == cpython(TORCH_PROGRAM)
    assert type(result.globals["x"]).__name__ == "Tensor"


def test_torch_error_positioned_at_call(torch_modules):
    src = "import torch\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n"
    _, result = run(src, torch_modules, permissive_policy)
    e = result.error
    assert (e.error_class, e.line, e.col) == ("RuntimeError", 4, 1)
    assert e.message == "grad can be implicitly created only for scalar outputs"


# Programs whose state would leak between threads if any of it were process-wide: grad mode
# switched off for good, a seeded random stream, a memory limit, a deadline.
GRAD_OFF = ("x = torch.ones(2, requires_grad=True)\ntorch.set_grad_enabled(False)\nn = 0\n"
            "for i in range(3000):\n    n = n + int((x * 2).requires_grad)\n"
            "print(n, torch.is_grad_enabled())\n")
GRAD_ON = GRAD_OFF.replace("torch.set_grad_enabled(False)", "torch.set_grad_enabled(True)")
BIG = "y = torch.ones(1000, 1000)\nprint(y.sum())\n"
SPIN = "x = 0\nwhile True:\n    x = x + 1\n"
# one program inside inference mode while the other never enters it: each tensor made is an
# inference tensor exactly in the first
COUNT_INFERENCE = ("n = 0\nfor i in range({count}):\n"
                   "    n = n + int(torch.ones(1).is_inference())\nprint(n)\n")
IN_INFERENCE = ("with torch.inference_mode():\n"
                + "".join("    " + line + "\n" for line in
                          COUNT_INFERENCE.format(count=6000).splitlines()))
NEVER_INFERENCE = COUNT_INFERENCE.format(count=3000)
THREADED_EXPECTED = {GRAD_OFF: "0 False\n", GRAD_ON: "3000 True\n",
                     BIG: "tensor(1000000.)\n", IN_INFERENCE: "6000\n", NEVER_INFERENCE: "0\n"}


def test_threaded_programs_print_what_torch_prints():
    """The expected outputs of the threaded test's own programs are PyTorch's."""
    torch_python = pytest.importorskip("torch") and sys.executable
    for source, expected in THREADED_EXPECTED.items():
        done = subprocess.run([torch_python, "-c", "import torch\n" + source],
                              capture_output=True, text=True, timeout=120)
        assert done.stdout == expected, done.stderr


def test_ten_programs_in_ten_threads_keep_their_own_state():
    """Grad mode, inference mode, random streams, memory limits and deadlines belong to each
    run: ten runs started together in one process each print exactly their golden."""
    from autodiff.engine.core.session import Session
    from autodiff.interpreter.reference import normalize_addresses

    samples = ROOT / "samples"

    def sample(name):
        return ((samples / f"{name}.tg").read_text("utf-8"),
                (samples / f"{name}.out").read_text("utf-8"))

    runs = [  # (source, expected stdout, expected error class, session settings)
        (*sample("grad_mode_switches"), None, {}),
        (*sample("random_seeded_values"), None, {}),
        (*sample("random_autograd_mlp"), None, {}),
        (GRAD_OFF, THREADED_EXPECTED[GRAD_OFF], None, {}),
        (GRAD_ON, THREADED_EXPECTED[GRAD_ON], None, {"timeout": 60}),
        (BIG, THREADED_EXPECTED[BIG], None, {"max_bytes": 10**8}),
        (BIG, "", "MemoryError", {"max_bytes": 10**6}),
        (IN_INFERENCE, THREADED_EXPECTED[IN_INFERENCE], None, {}),
        (NEVER_INFERENCE, THREADED_EXPECTED[NEVER_INFERENCE], None, {}),
        (SPIN, "", "TimeoutError", {"timeout": 0.5}),
    ]
    start = threading.Barrier(len(runs))
    results: list = [None] * len(runs)

    def work(i, source, settings):
        out = io.StringIO()
        session = Session(max_bytes=settings.get("max_bytes"))
        start.wait()
        result = run_source(source, f"p{i}.tg", out=out, err=io.StringIO(),
                            timeout=settings.get("timeout"), session=session)
        results[i] = (normalize_addresses(out.getvalue()), result.error)

    threads = [threading.Thread(target=work, args=(i, source, settings))
               for i, (source, _, _, settings) in enumerate(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    for (source, expected, error_class, _), (printed, error) in zip(runs, results):
        assert printed == normalize_addresses(expected), source
        assert (error and error.error_class) == error_class, (source, error)
    spin_error = results[-1][1]
    assert spin_error.line in (2, 3) and "0.5 s" in spin_error.message


@pytest.mark.parametrize("src, expected", [
    ("import torch\nx = 1\n", True), ("x = 1\n", False), ("import torch as t\n", False),
    ("def f():\n    import torch\n    return 1\n", True), ("import torch.nn as nn\n", False),
    ("import torch  # broken below\ny = [\n", True), ("y = [\n", False)])
def test_has_torch_import_reads_the_program_with_our_parser(src, expected):
    from autodiff.interpreter.reference import has_torch_import
    assert has_torch_import(src) is expected
