"""The REPL's program: the interpreter's `InteractiveProgram` watched by a live `Trace`.

Each input runs once against the kept state (interpreter/interactive.py); a `TraceObserver`
on the session fills the trace as inputs run, so the views (`:graph`, `:explain`,
`:report`) read the same records they read after a run.
"""

from __future__ import annotations

import io
from typing import TextIO

from autodiff.interpreter.interactive import InteractiveProgram
from autodiff.text.diagnostics import TgError

from .source import LoadedSource
from .trace import Trace, TraceObserver

FILENAME = "<stdin>"


def incomplete(error: TgError, source: str) -> bool:
    """Does this syntax error only say the input stopped early (more lines would help)? A
    block header that ends the input (`    if x:` inside a def) wants its indented block."""
    if error.error_class == "IndentationError":
        return error.message.startswith("expected an indented block") and \
            error.line > source.count("\n") + 1
    if error.error_class != "SyntaxError":
        return False
    # inside a block the input's end is the block's end (`    @property` after `class A:`)
    ended_in_block = "got end of the indented block" in error.message and \
        error.line >= source.count("\n") + 1
    return "was never closed" in error.message or "got end of file" in error.message or ended_in_block


class LiveProgram(InteractiveProgram):
    """A REPL's program. `limits` (the command's --timeout and --max-memory) bound each input
    in this process: the deadline stops an input at its line, the engine refuses a tensor
    over the memory limit, and the session goes on."""

    def __init__(self, limits=None) -> None:
        from .limits import DEFAULT_TIMEOUT, check_timeout

        seconds = check_timeout(limits.timeout) if limits is not None else None
        super().__init__(FILENAME, timeout=DEFAULT_TIMEOUT if seconds is None else seconds)
        if limits is not None:
            self.session.max_bytes = limits.max_bytes()
        self.trace = Trace(LoadedSource("", FILENAME), self.globals, self.assigned_lines,
                           [], [], None)
        self.session.observers.attach(TraceObserver(self.trace, record_steps=True))

    def run(self, text: str, out: TextIO, err: TextIO) -> TgError | None:
        """Run one complete input (see InteractiveProgram.run)."""
        before = len(self.lines)
        error = super().run(text, out, err)
        if len(self.lines) != before:
            self.trace.source = LoadedSource(self.text(), FILENAME)
        return error

    def names(self) -> list[str]:
        return [n for n in self.globals if not n.startswith("_")]


def capture(program: LiveProgram, text: str) -> tuple[str, str, TgError | None]:
    """Run `text` and return (stdout, stderr, error): for tests and piped use."""
    out, err = io.StringIO(), io.StringIO()
    error = program.run(text, out, err)
    return out.getvalue(), err.getvalue(), error
