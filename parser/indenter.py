"""Indentation: Lark's Indenter, configuration only, turns each _NEWLINE into INDENT/DEDENTs.

TgLexer (lexer.py) calls `handle_NL` for the line breaks outside brackets (it has already
dropped the others, and given Python's errors for bad indentation), rather than running
the Indenter as Lark's postlex: that saves a generator step for every other token.
"""

from __future__ import annotations

from lark.indenter import Indenter


class TgIndenter(Indenter):
    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ("LPAR", "LSQB")
    CLOSE_PAREN_types = ("RPAR", "RSQB")
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8
