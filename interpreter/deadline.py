"""Stopping a running program from outside: a time limit (`--timeout`) or SIGTERM."""

from __future__ import annotations

import signal
import threading
import time

from autodiff.parser.diagnostics import EXIT_LIMIT

from .position import current_node


class ProgramStopped(BaseException):
    """Raised inside the program by a signal handler. A BaseException, so that the
    closures' `except Exception` error reporting lets it through to Program.run."""

    def __init__(self, error_class: str, message: str, exit_code: int, node=None):
        super().__init__(message)
        self.error_class, self.message, self.exit_code, self.node = (
            error_class, message, exit_code, node)


class Deadline:
    """Context manager: raise ProgramStopped in the program after `seconds` of wall time, or
    after `left` seconds where part of them went before the block (the command's start)."""

    def __init__(self, seconds: float | None, left: float | None = None):
        self.seconds = seconds
        self.left = seconds if left is None else max(left, 1e-3)
        self.active = bool(seconds) and threading.current_thread() is threading.main_thread()

    def _expired(self, signum, frame):
        raise ProgramStopped("TimeoutError",
                             f"the program ran longer than {self.seconds:g} s (--timeout)",
                             EXIT_LIMIT, current_node(frame))

    def __enter__(self) -> "Deadline":
        self._outer_end = None
        if self.active:
            outer = signal.getitimer(signal.ITIMER_REAL)[0]
            if outer and outer <= self.left:
                self.active = False  # an enclosing deadline (the command's) comes first
                return self
            if outer:
                self._outer_end = time.monotonic() + outer
            self._previous = signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, self.left)
        return self

    def __exit__(self, *exc) -> None:
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
            if self._outer_end is not None:  # the enclosing deadline goes on
                signal.setitimer(signal.ITIMER_REAL, max(self._outer_end - time.monotonic(), 1e-3))
