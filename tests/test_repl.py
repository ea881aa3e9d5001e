"""`autodiff repl`: Python's console machinery, our parser judging completeness, state kept
between inputs, the views from inside; driven through a pseudo-terminal as a person would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autodiff.cli.repl import Completer, Session

EXE = shutil.which("autodiff")


def test_state_is_kept_not_replayed() -> None:
    s = Session()
    # a random draw is made once: printing it twice shows the same numbers, and a replay
    # of the session would have printed "drawn" again
    assert s.submit('torch.manual_seed(0)\nr = torch.rand(2)\nprint("drawn")') == ("drawn\n", "")
    first = s.submit("r")[0]
    assert s.submit("r")[0] == first
    s.submit("x = torch.tensor([1.0, 2.0], requires_grad=True)")
    s.submit("(x * x).sum().backward()")
    s.submit("(x * x).sum().backward()")  # .grad accumulates: 2x twice
    assert s.submit("x.grad")[0] == "tensor([4., 8.])\n"


def test_strings_holding_brackets_and_errors() -> None:
    s = Session()
    assert s.submit('print("(")') == ("(\n", "")
    out, err = s.submit("nope + 1")
    assert out == "" and "1:1: NameError: name 'nope' is not defined" in err
    assert s.submit("None") == ("", "")
    assert s.submit("exit")[0] == "Use exit() or Ctrl-D (i.e. EOF) to exit\n"
    assert ":graph NAME" in s.submit("help")[0]


def test_views_from_inside() -> None:
    s = Session()
    s.submit("x = torch.tensor(3.0, requires_grad=True)")
    s.submit("y = x * x")
    s.submit("y.backward()")
    assert s.submit(":graph y")[0].startswith("MulBackward0  y line 2  [] float32")
    assert "x.grad += 3 + 3 = 6, the sum over 2 paths" in s.submit(":explain")[0]
    assert "grad   tensor(6.)" in s.submit(":report x")[0]
    assert s.submit(":graph nope")[1].startswith(":graph: --root nope: no top-level tensor")
    assert s.submit(":explain 5")[1].startswith(":explain: --call 5: the program makes 1")
    assert "unknown command :draw" in s.submit(":draw y")[1]


def test_completion_of_names_and_tensor_attributes() -> None:
    s = Session()
    s.submit("x = torch.ones(2, requires_grad=True)")
    complete = Completer(s).candidates
    assert complete("x.requires_") == ["x.requires_grad", "x.requires_grad_"]
    assert "torch.ones" in complete("torch.on")
    assert "x" in complete("") and "print" in complete("pri")
    assert complete("x._") == [] and complete("x.__class__.") == []


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_piped_input_has_no_prompts() -> None:
    done = subprocess.run([EXE, "repl"], input='x = torch.ones(2)\nx + 1\nprint("(")\n',
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0
    assert done.stdout == "tensor([2., 2.])\n(\n"
    assert ">>>" not in done.stdout + done.stderr


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_piped_nested_blocks_run_as_one_input() -> None:
    """A block inside a block (`if` in a def, a method in a class) is read to its blank line,
    as Python's console reads it; a real indentation error still says so at once."""
    source = ("def f(x):\n    if x:\n        return 1\n    return 2\n\nprint(f(1), f(0))\n"
              "class A:\n    def __repr__(self):\n        return 'an A'\n\nA()\n"
              "class B:\n    def f(self):\n        return 'f'\n    def g(self):\n"
              "        return 'g'\n\nprint(B().f(), B().g())\n"
              "try:\n    1 / 0\nexcept ZeroDivisionError:\n    print('caught')\nfinally:\n"
              "    print('finally')\n\n"
              "for i in range(2):\n    for j in range(2):\n        print(i, j, end=' ')\n\n"
              "def g():\nprint('after')\n")
    done = subprocess.run([EXE, "repl"], input=source, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.stdout == ("1 2\nan A\nf g\ncaught\nfinally\n"
                           "0 0 0 1 1 0 1 1 ")  # (the bad def and its line: dropped)
    assert done.stderr.startswith("<stdin>:2:1: IndentationError: expected an indented block "
                                  "after line 1")


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_piped_decorated_methods_and_annotations_read_to_the_blank_line() -> None:
    """A decorator line in a class body ends the input's indented block, not the input."""
    source = ("class T:\n    @property\n    def v(self) -> int:\n        return 3\n"
              "    @v.setter\n    def v(self, value: int):\n        print('set', value)\n\n"
              "t = T()\nt.v = 5\nprint(t.v)\nfirst, *rest = [1, 2, 3]\nprint(rest)\n")
    done = subprocess.run([EXE, "repl"], input=source, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert (done.stdout, done.stderr) == ("set 5\n3\n[2, 3]\n", "")


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_a_session_in_a_pseudo_terminal(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(EXE, ["repl"], encoding="utf-8", timeout=60, dimensions=(40, 120),
                          env={**os.environ, "NO_COLOR": "1", "HOME": str(tmp_path),
                               "TERM": "xterm"})
    try:
        child.expect_exact(">>> ")
        child.sendline("def double(a):")
        child.expect_exact("... ")
        child.sendline("    return a * 2")
        child.expect_exact("... ")
        child.sendline("")
        child.expect_exact(">>> ")
        child.sendline("x = torch.tensor([1.0, 2.0], requires_grad=True)")
        child.expect_exact(">>> ")
        child.sendline('print("(")')
        child.expect_exact("(\r\n>>> ")  # a bracket inside a string asks for no more input
        child.send("x.requires_\t")  # readline completes to the common prefix (with a bell:
        child.expect("x\\.requires_\x07?grad")  # requires_grad and requires_grad_ both fit)
        child.sendline("")
        child.expect_exact("True\r\n>>> ")
        child.sendline("y = double(x).sum()")
        child.expect_exact(">>> ")
        child.sendline(":graph y")
        child.expect_exact("SumBackward0  y line 6  [] float32")  # the session's 6th line
        child.expect_exact("AccumulateGrad → x [2] float32  line 3")
        child.expect_exact(">>> ")
        child.sendline("exit()")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert (tmp_path / ".autodiff_history").read_text().count("exit()") == 1
