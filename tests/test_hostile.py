"""Limits, malformed files and signals, each through the installed console script."""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(shutil.which("autodiff") is None,
                                reason="console script not installed")


def autodiff(*args, timeout=60, **kwargs):
    return subprocess.run(["autodiff", "run", "--quiet", *map(str, args)], capture_output=True,
                          timeout=timeout, **kwargs)


def _one_clean_diagnostic(proc, code, *fragments):
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == code, (proc.returncode, err)
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err
    return err


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


# --- resource limits -----------------------------------------------------------------------

def test_max_memory(tmp_path):
    path = write(tmp_path, "big.tg", "print('before')\nx = torch.ones(20000, 20000)\n")
    proc = autodiff("--max-memory", "100M", path)
    assert proc.stdout == b"before\n"
    _one_clean_diagnostic(proc, 3, "big.tg:2:5: MemoryError", "[20000, 20000]",
                          "1,600,000,000 bytes")


def test_timeout(tmp_path):
    path = write(tmp_path, "loop.tg", "print(1)\nwhile True:\n    pass\n")
    start = time.monotonic()
    proc = autodiff("--timeout", "0.5", path)
    assert time.monotonic() - start < 20
    assert proc.stdout == b"1\n"
    _one_clean_diagnostic(proc, 3, "loop.tg:", "TimeoutError", "0.5 s")


def test_bad_limit_values_are_usage_errors(tmp_path):
    path = write(tmp_path, "ok.tg", "print(1)\n")
    _one_clean_diagnostic(autodiff("--max-memory", "lots", path), 2, "--max-memory")
    _one_clean_diagnostic(autodiff("--timeout", "-1", path), 2, "--timeout")


def test_deep_recursion(tmp_path):
    path = write(tmp_path, "rec.tg", "def f(n):\n    return f(n + 1)\nf(0)\n")
    _one_clean_diagnostic(autodiff(path), 1, "rec.tg:2:", "RecursionError")


def test_huge_integer(tmp_path):
    _one_clean_diagnostic(autodiff(write(tmp_path, "int.tg", "x = 10**10**10\n")), 3,
                          "int.tg:1:5: OverflowError")


def test_very_long_line(tmp_path):
    path = write(tmp_path, "long.tg", "x = " + " + ".join(["1"] * 50_000) + "\nprint(x)\n")
    proc = autodiff(path)
    assert proc.returncode in (0, 2) and b"Traceback" not in proc.stderr
    if proc.returncode == 0:
        assert proc.stdout == b"50000\n"


# blocks indent one space per level: 10,000 levels would make a 50 MB file
NESTING = {"parentheses": "x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n",
           "blocks": "".join(" " * i + "if True:\n" for i in range(2_000)) + " " * 2_000 + "pass\n",
           "lists": "x = " + "[" * 10_000 + "]" * 10_000 + "\n",
           "unary": "x = " + "-" * 10_000 + "1\n"}


@pytest.mark.parametrize("text", NESTING.values(), ids=NESTING.keys())
def test_deep_nesting(tmp_path, text):
    proc = autodiff(write(tmp_path, "deep.tg", text))
    err = _one_clean_diagnostic(proc, 2, "deep.tg:")
    assert len(err.splitlines()) <= 3


# --- malformed files -------------------------------------------------------------------------

def test_empty_file_runs_as_python_does(tmp_path):
    proc = autodiff(write(tmp_path, "empty.tg", ""))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


@pytest.mark.parametrize("name,data,fragment", [
    ("binary.tg", bytes(range(256)), "null bytes"),
    ("latin1.tg", "x = 'caf\xe9'\n".encode("latin-1"), "can't decode byte 0xe9"),
    ("tabs.tg", "if True:\n        x = 1\n\ty = 2\n", "TabError: inconsistent use of tabs and spaces"),
    ("string.tg", "print('unterminated)\n", "SyntaxError"),
    ("bracket.tg", "x = (1, 2\nprint(x)\n", "SyntaxError"),
    ("triple.tg", "x = '''never closed\n", "SyntaxError"),
])
def test_malformed_files_are_one_line_diagnostics(tmp_path, name, data, fragment):
    proc = autodiff(write(tmp_path, name, data))
    err = _one_clean_diagnostic(proc, 2, f"{name}:", fragment)
    assert err.splitlines()[0].startswith(f"{tmp_path / name}:")


@pytest.mark.parametrize("name,data", [("bom.tg", b"\xef\xbb\xbfprint(1)\n"),
                                       ("crlf.tg", b"x = 1\r\nif x:\r\n    print(x)\r\n")])
def test_bom_and_crlf_run(tmp_path, name, data):
    proc = autodiff(write(tmp_path, name, data))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"1\n", b"")


def test_missing_file_and_directory(tmp_path):
    _one_clean_diagnostic(autodiff(tmp_path / "nope.tg"), 2, "No such file or directory")
    _one_clean_diagnostic(autodiff(tmp_path), 2, "Is a directory")


# --- signals -------------------------------------------------------------------------------

@pytest.mark.parametrize("sig,code,message", [(signal.SIGTERM, 143, "autodiff: terminated"),
                                              (signal.SIGINT, 130, "autodiff: interrupted")])
def test_signals_end_the_run_cleanly(tmp_path, sig, code, message):
    path = write(tmp_path, "slow.tg", "print('started')\nwhile True:\n    x = 1\n")
    proc = subprocess.Popen(["autodiff", "run", "--quiet", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"started\n"  # flushed before the signal
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert err.decode().strip() == message


def test_graph_output_is_never_half_written(tmp_path):
    program = write(tmp_path, "g.tg", "x = torch.tensor([1.0], requires_grad=True)\n"
                                      "y = (x * x).sum()\ny.backward()\n")
    target = tmp_path / "g.dot"
    proc = subprocess.run(["autodiff", "graph", str(program), "-o", str(target)],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0
    assert target.read_text().rstrip().endswith("}")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_unprintable_string_is_a_program_error(tmp_path):
    """Found by fuzzing: a lone surrogate cannot be written to a UTF-8 stdout (as in Python)."""
    proc = autodiff(write(tmp_path, "surrogate.tg", "print('ok')\nprint('\\ud800')\n"))
    assert proc.stdout == b"ok\n"
    _one_clean_diagnostic(proc, 1, "surrogate.tg:2:", "UnicodeEncodeError")
