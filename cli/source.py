"""Reading a program's text: a file, or standard input for '-'."""

from __future__ import annotations

import sys
from typing import TextIO

from autodiff.text.diagnostics import EXIT_LIMIT, EXIT_SYNTAX, TgError

MAX_SOURCE_BYTES = 10_000_000  # a learner's largest program is a few kilobytes


class LoadedSource:
    """A program's text (newlines made \\n) and the name its diagnostics use."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename


def display_name(path: str) -> str:
    """The name diagnostics give the program at `path` ('-' is standard input): one line, a
    control character (a newline too) or an undecodable byte shown as its escape."""
    from autodiff.text.display import visible

    return "<stdin>" if path == "-" else visible(str(path), keep="")


def load_source(path: str, stdin: TextIO | None = None) -> LoadedSource:
    """Read a program file (or stdin for '-') as text, or raise a positioned TgError."""
    # read one byte past the limit, never all of it: `-` may be /dev/zero. A FIFO with no
    # writer blocks here, under the deadline of the command (cli/limits.py)
    filename = display_name(path)
    if path == "-":
        stream = stdin or sys.stdin
        data = stream.buffer.read(MAX_SOURCE_BYTES + 1) if hasattr(stream, "buffer") else \
            stream.read(MAX_SOURCE_BYTES + 1).encode("utf-8", "surrogateescape")
    else:
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_SOURCE_BYTES + 1)
        except FileNotFoundError:
            raise _file_error(filename, "No such file or directory") from None
        except IsADirectoryError:
            raise _file_error(filename, "Is a directory") from None
        except PermissionError:
            raise _file_error(filename, "Permission denied") from None
        except OSError as exc:
            raise _file_error(filename, exc.strerror or str(exc)) from None
    return source_from_bytes(data, filename)


def source_from_bytes(data: bytes, filename: str) -> LoadedSource:
    """A program's text from the bytes read (at most MAX_SOURCE_BYTES + 1 of them)."""
    if len(data) > MAX_SOURCE_BYTES:
        raise TgError("MemoryError", f"the program is larger than {MAX_SOURCE_BYTES:,} bytes, the "
                      "limit for .tg programs", filename=filename, exit_code=EXIT_LIMIT)
    if b"\x00" in data:
        error = _file_error(filename, "source code cannot contain null bytes", "SyntaxError")
        error.raw = data  # UTF-16 (Windows Notepad's "Unicode") is full of them
        raise error
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        error = TgError("SyntaxError",
                        f"(unicode error) 'utf-8' codec can't decode byte {data[exc.start]:#04x} "
                        f"in position {exc.start}: {exc.reason}",
                        filename=filename, line=line, col=1)
        error.raw = data  # the hint says which encoding it is in (interpreter/source_hints.py)
        raise error from None
    return LoadedSource(text.replace("\r\n", "\n").replace("\r", "\n"), filename)


def _file_error(path: str, reason: str, error_class: str = "OSError") -> TgError:
    return TgError(error_class, reason, filename=path, line=0, col=0, exit_code=EXIT_SYNTAX)
