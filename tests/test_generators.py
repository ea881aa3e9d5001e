"""Generator functions run the ordinary statements in a greenlet: each program here prints
what CPython prints running the same text as a script of its own (so a generator left
unfinished is closed at a real program end): yields inside nested loops, try/finally and
with; send, throw and close; yield from a generator and a list; return values; generators
in comprehensions. A runaway generator meets the time limit as other code does."""

from __future__ import annotations

import io
import pathlib
import signal
import subprocess
import sys
import threading

import pytest

from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses

HERE = pathlib.Path(__file__).parent / "generator_programs"
AUTODIFF = pathlib.Path(sys.executable).with_name("autodiff")


def cpython(path: pathlib.Path, site: bool = False) -> str:
    # -I -S: no site hooks, which can change the order a script's leftovers are dropped in
    flags = [] if site else ["-I", "-S"]
    done = subprocess.run([sys.executable, *flags, str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def autodiff(path: pathlib.Path) -> str:
    out = io.StringIO()
    result = run_source(path.read_text(), path.name, out=out, err=io.StringIO())
    assert result.error is None, result.error.headline()
    return out.getvalue()


@pytest.mark.parametrize("name", ["protocol.tg", "nested_blocks.tg", "unfinished_order.tg",
                                  "unfinished_containers.tg"])
def test_generator_programs_print_what_cpython_prints(name):
    # protocol: send/throw/close, yield from, return values; nested_blocks: yields in
    # while/for/if/try-except-else-finally; unfinished_order: the order generators left
    # suspended are closed in at the end (globals, object attributes, containers)
    path = HERE / name
    assert normalize_addresses(autodiff(path)) == normalize_addresses(cpython(path))


def test_generators_left_unfinished_close_as_cpythons_do_at_the_end():
    pytest.importorskip("torch")
    path = HERE / "unfinished_with_grad_mode.tg"
    expected = cpython(path, site=True)  # (torch lives in site-packages)
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


def test_a_resume_refused_by_the_recursion_bound_ends_that_generator_only():
    # its suspended stack must not be handed to the next generator that starts
    source = ("def g():\n    try:\n        yield 1\n        print('old body')\n        yield 2\n"
              "    finally:\n        print('old finally')\nit = g()\nnext(it)\n"
              "def deep(n):\n    if n == 0:\n        return next(it)\n    return deep(n - 1)\n"
              "try:\n    deep(999)\nexcept RecursionError:\n    print('recursion')\n"
              "def h():\n    yield 'new'\nprint(list(h()))\nprint(list(it))\n")
    out = io.StringIO()
    assert run_source(source, "program.tg", out=out, err=io.StringIO()).error is None
    assert out.getvalue() == "recursion\n['new']\n[]\n"


def test_an_error_inside_a_generator_is_a_diagnostic_at_its_line(tmp_path):
    path = tmp_path / "failing.tg"
    path.write_text("def g():\n    yield 1\n    x = [1, 2][5]\n    yield x\nfor v in g():\n"
                    "    print(v)\n")
    done = subprocess.run([str(AUTODIFF), "run", "-q", path.name], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "1\n"
    assert done.stderr.startswith("failing.tg:3:9: IndexError: list index out of range")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_and_sigterm_stop_a_program_inside_a_generator(tmp_path, signum, code):
    path = tmp_path / "endless.tg"
    path.write_text("def g():\n    n = 0\n    while True:\n        n += 1\n        yield n\n"
                    "print('start', flush=True)\nfor x in g():\n    pass\n")
    child = subprocess.Popen([str(AUTODIFF), "run", "-q", str(path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "start\n"
    child.send_signal(signum)
    _, err = child.communicate(timeout=60)
    assert child.returncode == code and "Traceback" not in err, err


def test_a_thread_run_meets_its_deadline_and_its_session_inside_generators():
    # outside the main thread the deadline is an asynchronous exception, and the engine
    # session is a contextvar of the run's thread: both reach the generator's greenlet
    # (grad mode switched off by the program: a body run in any other session sees it on)
    source = ("import torch\ndef modes():\n    with torch.enable_grad():\n"
              "        yield torch.is_grad_enabled()\n    yield torch.is_grad_enabled()\n"
              "torch.set_grad_enabled(False)\nprint(list(modes()))\n"
              "def g():\n    while True:\n        yield 1\nfor x in g():\n    pass\n")
    done = {}

    def run() -> None:
        out = io.StringIO()
        done["result"] = run_source(source, "thread.tg", out=out, err=io.StringIO(), timeout=1)
        done["out"] = out.getvalue()
    worker = threading.Thread(target=run)
    worker.start()
    worker.join(60)
    assert done["out"] == "[True, False]\n"
    error = done["result"].error
    assert error.error_class == "TimeoutError" and error.line in (9, 10, 11, 12), error.line


def test_greenlet_is_imported_only_by_a_program_with_a_generator():
    check = ("import io, sys\nfrom autodiff.interpreter import run_source\n"
             "run_source('def f():\\n    return 1\\nprint(f())\\n', out=io.StringIO())\n"
             "print('greenlet' in sys.modules)\n"
             "run_source('def f():\\n    yield 1\\nprint(list(f()))\\n', out=io.StringIO())\n"
             "print('greenlet' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout == "False\nTrue\n", done.stderr
