"""`autodiff run`: load a program, run it, show diagnostics and a summary of its tensors.

Library code: the Typer command in main.py is one call into `run_path`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from autodiff.parser.diagnostics import EXIT_SYNTAX, TgError

EXIT_OK = 0
EXIT_INTERRUPTED = 130


@dataclass
class LoadedSource:
    text: str
    filename: str


def load_source(path: str, stdin: TextIO | None = None) -> LoadedSource:
    """Read a program file (or stdin for '-') as text, or raise a positioned TgError."""
    if path == "-":
        stream = stdin or sys.stdin
        data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()
        filename = "<stdin>"
    else:
        filename = path
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            raise _file_error(path, "No such file or directory") from None
        except IsADirectoryError:
            raise _file_error(path, "Is a directory") from None
        except PermissionError:
            raise _file_error(path, "Permission denied") from None
        except OSError as exc:
            raise _file_error(path, exc.strerror or str(exc)) from None
    if b"\x00" in data:
        raise _file_error(filename, "source code cannot contain null bytes", "SyntaxError")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise TgError("SyntaxError",
                      f"(unicode error) 'utf-8' codec can't decode byte {data[exc.start]:#04x} "
                      f"in position {exc.start}: {exc.reason}",
                      filename=filename, line=line, col=1) from None
    return LoadedSource(text.replace("\r\n", "\n").replace("\r", "\n"), filename)


def _file_error(path: str, reason: str, error_class: str = "OSError") -> TgError:
    return TgError(error_class, f"can't open file '{path}': {reason}" if error_class == "OSError"
                   else reason, filename=path, line=0, col=0, exit_code=EXIT_SYNTAX)


def run_path(path: str, *, quiet: bool = False, out: TextIO | None = None,
             err: TextIO | None = None) -> int:
    """Run the program at `path` and return the process exit code."""
    from autodiff.interpreter import run_source

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        source = load_source(path)
    except TgError as exc:
        err.write(exc.headline() + "\n")
        return exc.exit_code
    try:
        result = run_source(source.text, source.filename, out=out, err=err)
    except KeyboardInterrupt:
        out.flush()
        err.write("autodiff: interrupted\n")
        return EXIT_INTERRUPTED
    out.flush()
    if result.error is not None:
        err.write(result.error.render(source.text) + "\n")
        return result.error.exit_code
    if not quiet:
        from .summary import summarize

        text = summarize(result.globals)
        if text:
            out.write("\n" + text)
    return EXIT_OK
