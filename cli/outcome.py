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
EXIT_TERMINATED = 143  # 128 + SIGTERM, as shells report it

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED", "EXIT_TERMINATED",
           "EXIT_RUNTIME", "Terminated",
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


def describe(error: TgError, source: str | None, scope: dict | None = None) -> str:
    """The diagnostic text: `FILE:LINE:COL: Class: message`, source line and caret, then
    the hints (parser/hints.py) on the lines after it; `scope`, the program's variables
    when the caller has them (a live session), lets a hint name their values."""
    from autodiff.parser.hints import hint_block

    text = error.render(source) if source is not None else error.headline()
    hints = hint_block(error, source, scope)
    return text + "\n" + hints.rstrip("\n") if hints else text


class Terminated(BaseException):
    """SIGTERM arrived: end like Ctrl-C does, with a one-line message."""


def _terminate(signum, frame):
    raise Terminated()


def guarded(action: Callable[[], int], err: TextIO) -> int:
    """Run `action` and turn every expected failure into a message on `err` and a code."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        return action()
    except ProgramError as exc:
        err.write(describe(exc.error, exc.source) + "\n")
        return exc.error.exit_code
    except TgError as exc:  # raised before any source was read (missing file, bad bytes)
        err.write(describe(exc, None) + "\n")
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
    except Terminated:
        err.write("autodiff: terminated\n")
        return EXIT_TERMINATED
    except MemoryError as exc:  # the address-space cap, outside any program line
        err.write(f"autodiff: MemoryError: {exc or 'out of memory'}\n")
        return EXIT_FAILED
    except BrokenPipeError:  # `autodiff run x | head`: the reader left; stop quietly
        _silence_stdout()
        return EXIT_FAILED


def _silence_stdout() -> None:
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
