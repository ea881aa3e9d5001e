"""Writing output files atomically: a temporary file beside the target, then a rename."""

from __future__ import annotations

import os
import tempfile

from .outcome import ToolError


def write_atomic(path: str, data: str | bytes) -> None:
    """Write `data` to `path` so a reader sees the old file or the whole new one."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".autodiff-", dir=folder)
    except OSError as exc:
        raise ToolError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise ToolError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
