"""`autodiff repl`: an interactive session over the same interpreter as `run`.

Each accepted input is appended to the session's program, and the whole program
is re-run with the same random seed, printing only the new output: state is then
exactly what `autodiff run` of the session's text would give. An expression
statement on its own prints its value as Python's REPL does (repr, nothing for
None). Input that fails is dropped from the session.
"""

from __future__ import annotations

import io
import sys
import time
from typing import Callable, TextIO

from autodiff.parser import ast, parse
from autodiff.parser.diagnostics import EXIT_RUNTIME, TgError

from .limits import RunLimits
from .outcome import EXIT_OK, describe, guarded, internal_error_message

VALUE = "repl_value__"  # the name an expression's value is bound to for one run
BANNER = ("autodiff repl: .tg statements, `torch` is imported. A block ends with an empty "
          "line; Ctrl-D quits.")


class Session:
    """The program typed so far; `submit` runs one more input and returns what to print.

    With `limits`, each input runs in a guarded child process (cli/guard.py): an input that
    loops in C or eats the memory is stopped and dropped, and the session goes on."""

    def __init__(self, limits: RunLimits | None = None) -> None:
        self.lines: list[str] = []
        self.printed = 0  # characters of output the accepted program already printed
        self.warned = 0  # characters of warnings it already showed
        self.limits = limits

    def submit(self, text: str) -> tuple[str, str]:
        """(stdout, stderr) for one input."""
        if self.limits is None:
            try:
                result = self._evaluate(text)
            except Exception as exc:  # noqa: BLE001 - ours: reported, and the session goes on
                return "", f"autodiff: {internal_error_message(f'{type(exc).__name__}: {exc}')}\n"
        else:
            from .guard import Lost, call_in_child
            from .limits import applied, process_limits

            def evaluate() -> dict:
                self.limits.started = time.monotonic()  # forked just now: the watcher's clock
                with applied(self.limits):
                    return self._evaluate(text)

            try:
                result = call_in_child(evaluate, process_limits(self.limits))
            except Lost as lost:
                return "", lost.describe("<stdin>") + "\n"
        if result["accepted"]:
            self.lines.extend(text.split("\n"))
            self.printed += result["printed"]
            self.warned += result["warned"]
        return result["out"], result["err"]

    def _evaluate(self, text: str) -> dict:
        """Run the session's program with `text` added; changes nothing in the session."""
        from autodiff.interpreter import run_source
        from autodiff.interpreter.deadline import ProgramStopped

        from .trace import Capture

        offset = len(self.lines)
        rejected = {"accepted": False, "printed": 0, "warned": 0, "out": ""}
        try:
            snippet = parse(text + "\n", "<stdin>")
        except TgError as exc:
            exc.line = max(exc.line, 1)
            return {**rejected, "err": describe(exc, text) + "\n"}
        except ProgramStopped as stop:  # the time limit, while parsing
            return {**rejected, "err": f"<stdin>: {stop.error_class}: {stop.message}\n"}
        body = snippet.body
        single_expr = len(body) == 1 and isinstance(body[0], ast.ExprStmt)
        run_text = "\n".join(self.lines + ([f"{VALUE} = ({text.strip()})"] if single_expr
                                           else [text]))
        out, warnings = Capture(), io.StringIO()
        try:
            result = run_source(run_text + "\n", "<stdin>", out=out, err=warnings)
        except ProgramStopped as stop:  # the time limit, while parsing the whole session
            return {**rejected, "err": f"<stdin>: {stop.error_class}: {stop.message}\n"}
        new_output = out.getvalue()[self.printed:]
        new_warnings = warnings.getvalue()[self.warned:]
        if result.error is not None:
            error = result.error
            error.line -= offset
            error.end_line = (error.end_line or error.line + offset) - offset
            if single_expr and error.line == 1:  # undo the `repl_value__ = (` prefix
                shift = len(VALUE) + 4
                error.col = max(error.col - shift, 1)
                error.end_col = None if error.end_col is None else max(error.end_col - shift, 2)
            return {**rejected, "out": new_output,
                    "err": new_warnings + describe(error, text) + "\n"}
        printed, warned = len(new_output), len(new_warnings)
        if single_expr:
            value = result.globals.get(VALUE)
            if value is not None:
                try:  # the program's object, shown outside the program: its errors are its own
                    new_output += repr(value) + "\n"
                except Exception as exc:  # noqa: BLE001 - as Python's REPL: the input ran
                    failed = TgError(type(exc).__name__, str(exc), filename="<stdin>", line=1,
                                     col=1, exit_code=EXIT_RUNTIME)
                    new_warnings += describe(failed, text) + "\n"
        return {"accepted": True, "printed": printed, "warned": warned, "out": new_output,
                "err": new_warnings}


class _Brackets:
    """Open brackets so far in one input, counted line by line (not the whole text again)."""

    def __init__(self) -> None:
        self.depth = 0

    def add(self, line: str) -> None:
        self.depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def needs_more(lines: list[str], depth: int | None = None) -> bool:
    """Is the input unfinished: an open block, or open brackets?"""
    if depth is None:
        text = "\n".join(lines)
        depth = sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
    if depth > 0:
        return True
    if lines[0].rstrip().endswith(":"):
        return lines[-1].strip() != ""
    return False


def repl_loop(read: Callable[[str], str], out: TextIO, err: TextIO,
              limits: RunLimits | None = None) -> int:
    """Read-eval-print until end of input; `read(prompt)` raises EOFError at the end."""
    session = Session(limits)
    while True:
        try:
            brackets = _Brackets()
            lines = [read(">>> ")]
            brackets.add(lines[0])
            while needs_more(lines, brackets.depth):
                lines.append(read("... "))
                brackets.add(lines[-1])
        except EOFError:
            out.write("\n")
            return EXIT_OK
        except KeyboardInterrupt:  # as Python's REPL: drop the input, keep the session
            out.write("\nKeyboardInterrupt\n")
            continue
        text = "\n".join(lines).rstrip()
        if not text.strip():
            continue
        try:
            printed, problem = session.submit(text)
        except KeyboardInterrupt:  # Ctrl-C while it ran: as Python's REPL, the session goes on
            out.write("\nKeyboardInterrupt\n")
            continue
        out.write(printed)
        err.write(problem)
        out.flush()


def repl_session(*, no_color: bool = False, out: TextIO | None = None,
                 err: TextIO | None = None, limits: RunLimits | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        import readline  # noqa: F401  (line editing and history for input())
    except ImportError:
        pass

    def action() -> int:
        if limits is not None:
            from .limits import process_limits

            process_limits(limits)  # a bad --timeout or --max-memory: said before the banner
        out.write(BANNER + "\n")
        return repl_loop(input, out, err, limits)

    return guarded(action, err, subject="<stdin>")
