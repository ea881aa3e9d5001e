"""Writing an output file (`graph -o`, `test --junit-xml`, the goldens of `test --update`).

A regular file, or none yet, is replaced atomically: a temporary file beside it, then a
rename, so a reader sees the old file or the whole new one. A symbolic link there is
replaced the same way, never written through: the path may be in a student's folder, and
the link may point at the teacher's ~/.bashrc. A character device or a FIFO (/dev/null,
/dev/stdout) is written into, as the shell's `>` does: a rename would put a regular file
where the device node was. Anything else there (a folder, a block device, a socket) is
refused.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile

from autodiff.text.i18n import N_, _

from .outcome import ToolError
from .source import display_name

_REFUSED = ((stat.S_ISDIR, N_("a folder")), (stat.S_ISBLK, N_("a block device")),
            (stat.S_ISSOCK, N_("a socket")))


def write_atomic(path: str, data: str | bytes) -> None:
    """Write `data` to `path` (see above); a ToolError says why it could not be."""
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    try:
        mode = os.stat(path).st_mode  # what a link points at: a device is written into
    except OSError:
        mode = None  # nothing there (or a dangling link): a new file
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        return _write_into(path, raw)
    if mode is not None and not stat.S_ISREG(mode):
        kind = next((kind for test, kind in _REFUSED if test(mode)), N_("another kind of special file"))
        raise ToolError(_("cannot write {path}: it is {kind}; an output file must be a regular "
                          "file (replaced), a character device or a FIFO (written into)").format(
            path=display_name(path), kind=_(kind)))
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".autodiff-", dir=folder)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _cannot_write(path, exc) from None
        raise


def _write_into(path: str, raw: bytes) -> None:
    """Write into a device or FIFO; a FIFO nobody reads is an error, not a wait forever."""
    import fcntl

    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise ToolError(_("cannot write {path}: no process reads that FIFO").format(
                path=display_name(path))) from None
        raise _cannot_write(path, exc) from None
    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    finally:
        os.close(fd)


def _cannot_write(path: str, exc: OSError) -> ToolError:
    return ToolError(_("cannot write {path}: {reason}").format(
        path=display_name(path), reason=exc.strerror or exc))
