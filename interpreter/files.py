"""The language's `open` and its modules `os` and `os.path`, on the run's in-memory files
(engine/core/files.py, held by the run's session): a program saves and reads back its own
files and folders, and never sees the host's. `os.environ` is the run's own mapping and
starts empty. The rest of `os` (processes, descriptors, users, the host's clock and
devices) stops a program as not supported by autodiff.
"""

from __future__ import annotations

import io
import os as _host_os  # for the names of Python's os alone: which ones to refuse by name
import posixpath
from typing import Any

from autodiff.engine.core import files as _files
from autodiff.engine.core.session import files

from .pybuiltins import SHOWN_TYPES, TypeView, builtin

# Python's file objects, as `open` returns them: what a program may read of each
FILE_PUBLIC = {
    io.TextIOWrapper: frozenset(
        "read readline readlines write writelines close closed seek tell flush name mode "
        "encoding errors newlines readable writable seekable truncate isatty line_buffering"
        .split()),
    **dict.fromkeys((io.BufferedReader, io.BufferedWriter, io.BufferedRandom), frozenset(
        "read read1 readline readlines write writelines close closed seek tell flush name "
        "mode readable writable seekable truncate isatty peek".split())),
}

# `type(f)` prints as Python's class and tests isinstance, but makes no file object
SHOWN_TYPES.update((kind, TypeView(kind, f"_io.{kind.__name__}")) for kind in FILE_PUBLIC)


def open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,  # noqa: A001
         closefd=True, opener=None):
    return files().open(file, mode, buffering, encoding, errors, newline, closefd, opener)


OPEN = builtin("open", open)


def _on_files(name: str, python_builtin: bool = True, module: str = "os"):
    """os's function `name`, on the running program's files (a C builtin of Python's, or a
    Python function of `module`, as `type()` shows it)."""
    def call(*args, **kwargs):
        return getattr(files(), name)(*args, **kwargs)
    return builtin(name, call) if python_builtin else _python_function(call, name, module)


def _python_function(function, name: str, module: str):
    """`function` named as Python's own `module.name` (`print(os.path.exists)`)."""
    function.__name__ = function.__qualname__ = name
    function.__module__ = module
    return function


class PathNamespace:
    """`os.path`: posixpath's functions of a path's text, and the ones that look at files
    looking at the run's."""

    _tg_module_name = "os.path"
    _FILES = ("exists", "isfile", "isdir", "getsize", "abspath", "relpath")
    _tg_public = frozenset({*_files.PURE_PATH, *_files.PATH_CONSTANTS, *_FILES, "lexists",
                            "realpath", "islink", "ismount"})

    def __init__(self) -> None:
        members = dict(_files.PURE_PATH, **_files.PATH_CONSTANTS)
        for name in self._FILES:
            members[name] = _on_files(name, python_builtin=False, module="posixpath")
        members["lexists"] = _on_files("exists", python_builtin=False, module="posixpath")
        members["realpath"] = _on_files("abspath", python_builtin=False, module="posixpath")
        _python_function(members["lexists"], "lexists", "posixpath")
        _python_function(members["realpath"], "realpath", "posixpath")  # (no links here)
        members["islink"], members["ismount"] = _never("islink"), _never("ismount")
        self.__dict__.update(members)

    def __repr__(self) -> str:
        return "<module 'posixpath' (frozen)>"


def _never(name: str):
    """islink, ismount: never true of the run's files (no links, no mounts)."""
    def never(path) -> bool:
        _files.fspath(path)
        return False
    return _python_function(never, name, "posixpath")


class OsNamespace:
    """`os`: its path and folder functions on the run's files, its constants, and an
    environment of the run's own."""

    _tg_module_name = "os"
    _BUILTINS = ("getcwd", "chdir", "listdir", "mkdir", "remove", "rmdir", "rename")
    _tg_public = frozenset({*_BUILTINS, *_files.PATH_CONSTANTS, "path", "environ", "getenv",
                            "name", "linesep", "fspath", "walk", "makedirs", "unlink", "replace"})

    def __init__(self) -> None:
        environ = _files.Environ()

        def getenv(key, default=None):
            return environ.get(key, default)
        _python_function(getenv, "getenv", "os")

        members: dict[str, Any] = {
            "path": PathNamespace(), "environ": environ, "getenv": getenv, "name": "posix",
            "linesep": "\n", "fspath": builtin("fspath", _fspath), "walk": _on_files("walk", python_builtin=False),
            "makedirs": _on_files("makedirs", python_builtin=False),
            **{k: v for k, v in _files.PATH_CONSTANTS.items() if k != "altsep"}}
        members["altsep"] = None
        for name in self._BUILTINS:
            members[name] = _on_files(name)
        members["unlink"] = builtin("unlink", members["remove"])
        members["replace"] = builtin("replace", members["rename"])
        self.__dict__.update(members)

    def __repr__(self) -> str:
        return "<module 'os' (frozen)>"


def _fspath(path):
    if isinstance(path, (str, bytes)):
        return path
    raise TypeError(f"expected str, bytes or os.PathLike object, not {type(path).__name__}")


# the public names of Python's own os and os.path: a program's use of one of these that
# the language lacks stops it as not supported, any other name is Python's AttributeError
HOST_NAMES = {"os": frozenset(n for n in dir(_host_os) if not n.startswith("_")),
              "os.path": frozenset(n for n in dir(posixpath) if not n.startswith("_"))}
