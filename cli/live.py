"""A program that grows one input at a time with its state kept (the REPL's engine).

Each input is parsed and compiled against the same globals, builtins and engine session,
then run once: nothing is replayed, so random numbers, in-place changes and `.grad`
accumulate as they would in one program. The session's observers fill a live `Trace`, so
the views (`:graph`, `:explain`, `:report`) read the same records they read after a run.
"""

from __future__ import annotations

import io
from typing import Any, TextIO

from autodiff.interpreter import (
    default_modules,
    default_policy,
    execute,
    first_assignments,
    new_session,
)
from autodiff.interpreter.expressions import Context, compile_expr
from autodiff.interpreter.runtime import Runtime, make_builtins
from autodiff.interpreter.statements import compile_block
from autodiff.interpreter.warnings_hook import ProgramWarnings
from autodiff.parser import ast, parse
from autodiff.interpreter import bounds
from autodiff.text.diagnostics import EXIT_LIMIT, EXIT_RUNTIME, TgError

from .source import LoadedSource
from .trace import Trace, _observers

FILENAME = "<stdin>"
_NOTHING = object()


def incomplete(error: TgError, source: str) -> bool:
    """Does this syntax error only say the input stopped early (more lines would help)? A
    block header that ends the input (`    if x:` inside a def) wants its indented block."""
    if error.error_class == "IndentationError":
        return error.message.startswith("expected an indented block") and \
            error.line > source.count("\n") + 1
    return error.error_class == "SyntaxError" and (
        "was never closed" in error.message or "got end of file" in error.message)


class LiveProgram:
    """A REPL's program. `limits` (the command's --timeout and --max-memory) bound each input
    in this process: the deadline stops an input at its line, the engine refuses a tensor
    over the memory limit, and the session goes on."""

    def __init__(self, limits=None) -> None:
        self.lines: list[str] = []  # every accepted input, in order: the session's text
        self.globals: dict[str, Any] = {}
        self.builtins: dict[str, Any] = {}
        self.modules: dict[str, Any] = dict(default_modules())
        self.rt = Runtime()
        self.rt.policy = default_policy
        self.rt.depth = 0
        self.builtins.update(make_builtins(self.rt))
        self.globals["torch"] = self.modules.get("torch")
        self.trace = Trace(LoadedSource("", FILENAME), self.globals, {}, [], [], None)
        self.session = new_session()
        self.session.observers = _observers(self.trace, self.trace.created.append, True,
                                            None, {})
        from .limits import DEFAULT_TIMEOUT, check_timeout

        seconds = check_timeout(limits.timeout) if limits is not None else None
        self.seconds = DEFAULT_TIMEOUT if seconds is None else seconds
        if limits is not None:
            self.session.max_bytes = limits.max_bytes()

    def run(self, text: str, out: TextIO, err: TextIO) -> TgError | None:
        """Run one complete input: print what it prints (and an expression's repr, as
        Python's REPL does); a failing input leaves what it already did, as in Python."""
        offset = len(self.lines)
        try:
            module = parse(text + "\n", FILENAME)
        except TgError as error:
            return error
        cx = Context(FILENAME, self.globals, self.builtins, self.rt, self.modules)
        body = module.body
        try:
            if len(body) == 1 and isinstance(body[0], ast.ExprStmt):
                expression = compile_expr(body[0].value, cx)
                action = lambda: expression(self.globals)  # noqa: E731
            else:
                block = compile_block(body, cx)
                action = lambda: (block(self.globals), _NOTHING)[1]  # noqa: E731
        except TgError as error:
            return error
        self.rt.out = out
        value, error = execute(action, session=self.session, timeout=self.seconds,
                               filename=FILENAME, source=text, err=err)
        if error is None:
            self.lines.extend(text.split("\n"))
            for name, line in first_assignments(body).items():
                self.trace.assigned_lines.setdefault(name, line + offset)
            self.trace.source = LoadedSource("\n".join(self.lines) + "\n", FILENAME)
            if value is not _NOTHING and value is not None:
                try:  # the program's object, shown outside the program: its errors are its own
                    out.write(bounds.text(value, "repr()", repr) + "\n")
                except RecursionError:
                    error = TgError("RecursionError", "maximum recursion depth exceeded while "
                                    "getting the repr of an object", filename=FILENAME, line=1,
                                    col=1, exit_code=EXIT_RUNTIME)
                except Exception as exc:  # noqa: BLE001 - as Python's REPL: the input ran
                    limit = isinstance(exc, MemoryError)  # (a text past the bound)
                    error = TgError(type(exc).__name__, str(exc), filename=FILENAME, line=1,
                                    col=1, exit_code=EXIT_LIMIT if limit else EXIT_RUNTIME)
        return error

    def names(self) -> list[str]:
        return [n for n in self.globals if not n.startswith("_")]


def capture(program: LiveProgram, text: str) -> tuple[str, str, TgError | None]:
    """Run `text` and return (stdout, stderr, error): for tests and piped use."""
    out, err = io.StringIO(), io.StringIO()
    error = program.run(text, out, err)
    return out.getvalue(), err.getvalue(), error
