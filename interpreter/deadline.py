"""Stopping a running program from outside: a time limit (`--timeout`) or SIGTERM.

In the main thread a SIGALRM timer raises in the program; signals reach only the main
thread, so a run in another thread (a test harness, a server) gets a timer thread that
raises the same exception asynchronously in the running thread. Either way the program
stops at its next bytecode, at the line it was running.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Callable

from autodiff.text.diagnostics import EXIT_LIMIT

from .position import current_node


class ProgramStopped(BaseException):
    """Raised inside the program by a signal handler. A BaseException, so that the
    closures' `except Exception` error reporting lets it through to Program.run."""

    def __init__(self, error_class: str, message: str, exit_code: int, node=None):
        super().__init__(message)
        self.error_class, self.message, self.exit_code, self.node = (
            error_class, message, exit_code, node)


class DeadlinePassed(ProgramStopped):
    """The asynchronous form (an exception class raised with no arguments): the run that
    catches it knows its timeout and finds the line from the traceback."""

    def __init__(self) -> None:
        super().__init__("TimeoutError", "the program ran longer than its --timeout", EXIT_LIMIT)


def timeout_message(seconds: float) -> str:
    return f"the program ran longer than {seconds:g} s (--timeout)"


class Deadline:
    """Context manager: raise ProgramStopped in the program after `seconds` of wall time, or
    after `left` seconds where part of them went before the block (the command's start)."""

    def __init__(self, seconds: float | None, left: float | None = None,
                 on_expire: Callable[[], None] | None = None):
        self.seconds = seconds
        self.left = seconds if left is None else max(left, 1e-3)
        self.on_expire = on_expire  # called first when the time is up
        in_main = threading.current_thread() is threading.main_thread()
        self.active = bool(seconds) and in_main
        self.timer = _ThreadTimer(self.left) if seconds and not in_main else None

    def _expired(self, signum, frame):
        if self.on_expire is not None:
            self.on_expire()
        raise ProgramStopped("TimeoutError", timeout_message(self.seconds), EXIT_LIMIT,
                             current_node(frame))

    def __enter__(self) -> "Deadline":
        self._outer_end = None
        if self.timer is not None:
            self.timer.start()
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
        if self.timer is not None:
            self.timer.stop()
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
            if self._outer_end is not None:  # the enclosing deadline goes on
                signal.setitimer(signal.ITIMER_REAL, max(self._outer_end - time.monotonic(), 1e-3))


class _ThreadTimer:
    """Raise DeadlinePassed in the thread that started it, after `seconds`, unless stopped."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.lock = threading.Lock()
        self.fired = self.stopped = False

    def start(self) -> None:
        self.target = threading.get_ident()
        self.thread = threading.Timer(self.seconds, self._fire)
        self.thread.daemon = True
        self.thread.start()

    def _fire(self) -> None:
        with self.lock:
            if not self.stopped:
                self.fired = True
                _set_async_exception(self.target, DeadlinePassed)

    def stop(self) -> None:
        self.thread.cancel()
        with self.lock:
            self.stopped = True
            if self.fired:  # a pending exception not raised yet must not escape the run
                _set_async_exception(self.target, None)


def node_of(stop: BaseException):
    """The program node that was running when `stop` was raised in it."""
    tb = stop.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return current_node(tb.tb_frame) if tb is not None else None


def _set_async_exception(thread_id: int, kind: type | None) -> None:
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(kind) if kind else None)
