"""TgLexer: one compiled regular expression turns .tg source into the grammar's terminals.

It matches the grammar's terminals (their patterns and keywords come from tg.lark, through
tables.py) in one `re` call a token, turns line breaks outside brackets into _NEWLINE and
the _INDENT/_DEDENT tokens of Python's indentation rules, and gives Python's errors, with
positions: unmatched or unclosed brackets, too deep nesting (before anything recurses),
inconsistent tabs and bad unindents. Keywords are always keywords, as in Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from autodiff.text.diagnostics import TgError
from .lalr import Token, UnexpectedCharacters

MAX_PAREN_DEPTH = 200  # CPython's limit: "too many nested parentheses"
MAX_INDENT_DEPTH = 100  # CPython's limit: "too many levels of indentation"
_OPEN = frozenset(("LPAR", "LSQB", "LBRACE"))
_NL, _INDENT, _DEDENT = "_NEWLINE", "_INDENT", "_DEDENT"
_PAIRS = {")": "(", "]": "[", "}": "{"}
_BRACKETS = frozenset("()[]{}")
_SPACES = re.compile(r"[\t \f]*")


def _error(cls: str, message: str, line: int, col: int) -> TgError:
    return TgError(cls, message, line=line, col=col, end_col=col + 1)  # _run adds the filename


class TgLexer:
    """Made once from the grammar's terminals, as (name, 'str' or 're', literal or regexp)."""

    def __init__(self, terminals: list) -> None:
        patterns = {name: value for name, kind, value in terminals if kind == "re"}
        literals = {value: name for name, kind, value in terminals if kind == "str"}
        self.keywords = {word: name for word, name in literals.items() if word.isidentifier()}
        self.symbols = {symbol: name for symbol, name in literals.items() if not symbol.isidentifier()}
        symbols = sorted(self.symbols, key=len, reverse=True)
        groups = [(name, patterns[name]) for name in (_NL, "STRING", "IMAG", "FLOAT", "INT", "NAME", "AUGOP")]
        groups += [("OP", "|".join(map(re.escape, symbols))), ("CONT", r"\\[\t \f]*\r?\n")]
        alternatives = "|".join(f"(?P<{name}>{regexp})" for name, regexp in groups)
        # skipping the spaces before a token in the same match saves a loop turn per token
        self.match = re.compile(rf"[\t \f]*(?:{alternatives})").match

    def lex(self, text: str) -> Iterator[Token]:
        match, keywords, symbols = self.match, self.keywords, self.symbols
        pos, line, line_start = 0, 1, 0
        brackets: list[tuple[str, int, int]] = []  # the open ones, as (bracket, line, column)
        levels = [(0, 0)]  # indentation as (width with tab=8, width with tab=1), like CPython
        last_indent = ""
        newline = None
        while True:
            m = match(text, pos)
            if m is None:
                start = _SPACES.match(text, pos).end()
                if start == len(text):
                    break
                raise UnexpectedCharacters(start, line, start - line_start + 1)
            kind = m.lastgroup
            start, pos = m.span(kind)
            value = text[start:pos]
            column = start - line_start + 1
            if kind == "NAME":  # the most common tokens first: one line, no checks
                yield Token(keywords.get(value, "NAME"), value, line, column, line, pos - line_start + 1)
                continue
            if kind == "OP":
                kind = symbols[value]
                if value in _BRACKETS:
                    if kind in _OPEN:
                        brackets.append((value, line, column))
                        if len(brackets) > MAX_PAREN_DEPTH:
                            raise _error("SyntaxError", "too many nested parentheses", line, column)
                    elif not brackets:
                        raise _error("SyntaxError", f"unmatched '{value}'", line, column)
                    else:
                        opener = brackets.pop()[0]
                        if opener != _PAIRS[value]:
                            raise _error("SyntaxError", f"closing parenthesis '{value}' does not match "
                                         f"opening parenthesis '{opener}'", line, column)
                yield Token(kind, value, line, column, line, pos - line_start + 1)
                continue
            first_line = line
            newlines = value.count("\n")
            if newlines:
                line += newlines
                line_start = start + value.rindex("\n") + 1
            if kind == _NL:
                if brackets or not newlines:
                    continue  # a line break inside brackets, or a comment ending the text
                newline = Token(kind, value, first_line, column, line, pos - line_start + 1)
                indent = value[line_start - start:]
                if indent == last_indent:
                    yield newline  # same indentation as the line before: no INDENT/DEDENT
                    continue
                change = self._check_indent(indent, levels, line)
                last_indent = indent
                yield newline
                if change > 0:
                    yield newline.borrow(_INDENT, indent)
                for _ in range(-change):
                    yield newline.borrow(_DEDENT, indent)
                continue
            if kind == "CONT":
                continue
            yield Token(kind, value, first_line, column, line, pos - line_start + 1)
        if brackets:
            bracket, line, column = brackets[-1]
            raise _error("SyntaxError", f"'{bracket}' was never closed", line, column)
        for _ in levels[1:]:  # close the blocks still open
            yield newline.borrow(_DEDENT, "")
        if newline is not None:
            yield newline.borrow("$END", "")
        else:  # a text without a line break: an f-string field
            column = pos - line_start + 1
            yield Token("$END", "", line, column, line, column)

    @staticmethod
    def _check_indent(indent: str, levels: list, line: int) -> int:
        """1 for an indent, -n for n dedents, 0 for the same level; raises Python's errors."""
        wide = len(indent.expandtabs(8))
        narrow = len(indent)
        col = narrow + 1
        top_wide, top_narrow = levels[-1]
        if wide > top_wide:
            if narrow <= top_narrow:
                raise _error("TabError", "inconsistent use of tabs and spaces in indentation", line, col)
            levels.append((wide, narrow))
            if len(levels) > MAX_INDENT_DEPTH:
                raise _error("IndentationError", "too many levels of indentation", line, col)
            return 1
        depth = len(levels)
        while wide < levels[-1][0]:
            levels.pop()
        if wide != levels[-1][0]:
            raise _error("IndentationError", "unindent does not match any outer indentation level",
                         line, col)
        if narrow != levels[-1][1]:
            raise _error("TabError", "inconsistent use of tabs and spaces in indentation", line, col)
        return len(levels) - depth
