"""Generator functions run the ordinary statements in a greenlet: each program here prints
what CPython prints running the same text as a script of its own (so a generator left
unfinished is closed at a real program end): yields inside nested loops, try/finally and
with; send, throw and close; yield from a generator and a list; return values; generators
in comprehensions. A runaway generator meets the time limit as other code does."""

from __future__ import annotations

import io
import pathlib
import subprocess
import sys

import pytest

from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses

HERE = pathlib.Path(__file__).parent / "generator_programs"
AUTODIFF = pathlib.Path(sys.executable).with_name("autodiff")


def cpython(path: pathlib.Path) -> str:
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def autodiff(path: pathlib.Path) -> str:
    out = io.StringIO()
    result = run_source(path.read_text(), path.name, out=out, err=io.StringIO())
    assert result.error is None, result.error.headline()
    return out.getvalue()


def test_send_throw_close_yield_from_and_return_values_are_cpythons():
    path = HERE / "protocol.tg"
    assert normalize_addresses(autodiff(path)) == normalize_addresses(cpython(path))


def test_generators_left_unfinished_close_as_cpythons_do_at_the_end():
    pytest.importorskip("torch")
    path = HERE / "unfinished_with_grad_mode.tg"
    expected = cpython(path)
    assert "cleanup a True" in expected.splitlines()[-3]  # (the program really ends with them)
    assert autodiff(path) == expected


def test_the_generator_object_shows_only_send_throw_and_close():
    source = "def g():\n    yield 1\nit = g()\nprint(it.send, it.throw, it.close)\nit.gi_frame\n"
    out = io.StringIO()
    result = run_source(source, "program.tg", out=out, err=io.StringIO())
    assert "bound method" in out.getvalue()
    assert result.error.error_class == "AttributeError" and "gi_frame" in result.error.message
    for name in ("_greenlet", "__next__", "_locals", "_rt"):
        source = f"def g():\n    yield 1\ng().{name}\n"
        result = run_source(source, "program.tg", out=io.StringIO(), err=io.StringIO())
        assert result.error.error_class == "AttributeError", name


def test_a_yield_inside_try_runs_its_finally_on_close():
    source = ("def g():\n    try:\n        yield 1\n    finally:\n        print('finally')\n"
              "it = g()\nprint(next(it))\nit.close()\nprint('closed')\n")
    out = io.StringIO()
    assert run_source(source, "program.tg", out=out, err=io.StringIO()).error is None
    assert out.getvalue() == "1\nfinally\nclosed\n"


@pytest.mark.parametrize("source,lines", [
    # the generator's own loop never yields
    ("def g():\n    n = 0\n    while True:\n        n += 1\n        if n < 0:\n            yield n\n"
     "for x in g():\n    print(x)\n", (3, 4, 5)),
    # its `finally` never ends, run by close() at the program's end
    ("def g():\n    try:\n        yield 1\n    finally:\n        while True:\n            pass\n"
     "it = g()\nprint(next(it))\n", (5, 6)),
    # the same, run when a loop's break drops it (inside __del__)
    ("def g():\n    try:\n        yield 1\n    finally:\n        while True:\n            pass\n"
     "for v in g():\n    break\n", (5, 6)),
])
def test_a_runaway_generator_is_stopped_by_the_time_limit(tmp_path, source, lines):
    path = tmp_path / "runaway.tg"
    path.write_text(source)
    done = subprocess.run([str(AUTODIFF), "run", "-q", "--timeout", "3", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert "TimeoutError" in done.stderr
    assert any(f"runaway.tg:{line}:" in done.stderr for line in lines), done.stderr


def test_a_generator_nested_in_generators_counts_toward_the_recursion_bound():
    source = ("def g(n):\n    if n:\n        yield from g(n - 1)\n    else:\n        yield n\n"
              "print(list(g(200)))\nprint(list(g(5000)))\n")
    out = io.StringIO()
    result = run_source(source, "program.tg", out=out, err=io.StringIO())
    assert out.getvalue() == "[0]\n"
    assert result.error.error_class == "RecursionError" and result.error.line == 3
