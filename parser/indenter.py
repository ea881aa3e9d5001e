"""Indentation handling: Lark's Indenter (configuration only) behind a checking pass.

The checking pass gives Python's errors, with positions, for what Lark's Indenter would
otherwise assert on or report without a place: unmatched or unclosed brackets, too deep
nesting (before anything recurses), inconsistent tabs, and bad unindents.
"""

from __future__ import annotations

from typing import Iterator

from lark import Token
from lark.indenter import Indenter

from .diagnostics import TgError

MAX_PAREN_DEPTH = 200  # CPython's limit: "too many nested parentheses"
MAX_INDENT_DEPTH = 100  # CPython's limit: "too many levels of indentation"
_CLOSE = {")": "(", "]": "[", "}": "{"}


class TgIndenter(Indenter):
    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ["LPAR", "LSQB"]
    CLOSE_PAREN_types = ["RPAR", "RSQB"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8


class CheckedIndenter:
    """Lark postlex: validates the token stream, then lets TgIndenter insert INDENT/DEDENT."""

    always_accept = (TgIndenter.NL_type,)

    def __init__(self) -> None:
        self.indenter = TgIndenter()
        self.filename = "<stdin>"
        self.whole_module = True  # False for f-string fields, which start indented on purpose

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return self.indenter.process(self._check(stream))

    def _error(self, cls: str, message: str, line: int, col: int, width: int = 1) -> TgError:
        return TgError(cls, message, filename=self.filename, line=line, col=col, end_col=col + width)

    def _check(self, stream: Iterator[Token]) -> Iterator[Token]:
        brackets: list[Token] = []
        levels = [(0, 0)]  # indentation as (width with tab=8, width with tab=1), like CPython
        first = self.whole_module
        for tok in stream:
            kind = tok.type
            if first and kind != "_NEWLINE" and tok.column > 1:
                raise self._error("IndentationError", "unexpected indent", tok.line, tok.column)
            first = False
            if kind in ("LPAR", "LSQB"):
                brackets.append(tok)
                if len(brackets) > MAX_PAREN_DEPTH:
                    raise self._error("SyntaxError", "too many nested parentheses", tok.line, tok.column)
            elif kind in ("RPAR", "RSQB"):
                if not brackets:
                    raise self._error("SyntaxError", f"unmatched '{tok}'", tok.line, tok.column)
                opener = brackets.pop()
                if str(opener) != _CLOSE[str(tok)]:
                    raise self._error("SyntaxError", f"closing parenthesis '{tok}' does not match "
                                      f"opening parenthesis '{opener}'", tok.line, tok.column)
            elif kind == "_NEWLINE" and not brackets:
                self._check_indent(tok, levels)
            yield tok
        if brackets:
            tok = brackets[-1]
            raise self._error("SyntaxError", f"'{tok}' was never closed", tok.line, tok.column)

    def _check_indent(self, tok: Token, levels: list) -> None:
        indent = tok.rsplit("\n", 1)[-1]
        if "\n" not in tok:
            return  # a comment-only token on the first line
        wide = len(indent.expandtabs(8))
        narrow = len(indent)
        line, col = tok.end_line, len(indent) + 1
        top_wide, top_narrow = levels[-1]
        if wide > top_wide:
            if narrow <= top_narrow:
                raise self._error("TabError", "inconsistent use of tabs and spaces in indentation", line, col)
            levels.append((wide, narrow))
            if len(levels) > MAX_INDENT_DEPTH:
                raise self._error("IndentationError", "too many levels of indentation", line, col)
            return
        while wide < levels[-1][0]:
            levels.pop()
        if wide != levels[-1][0]:
            raise self._error("IndentationError", "unindent does not match any outer indentation level",
                              line, col)
        if narrow != levels[-1][1]:
            raise self._error("TabError", "inconsistent use of tabs and spaces in indentation", line, col)
