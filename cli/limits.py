"""The resource limits of a command (`--max-memory`, `--timeout`): their defaults, their
checks, and where they are applied.

Every command's work runs under them: in the guard's child process (cli/guard.py: an
address-space cap, a CPU-time backstop, a parent that kills at the deadline) and inside the
interpreter (the engine's per-tensor check, a deadline that stops the program at its line).
"""

from __future__ import annotations

import gc
import math
import re
import time
from contextlib import contextmanager

from autodiff.text.i18n import _

from .outcome import UsageError

DEFAULT_TIMEOUT = 60.0  # seconds: a learner's programs take well under one
MAX_TIMEOUT = 1_000_000.0  # about 11 days: beyond it a limit means nothing
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SMALLEST = 1 << 20  # below a megabyte no program (nor the report) could run


def parse_size(text: str) -> int:
    """'512M', '2G', '1.5g', '100000' -> bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", text.lower())
    if not match:
        raise UsageError(_("--max-memory: expected a size such as 512M or 2G, got {text!r}").format(
            text=text))
    size = int(float(match.group(1)) * _UNITS[match.group(2)])
    if size < _SMALLEST:
        raise UsageError(_("--max-memory: {text} is too small to run anything; give at least "
                           "1M").format(text=text))
    return size


def check_timeout(seconds: float | None) -> float | None:
    if seconds is None:
        return None
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds)
            and 0 < seconds <= MAX_TIMEOUT):
        raise UsageError(_("--timeout: expected a number of seconds above 0 and at most "
                           "{most:,.0f}, got {seconds}").format(most=MAX_TIMEOUT, seconds=seconds))
    return float(seconds)


class RunLimits:
    """What `--max-memory` and `--timeout` said; checked when applied (inside `guarded`, so
    a bad value is a usage message, not a traceback). None means no limit of that kind in
    process; the console script passes the defaults (`for_command`)."""

    def __init__(self, max_memory: int | str | None = None, timeout: float | None = None) -> None:
        self.max_memory = max_memory  # bytes for the program's data, or text such as "512M"
        self.timeout = timeout  # seconds of wall time for the whole command
        # when the command's clock started (time.monotonic()), if before the limits apply:
        # the guard's watching parent counts from the fork, so the program's deadline must too
        self.started: float | None = None

    def max_bytes(self) -> int | None:
        """The memory limit in bytes: the given one, else the engine's default."""
        if isinstance(self.max_memory, str):
            return parse_size(self.max_memory)
        if self.max_memory is not None:
            return self.max_memory
        from autodiff.engine.core.session import current

        return current().max_bytes

    @classmethod
    def for_command(cls, max_memory: str | None, timeout: float | None,
                    default_timeout: float = DEFAULT_TIMEOUT) -> "RunLimits":
        return cls(max_memory, default_timeout if timeout is None else timeout)


def process_limits(limits: RunLimits):
    """The guard's limits for a child process (raises UsageError for a bad value)."""
    from .guard import ProcessLimits

    seconds = check_timeout(limits.timeout)
    return ProcessLimits(DEFAULT_TIMEOUT if seconds is None else seconds, limits.max_bytes())


@contextmanager
def applied(limits: RunLimits | None):
    """Apply `limits` inside the interpreter while the block runs: an engine session with the
    per-tensor limit (the runs inside start from it) and the deadline that stops a program at
    the line it runs."""
    from autodiff.engine.core.session import Session
    from autodiff.interpreter.deadline import Deadline

    limits = limits or RunLimits()
    seconds = check_timeout(limits.timeout)
    left = on_expire = None
    if seconds is not None and limits.started is not None:
        left = seconds - (time.monotonic() - limits.started)
        # a command's process only reports a stop and ends: no pass of the cyclic GC over a
        # large heap (seconds) may delay its diagnostic past the guard's grace
        on_expire = gc.disable
    with Session(max_bytes=limits.max_bytes()).active(), Deadline(seconds, left, on_expire):
        yield
