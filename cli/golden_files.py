"""`autodiff test`'s files: the programs under the given paths, and the expected files beside
each, read and written only when they are regular files.

A tested folder is a student's: its NAME.out may be a symbolic link to /etc/passwd, a FIFO
or a device, its tree thousands of levels deep. So folders are walked without recursion and
without following a link; a program or expected file that is anything but a regular file
(a link, even to a regular file inside the folder) is reported as such, never opened; and
one that is, is opened without following a link and checked again on what was opened.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Callable, Iterable

from autodiff.text.i18n import _

from .outcome import UsageError
from .source import display_name

SKIP_DIRS = {"__pycache__", "node_modules"}
MAX_EXPECTED_BYTES = 100_000_000  # an expected output larger than this is not a golden
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


class Unreadable(Exception):
    """A program or expected file that cannot be used: not a regular file, not UTF-8 text,
    no permission."""


def discover(paths: Iterable[str], warn: Callable[[str], None] | None = None) -> list[Path]:
    """The .tg files named or found (in folders, depth first, each folder's files before its
    subfolders, by name; hidden folders left out), each once. `warn` hears of a folder that
    cannot be read (its programs are not found)."""
    found: dict[Path, None] = {}
    for raw in paths:
        top = Path(raw)
        if top.is_dir():
            for program in _walk(top, warn):
                found[program] = None
        elif os.path.lexists(top):
            found[top] = None
        else:
            raise UsageError(_("no such file or folder: {path}").format(path=display_name(raw)))
    return list(found)


def _walk(top: Path, warn: Callable[[str], None] | None) -> Iterable[Path]:
    stack, seen = [top], set()
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                entries = sorted(entries, key=lambda e: e.name)
            info = os.stat(folder)
        except OSError as exc:
            if warn is not None:
                warn(_("autodiff: warning: cannot read the folder {folder}: {reason}; its "
                       "programs are not tested").format(folder=display_name(folder),
                                                          reason=exc.strerror or exc))
            continue
        if (info.st_dev, info.st_ino) in seen:  # a bind mount of a folder inside itself
            continue
        seen.add((info.st_dev, info.st_ino))
        subfolders = []
        for entry in entries:
            try:
                is_folder = entry.is_dir(follow_symlinks=False)  # a link is never walked
            except OSError:
                is_folder = False
            if is_folder:
                if not entry.name.startswith(".") and entry.name not in SKIP_DIRS:
                    subfolders.append(Path(entry.path))
            elif entry.name.endswith(".tg"):  # a link or a FIFO too: check_program says so
                yield Path(entry.path)
        stack.extend(reversed(subfolders))


def expected_paths(program: Path) -> tuple[Path, Path]:
    """NAME.out and NAME.err beside NAME.tg."""
    return program.with_suffix(".out"), program.with_suffix(".err")


def is_regular(path: Path) -> bool:
    """True for a regular file, False when nothing is there; raises Unreadable for anything
    else (a symbolic link, a FIFO, a device, a folder), without opening it."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise Unreadable(f"cannot read {display_name(path)}: {exc.strerror or exc}") from None
    _refuse(path, mode)
    return True


def _refuse(path: Path, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise Unreadable(f"cannot read {display_name(path)}: {os.strerror(errno.EISDIR)}")
    for test, kind in _KINDS:
        if test(mode):
            raise Unreadable(f"{display_name(path)} is {kind}, not a regular file: autodiff "
                             "test neither reads nor writes it")
    if not stat.S_ISREG(mode):
        raise Unreadable(f"{display_name(path)} is not a regular file: autodiff test neither "
                         "reads nor writes it")


def read_regular(path: Path, limit: int) -> bytes:
    """At most `limit` + 1 bytes of the regular file `path`; raises Unreadable otherwise."""
    if not is_regular(path):
        raise Unreadable(f"cannot read {display_name(path)}: {os.strerror(errno.ENOENT)}")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | \
        getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise Unreadable(f"cannot read {display_name(path)}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        _refuse(path, os.fstat(fd).st_mode)  # what was opened, should the name have changed
        return handle.read(limit + 1)


def read_text(path: Path) -> str:
    data = read_regular(path, MAX_EXPECTED_BYTES)
    if len(data) > MAX_EXPECTED_BYTES:
        raise Unreadable(f"cannot read {display_name(path)}: larger than "
                         f"{MAX_EXPECTED_BYTES:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"cannot read {display_name(path)}: not UTF-8 text (byte "
                         f"{data[exc.start]:#04x} at offset {exc.start})") from None
