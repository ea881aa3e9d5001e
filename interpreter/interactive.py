"""A program that grows one input at a time with its state kept: the REPL's runner.

It keeps a `Program` (same set-up, same `execute`, so the same errors and limits) whose
body is empty; each input is parsed and compiled against the program's globals, builtins and
engine session, then run once. Nothing is replayed, so random numbers, in-place changes and
`.grad` accumulate as they would in one program. An input that is one expression shows its
value's repr, as Python's interactive mode does.
"""

from __future__ import annotations

from typing import Any, TextIO

from autodiff.parser import ast, parse
from autodiff.text.diagnostics import EXIT_LIMIT, EXIT_RUNTIME, TgError

from . import Program, execute, first_assignments, new_session, report_error
from . import bounds
from .expressions import compile_expr
from .statements import compile_block

_NOTHING = object()


class InteractiveProgram:
    """`run(text, out, err)` runs one complete input. `lines` is every accepted input in
    order (the session's text) and `assigned_lines` the line of each name's first
    assignment in that text. `session` (default: a new run's) is the engine session every
    input runs in, each under `timeout` seconds."""

    def __init__(self, filename: str = "<stdin>", *, session: Any = None,
                 timeout: float | None = None) -> None:
        self.program = Program(ast.Module(()), filename)
        self.program.prepare()
        self.filename = filename
        self.globals = self.program.globals
        self.builtins = self.program.builtins
        self.assigned_lines = self.program.assigned_lines
        self.session = new_session() if session is None else session
        self.timeout = timeout
        self.lines: list[str] = []

    def run(self, text: str, out: TextIO, err: TextIO) -> TgError | None:
        """Print what the input prints (and an expression's repr); a failing input leaves
        what it already did, as in Python."""
        offset = len(self.lines)
        try:
            body = parse(text + "\n", self.filename).body
            action = self._compile(body)
        except TgError as error:
            report_error(self.session, error)
            return error
        self.program.rt.out, self.program.rt.err = out, err
        value, error = execute(action, session=self.session, timeout=self.timeout,
                               filename=self.filename, source=text, err=err)
        if error is not None:
            return error
        self.lines.extend(text.split("\n"))
        for name, line in first_assignments(body).items():
            self.assigned_lines.setdefault(name, line + offset)
        if value is not _NOTHING and value is not None:
            error = self._show(value, out)
            if error is not None:
                report_error(self.session, error)
        return error

    def text(self) -> str:
        """The session's program so far."""
        return "\n".join(self.lines) + "\n"

    def _compile(self, body: tuple):
        if len(body) == 1 and isinstance(body[0], ast.ExprStmt):
            expression = compile_expr(body[0].value, self.program.context)
            return lambda: expression(self.globals)
        block = compile_block(body, self.program.context)
        return lambda: (block(self.globals), _NOTHING)[1]

    def _show(self, value: Any, out: TextIO) -> TgError | None:
        try:  # the program's object, shown outside the program: its errors are its own
            out.write(bounds.text(value, "repr()", repr) + "\n")
        except RecursionError:
            return TgError("RecursionError", "maximum recursion depth exceeded while getting "
                           "the repr of an object", filename=self.filename, line=1, col=1,
                           exit_code=EXIT_RUNTIME)
        except Exception as exc:  # noqa: BLE001 - as Python's REPL: the input ran
            limit = isinstance(exc, MemoryError)  # (a text past the bound)
            return TgError(type(exc).__name__, str(exc), filename=self.filename, line=1,
                           col=1, exit_code=EXIT_LIMIT if limit else EXIT_RUNTIME)
        return None
