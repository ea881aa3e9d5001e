"""A run's files: an in-memory file system, `open` on it, and the file and path functions of
Python's `os` and `os.path` over it. Nothing here touches the disk: a program sees only the
files it wrote itself in this run, under a virtual working folder, within a size limit.

The file objects are Python's own buffered and text layers (io.BufferedReader/Writer/Random,
io.TextIOWrapper) over a raw file of ours that reads and writes a node of the in-memory
tree, so buffering, newline translation, encodings, seek/tell and every error are CPython's.

This module imports only the standard library: the torch reference's child process
(interpreter/torch_child.py), which imports nothing of autodiff, loads it by its path so
that a program run under real torch meets the same file system.
"""

from __future__ import annotations

import codecs
import errno
import io
import posixpath

CWD = "/home/tg"  # the virtual working folder (a fresh run's only folder, with its parents)
SIZE_LIMIT = 64 << 20  # bytes, all files of a run together
BUFFER_SIZE = 4096  # as CPython's open() picks on a usual Linux file system (st_blksize)
DEFAULT_ENCODING = "UTF-8"  # what open() uses in a UTF-8 locale


def _error(kind: type, code: int, *paths: str) -> OSError:
    return kind(code, _STRERROR[code], *((paths[0], None, paths[1]) if len(paths) == 2 else paths))


_STRERROR = {errno.ENOENT: "No such file or directory", errno.EEXIST: "File exists",
             errno.EISDIR: "Is a directory", errno.ENOTDIR: "Not a directory",
             errno.ENOTEMPTY: "Directory not empty", errno.ENOSPC: "No space left on device",
             errno.EBADF: "Bad file descriptor", errno.EINVAL: "Invalid argument",
             errno.EBUSY: "Device or resource busy"}


class Unbuffered(NotImplementedError):
    """A raw file is never handed out: the program holds Python's own layers only. (The
    interpreter stops a program at an error marked `tg_unsupported`, as at any name
    autodiff lacks.)"""

    tg_unsupported = True
    tg_error_class = "NotImplementedError"


def fspath(path, function: str | None = None) -> str:
    """A path argument as Python takes it (str; bytes decoded as os.fsdecode does)."""
    if isinstance(path, str):
        return path
    if isinstance(path, bytes):
        return path.decode("utf-8", "surrogateescape")
    where = f"{function}: path should be string, bytes or os.PathLike, not " if function else \
        "expected str, bytes or os.PathLike object, not "
    raise TypeError(where + type(path).__name__)


class FileSystem:
    """One run's files: path -> bytearray, and folders. Paths are absolute and normalised;
    a file removed while open keeps its bytes for the open file, as on POSIX."""

    def __init__(self, limit: int = SIZE_LIMIT) -> None:
        self.limit = limit
        self.used = 0
        self.files: dict[str, bytearray] = {}
        self.cwd = CWD
        self.folders: dict[str, None] = dict.fromkeys(_parents(CWD))  # (creation order)

    # --- paths ---------------------------------------------------------------------------------

    def absolute(self, path: str) -> str:
        """The node a path names (as a system call takes it: '' names nothing)."""
        if "\0" in path:
            raise ValueError("embedded null byte")
        if not path:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        return posixpath.normpath(posixpath.join(self.cwd, path))

    def kind(self, path: str) -> str | None:
        """'file', 'folder' or None for a path as the program gives it."""
        where = self.absolute(path)
        if where in self.files:
            return "file"
        if where in self.folders:
            return "folder"
        return None

    def _parent_ok(self, path: str, where: str) -> None:
        """The folder that would hold `where` exists (else the errors POSIX gives)."""
        parent = posixpath.dirname(where)
        if parent in self.files:
            raise _error(NotADirectoryError, errno.ENOTDIR, path)
        if parent not in self.folders:
            raise _error(FileNotFoundError, errno.ENOENT, path)

    # --- space ---------------------------------------------------------------------------------

    def grow(self, node: bytearray, size: int) -> None:
        """Let `node` reach `size` bytes, or refuse as a full disk."""
        extra = size - len(node)
        if extra <= 0:
            return
        live = any(node is n for n in self.files.values())
        if self.used + extra > self.limit:
            raise OSError(errno.ENOSPC, _STRERROR[errno.ENOSPC] + f" (a run's files hold at "
                          f"most {self.limit >> 20} MiB)")
        node.extend(bytes(extra))
        if live:
            self.used += extra

    def shrink(self, node: bytearray, size: int) -> None:
        if size < len(node):
            if any(node is n for n in self.files.values()):
                self.used -= len(node) - size
            del node[size:]

    # --- files ---------------------------------------------------------------------------------

    def node(self, path: str, *, create: bool, exclusive: bool = False,
             truncate: bool = False) -> bytearray:
        where = self.absolute(path)
        if where in self.folders:
            raise _error(IsADirectoryError, errno.EISDIR, path)
        node = self.files.get(where)
        if node is None:
            if not create:
                self._parent_ok(path, where)
                raise _error(FileNotFoundError, errno.ENOENT, path)
            self._parent_ok(path, where)
            node = self.files[where] = bytearray()
        elif exclusive:
            raise _error(FileExistsError, errno.EEXIST, path)
        if truncate:
            self.shrink(node, 0)
        return node

    def read_bytes(self, path: str) -> bytes:
        return bytes(self.node(path, create=False))

    def write_bytes(self, path: str, data: bytes) -> None:
        node = self.node(path, create=True, truncate=True)
        self.grow(node, len(data))
        node[:] = data

    def open(self, file, mode: str = "r", buffering: int = -1, encoding: str | None = None,
             errors: str | None = None, newline: str | None = None, closefd: bool = True,
             opener=None):
        """Python's open() on this file system (CPython's checks, in CPython's order)."""
        if isinstance(file, int) and not isinstance(file, bool):
            raise _error(OSError, errno.EBADF)  # no descriptor is open to a program
        if not isinstance(mode, str):
            raise TypeError(f"open() argument 'mode' must be str, not {type(mode).__name__}")
        for name, value in (("encoding", encoding), ("errors", errors), ("newline", newline)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"open() argument '{name}' must be str or None, not "
                                f"{type(value).__name__}")
        if opener is not None:
            raise TypeError("open() argument 'opener' is not supported by autodiff")
        modes = set(mode)
        if modes - set("axrwb+t") or len(mode) > len(modes):
            raise ValueError(f"invalid mode: '{mode}'")
        creating, reading, writing, appending = "x" in modes, "r" in modes, "w" in modes, "a" in modes
        updating, text, binary = "+" in modes, "t" in modes, "b" in modes
        if text and binary:
            raise ValueError("can't have text and binary mode at once")
        if creating + reading + writing + appending > 1:
            raise ValueError("must have exactly one of create/read/write/append mode")
        if not (creating or reading or writing or appending):
            raise ValueError("Must have exactly one of create/read/write/append mode and at "
                             "most one plus")
        if binary and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        if binary and errors is not None:
            raise ValueError("binary mode doesn't take an errors argument")
        if binary and newline is not None:
            raise ValueError("binary mode doesn't take a newline argument")
        if binary and buffering == 1:
            import warnings  # noqa: PLC0415 - the rare path only

            warnings.warn("line buffering (buffering=1) isn't supported in binary mode, the "
                          "default buffer size will be used", RuntimeWarning, 2)
        if newline not in (None, "", "\n", "\r", "\r\n"):
            raise ValueError(f"illegal newline value: {newline}")
        if not binary:
            info = codecs.lookup(encoding or DEFAULT_ENCODING)  # LookupError: unknown encoding
            if not getattr(info, "_is_text_encoding", True):
                raise LookupError(f"'{encoding}' is not a text encoding; use codecs.open() to "
                                  "handle arbitrary codecs")
        name = fspath(file)
        if not closefd:
            raise ValueError("Cannot use closefd=False with file name")
        node = self.node(name, create=not reading, exclusive=creating, truncate=writing)
        raw = RawFile(self, node, file, _raw_mode(creating, reading, writing, appending, updating),
                      reading or updating, not reading or updating, appending)
        if buffering == 0:
            if not binary:
                raise ValueError("can't have unbuffered text I/O")
            raise Unbuffered("open() with buffering=0 is not supported by autodiff")
        size = BUFFER_SIZE if buffering in (-1, 1) else buffering
        if updating:
            buffer = io.BufferedRandom(raw, size)
        elif reading:
            buffer = io.BufferedReader(raw, size)
        else:
            buffer = io.BufferedWriter(raw, size)
        if binary:
            return buffer
        wrapper = io.TextIOWrapper(buffer, encoding or DEFAULT_ENCODING, errors, newline,
                                   line_buffering=buffering == 1)
        wrapper.mode = mode
        return wrapper

    # --- os and os.path ------------------------------------------------------------------------

    def exists(self, path) -> bool:
        try:
            return self.kind(fspath(path)) is not None
        except (OSError, TypeError, ValueError):
            return False

    def isfile(self, path) -> bool:
        try:
            return self.kind(fspath(path)) == "file"
        except (OSError, TypeError, ValueError):
            return False

    def isdir(self, path) -> bool:
        try:
            return self.kind(fspath(path)) == "folder"
        except (OSError, TypeError, ValueError):
            return False

    def getsize(self, path) -> int:
        path = fspath(path)
        kind = self.kind(path)
        if kind is None:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        return len(self.files[self.absolute(path)]) if kind == "file" else 4096

    def listdir(self, path=".") -> list[str]:
        path = fspath(path, "listdir")
        where = self.absolute(path)
        if where in self.files:
            raise _error(NotADirectoryError, errno.ENOTDIR, path)
        if where not in self.folders:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        found = [p for p in list(self.folders) + list(self.files)
                 if p != where and posixpath.dirname(p) == where]
        return [posixpath.basename(p) for p in found]

    def mkdir(self, path, mode=0o777, *, dir_fd=None) -> None:
        path = fspath(path, "mkdir")
        where = self.absolute(path)
        if where in self.files or where in self.folders:
            raise _error(FileExistsError, errno.EEXIST, path)
        self._parent_ok(path, where)
        self.folders[where] = None

    def makedirs(self, name, mode=0o777, exist_ok=False) -> None:
        name = fspath(name, "makedirs")
        where = self.absolute(name)
        if where in self.folders and exist_ok:
            return
        if where in self.files or where in self.folders:
            raise _error(FileExistsError, errno.EEXIST, name)
        for folder in _parents(where):
            if folder in self.files:
                raise _error(NotADirectoryError, errno.ENOTDIR, name)
            self.folders.setdefault(folder, None)

    def remove(self, path, *, dir_fd=None) -> None:
        path = fspath(path, "remove")
        where = self.absolute(path)
        if where in self.folders:
            raise _error(IsADirectoryError, errno.EISDIR, path)
        node = self.files.pop(where, None)
        if node is None:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        self.used -= len(node)

    def rmdir(self, path, *, dir_fd=None) -> None:
        path = fspath(path, "rmdir")
        where = self.absolute(path)
        if where in self.files:
            raise _error(NotADirectoryError, errno.ENOTDIR, path)
        if where not in self.folders:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        if any(posixpath.dirname(p) == where for p in list(self.folders) + list(self.files)
               if p != where):
            raise _error(OSError, errno.ENOTEMPTY, path)
        if where in _parents(self.cwd):
            raise _error(OSError, errno.EBUSY, path)
        del self.folders[where]

    def rename(self, src, dst, *, src_dir_fd=None, dst_dir_fd=None) -> None:
        src, dst = fspath(src, "rename"), fspath(dst, "rename")
        source, target = self.absolute(src), self.absolute(dst)
        if source in self.folders:  # a folder moves with what it holds
            if target in self.files:
                raise _error(NotADirectoryError, errno.ENOTDIR, src, dst)
            if target == source or target.startswith(source + "/") or source in _parents(self.cwd):
                raise _error(OSError, errno.EINVAL if target != source else errno.EBUSY, src, dst)
            self._parent_ok(dst, target)
            moved = {p: p.replace(source, target, 1) for p in list(self.folders) + list(self.files)
                     if p == source or p.startswith(source + "/")}
            self.folders = {moved.get(p, p): None for p in self.folders}
            self.files = {moved.get(p, p): n for p, n in self.files.items()}
            return
        if source not in self.files:
            raise _error(FileNotFoundError, errno.ENOENT, src, dst)
        if target in self.folders:
            raise _error(IsADirectoryError, errno.EISDIR, src, dst)
        try:
            self._parent_ok(dst, target)
        except OSError as exc:
            raise _error(type(exc), exc.errno, src, dst) from None
        if target != source:
            replaced = self.files.pop(target, None)
            if replaced is not None:
                self.used -= len(replaced)
            self.files[target] = self.files.pop(source)

    def getcwd(self) -> str:
        return self.cwd

    def chdir(self, path) -> None:
        path = fspath(path, "chdir")
        where = self.absolute(path)
        if where in self.files:
            raise _error(NotADirectoryError, errno.ENOTDIR, path)
        if where not in self.folders:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        self.cwd = where

    def abspath(self, path):
        return posixpath.normpath(posixpath.join(self.cwd, fspath(path)))

    def relpath(self, path, start=None):
        if not path:
            raise ValueError("no path specified")
        return posixpath.relpath(self.abspath(path), self.abspath(start or self.cwd))

    def walk(self, top, topdown=True, onerror=None, followlinks=False):
        """os.walk, top-down or bottom-up, over the folders as they are at each step."""
        top = fspath(top)
        try:
            names = self.listdir(top)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            return
        folders = [n for n in names if self.isdir(posixpath.join(top, n))]
        files = [n for n in names if n not in folders]
        if topdown:
            yield top, folders, files
        for name in folders:
            yield from self.walk(posixpath.join(top, name), topdown, onerror, followlinks)
        if not topdown:
            yield top, folders, files


def _parents(path: str) -> list[str]:
    """`path` and the folders holding it, the outermost first ('/a/b': '/', '/a', '/a/b')."""
    found, current = [], path
    while True:
        found.append(current)
        parent = posixpath.dirname(current)
        if parent == current:
            return found[::-1]
        current = parent


def _raw_mode(creating, reading, writing, appending, updating) -> str:
    """The raw file's mode as FileIO reports it (open('a', 'w+b').mode is 'rb+')."""
    if creating:
        return "xb+" if updating else "xb"
    if appending:
        return "ab+" if updating else "ab"
    if updating:
        return "rb+"
    return "rb" if reading else "wb"


class RawFile(io.RawIOBase):
    """The unbuffered file under Python's own buffered layer: reads and writes one node."""

    def __init__(self, fs: FileSystem, node: bytearray, name, mode: str, readable: bool,
                 writable: bool, appending: bool) -> None:
        super().__init__()
        self._fs, self._node, self._name, self._mode = fs, node, name, mode
        self._readable, self._writable, self._appending = readable, writable, appending
        self._position = len(node) if appending else 0

    @property
    def name(self):
        return self._name

    @property
    def mode(self) -> str:
        return self._mode

    def readable(self) -> bool:
        self._checkClosed()
        return self._readable

    def writable(self) -> bool:
        self._checkClosed()
        return self._writable

    def seekable(self) -> bool:
        self._checkClosed()
        return True

    def readinto(self, buffer) -> int:
        self._checkClosed()
        if not self._readable:
            raise io.UnsupportedOperation("File not open for reading")
        chunk = self._node[self._position:self._position + len(buffer)]
        buffer[:len(chunk)] = chunk
        self._position += len(chunk)
        return len(chunk)

    def write(self, data) -> int:
        self._checkClosed()
        if not self._writable:
            raise io.UnsupportedOperation("File not open for writing")
        data = bytes(data)
        if self._appending:
            self._position = len(self._node)
        end = self._position + len(data)
        self._fs.grow(self._node, end)
        self._node[self._position:end] = data
        self._position = end
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        self._checkClosed()
        base = {0: 0, 1: self._position, 2: len(self._node)}.get(whence)
        if base is None:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if base + offset < 0:
            raise _error(OSError, errno.EINVAL)
        self._position = base + offset
        return self._position

    def tell(self) -> int:
        self._checkClosed()
        return self._position

    def truncate(self, size=None) -> int:
        self._checkClosed()
        if not self._writable:
            raise io.UnsupportedOperation("File not open for writing")
        size = self._position if size is None else size
        if size < 0:
            raise _error(OSError, errno.EINVAL)
        if size > len(self._node):
            self._fs.grow(self._node, size)
        else:
            self._fs.shrink(self._node, size)
        return size

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")  # no descriptor: nothing of the host is open

    def isatty(self) -> bool:
        self._checkClosed()
        return False


class Environ(dict):
    """os.environ of a run: empty at the start (never the host's), str keys and values."""

    # what a program may read of it (interpreter/sandbox.py): a dict's methods
    _tg_public = frozenset({"get", "keys", "values", "items", "pop", "setdefault", "update",
                            "copy", "clear"})

    def __setitem__(self, key, value) -> None:
        for item in (key, value):
            if not isinstance(item, str):
                raise TypeError(f"str expected, not {type(item).__name__}")
        super().__setitem__(key, value)

    def setdefault(self, key, value=None):
        if key not in self:
            self[key] = value
        return self[key]

    def update(self, *args, **kwargs) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def copy(self) -> dict:
        return dict(self)

    def __repr__(self) -> str:
        return f"environ({dict.__repr__(self)})"


# os.path's functions that compute on the text of a path alone (posixpath's own)
PURE_PATH = {name: getattr(posixpath, name) for name in (
    "join", "basename", "dirname", "split", "splitext", "normpath", "isabs", "commonprefix",
    "normcase", "splitdrive")}
PATH_CONSTANTS = {"sep": "/", "altsep": None, "extsep": ".", "pardir": "..", "curdir": ".",
                  "pathsep": ":", "devnull": "/dev/null"}
