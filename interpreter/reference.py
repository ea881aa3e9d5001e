"""Run a .tg program under the reference implementation: real PyTorch.

This runs the program text as real Python, outside autodiff's sandbox: that is the
reference's purpose. A program that is not valid .tg is refused first (`ReferenceRefused`,
see reference_gate.py), and the run gets only the language's builtins.

The contract (shared/spec/tg-language.md) says a .tg program must print exactly
what ``python`` prints for the same text with PyTorch installed, with
``import torch`` prepended when the program lacks it, after replacing object
addresses ``0x[0-9a-f]+`` by a fixed token.  This module produces that reference
output.  It never imports torch itself: the program runs in a child Python
process, so importing this module works on machines without torch.

How the program is run
----------------------
The source is written to a temporary file and executed by a small runner script
(``_RUNNER`` below) with ``exec(compile(source, "<path>", "exec"), namespace)``
in a fresh ``__main__``-like namespace whose builtins are the language's, after the
runner's checks (reference_gate.CHILD_GATE) accept the text as CPython parses it.
Instead of editing the text to prepend ``import torch`` (which would shift every
line number, or break a first line that opens a compound statement), the runner
binds ``torch`` in that namespace before executing, exactly as a prepended
``import torch`` would.  Line numbers in
the traceback (which goes to ``ReferenceResult.stderr``) are therefore the
program's own.  A program "lacks" ``import torch`` when it has no plain
``import torch`` statement (``import torch.nn as nn`` alone does not count,
just as in Python, where it binds only ``nn``).

The child runs with ``OMP_NUM_THREADS=1`` and ``MKL_NUM_THREADS=1`` (stable float
reductions), ``PYTHONHASHSEED=0`` and ``PYTHONIOENCODING=utf-8``, in a temporary
working directory.  Its stdout is the golden text; stderr (warnings, the
traceback) is kept apart and is not part of the golden.

Errors
------
When the program raises, the runner records Python's own one-line rendering of
the exception, ``traceback.format_exception_only`` -- i.e. the last line of the
traceback, ``ErrorClass: message`` (non-builtin classes keep their module
prefix, as in a traceback, e.g. ``torch._C._LinAlgError: ...``).  Should the
message span several lines, only its first line (the one naming the class) is
kept, so ``error`` is always a single line.  The exit code is then 1.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from autodiff.parser import TgError, parse
from autodiff.parser import ast as tg_ast

from .reference_gate import CHILD_GATE, REFUSED, check_program, language_surface

__all__ = [
    "ADDRESS_RE",
    "ADDRESS_TOKEN",
    "ReferenceResult",
    "ReferenceRunError",
    "ReferenceRefused",
    "ReferenceTimeout",
    "normalize_addresses",
    "has_torch_import",
    "torch_available",
    "run_with_torch",
    "run_many_with_torch",
]

ADDRESS_RE = re.compile(r"0x[0-9a-f]+")
ADDRESS_TOKEN = "0xADDR"


def normalize_addresses(text: str) -> str:
    """Replace every ``0x[0-9a-f]+`` (object addresses) with ``0xADDR``."""
    return ADDRESS_RE.sub(ADDRESS_TOKEN, text)


@dataclass
class ReferenceResult:
    """Outcome of running one program under real PyTorch."""

    stdout: str  # address-normalized stdout, exact text otherwise
    exit_code: int  # 0 when the program ran to the end, 1 when it raised
    error: str | None  # "ErrorClass: message" (one line) when it raised, else None
    stderr: str = field(default="", repr=False)  # raw stderr: warnings, traceback


class ReferenceRunError(RuntimeError):
    """The reference run itself could not be carried out (not a program error)."""


class ReferenceTimeout(ReferenceRunError):
    """The program did not finish within the timeout."""


class ReferenceRefused(ReferenceRunError):
    """The program is not valid .tg, so it was not run as real Python; its text is the
    diagnostic (`FILE:LINE:COL: Class: message`, the source line, a caret)."""

    def __init__(self, error: TgError, source: str) -> None:
        super().__init__(error.render(source))
        self.error = error


def refuse_unless_tg(source: str, filename: str) -> None:
    """Raise ReferenceRefused unless autodiff's parser, compiler and name checks accept it."""
    error = check_program(source, filename)
    if error is not None:
        raise ReferenceRefused(error, source)


def _child_refusal(diagnostic: dict, source: str, filename: str) -> ReferenceRefused:
    """The child's gate refused the text as CPython reads it."""
    error = TgError(REFUSED, diagnostic["message"], filename=filename, line=diagnostic["line"],
                    col=diagnostic["col"], end_col=diagnostic["end_col"])
    return ReferenceRefused(error, source)


def _write_child_files(tmp: str, runner_text: str) -> tuple[str, str]:
    """The runner script and the language surface it checks against, in `tmp`."""
    runner, surface = os.path.join(tmp, "_tg_runner.py"), os.path.join(tmp, "surface.json")
    with open(runner, "w", encoding="utf-8") as f:
        f.write(runner_text)
    with open(surface, "w", encoding="utf-8") as f:
        json.dump(language_surface(), f)
    return runner, surface


def _run_child(cmd: list[str], cwd: str, timeout: float | None, what: str):
    """Run the torch child process, turning a hang or a missing Python into our errors."""
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=cwd, env=_child_env(), timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise ReferenceTimeout(f"{what} did not finish within {timeout:g} s") from exc
    except OSError as exc:
        raise ReferenceRunError(f"cannot start {cmd[0]!r}: {exc}") from exc


def torch_available() -> bool:
    """True when ``torch`` can be imported by this interpreter (not imported here)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


_IMPORT_TORCH_LINE = re.compile(r"^[ \t]*import[ \t]+torch[ \t]*(?:#.*)?$", re.MULTILINE)


def has_torch_import(source: str) -> bool:
    """Whether the program has its own plain ``import torch`` statement.

    Read with autodiff's parser, not Python's: compile() can fail spuriously in CPython 3.11
    while another thread changes the recursion limit (see interpreter._RECURSION_LIMIT)."""
    try:
        tree = parse(source, "<program>")
    except TgError:
        return bool(_IMPORT_TORCH_LINE.search(source))
    return any(type(node) is tg_ast.Import and node.module == "torch" and node.asname is None
               for node in tg_ast.walk(tree))


# The runner executed in the child process.  argv: program path, error file,
# "1" if torch must be bound first, file name shown in tracebacks, the language surface
# (JSON).  Exit codes: 0 ok, 1 program raised, 3 the runner could not even start the
# program (reported as ReferenceRunError), 4 the gate refused it (its diagnostic, as JSON,
# in the error file).
_RUNNER = r'''
import json, sys, traceback
_path, _errfile, _prepend, _shown = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
try:
    with open(_path, encoding="utf-8") as _f:
        _source = _f.read()
    with open(sys.argv[5], encoding="utf-8") as _f:
        _SURFACE = json.load(_f)
except BaseException:
    traceback.print_exc()
    sys.exit(3)
''' + CHILD_GATE + r'''
_refused = _refusal(_source, _shown)
if _refused is not None:
    with open(_errfile, "w", encoding="utf-8") as _f:
        json.dump(_refused, _f)
    sys.exit(4)
_ns = _run_namespace()
import linecache  # lets the traceback quote the program's lines under its shown name
linecache.cache[_shown] = (len(_source), None, _source.splitlines(True), _shown)
try:
    # Compiling first mirrors `python prog.py`: a syntax error runs nothing.
    _code = compile(_source, _shown, "exec")
    if _prepend:
        exec("import torch", _ns)
    exec(_code, _ns)
except SystemExit as _e:
    # as `python prog.py` does: exit(None/0) is success, exit(n) exits n.
    if _e.code is None or _e.code == 0:
        sys.stdout.flush()
        sys.exit(0)
    _failed = _e
except BaseException as _e:
    _failed = _e
else:
    _failed = None
if _failed is not None:
    _e = _failed
    sys.stdout.flush()
    _cls = type(_e)
    _name = _cls.__qualname__
    if _cls.__module__ not in ("builtins", "__main__"):
        _name = _cls.__module__ + "." + _name
    _lines = "".join(traceback.format_exception_only(_cls, _e)).splitlines()
    _line = next((l for l in _lines if l == _name or l.startswith(_name + ": ")),
                 _lines[-1] if _lines else _name)
    with open(_errfile, "w", encoding="utf-8") as _f:
        _f.write(_line)
    _tb = _e.__traceback__
    while _tb is not None and _tb.tb_frame.f_code.co_filename == __file__:
        _tb = _tb.tb_next  # hide the runner's own frames, as a plain run shows none
    traceback.print_exception(_cls, _e, _tb)
    sys.stderr.flush()
    sys.exit(1)
sys.stdout.flush()
'''


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONHASHSEED="0",
        PYTHONIOENCODING="utf-8",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("PYTHONSTARTUP", None)
    env.pop("PYTHONINSPECT", None)
    return env


def run_with_torch(
    source: str,
    *,
    timeout: float = 60.0,
    python: str = sys.executable,
    filename: str = "<program>",
) -> ReferenceResult:
    """Run the program text under real PyTorch in a subprocess.

    Returns the address-normalized stdout, the exit code (0 ok, 1 the program
    raised) and the one-line ``ErrorClass: message``.  Raises ``ReferenceRefused``
    (before running anything) when the text is not valid .tg,
    ``ReferenceTimeout`` when the program runs past ``timeout`` seconds and
    ``ReferenceRunError`` when the child cannot run it at all (e.g. no such
    interpreter, or the child died without a Python exception).  ``filename``
    is only the name shown in the traceback kept in ``stderr``.
    """
    refuse_unless_tg(source, filename)
    prepend = not has_torch_import(source)
    with tempfile.TemporaryDirectory(prefix="tg-ref-") as tmp:
        prog = os.path.join(tmp, "program.tg")
        errfile = os.path.join(tmp, "error.txt")
        with open(prog, "w", encoding="utf-8", newline="") as f:
            f.write(source)
        runner, surface = _write_child_files(tmp, _RUNNER)
        cmd = [python, runner, prog, errfile, "1" if prepend else "0", filename, surface]
        proc = _run_child(cmd, tmp, timeout, "program")
        stdout = proc.stdout.decode("utf-8", errors="replace")
        stderr = proc.stderr.decode("utf-8", errors="replace")
        error: str | None = None
        if os.path.exists(errfile):
            with open(errfile, encoding="utf-8", errors="replace") as f:
                error = f.read().strip("\n") or None
    if proc.returncode == 0:
        return ReferenceResult(normalize_addresses(stdout), 0, None, stderr)
    if proc.returncode == 1 and error is not None:
        return ReferenceResult(normalize_addresses(stdout), 1, error, stderr)
    if proc.returncode == 4 and error is not None:
        raise _child_refusal(json.loads(error), source, filename)
    tail = stderr.strip().splitlines()[-1:] or ["(no stderr)"]
    raise ReferenceRunError(
        f"reference run failed with exit code {proc.returncode}: {tail[0]}"
    )


# The batch runner: one child process, one `import torch`, many programs.  argv:
# a JSON file of [{"source", "prepend", "shown"}, ...] and a results file that
# receives one JSON line per program as soon as it finishes (so a crash names
# the program that caused it).  Each program runs in a fresh namespace with
# stdout and stderr captured separately and grad mode reset to enabled.
_BATCH_RUNNER = r"""
import io, json, linecache, sys, traceback, warnings
_jobs_path, _results_path = sys.argv[1], sys.argv[2]
with open(_jobs_path, encoding="utf-8") as _f:
    _jobs = json.load(_f)
with open(sys.argv[3], encoding="utf-8") as _f:
    _SURFACE = json.load(_f)
import torch
""" + CHILD_GATE + r"""
_real_out, _real_err = sys.stdout, sys.stderr

def _error_line(_e):
    _cls = type(_e)
    _name = _cls.__qualname__
    if _cls.__module__ not in ("builtins", "__main__"):
        _name = _cls.__module__ + "." + _name
    _lines = "".join(traceback.format_exception_only(_cls, _e)).splitlines()
    return next((l for l in _lines if l == _name or l.startswith(_name + ": ")),
                _lines[-1] if _lines else _name)

with open(_results_path, "w", encoding="utf-8") as _results:
    for _job in _jobs:
        _source, _shown = _job["source"], _job["shown"]
        _refused = _refusal(_source, _shown)
        if _refused is not None:
            _results.write(json.dumps({"refused": _refused}) + "\n")
            _results.flush()
            continue
        linecache.cache[_shown] = (len(_source), None, _source.splitlines(True), _shown)
        _ns = _run_namespace()
        _out, _err = io.StringIO(), io.StringIO()
        _code, _error = 0, None
        torch.set_grad_enabled(True)
        sys.stdout, sys.stderr = _out, _err
        try:
            with warnings.catch_warnings():
                warnings.resetwarnings()  # a fresh process's filters, each program anew
                _compiled = compile(_source, _shown, "exec")
                if _job["prepend"]:
                    exec("import torch", _ns)
                exec(_compiled, _ns)
        except SystemExit as _e:
            if not (_e.code is None or _e.code == 0):
                _code = _e.code if isinstance(_e.code, int) else 1
        except BaseException as _e:
            _code, _error = 1, _error_line(_e)
            _tb = _e.__traceback__
            while _tb is not None and _tb.tb_frame.f_code.co_filename != _shown:
                _tb = _tb.tb_next
            traceback.print_exception(type(_e), _e, _tb, file=_err)
        finally:
            sys.stdout, sys.stderr = _real_out, _real_err
            linecache.cache.pop(_shown, None)
        _results.write(json.dumps({"stdout": _out.getvalue(), "stderr": _err.getvalue(),
                                   "exit_code": _code, "error": _error}) + "\n")
        _results.flush()
"""


def run_many_with_torch(
    sources: list[str],
    *,
    timeout: float | None = None,
    python: str = sys.executable,
    filenames: list[str] | None = None,
) -> list[ReferenceResult]:
    """Run many programs under real PyTorch in ONE subprocess (torch is imported once).

    Each program gets what ``run_with_torch`` gives it -- a fresh ``__main__``
    namespace, ``torch`` bound unless it imports it itself, grad mode enabled,
    fresh warning filters -- and its own captured stdout, stderr and one-line
    ``ErrorClass: message``.  State that lives inside torch (e.g. the random
    generator, the default dtype) is shared by the programs of one batch.  A
    program ending with ``exit(n)``, n != 0, gets exit code n and no error.
    ``timeout`` bounds the whole batch (default: 60 s plus 2 s per program);
    past it ``ReferenceTimeout`` is raised, and ``ReferenceRunError`` when the
    child dies (e.g. a crash inside torch), naming the program it was running.
    ``ReferenceRefused`` names the first program that is not valid .tg (none runs
    when the parent's checks refuse one).
    """
    sources = list(sources)
    if filenames is None:
        filenames = [f"<program {i}>" for i in range(len(sources))]
    if len(filenames) != len(sources):
        raise ValueError("filenames must name each source once")
    if timeout is None:
        timeout = 60.0 + 2.0 * len(sources)
    for source, shown in zip(sources, filenames):
        refuse_unless_tg(source, shown)
    jobs = [{"source": src, "prepend": not has_torch_import(src), "shown": shown}
            for src, shown in zip(sources, filenames)]
    with tempfile.TemporaryDirectory(prefix="tg-ref-batch-") as tmp:
        jobs_path = os.path.join(tmp, "jobs.json")
        results_path = os.path.join(tmp, "results.jsonl")
        with open(jobs_path, "w", encoding="utf-8") as f:
            json.dump(jobs, f)
        runner, surface = _write_child_files(tmp, _BATCH_RUNNER)
        proc = _run_child([python, runner, jobs_path, results_path, surface], tmp, timeout,
                          "batch")
        rows = []
        if os.path.exists(results_path):
            with open(results_path, encoding="utf-8") as f:
                rows = [json.loads(line) for line in f if line.endswith("\n")]
    if proc.returncode != 0 or len(rows) != len(sources):
        tail = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:]
        where = f" while running {filenames[len(rows)]}" if len(rows) < len(sources) else ""
        raise ReferenceRunError(
            f"batch reference run failed with exit code {proc.returncode}{where}: "
            f"{tail[0] if tail else '(no stderr)'}"
        )
    for row, source, shown in zip(rows, sources, filenames):
        if "refused" in row:
            raise _child_refusal(row["refused"], source, shown)
    return [ReferenceResult(normalize_addresses(r["stdout"]), r["exit_code"], r["error"],
                            r["stderr"]) for r in rows]
