"""`autodiff test`: golden-output testing of .tg programs.

Every NAME.tg found under the given paths is checked against the expected files beside
it: NAME.out, its stdout with object addresses written 0xADDR, and NAME.err, the one
line `ErrorClass: message` when the program must fail (no NAME.err: it must run to the
end). A program with neither file is skipped. Programs run in a process pool; each runs
inside a worker through `run_source`, with the limits of `autodiff run` and a timeout.

The Typer command is one call into `golden_tests`. tests/test_samples.py calls
`check_program` and `run_suite`; tests/make_goldens.py and `--reference torch` write
goldens through the same `update_expected`.
"""

from __future__ import annotations

import difflib
import io
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from autodiff.text.diagnostics import TgError
from autodiff.text.i18n import N_, _

from .golden_files import Unreadable, discover, expected_paths, is_regular, read_regular, read_text
from .golden_report import (
    FAILED,
    PASSED,
    SKIPPED,
    CaseResult,
    Suite,
    json_summary,
    junit_xml,
    print_failures,
)
from .guard import ProcessLimits
from .limits import DEFAULT_TIMEOUT, RunLimits, applied, process_limits
from .outcome import EXIT_FAILED, EXIT_OK, ToolError, UsageError, guarded
from .source import display_name

__all__ = ["Expected", "CaseResult", "Suite", "UpdateResult", "DEFAULT_TIMEOUT", "discover",
           "expected_paths", "read_expected", "run_program", "check_program", "run_suite",
           "expected_from_autodiff", "expected_from_torch", "sync_expected", "update_expected",
           "unified_diff", "junit_xml", "json_summary", "golden_tests"]

REFERENCES = ("autodiff", "torch")
TORCH_WARNING = N_("autodiff: warning: --reference torch runs each program as real Python with "
                   "PyTorch: only a program whose every name is of the .tg language runs, "
                   "behind the walls docs/security.md describes")


@dataclass
class Expected:
    """What a program prints (addresses normalized) and its error line, None for success."""

    stdout: str | None
    error: str | None
    hints: str = field(default="", compare=False)  # the hint block after the error (stderr)


# --- expected files (cli/golden_files.py finds and reads them) ----------------------

def read_expected(program: Path) -> Expected | None:
    """The expected files of a program, or None when it has neither (it is skipped); raises
    Unreadable for an expected file that is not text."""
    out_path, err_path = expected_paths(program)
    has_out, has_err = os.path.lexists(out_path), os.path.lexists(err_path)  # a link counts
    if not has_out and not has_err:
        return None
    stdout = read_text(out_path) if has_out else None
    error = read_text(err_path).rstrip("\r\n") if has_err else None
    return Expected(stdout, error)


# --- running and comparing (inside a worker) -----------------------------------------

def _error_line(error: TgError) -> str:
    """`ErrorClass: message`, the message's first line only (as the reference keeps torch's:
    a message may go on, e.g. torch's list of a function's signatures). A lone surrogate,
    which no file can hold, is its escape `\\udXXX` (as NAME.err written by --update)."""
    line = f"{error.error_class}: {error.message}" if error.message else error.error_class
    line = line.splitlines()[0] if line else line
    return line.encode("utf-8", "backslashreplace").decode("utf-8")


def run_program(program: Path, timeout: float | None = DEFAULT_TIMEOUT) -> tuple[Expected, str]:
    """Run a program as `autodiff run --quiet` does; its actual output, and its warnings.
    Raises Unreadable for a program that is not a regular file (a link is not followed)."""
    from autodiff.interpreter import run_source
    from autodiff.interpreter.reference import normalize_addresses
    from autodiff.interpreter.hints import hint_block

    from .source import MAX_SOURCE_BYTES, source_from_bytes
    from .trace import Capture

    data = read_regular(program, MAX_SOURCE_BYTES)
    try:
        source = source_from_bytes(data, display_name(program))
    except TgError as exc:
        return Expected("", _error_line(exc)), ""
    out, err = Capture(), io.StringIO()
    result = run_source(source.text, source.filename, out=out, err=err, timeout=timeout)
    error = None if result.error is None else _error_line(result.error)
    hints = "" if result.error is None else hint_block(result.error, source.text)
    return Expected(normalize_addresses(out.getvalue()), error, hints), err.getvalue()


def unified_diff(expected: str, actual: str, expected_name: str, actual_name: str) -> str:
    """A unified diff that marks a missing final newline, as git does."""
    lines = difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                 f"{expected_name} (expected)", f"{actual_name} (actual)")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _compare(program: Path, want: Expected, got: Expected) -> tuple[str, str]:
    """(reason, diff); an empty reason means the program passed."""
    program_name, out_path, err_path = map(display_name, (program, *expected_paths(program)))
    reasons, diffs = [], []
    if want.stdout is not None and got.stdout != want.stdout:
        reasons.append(f"stdout differs from {out_path}")
        diffs.append(unified_diff(want.stdout, got.stdout, out_path, f"{program_name} stdout"))
    if got.error != want.error:
        if want.error is None:
            reasons.append(f"raised {got.error.split(':')[0]}, but there is no {err_path}")
        elif got.error is None:
            reasons.append(f"ran to the end, but {err_path} expects an error")
        else:
            reasons.append(f"error differs from {err_path}")
        diffs.append(unified_diff(f"{want.error}\n" if want.error is not None else "",
                                  f"{got.error}\n" if got.error is not None else "",
                                  err_path, f"{program_name} error") + got.hints)
    return "; ".join(reasons), "".join(diffs)


def check_program(program: str | Path, timeout: float | None = DEFAULT_TIMEOUT) -> CaseResult:
    """Run one program and compare it with its expected files (the worker's task)."""
    program = Path(program)
    name = display_name(program)  # the reports' name for it: one line, every byte shown
    start = time.perf_counter()
    try:
        want = read_expected(program)
        if want is None:
            return CaseResult(name, SKIPPED, f"no {display_name(expected_paths(program)[0])}")
        got, warnings = run_program(program, timeout)
    except Unreadable as exc:
        return CaseResult(name, FAILED, str(exc))
    reason, diff = _compare(program, want, got)
    return CaseResult(name, FAILED if reason else PASSED, reason, diff,
                      time.perf_counter() - start, warnings)


# --- the pool ----------------------------------------------------------------------

def _warm() -> None:
    """Import the engine and build the parser once, before the children are forked."""
    from autodiff.engine import api  # noqa: F401
    from autodiff.parser import parse

    parse("x = 1\n", "<warm-up>")


def _pool_map(task: Callable[[Path], Any], programs: Sequence[Path], jobs: int,
              advance: Callable[[], None], failed: Callable[[Path, str], Any],
              limits: ProcessLimits, decode: Callable[[dict], Any]) -> list:
    """task(program) for each program, in order, each in a guarded child process of its own
    (cli/guard.py), `jobs` at a time: whatever one program does, the others still run and
    `failed(program, why)` stands for its result."""
    from .guard import run_all

    _warm()  # forked children inherit a warm engine
    inside = RunLimits(limits.max_bytes, limits.seconds)

    def in_child(program: Path) -> Callable[[], dict]:
        def run() -> dict:
            from autodiff.interpreter.deadline import ProgramStopped

            inside.started = time.monotonic()  # forked just now: the watcher's clock too
            try:
                with applied(inside):
                    return asdict(task(program))
            except ProgramStopped as stop:  # outside the program's lines: parsing, comparing
                return asdict(failed(program, f"{stop.error_class}: {stop.message}"))
            except MemoryError as exc:
                return asdict(failed(program, f"MemoryError: {exc or 'out of memory'}"))
        return run

    def lost(i: int, why) -> dict:
        return asdict(failed(programs[i], f"{why.error_class}: {why.reason}" if why.error_class
                             else why.reason))

    return [decode(d) for d in run_all([in_child(p) for p in programs], jobs, limits, lost,
                                       advance)]


class _Progress:
    """A Rich progress bar on stderr when it is a terminal; otherwise nothing."""

    def __init__(self, err: TextIO, total: int, label: str, no_color: bool = False) -> None:
        self.bar = None
        if total > 1 and getattr(err, "isatty", lambda: False)():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            from .console import make_console

            # auto_refresh=False: no refresh thread in the process that forks the workers
            self.bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(),
                                console=make_console(err, no_color=no_color), transient=True,
                                auto_refresh=False)
            self.task = self.bar.add_task(label, total=total)

    def __enter__(self) -> Callable[[], None]:
        if self.bar is None:
            return lambda: None
        self.bar.start()

        def advance() -> None:
            self.bar.advance(self.task)
            self.bar.refresh()
        return advance

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _failed(program: Path, reason: str) -> CaseResult:
    return CaseResult(display_name(program), FAILED, reason)


def run_suite(programs: Sequence[Path], *, jobs: int | None = None,
              timeout: float | None = DEFAULT_TIMEOUT, err: TextIO | None = None,
              no_color: bool = False, max_memory: int | str | None = None) -> Suite:
    """Check every program against its expected files, `jobs` at a time, each in its own
    process with `timeout` seconds and `max_memory` (cli/limits.py)."""
    jobs = jobs or os.cpu_count() or 1
    start = time.perf_counter()
    limits = process_limits(RunLimits(max_memory, timeout))
    with _Progress(err or sys.stderr, len(programs), "testing", no_color) as advance:
        results = _pool_map(partial(check_program, timeout=None), programs, jobs, advance,
                            _failed, limits, lambda d: CaseResult(**d))
    return Suite(results, time.perf_counter() - start, jobs)


# --- writing expected files --------------------------------------------------------

@dataclass
class UpdateResult:
    program: str
    changes: list[tuple[str, str]]  # (path, state); states: see sync_expected
    error: str = ""  # the reference could not run the program


def expected_from_autodiff(program: Path, timeout: float | None = DEFAULT_TIMEOUT,
                           max_memory: int | None = None, misspellings: str = "refuse") -> Expected:
    return run_program(program, timeout)[0]  # (the guard's child holds the memory limit)


def expected_from_torch(program: Path, timeout: float | None = DEFAULT_TIMEOUT,
                        max_memory: int | None = None, misspellings: str = "refuse") -> Expected:
    """The program's output under real PyTorch (interpreter.reference, a child process of
    its own, which holds `max_memory` itself; `misspellings` as there)."""
    from autodiff.interpreter.reference import run_with_torch

    from .source import MAX_SOURCE_BYTES

    text = read_regular(program, MAX_SOURCE_BYTES).decode("utf-8")
    result = run_with_torch(text, filename=display_name(program), timeout=timeout or 60.0,
                            max_memory=max_memory, misspellings=misspellings)
    failed = result.exit_code != 0
    return Expected(result.stdout, (result.error or f"exit code {result.exit_code}")
                    if failed else None)


def sync_expected(program: Path, expected: Expected, *,
                  check: bool = False) -> list[tuple[str, str]]:
    """Make NAME.out / NAME.err say `expected`: (path, wrote | removed) for each change; with
    check, write nothing and list (path, missing | differs | should not exist). Raises
    Unreadable, and changes neither file, when one is there but is not a regular file (a
    symbolic link is never written through, nor replaced)."""
    from .files import write_atomic
    from .golden_files import MAX_EXPECTED_BYTES

    out_path, err_path = expected_paths(program)
    wants = {out_path: expected.stdout or "",
             err_path: None if expected.error is None else f"{expected.error}\n"}
    there = {path: is_regular(path) for path in wants}  # both checked before either is written
    changes = []
    for path, text in wants.items():
        want = None if text is None else text.encode("utf-8", "backslashreplace")
        have = read_regular(path, MAX_EXPECTED_BYTES) if there[path] else None
        if have == want:
            continue
        if check:
            state = ("missing" if have is None else "should not exist" if want is None
                     else "differs")
        elif want is None:
            path.unlink()
            state = "removed"
        else:
            write_atomic(str(path), want)
            state = "wrote"
        changes.append((display_name(path), state))
    return changes


def _update_one(program: Path, reference: str, timeout: float | None, check: bool,
                max_memory: int | None = None, misspellings: str = "refuse") -> UpdateResult:
    from autodiff.interpreter.reference import ReferenceRefused

    make = expected_from_torch if reference == "torch" else expected_from_autodiff
    name = display_name(program)
    try:
        expected = make(program, timeout, max_memory, misspellings)
        return UpdateResult(name, sync_expected(program, expected, check=check))
    except Unreadable as exc:  # the program or an expected file is not a regular file
        return UpdateResult(name, [], str(exc))
    except ReferenceRefused as exc:  # its text is the diagnostic, with the caret line
        return UpdateResult(name, [], f"refused, not run under PyTorch:\n{exc}")
    except Exception as exc:  # ReferenceRunError, ReferenceTimeout, text that is not UTF-8
        return UpdateResult(name, [], f"{type(exc).__name__}: {exc}")


def _update_result(data: dict) -> UpdateResult:
    return UpdateResult(data["program"], [tuple(c) for c in data["changes"]], data["error"])


REFERENCE_SLACK = 30.0  # seconds a torch run may take beyond the program's own (its start-up)


def update_expected(programs: Sequence[Path], *, reference: str = "torch",
                    jobs: int | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                    check: bool = False, err: TextIO | None = None,
                    no_color: bool = False, max_memory: int | str | None = None,
                    misspellings: str = "refuse") -> list[UpdateResult]:
    """Write (or, with check, compare) each program's expected files from `reference`
    (`misspellings="fail"`: for the project's own samples, see reference_outcomes)."""
    if reference not in REFERENCES:
        raise UsageError(f"--reference must be one of {', '.join(REFERENCES)}, not {reference!r}")
    if reference == "torch":
        (err or sys.stderr).write(_(TORCH_WARNING) + "\n")
    jobs = jobs or os.cpu_count() or 1
    run_limits = RunLimits(max_memory, timeout or DEFAULT_TIMEOUT)
    task = partial(_update_one, reference=reference, timeout=timeout, check=check,
                   max_memory=run_limits.max_bytes(), misspellings=misspellings)
    label = f"running under {reference}"
    seconds = timeout or DEFAULT_TIMEOUT
    # torch runs in a process of its own, with its own timeout and memory cap
    limits = ProcessLimits(seconds + REFERENCE_SLACK, None) if reference == "torch" else \
        process_limits(run_limits)
    with _Progress(err or sys.stderr, len(programs), label, no_color) as advance:
        return _pool_map(task, programs, jobs, advance,
                         lambda program, why: UpdateResult(display_name(program), [], why), limits,
                         _update_result)


# --- the command -------------------------------------------------------------------

def golden_tests(paths: Sequence[str] | None = None, *, jobs: int | None = None,
               update: bool = False, reference: str | None = None,
               junit_xml_path: str | None = None, as_json: bool = False,
               timeout: float | None = DEFAULT_TIMEOUT, no_color: bool = False,
               out: TextIO | None = None, err: TextIO | None = None,
               max_memory: int | str | None = None) -> int:
    """`autodiff test`: check (or write) the expected files; the process exit code."""
    out = out or sys.stdout
    err = err or sys.stderr

    def action() -> int:
        if jobs is not None and jobs < 1:
            raise UsageError(_("-j must be at least 1"))
        programs = discover(paths or ["."], warn=lambda message: err.write(message + "\n"))
        if not programs:
            raise UsageError(_("no .tg programs under {paths}").format(
                paths=" ".join(paths or ["."])))
        if update or reference is not None:
            if as_json or junit_xml_path:
                raise UsageError(_("--json and --junit-xml report a test run, not --update"))
            return _update(programs)
        suite = run_suite(programs, jobs=jobs, timeout=timeout, err=err, no_color=no_color,
                          max_memory=max_memory)
        if junit_xml_path:
            from .files import write_atomic

            write_atomic(junit_xml_path, junit_xml(suite))
        if as_json:
            out.write(json.dumps(json_summary(suite), indent=2) + "\n")
        else:
            print_failures(suite, out, no_color)
            out.write(suite.summary() + "\n")
        return EXIT_OK if suite.ok else EXIT_FAILED

    def _update(programs: list[Path]) -> int:
        source = reference or "autodiff"
        if source == "autodiff":
            err.write(_("autodiff: warning: writing expected files from autodiff's own output; "
                        "goldens should come from a reference (--reference torch), or they "
                        "record autodiff's bugs as correct") + "\n")
        elif source == "torch":
            from autodiff.interpreter.reference import torch_available

            if not torch_available():
                raise ToolError(_("--reference torch needs PyTorch: pip install torch"))
        results = update_expected(programs, reference=source, jobs=jobs, timeout=timeout,
                                  err=err, no_color=no_color, max_memory=max_memory)
        for r in results:
            for path, state in r.changes:
                out.write(f"{state} {path}\n")
            if r.error:
                out.write(f"FAILED {r.program}: {r.error}\n")
        written = sum(bool(r.changes) for r in results)
        broken = sum(bool(r.error) for r in results)
        unchanged = len(results) - written - broken
        line = _("{written} updated, {unchanged} unchanged, {broken} failed") if broken else \
            _("{written} updated, {unchanged} unchanged")
        out.write(line.format(written=written, unchanged=unchanged, broken=broken) + "\n")
        return EXIT_FAILED if broken else EXIT_OK

    try:
        return guarded(action, err)
    finally:
        out.flush()
