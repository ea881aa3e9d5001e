"""The one diagnostic exception shared by the parser and the interpreter."""

from __future__ import annotations

import re

from .display import caret_line, visible  # what a terminal shows (CJK text: two columns)

EXIT_SYNTAX = 2  # syntax errors and unsupported constructs
EXIT_RUNTIME = 1  # errors raised while the program runs
EXIT_LIMIT = 3  # a resource limit stopped it: time, memory, input, integer or string size


_LINE_END = re.compile(r"\r\n|\r|\n")


def source_lines(source: str) -> list[str]:
    """The program's lines as Python's tokenizer counts them (and the lexer, on a source
    whose line ends are made \\n): str.splitlines would also split at U+2028, \\f, \\x1c, ...
    and quote the wrong line."""
    lines = _LINE_END.split(source)
    if lines[-1] == "":
        lines.pop()
    return lines


def restored(cls: type, args: tuple, state: dict) -> BaseException:
    """An exception of `cls` with these args and attributes, its __init__ not called: how an
    exception whose __init__ takes other arguments than its args crosses a pickle."""
    made = cls.__new__(cls, *args)
    made.args = args
    made.__dict__.update(state)
    return made


class TgError(Exception):
    """A program error positioned in the source (1-based line/col, exclusive end_col).

    `exception` is the Python exception a run-time error stands for, which a program's
    `except` clause may catch; None for errors no program can catch (syntax, limits of
    autodiff, sandbox refusals)."""

    exception: BaseException | None = None

    def __reduce__(self):  # (it crosses process pools: rebuilt from its state, not its args)
        return restored, (type(self), self.args, self.__dict__)

    def __init__(self, error_class: str, message: str, *, filename: str = "<stdin>",
                 line: int = 0, col: int = 0, end_line: int | None = None,
                 end_col: int | None = None, exit_code: int = EXIT_SYNTAX) -> None:
        super().__init__(f"{error_class}: {message}")
        self.error_class = error_class
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.end_line = line if end_line is None else end_line
        self.end_col = end_col
        self.exit_code = exit_code

    def at(self, node, filename: str | None = None) -> "TgError":
        """Position this error at an AST node (used when the error had no position yet)."""
        self.line, self.col = node.line, node.col
        self.end_line, self.end_col = node.end_line, node.end_col
        if filename is not None:
            self.filename = filename
        return self

    def headline(self) -> str:
        if self.line <= 0 and self.error_class == "OSError":  # the file itself, as a shell says it
            return f"{self.filename}: {self.message}"
        tail = f": {self.message}" if self.message else ""  # a bare `AssertionError`, as Python shows it
        where = f"{self.filename}:{self.line}:{self.col}" if self.line > 0 else self.filename
        return f"{where}: {self.error_class}{tail}"

    def render(self, source: str) -> str:
        """`FILE:LINE:COL: Class: message`, the source line, and a caret line under the span."""
        lines = source_lines(source)
        if not 1 <= self.line <= len(lines):
            return self.headline()
        text = lines[self.line - 1].rstrip("\r")
        col = max(self.col, 1)
        width = 1
        if self.end_col is not None and self.end_line == self.line and self.end_col > col:
            width = self.end_col - col
        elif self.end_line is not None and self.end_line > self.line:
            width = max(len(text.rstrip()) - col + 1, 1)  # span continues on later lines
        text, col, width = _window(text, col, width)
        # a control character is quoted as its escape; the caret line counts the escape's width
        quoted = visible(text, keep="\t")
        return f"{self.headline()}\n    {quoted}\n    {caret_line(text, col, width)}"


MAX_QUOTED = 240  # characters of a source line a diagnostic quotes: a line can be megabytes


def _window(text: str, col: int, width: int) -> tuple[str, int, int]:
    """A long line cut to a window around the caret, marked with '...' where cut."""
    if len(text) <= MAX_QUOTED:
        return text, col, width
    width = min(width, MAX_QUOTED // 2)
    start = max(0, min(col - 1 - MAX_QUOTED // 4, len(text) - MAX_QUOTED))
    head = "..." if start else ""
    tail = "..." if start + MAX_QUOTED < len(text) else ""
    return head + text[start: start + MAX_QUOTED] + tail, col - start + len(head), width
