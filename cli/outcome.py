"""Exit codes, and the one place where an error becomes a message and an exit code.

Every command's library entry runs its work through `guarded`; the work raises
`ProgramError` (a positioned TgError and the source it points into), `UsageError`
or `ToolError`, and `guarded` writes the message to stderr and picks the exit code.
"""

from __future__ import annotations

from typing import Callable, TextIO

from autodiff.text.diagnostics import EXIT_LIMIT, EXIT_RUNTIME, EXIT_SYNTAX, TgError

EXIT_OK = 0
EXIT_FAILED = 1  # a program error, a failed check, a missing tool, an internal error
EXIT_USAGE = EXIT_SYNTAX  # bad command line or syntax error, as click uses 2 for usage errors
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as shells report it

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED", "EXIT_TERMINATED",
           "EXIT_RUNTIME", "EXIT_LIMIT", "Terminated", "internal_error_message",
           "ProgramError", "UsageError", "ToolError", "describe", "guarded", "write_diagnostic"]


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
    the hints (interpreter/hints.py) on the lines after it; `scope`, the program's variables
    when the caller has them (a live session), lets a hint name their values."""
    from autodiff.interpreter.hints import hint_block

    text = error.render(source) if source is not None else error.headline()
    hints = hint_block(error, source, scope)
    return text + "\n" + hints.rstrip("\n") if hints else text


class Terminated(BaseException):
    """SIGTERM arrived: end like Ctrl-C does, with a one-line message."""


_guarding = [0]  # how many `guarded` calls are at work in this process


def _terminate(signum, frame):
    import signal

    if not _guarding[0]:
        # the work is over and the process is ending: a SIGTERM now (one that raced the end
        # of input) must not cut the exit short with a traceback outside every guard
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough: a second must not cut the first
    raise Terminated()


def internal_error_message(detail: str, subject: str | None = None) -> str:
    """The line for an exception of ours: never a traceback, always a request to report it."""
    from autodiff.text.i18n import _

    text = _("internal error while running {subject}: {detail}. This is a bug in autodiff, not "
             "in the program: please report it, with the program file.") if subject else _(
        "internal error: {detail}. This is a bug in autodiff, not in the program: please "
        "report it, with the program file.")
    return text.format(subject=subject, detail=detail)


def guarded(action: Callable[[], int], err: TextIO, subject: str | None = None, *,
            no_color: bool = False) -> int:
    """Run `action` and turn every failure into a message on `err` and an exit code.
    `subject` (the program's file) names where a limit stopped the work, or an internal error
    happened, when no program line can; `no_color` keeps a diagnostic plain on a terminal."""
    import signal
    import threading

    in_main_thread = threading.current_thread() is threading.main_thread()
    _guarding[0] += 1  # (before the handler: a signal at once must find the guard at work)
    if in_main_thread:
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return action()
    except BaseException as exc:  # noqa: BLE001 - each kind gets its message in _report
        code = _report(exc, err, subject, no_color)
        if code is None:
            raise
        if exit_once_reported is not None:
            try:
                err.flush()
            except BaseException:  # noqa: BLE001 - a closed pipe: nothing left to tell
                pass
            exit_once_reported(code)
        return code
    finally:
        _guarding[0] -= 1  # (first, and no call: a signal is handled at a call, then ignored)
        if in_main_thread and not _guarding[0]:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


# Set by a process that exists only for one command's work (the guard's child): called with
# the exit code as soon as the message is written, it ends the process. Returning would first
# free all a stopped program built (seconds for gigabytes of small arrays), past the grace
# the watching parent gives it after the deadline.
exit_once_reported: Callable[[int], None] | None = None


def write_diagnostic(err: TextIO, error: TgError, text: str, no_color: bool = False) -> None:
    """`text`, the diagnostic of `error`, on `err`: on a terminal that takes colour (Rich
    decides, NO_COLOR and TERM included) the error class and the caret stand out in red and
    the hints in yellow; piped or redirected, the plain text, byte for byte."""
    if no_color or not _is_terminal(err):  # the usual case decided without loading Rich
        err.write(text + "\n")
        return
    from .console import draws_in_colour, make_console

    console = make_console(err)
    if not draws_in_colour(console):
        err.write(text + "\n")
        return
    console.print(_coloured(error, text), end="\n")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or file-less stream
        return False


def _coloured(error: TgError, text: str):
    from rich.text import Text

    lines = text.split("\n")
    out = Text()
    head = lines[0]
    at = head.find(error.error_class) if error.error_class else -1
    if at >= 0:
        out.append(head[:at], style="bold")
        out.append(error.error_class, style="error")
        out.append(head[at + len(error.error_class):])
    else:
        out.append(head)
    for number, line in enumerate(lines[1:], start=1):
        out.append("\n")
        if number <= 2 and line.startswith("    "):  # the source line, then the caret line
            caret = number == 2 and set(line.strip()) <= {"^", "~"}
            out.append(line, style="error" if caret else None)
        else:  # the hints
            out.append(line, style="warn")
    return out


def _report(exc: BaseException, err: TextIO, subject: str | None,
            no_color: bool = False) -> int | None:
    """Write the message for `exc` and return the exit code; None for what is not ours to
    report (SystemExit)."""
    from autodiff.interpreter.deadline import ProgramStopped
    from autodiff.text.i18n import _

    if isinstance(exc, ProgramError):
        write_diagnostic(err, exc.error, describe(exc.error, exc.source), no_color)
        return exc.error.exit_code
    if isinstance(exc, TgError):  # raised before any source was read (missing file, bad bytes)
        write_diagnostic(err, exc, describe(exc, None), no_color)
        return exc.exit_code
    if isinstance(exc, UsageError):
        err.write(_("autodiff: error: {message}").format(message=exc) + "\n")
        return EXIT_USAGE
    if isinstance(exc, ToolError):
        err.write(f"autodiff: {exc}\n")
        return EXIT_FAILED
    if isinstance(exc, KeyboardInterrupt):
        err.write(_("autodiff: interrupted") + "\n")
        return EXIT_INTERRUPTED
    if isinstance(exc, Terminated):
        err.write(_("autodiff: terminated") + "\n")
        return EXIT_TERMINATED
    if isinstance(exc, ProgramStopped):  # the time limit, outside any program line
        err.write(f"{subject or 'autodiff'}: {exc.error_class}: {exc.message}\n")
        return exc.exit_code
    if isinstance(exc, (MemoryError, SystemError)) and _memory_limit(exc):
        # the address-space cap, outside any program line
        message = str(exc) if isinstance(exc, MemoryError) else ""
        err.write(f"{subject or 'autodiff'}: MemoryError: {message or _('out of memory')} "
                  "(--max-memory)\n")
        return EXIT_LIMIT
    if isinstance(exc, BrokenPipeError):  # `autodiff run x | head`: the reader left
        _silence_stdout()
        return EXIT_FAILED
    if not isinstance(exc, Exception):
        return None
    try:  # the last resort: ours, so reported, never a traceback
        detail = f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - an exception whose str() fails
        detail = type(exc).__name__
    err.write(f"autodiff: {internal_error_message(detail, subject)}\n")
    return EXIT_FAILED


def _memory_limit(exc: BaseException) -> bool:
    """Did `exc` come of the memory limit? If so the reserve is let go: the report needs room."""
    from autodiff.interpreter import reserve

    if not reserve.exhausted(exc):
        return False
    reserve.release()
    return True


def _silence_stdout() -> None:
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
