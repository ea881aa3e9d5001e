"""The Python forms learners write that .tg takes since issue 29, against CPython itself:
annotations (variables at each level, parameters, returns), positional-only `/`, starred
assignment targets, unpacking in list/tuple/set displays and `**` in dict displays. Each
program prints what CPython 3.11 prints running the same text (`python -I -S`, a script of
its own), stops with CPython's error, or is refused at compile time with CPython's
SyntaxError and position. The forms autodiff leaves out (`1j`, `except*`, relative imports,
`:=`) are refused by name, with a caret, before anything runs.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from autodiff.interpreter import bounds, run_source
from autodiff.text.diagnostics import EXIT_LIMIT, EXIT_SYNTAX

# CPython's words changed in 3.12 ("parameter without a default follows ..."): the language
# follows 3.11's
cpython_311 = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="CPython 3.11's words")


def cpython(source: str) -> tuple[str, str, int]:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", source], capture_output=True,
                          text=True, timeout=60)
    return done.stdout, done.stderr, done.returncode


def autodiff(source: str):
    out = io.StringIO()
    result = run_source(source, "program.tg", out=out, err=io.StringIO())
    return out.getvalue(), result.error


PROGRAMS = {
    "module annotations": "a: int = 1\nb: list = [a]\nc: float\nprint(a, b)\n",
    "annotations evaluated in order": (
        "def p(x):\n    print('eval', x)\n    return x\n"
        "v: p('ann') = p('value')\n(w): p('paren') = 2\nu: p('bare')\n"
        "d = {}\nd['k']: p('sub') = 3\nprint(v, w, d)\n"),
    "def-time annotations in CPython's order": (
        "def p(x):\n    print(x)\n    return x\n"
        "def f(a: p('a') = p('da'), /, b: p('b') = p('db'), *c: p('c'), d: p('d') = p('dd'),"
        " **e: p('e')) -> p('ret'):\n    return a, b, c, d, e\nprint(f(d=1))\n"),
    "function-level annotations are not evaluated": (
        "def f():\n    x: undefined_name = 1\n    y: also_undefined\n    return x\nprint(f())\n"),
    "an annotated name without value is local": (
        "x = 'global'\ndef f():\n    x: int\n    try:\n        print(x)\n"
        "    except UnboundLocalError as e:\n        print(e)\nf()\n"),
    "an annotated name without value binds nothing": (
        "x: int\ntry:\n    print(x)\nexcept NameError as e:\n    print(e)\n"),
    "an undefined name in a module annotation": (
        "try:\n    y: undefined_name = 3\nexcept NameError as e:\n    print(e, y)\n"),
    "an undefined name in a parameter annotation": (
        "try:\n    def f(a: undefined2):\n        pass\nexcept NameError as e:\n    print(e)\n"),
    "class-level annotations": (
        "class A:\n    x: int = 3\n    y: list\n    def m(self) -> int:\n        return self.x\n"
        "print(A().m(), A.x)\n"),
    "annotated attribute and subscript targets": (
        "class A:\n    pass\na = A()\na.v: int = 5\nl = [0, 1]\nl[0]: int = 9\nprint(a.v, l)\n"),
    "annotations of *args and **kwargs": (
        "def f(*args: int, **kw: float) -> None:\n    print(args, kw)\nf(1, 2, k=3.0)\n"),
    "positional-only parameters": (
        "def f(a, b=2, /, c=3, *, d=4):\n    return a, b, c, d\n"
        "print(f(1), f(1, 5), f(1, 5, c=6), f(1, d=0))\n"),
    "a positional-only name can go to **kwargs": (
        "def f(a, /, **kw):\n    return a, kw\nprint(f(1, a=2))\n"),
    "positional-only in a lambda": "g = lambda a, /, b=1: a + b\nprint(g(1), g(1, b=5))\n",
    "positional-only in a method": (
        "class A:\n    def m(self, x, /):\n        return x * 2\nprint(A().m(4))\n"),
    "starred assignment": (
        "a, *b = [1, 2, 3]\n*c, d = (1, 2, 3)\ne, *f, g = 'xyz'\nh, *i = [1]\n[j, *k] = range(4)\n"
        "*l, = {5}\nprint(a, b, c, d, e, f, g, h, i, j, k, l)\n"),
    "starred assignment from a generator": (
        "def gen():\n    yield 1\n    yield 2\n    yield 3\nfirst, *rest = gen()\nprint(first, rest)\n"),
    "starred targets nested and in for": (
        "for a, *b in [(1, 2, 3), (4,)]:\n    print(a, b)\n"
        "(x, *y), z = [1, 2], 3\nprint(x, y, z)\n"
        "print([(p, q) for p, *q in ['ab', 'c']])\n"),
    "starred target into attributes and items": (
        "class A:\n    pass\na = A()\nd = {}\na.first, *d['rest'] = [1, 2, 3]\nprint(a.first, d)\n"),
    "unpacking in displays": (
        "a = [1, 2]\nb = (3,)\nprint([*a, *b], [0, *a, 9], (*a, *b), (*a,), {*a, *b, 1})\n"
        "print([*'ab', *range(2), *{'k': 1}])\n"),
    "unpacking in return, for and yield": (
        "def f(a):\n    return 0, *a\ndef g(a):\n    yield *a, 1\nfor x in *'ab', 'c':\n    print(x)\n"
        "print(f([1, 2]), list(g([5])))\n"),
    "** in dict displays": (
        "a = {'x': 1, 'y': 2}\nprint({**a, 'y': 3}, {'y': 0, **a}, {**a, **{'z': 4}}, {**{}})\n"
        "print({**{1: 'a'}, 1: 'b'}, {'k': 1, **{'k': 2}, 'k': 3})\n"),
    "unpacking in a call after the change": (
        "def f(*args, **kw):\n    return args, kw\nprint(f(*[1, 2], *(3,), **{'a': 1}, b=2))\n"),
}

ERRORS = {
    "posonly by keyword": "def f(a, /, b):\n    return a\nf(a=1, b=2)\n",
    "two posonly by keyword": "def g(a, b=2, /, c=3, *, d):\n    return a\ng(a=1, b=2, d=1)\n",
    "posonly by keyword after an unexpected one": "def f(a, /):\n    pass\nf(z=1, a=2)\n",
    "too many with posonly": "def g(a, b=2, /, c=3, *, d):\n    return a\ng(1, 2, 3, 4, d=1)\n",
    "missing posonly": "def g(a, /):\n    return a\ng()\n",
    "posonly method by keyword": "class A:\n    def m(self, x, /):\n        pass\nA().m(x=1)\n",
    "not enough for a starred target": "a, *b, c = [1]\n",
    "not enough from a generator": "def g():\n    yield 1\na, b, *c = g()\n",
    "starred target of a non-iterable": "a, *b = 5\n",
    "too many values": "a, b = [1, 2, 3]\n",
    "too many values from an endless generator":
        "def g():\n    while True:\n        yield 1\na, b = g()\n",
    "list display of a non-iterable": "a = [1]\nx = [0, *a, *5]\n",
    "tuple display of a non-iterable": "x = (*None,)\n",
    "set display of a non-iterable": "x = {0, *3}\n",
    "dict display of a non-mapping": "a = 1\nx = {'k': 0, **a}\n",
    "dict display of a list": "x = {**[1, 2]}\n",
    "dict display with an unhashable key": "x = {**{}, []: 1}\n",
}

SYNTAX_ERRORS = {
    "x = *a", "*a = [1]", "a, *b, *c = [1]", "print((*a))", "*a", "def f():\n    return *a",
    "del *a", "*a += 1", "a, b: int", "[a, b]: int", "(a, b): int = 1, 2", "def f(a, /, /): pass",
    "def f(/, a): pass", "def f(*, a, /): pass", "def f(a=1, /, b): pass",
    "def f(a, *args, /): pass", "def f(**kw, /): pass", "lambda /: 0", "for *a in x: pass",
    "a, *(b + 1) = c", "def f(a, /, a): pass", "f(x) = 1", "(a), b: int", "a.b, c: int",
    "1: int", "f(): int", "a, *f() = c", "for a, *f() in x: pass", "lambda a, /, /: 0",
    "lambda *, a, /: 0", "lambda a=1, /, b: 0", "[x for *a in y]", "x = [*a for a in b]",
    "x = {**a for a in b}", "x = {*a for a in b}", "x = (*a for a in b)",
    "def f():\n    yield *a",
}

REFUSALS = [
    ("print(1j)\n", "complex numbers are not supported by autodiff", 1, 7, 9),
    ("x = 2.5J + 1\n", "complex numbers are not supported by autodiff", 1, 5, 9),
    ("x = 1e3j\n", "complex numbers are not supported by autodiff", 1, 5, 9),
    ("print(1)\nfrom . import helpers\n",
     "relative imports are not supported by autodiff: a .tg program is one file", 2, 6, 7),
    ("from ..models import Net\n",
     "relative imports are not supported by autodiff: a .tg program is one file", 1, 6, 14),
    ("from ... import x\n",
     "relative imports are not supported by autodiff: a .tg program is one file", 1, 6, 9),
    ("try:\n    pass\nexcept* ValueError:\n    pass\n", "except* is not supported by autodiff",
     3, 1, 8),
    ("if (n := 3) > 2:\n    print(n)\n",
     "assignment expressions (':=') are not supported by autodiff", 1, 7, 8),
    ("print([y for x in range(3) if (y := x * 2) > 1])\n",
     "assignment expressions (':=') are not supported by autodiff", 1, 34, 35),
]


@cpython_311
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_form_prints_what_cpython_prints(name):
    source = PROGRAMS[name]
    expected, problem, code = cpython(source)
    assert code == 0, problem
    printed, error = autodiff(source)
    assert error is None, error.headline()
    assert printed == expected


@cpython_311
@pytest.mark.parametrize("name", ERRORS)
def test_an_error_is_cpythons(name):
    source = ERRORS[name]
    expected_out, problem, code = cpython(source)
    assert code == 1 and "Traceback" in problem
    printed, error = autodiff(source)
    assert error is not None, printed
    assert printed == expected_out
    assert f"{error.error_class}: {error.message}" == problem.strip().splitlines()[-1]


def _cpython_syntax_error(source: str) -> SyntaxError:
    try:
        compile(source, "program.tg", "exec")
    except SyntaxError as exc:
        return exc
    raise AssertionError(f"CPython compiles {source!r}")


@cpython_311
@pytest.mark.parametrize("source", sorted(SYNTAX_ERRORS))
def test_a_syntax_error_is_cpythons_with_its_position(source):
    expected = _cpython_syntax_error(source + "\n")
    printed, error = autodiff(source + "\n")
    assert error is not None and printed == ""
    assert (error.error_class, error.message) == ("SyntaxError", expected.msg)
    assert (error.line, error.col, error.end_line, error.end_col) == (
        expected.lineno, expected.offset, expected.end_lineno, expected.end_offset)
    assert error.exit_code == EXIT_SYNTAX


@pytest.mark.parametrize("source,message,line,col,end_col", REFUSALS)
def test_a_form_autodiff_leaves_out_is_refused_by_name(source, message, line, col, end_col):
    printed, error = autodiff(source)
    assert printed == ""  # refused before anything runs
    assert (error.error_class, error.message) == ("SyntaxError", message)
    assert (error.line, error.col, error.end_col) == (line, col, end_col)
    assert error.exit_code == EXIT_SYNTAX
    rendered = error.render(source)
    assert rendered.startswith(f"program.tg:{line}:{col}:") and "^" in rendered
    assert "Traceback" not in rendered


@pytest.mark.parametrize("source,kind", [
    ("def g():\n    while True:\n        yield 0\nfirst, *rest = g()\n", "list"),
    ("def g():\n    while True:\n        yield 0\nx = [*g()]\n", "list"),
    ("def g():\n    while True:\n        yield 0\nx = (1, *g())\n", "tuple"),
    ("def g():\n    i = 0\n    while True:\n        i += 1\n        yield i\nx = {*g()}\n", "set"),
    ("a = list(range(600))\nx = [*a, *a]\n", "list"),
])
def test_unpacking_builds_no_unbounded_list(source, kind, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_ITEMS", 1000)
    printed, error = autodiff(source)
    assert error is not None and error.error_class == "MemoryError", error
    assert f"a {kind} of " in error.message and "over the limit of 1,000" in error.message
    assert error.exit_code == EXIT_LIMIT


def test_unpacking_within_the_bound_runs(monkeypatch):
    monkeypatch.setattr(bounds, "MAX_ITEMS", 1000)
    printed, error = autodiff("a = list(range(500))\nx, *y = [*a, *a]\nprint(len(y))\n")
    assert error is None and printed == "999\n"


def test_the_new_forms_with_torch_print_what_pytorch_prints():
    pytest.importorskip("torch")  # the reference runs where torch is installed
    source = (
        "import torch\nclass Net(torch.nn.Module):\n    hidden: int = 4\n"
        "    def __init__(self, n: int, /, *, bias: bool = True) -> None:\n"
        "        super().__init__()\n"
        "        self.fc: torch.nn.Linear = torch.nn.Linear(n, self.hidden, bias=bias)\n"
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return self.fc(x)\n"
        "net = Net(3, bias=False)\nfirst, *rest = net(torch.ones(2, 3))\n"
        "print(first.shape, len(rest), [*net.fc.weight.shape], {**{'n': net.hidden}})\n")
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    printed, error = autodiff(source)
    assert error is None, error.headline()
    assert printed == done.stdout
