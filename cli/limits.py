"""The resource limits of a run (`--max-memory`, `--timeout`), applied in one place."""

from __future__ import annotations

import re
from contextlib import contextmanager

from .outcome import UsageError

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_ADDRESS_SPACE_SLACK = 2 << 30  # code, heap and thread stacks beyond the largest tensor


def parse_size(text: str) -> int:
    """'512M', '2G', '1.5g', '100000' -> bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", text.lower())
    if not match:
        raise UsageError(f"--max-memory: expected a size such as 512M or 2G, got {text!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


class RunLimits:
    """What `--max-memory` and `--timeout` said; checked when applied (inside `guarded`, so
    a bad value is a usage message, not a traceback)."""

    def __init__(self, max_memory: int | str | None = None, timeout: float | None = None,
                 whole_process: bool = False) -> None:
        self.max_memory = max_memory  # bytes for one tensor, or text such as "512M"
        self.timeout = timeout  # seconds of wall time; None for no limit
        # also cap the whole process's address space (only for a process that runs one
        # program, i.e. the console script, never inside a test runner)
        self.whole_process = whole_process


@contextmanager
def applied(limits: RunLimits | None):
    """Apply `limits` while the block runs: an engine session with the tensor limit (the
    runs inside start from it), the time limit, and (for a whole process) an address-space
    cap so no program can eat the machine."""
    from autodiff.engine.session import Session, current
    from autodiff.interpreter.deadline import Deadline

    limits = limits or RunLimits()
    max_memory = limits.max_memory
    if isinstance(max_memory, str):
        max_memory = parse_size(max_memory)
    if limits.timeout is not None and limits.timeout <= 0:
        raise UsageError("--timeout: expected a positive number of seconds")
    session = Session(max_bytes=current().max_bytes if max_memory is None else max_memory)
    if limits.whole_process and session.max_bytes:
        _cap_address_space(session.max_bytes + _ADDRESS_SPACE_SLACK)
    with session.active(), Deadline(limits.timeout):
        yield


def _cap_address_space(limit: int) -> None:
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        if soft == resource.RLIM_INFINITY or soft > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass  # a platform without rlimits keeps the per-tensor check only
