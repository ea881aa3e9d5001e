"""Exit codes, and the one place where an error becomes a message and an exit code.

Every command's library entry runs its work through `guarded`; the work raises
`ProgramError` (a positioned TgError and the source it points into), `UsageError`
or `ToolError`, and `guarded` writes the message to stderr and picks the exit code.
"""

from __future__ import annotations

from typing import Callable, TextIO

from autodiff.parser.diagnostics import EXIT_RUNTIME, EXIT_SYNTAX, TgError

EXIT_OK = 0
EXIT_FAILED = 1  # a program error, a failed check, a missing tool
EXIT_USAGE = EXIT_SYNTAX  # bad command line or syntax error, as click uses 2 for usage errors
EXIT_INTERRUPTED = 130

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED", "EXIT_RUNTIME",
           "ProgramError", "UsageError", "ToolError", "describe", "guarded"]


class ProgramError(Exception):
    """The program stopped with a diagnostic; `source` is its text, for the caret line."""

    def __init__(self, error: TgError, source: str | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.source = source


class UsageError(Exception):
    """A command line that cannot be acted on (unknown --root name, bad -o suffix)."""


class ToolError(Exception):
    """Something outside the program failed (Graphviz missing, an unwritable file)."""


def describe(error: TgError, source: str | None) -> str:
    """The diagnostic text: `FILE:LINE:COL: Class: message`, source line and caret."""
    return error.render(source) if source is not None else error.headline()


def guarded(action: Callable[[], int], err: TextIO) -> int:
    """Run `action` and turn every expected failure into a message on `err` and a code."""
    try:
        return action()
    except ProgramError as exc:
        err.write(describe(exc.error, exc.source) + "\n")
        return exc.error.exit_code
    except TgError as exc:  # raised before any source was read (missing file, bad bytes)
        err.write(exc.headline() + "\n")
        return exc.exit_code
    except UsageError as exc:
        err.write(f"autodiff: error: {exc}\n")
        return EXIT_USAGE
    except ToolError as exc:
        err.write(f"autodiff: {exc}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        err.write("autodiff: interrupted\n")
        return EXIT_INTERRUPTED
