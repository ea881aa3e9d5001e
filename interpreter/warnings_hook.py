"""Warnings raised while a program runs (e.g. torch's non-leaf `.grad` warning), shown at
the program's line as Python shows a warning: `FILE:LINE: Category: message`."""

from __future__ import annotations

import sys
import warnings
from typing import TextIO

from autodiff.text.diagnostics import source_lines

from .position import current_node

class ProgramWarnings:
    """Context manager: route warnings to `err`, once per (line, message), as Python does."""

    def __init__(self, filename: str, source: str, err: TextIO | None):
        self.filename = filename
        self.lines = source_lines(source)
        self.err = err
        self.seen: set = set()

    def __enter__(self) -> "ProgramWarnings":
        self._saved = warnings.catch_warnings()
        self._saved.__enter__()
        warnings.simplefilter("always")
        warnings.showwarning = self.show
        return self

    def __exit__(self, *exc) -> None:
        self._saved.__exit__(*exc)

    def show(self, message, category, filename, lineno, file=None, line=None) -> None:
        node = current_node()
        where = node.line if node is not None else 0
        key = (where, str(message))
        if key in self.seen:
            return
        self.seen.add(key)
        err = self.err or sys.stderr
        err.write(f"{self.filename}:{where}: {category.__name__}: {message}\n")
        if 1 <= where <= len(self.lines):
            err.write(f"  {self.lines[where - 1].strip()}\n")
        from autodiff.interpreter.hints import warning_hint

        err.write(warning_hint(category.__name__, str(message), self.lines, node))
