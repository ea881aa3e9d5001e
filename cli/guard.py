"""The process guard: a command's work runs in a forked child that the command's own process
watches, so nothing a program does can outlast the time limit or end in a traceback.

The interpreter's own deadline (SIGALRM, interpreter/deadline.py) stops a program at the
line it runs, but only between bytecodes: `sum(range(10**15))` loops in C, where neither a
signal handler nor a watchdog thread (it would need the GIL the loop holds) ever runs. So
the child runs under an address-space cap and a CPU-time backstop, and the parent, which only
waits, kills it GRACE seconds after its deadline, writes the diagnostic itself and exits with
EXIT_LIMIT. A child that wrote its own diagnostic ends at once and closes the pipe first:
the parent then waits for the kernel to free it without a deadline. A crash in the child
(the kernel's OOM killer, a segfault in a library) becomes a one-line message too. Cost:
one fork, about 2 ms. Without fork (Windows) the work runs in process, under the
interpreter's limits only.
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
import sys
import time
from typing import Any, Callable, Sequence

from .outcome import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_LIMIT,
    EXIT_TERMINATED,
    internal_error_message,
)

GRACE = 0.3  # seconds a child gets after its own deadline to stop itself and say where
ADDRESS_SPACE_SLACK = 1 << 30  # the interpreter, NumPy, BLAS buffers and threads, Graphviz
CAN_FORK = hasattr(os, "fork")
# The main thread's stack may grow this far (Linux checks the limit as it grows, up to the
# gap left below the memory map, at least 128 MB): engine code that recurses through C calls
# (a Sequential that contains itself) reaches Python's frame limit, a RecursionError, before
# the end of the stack, where the default 8 MB would crash the process.
STACK_BYTES = 512 << 20


class ProcessLimits:
    """What one child may use: `seconds` of wall time, `max_bytes` for the program's data
    (its address space is capped at that plus ADDRESS_SPACE_SLACK)."""

    def __init__(self, seconds: float, max_bytes: int | None) -> None:
        self.seconds = seconds
        self.max_bytes = max_bytes


class Lost(Exception):
    """The child ended without a result: killed at its deadline, crashed, or failed inside.
    `error_class` is set for a limit (TimeoutError, MemoryError), with code EXIT_LIMIT."""

    def __init__(self, reason: str, code: int, error_class: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.code, self.error_class = reason, code, error_class

    def describe(self, subject: str) -> str:
        """The one line to show: `FILE: Class: reason` for a limit, else `autodiff: reason`."""
        if self.error_class:
            return f"{subject}: {self.error_class}: {self.reason}"
        return f"autodiff: {self.reason}"


class _Signalled(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_signalled(signum, frame):
    raise _Signalled(signum)


# --- the child side --------------------------------------------------------------------

def _interrupt_once(signum, frame):
    """SIGINT reaches a child twice (the terminal's, and the parent's forward): act on one."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _cap(resource_module, which: int, limit: int) -> None:
    soft, hard = resource_module.getrlimit(which)
    if hard != resource_module.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource_module.RLIM_INFINITY or soft > limit:
        resource_module.setrlimit(which, (limit, hard))


def _raise(resource_module, which: int, limit: int) -> None:
    soft, hard = resource_module.getrlimit(which)
    if hard != resource_module.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource_module.RLIM_INFINITY and soft < limit:
        resource_module.setrlimit(which, (limit, hard))


def _limit_process(limits: ProcessLimits) -> None:
    try:
        import resource
    except ImportError:
        return
    try:
        if limits.max_bytes:
            _cap(resource, resource.RLIMIT_AS, limits.max_bytes + ADDRESS_SPACE_SLACK)
            from autodiff.interpreter import reserve

            reserve.hold()  # room to report the cap once a program meets it
        # a backstop should the watching parent itself be killed: CPU time of all threads
        cpu = math.ceil(limits.seconds * (os.cpu_count() or 1) + 2 * GRACE) + 1
        _cap(resource, resource.RLIMIT_CPU, cpu)
        _cap(resource, resource.RLIMIT_CORE, 0)  # a crash writes no core file
        _raise(resource, resource.RLIMIT_STACK, STACK_BYTES)
    except (ValueError, OSError):
        pass  # a platform that refuses: the parent's deadline still holds


def _child(task: Callable[[], Any], limits: ProcessLimits, write_fd: int, returns: bool,
           interruptible: bool) -> None:
    code = EXIT_FAILED
    payload = b""
    try:
        import faulthandler

        faulthandler.disable()  # a crash is reported by the parent in one line, not as a dump
        signal.signal(signal.SIGINT, _interrupt_once if interruptible else signal.SIG_IGN)
        _limit_process(limits)
        from . import outcome

        if not returns:  # a child that returns a value must return it; this one may end early
            outcome.exit_once_reported = lambda early: _end(write_fd, b"", early)
        result = task()
        if returns:
            payload = json.dumps(["ok", result]).encode("utf-8", "surrogatepass")
        else:
            code = int(result)
    except SystemExit as exc:  # Rich ends so when the reader of stdout leaves (`| head`)
        code = exc.code if isinstance(exc.code, int) else EXIT_FAILED
    except BaseException as exc:  # noqa: BLE001 - the last resort: reported, never a traceback
        if isinstance(exc, KeyboardInterrupt):
            code = EXIT_INTERRUPTED
        try:
            detail = f"{type(exc).__name__}: {exc}"
        except BaseException:  # noqa: BLE001 - an exception whose str() fails
            detail = type(exc).__name__
        if returns:
            payload = json.dumps(["error", detail]).encode("utf-8", "surrogatepass")
        else:
            from autodiff.text.i18n import _

            message = _("autodiff: interrupted") if code == EXIT_INTERRUPTED \
                else internal_error_message(detail)
            payload = b""
            try:
                from autodiff.text.display import visible  # past the stream's guard

                os.write(2, (visible(message) + "\n").encode("utf-8", "backslashreplace"))
            except OSError:
                pass
    finally:
        _end(write_fd, payload, code)


def _end(write_fd: int, payload: bytes, code: int) -> None:
    """Send the result and say so by closing the pipe, then exit. The close comes first: the
    kernel takes its time to free a large address space before it closes a dead process's
    files, and the parent must not mistake that for running past the deadline."""
    try:
        _write_all(write_fd, payload)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except BaseException:  # noqa: BLE001 - a closed pipe: nothing left to tell
        pass
    try:
        os.close(write_fd)
    except OSError:
        pass
    os._exit(code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# --- the parent side ---------------------------------------------------------------------

class Child:
    """One forked child running `task()`. With `returns`, the task's JSON-able value comes
    back through a pipe; either way the pipe's end of file says the child is gone."""

    def __init__(self, task: Callable[[], Any], limits: ProcessLimits, *, returns: bool = False,
                 interruptible: bool = True) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # or the child would write the parent's buffered text again
            except (OSError, ValueError):
                pass  # a closed stdout: the child will find it closed too
        read_fd, write_fd = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(read_fd)
            _child(task, limits, write_fd, returns, interruptible)
        os.close(write_fd)
        self.start_watching(read_fd, limits)

    @classmethod
    def watching(cls, pid: int, read_fd: int, limits: ProcessLimits) -> "Child":
        """A child forked elsewhere (the REPL's, which may carry the session on)."""
        child = cls.__new__(cls)
        child.pid = pid
        child.start_watching(read_fd, limits)
        return child

    def start_watching(self, read_fd: int, limits: ProcessLimits) -> None:
        self.fd = read_fd
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds + GRACE
        self.chunks: list[bytes] = []
        self.status: int | None = None
        self.killed = self.took_over = False

    def fileno(self) -> int:
        return self.fd

    def read(self) -> bool:
        """Take what the pipe holds; True at its end (the child has exited)."""
        data = os.read(self.fd, 1 << 16)
        if data:
            self.chunks.append(data)
            return False
        os.close(self.fd)
        self.fd = -1
        self.status = os.waitpid(self.pid, 0)[1]
        return True

    def kill(self) -> None:
        if self.status is None:
            self.killed = True
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.status = os.waitpid(self.pid, 0)[1]
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def exit_code(self) -> int:
        """The child's exit code; raises Lost when it did not end by itself."""
        if self.killed:
            raise Lost(f"the program ran longer than {self.limits.seconds:g} s (--timeout)",
                       EXIT_LIMIT, "TimeoutError")
        if os.WIFSIGNALED(self.status):
            raise _lost_to(os.WTERMSIG(self.status), self.limits)
        return os.waitstatus_to_exitcode(self.status)

    def value(self) -> Any:
        """The task's return value (for `returns` children); raises Lost otherwise."""
        code = self.exit_code()
        try:
            kind, value = json.loads(b"".join(self.chunks).decode("utf-8", "surrogatepass"))
        except ValueError:
            raise Lost(f"the process ended (exit code {code}) without a result", EXIT_FAILED) \
                from None
        if kind == "error":
            raise Lost(internal_error_message(value), EXIT_FAILED)
        return value


def _lost_to(signum: int, limits: ProcessLimits) -> Lost:
    if signum == signal.SIGKILL:  # not ours (ours sets `killed`): the kernel, out of memory
        return Lost("the process was killed by the system, most likely for running out of "
                    "memory (--max-memory)", EXIT_LIMIT, "MemoryError")
    if signum == getattr(signal, "SIGXCPU", None):
        return Lost(f"the program used more CPU time than {limits.seconds:g} s (--timeout) "
                    "allows", EXIT_LIMIT, "TimeoutError")
    if signum == signal.SIGINT:
        return Lost("interrupted", EXIT_INTERRUPTED)
    if signum == signal.SIGTERM:
        return Lost("terminated", EXIT_TERMINATED)
    name = signal.Signals(signum).name if signum in signal.Signals.__members__.values() \
        else f"signal {signum}"
    return Lost(internal_error_message(f"the process crashed ({name})"), EXIT_FAILED)


def _wait(child: Child) -> None:
    """Until the child exits or its deadline passes (then it is killed)."""
    while child.fd >= 0:
        left = child.deadline - time.monotonic()
        if left <= 0:
            child.kill()
            return
        if select.select([child.fd], [], [], left)[0] and child.read():
            return


def _stop_on_signal(child: Child, signum: int, wait=_wait) -> None:
    """Ctrl-C or SIGTERM while a child runs: pass it on, give the child GRACE to end by
    itself (it then says so), else kill it."""
    try:
        os.kill(child.pid, signum)
    except ProcessLookupError:
        pass
    child.deadline = min(child.deadline, time.monotonic() + GRACE)
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        wait(child)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _watched(child: Child, wait=_wait) -> int | None:
    """Wait for `child` in the parent (by `wait`); the signal number when SIGINT or SIGTERM
    came."""
    in_main = _main_thread()
    previous = {}
    if in_main:
        previous = {s: signal.signal(s, _raise_signalled) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        wait(child)
        return None
    except _Signalled as stop:
        _stop_on_signal(child, stop.signum, wait)
        return stop.signum
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def supervise(work: Callable[[], int], limits: ProcessLimits, subject: str,
              err=None) -> int:
    """Run `work()` (which writes its own output and returns an exit code) in a watched child;
    the exit code, or EXIT_LIMIT with a diagnostic naming `subject` when it had to be stopped."""
    if not CAN_FORK:
        return work()
    err = err or sys.stderr
    try:
        child = Child(work, limits)
    except OSError:  # no process to spare: the work runs here, under the interpreter's limits
        return work()
    signum = _watched(child)
    try:
        return child.exit_code()
    except Lost as lost:
        if signum is not None:  # the child did not stop by itself: say what stopped it
            lost = Lost("interrupted" if signum == signal.SIGINT else "terminated",
                        EXIT_INTERRUPTED if signum == signal.SIGINT else EXIT_TERMINATED)
        err.write(lost.describe(subject) + "\n")
        err.flush()
        return lost.code


def call_in_child(task: Callable[[], Any], limits: ProcessLimits) -> Any:
    """`task()`'s JSON-able value, computed in a watched child; raises Lost when it was
    stopped or crashed, KeyboardInterrupt when Ctrl-C stopped it."""
    if not CAN_FORK:
        return task()
    child = Child(task, limits, returns=True)
    signum = _watched(child)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    if signum is not None:
        from .outcome import Terminated

        raise Terminated()
    return child.value()


def run_all(tasks: Sequence[Callable[[], Any]], jobs: int, limits: ProcessLimits,
            lost: Callable[[int, Lost], Any], done: Callable[[], None]) -> list:
    """Each task's value, `jobs` children at a time (one child per task, so one program's
    state never reaches the next); `lost(i, why)` stands in for a task whose child did not
    return. Ctrl-C or SIGTERM kills every child at once and propagates."""
    results: list = [None] * len(tasks)
    jobs = max(1, min(jobs, 64))  # select() watches each child's pipe
    if not CAN_FORK:
        for i, task in enumerate(tasks):
            results[i] = task()
            done()
        return results
    waiting = list(range(len(tasks)))
    waiting.reverse()
    running: dict[int, tuple[int, Child]] = {}

    def settle(i: int, child: Child) -> None:
        try:
            results[i] = child.value()
        except Lost as why:
            results[i] = lost(i, why)
        done()

    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                i = waiting.pop()
                child = Child(tasks[i], limits, returns=True, interruptible=False)
                running[child.fd] = (i, child)
            soonest = min(child.deadline for _pid, child in running.values())
            ready = select.select(list(running), [], [], max(0.0, soonest - time.monotonic()))[0]
            for fd in ready:
                i, child = running[fd]
                if child.read():
                    del running[fd]
                    settle(i, child)
            now = time.monotonic()
            for fd, (i, child) in list(running.items()):
                if child.deadline <= now:
                    del running[fd]
                    child.kill()
                    settle(i, child)
    except BaseException:
        for _pid, child in running.values():
            child.kill()
        raise
    return results
