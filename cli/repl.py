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
from typing import Callable, TextIO

from autodiff.parser import ast, parse
from autodiff.parser.diagnostics import TgError

from .outcome import EXIT_OK, describe, guarded

VALUE = "repl_value__"  # the name an expression's value is bound to for one run
BANNER = ("autodiff repl: .tg statements, `torch` is imported. A block ends with an empty "
          "line; Ctrl-D quits.")


class Session:
    """The program typed so far; `submit` runs one more input and returns what to print."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.printed = 0  # characters of output the accepted program already printed
        self.warned = 0  # characters of warnings it already showed

    def submit(self, text: str) -> tuple[str, str]:
        """(stdout, stderr) for one input."""
        from autodiff.interpreter import run_source

        offset = len(self.lines)
        try:
            snippet = parse(text + "\n", "<stdin>")
        except TgError as exc:
            exc.line = max(exc.line, 1)
            return "", describe(exc, text) + "\n"
        body = snippet.body
        single_expr = len(body) == 1 and isinstance(body[0], ast.ExprStmt)
        run_text = "\n".join(self.lines + ([f"{VALUE} = ({text.strip()})"] if single_expr
                                           else [text]))
        out, warnings = io.StringIO(), io.StringIO()
        result = run_source(run_text + "\n", "<stdin>", out=out, err=warnings)
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
            return new_output, new_warnings + describe(error, text) + "\n"
        self.lines.extend(text.split("\n"))
        self.printed += len(new_output)
        self.warned += len(new_warnings)
        if single_expr:
            value = result.globals.get(VALUE)
            if value is not None:
                new_output += repr(value) + "\n"
        return new_output, new_warnings


def needs_more(lines: list[str]) -> bool:
    """Is the input unfinished: an open block, or open brackets?"""
    text = "\n".join(lines)
    depth = sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
    if depth > 0:
        return True
    if lines[0].rstrip().endswith(":"):
        return lines[-1].strip() != ""
    return False


def repl_loop(read: Callable[[str], str], out: TextIO, err: TextIO) -> int:
    """Read-eval-print until end of input; `read(prompt)` raises EOFError at the end."""
    session = Session()
    while True:
        try:
            lines = [read(">>> ")]
            while needs_more(lines):
                lines.append(read("... "))
        except EOFError:
            out.write("\n")
            return EXIT_OK
        except KeyboardInterrupt:  # as Python's REPL: drop the input, keep the session
            out.write("\nKeyboardInterrupt\n")
            continue
        text = "\n".join(lines).rstrip()
        if not text.strip():
            continue
        printed, problem = session.submit(text)
        out.write(printed)
        err.write(problem)
        out.flush()


def repl_session(*, no_color: bool = False, out: TextIO | None = None,
                 err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        import readline  # noqa: F401  (line editing and history for input())
    except ImportError:
        pass
    out.write(BANNER + "\n")
    return guarded(lambda: repl_loop(input, out, err), err)
