"""The REPL's processes: each input runs once, in a watched child under the limits, and the
child carries the session on.

An input may loop in C code (`sum(range(10**15))`) or outgrow the memory limit; only a
process of its own can be stopped then with the session before it intact. So the session
lives in a chain of processes. For each input the process holding the session forks a child
under the command's limits (cli/guard.py); the child runs the input once and writes what it
printed. Unless a limit stopped it, it then takes the session over: it tells its parent,
which ends at once, and reads the next input itself (its readline history and the rest of
the session came with the fork). An input stopped at a limit (reported by the child), killed
at its deadline or crashed leaves the parent in charge, as it was before that input.

The command's own process only waits (`front`): the shell waits for it, so it ends when the
session does, with the session's exit code. It passes SIGTERM on to the process holding the
session; Ctrl-C reaches that process from the terminal directly.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from typing import Callable

from .guard import (
    CAN_FORK,
    Child,
    Lost,
    ProcessLimits,
    _end,
    _interrupt_once,
    _limit_process,
    _watched,
)
from .outcome import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_LIMIT,
    EXIT_TERMINATED,
    Terminated,
    internal_error_message,
)

TOOK_OVER = b"k"  # the child's word to its parent: the session is mine now

_status_fd: list[int] = []  # in a session's process: the front's pipe (pids, the exit code)


def chained() -> bool:
    """Does this process hold a session that `front` started (inputs run in children)?"""
    return bool(_status_fd)


def front(run_session: Callable[[], int]) -> int:
    """Run `run_session()` (the whole session; its exit code) in a chain of processes, this
    one waiting for its end; its exit code. Without fork, it runs here."""
    if not CAN_FORK:
        return run_session()
    read_fd, write_fd = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    _adopt_orphans()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _status_fd.append(write_fd)
        _tell(f"pid {os.getpid()}")
        code = run_session()
        # the session is over: a SIGTERM now (one that raced the end of input) must not cut
        # the exit short with a traceback at the last word or at the interpreter's shutdown
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _tell(f"exit {code}")
        return code
    os.close(write_fd)
    return _wait_for_session(read_fd, pid)


def _wait_for_session(read_fd: int, pid: int) -> int:
    holder = [pid]  # the process holding the session now
    terminated: list[int] = []

    def pass_on(signum, frame):
        terminated.append(signum)
        try:
            os.kill(holder[0], signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (the terminal's reaches the session)
    signal.signal(signal.SIGTERM, pass_on)
    code, pending = None, b""
    while True:
        try:
            data = os.read(read_fd, 4096)
        except InterruptedError:
            continue
        if not data:
            break
        _reap(os.WNOHANG)  # the processes that handed the session on
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            word, _, number = line.decode().partition(" ")
            if word == "pid":
                holder[0] = int(number)
            elif word == "exit":
                code = int(number)
    os.close(read_fd)
    _reap(0)
    if code is not None:
        return code
    if terminated:
        return EXIT_TERMINATED
    sys.stderr.write("autodiff: " + internal_error_message(
        "the session's process ended without an exit status") + "\n")
    return EXIT_FAILED


def _adopt_orphans() -> None:
    """Each process that hands the session on ends before its child: the children would be
    the system's to reap (and in a container whose first process reaps nothing, stay as
    zombies). On Linux they become the front's instead."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _reap(options: int) -> None:
    """Wait for every ended child (all of them, with `options` 0)."""
    while True:
        try:
            pid, _status = os.waitpid(-1, options)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _tell(line: str) -> None:
    os.write(_status_fd[0], (line + "\n").encode())


def run_input(run: Callable[[], tuple[str, str, bool]],
              limits: ProcessLimits) -> tuple[str, str]:
    """Run one input in a child: `run()` runs it and returns (stdout, stderr, stopped at a
    limit). Returns, only in the process that keeps the session, what is left to write:
    the child's output when the input ran, the parent's word on an input the child could
    not report itself (killed, crashed) when it was dropped."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    # the session's own handlers: the child that takes the session over needs them back, not
    # the ones the parent's wait puts in place (a SIGTERM to the new holder raised the wait's
    # signal at its input prompt: exit 0, or a traceback)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare: the input runs here, under the interpreter's limits
        os.close(read_fd)
        os.close(write_fd)
        return run()[:2]
    if pid == 0:
        os.close(read_fd)
        return _run_in_child(run, limits, write_fd, handlers)
    os.close(write_fd)
    child = Child.watching(pid, read_fd, limits)
    signum = _watched(child, wait=_wait_for_handover)
    if child.took_over:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(0)  # the child holds the session now
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    if signum is not None:
        raise Terminated()
    try:
        child.exit_code()
    except Lost as lost:
        if lost.code == EXIT_TERMINATED:
            raise Terminated() from None
        return "", lost.describe("<stdin>") + "\n"
    return "", ""  # the child reported the limit itself


def _run_in_child(run, limits: ProcessLimits, write_fd: int,
                  handlers: dict) -> tuple[str, str]:
    import faulthandler

    faulthandler.disable()  # a crash is reported by the parent in one line, not as a dump
    saved = _saved_limits()
    signal.signal(signal.SIGINT, _interrupt_once)
    code = EXIT_FAILED
    try:
        _limit_process(limits)
        printed, problem, stopped = run()
        if not stopped:
            _take_over(saved, write_fd, handlers)
            return printed, problem  # (its parent ends without a word: the console writes)
        sys.stdout.write(printed)
        sys.stderr.write(problem)
        code = EXIT_LIMIT
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except Terminated:
        code = EXIT_TERMINATED  # (the parent, passing SIGTERM on, says so)
    except BaseException as exc:  # noqa: BLE001 - the last resort: reported, never a traceback
        try:
            detail = f"{type(exc).__name__}: {exc}"
        except BaseException:  # noqa: BLE001 - an exception whose str() fails
            detail = type(exc).__name__
        try:
            sys.stderr.write("autodiff: " + internal_error_message(detail) + "\n")
        except BaseException:  # noqa: BLE001 - nothing left to tell with
            pass
    _end(write_fd, b"", code)
    return "", ""  # (never reached: _end exits)


def _take_over(saved: list, write_fd: int, handlers: dict) -> None:
    """The input ran: this process holds the session from now on, as its parent did."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    _restore_limits(saved)
    for signum, handler in handlers.items():
        signal.signal(signum, handler)
    _tell(f"pid {os.getpid()}")  # (before the parent ends: the front passes SIGTERM here)
    os.write(write_fd, TOOK_OVER)
    os.close(write_fd)


def _wait_for_handover(child: Child) -> None:
    """The guard's wait, but a child that took the session over is not waited for: it goes
    on reading input, and its parent ends."""
    while child.fd >= 0:
        left = child.deadline - time.monotonic()
        if left <= 0:
            child.kill()
            return
        if not select.select([child.fd], [], [], left)[0]:
            continue
        data = os.read(child.fd, 1 << 16)
        if data.startswith(TOOK_OVER):
            child.took_over = True
            return
        if not data:
            os.close(child.fd)
            child.fd = -1
            child.status = os.waitpid(child.pid, 0)[1]
            return


# the limits a session's process had before a child capped its own: the child that takes
# the session over lifts them again (its views, `:report`, run as the parent's did)
_LIMITS = ("RLIMIT_AS", "RLIMIT_CPU")


def _saved_limits() -> list:
    try:
        import resource
    except ImportError:
        return []
    return [(getattr(resource, name), resource.getrlimit(getattr(resource, name)))
            for name in _LIMITS if hasattr(resource, name)]


def _restore_limits(saved: list) -> None:
    if not saved:
        return
    import resource

    for which, (soft, hard) in saved:
        try:
            resource.setrlimit(which, (soft, resource.getrlimit(which)[1]))
        except (ValueError, OSError):
            pass
