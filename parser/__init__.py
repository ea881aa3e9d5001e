"""Parse .tg source into the AST of `autodiff.parser.ast`.

TgLexer makes the tokens, `lalr.parse` runs the LALR(1) tables Lark built from tg.lark
(tables.py keeps them in the user's cache), and ToAst builds the AST as rules reduce, so no
parse tree is made. Everything is set up once per process, on first use.
"""

from __future__ import annotations

import gc
import re

from . import ast, lalr, tables
from autodiff.text.diagnostics import EXIT_RUNTIME, EXIT_SYNTAX, TgError
from .errors import translate
from .lexer import TgLexer
from .transform import ToAst

__all__ = ["EXIT_RUNTIME", "EXIT_SYNTAX", "TgError", "ast", "parse", "parse_expression"]


class _Parser:
    """The lexer, the tables and the AST builder: made once per process, on first use."""

    def __init__(self) -> None:
        built = tables.load()
        self.actions = built.actions
        self.start_states = built.start_states
        self.lexer = TgLexer(built.terminals)
        self.keywords = frozenset(self.lexer.keywords)
        self.to_ast = ToAst()
        self.reducers = lalr.reducers(built.rules, self.to_ast)


_parser: _Parser | None = None


def _get_parser() -> _Parser:
    global _parser
    if _parser is None:
        _parser = _Parser()
    return _parser


def _run(text: str, start: str, filename: str, source_for_errors: str):
    parser = _get_parser()
    to_ast = parser.to_ast
    saved = to_ast.parse_fexpr, to_ast.outer  # an f-string field is parsed inside a parse
    to_ast.parse_fexpr = lambda t, line, col: _parse_field(t, line, col, filename, source_for_errors)
    to_ast.outer = {}
    collecting = gc.isenabled()
    gc.disable()  # the AST has no cycles; collections would rescan it as it grows (~12%)
    try:
        return lalr.parse(parser.lexer.lex(text), parser.actions, parser.reducers, parser.start_states[start])
    except (lalr.UnexpectedCharacters, lalr.UnexpectedToken) as exc:
        raise translate(exc, source_for_errors, filename) from None
    except TgError as exc:
        exc.filename = filename  # the lexer and ToAst do not know it
        raise
    finally:
        to_ast.parse_fexpr, to_ast.outer = saved
        if collecting:
            gc.enable()


_DOTTED = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


def _dotted_field(text: str, line: int, col: int) -> ast.Node | None:
    """`{x}`, `{w.grad}`: most fields; built directly, a parse costs ~45 µs (issue 5)."""
    if not _DOTTED.fullmatch(text):
        return None
    names = text.split(".")
    if any(name in _get_parser().keywords for name in names):
        return None  # let the parser report it
    end = col + len(names[0])
    node = ast.Name(names[0], line=line, col=col, end_line=line, end_col=end)
    for name in names[1:]:
        end += 1 + len(name)
        node = ast.Attribute(node, name, line=line, col=col, end_line=line, end_col=end)
    return node


def _parse_field(text: str, line: int, col: int, filename: str, source: str) -> ast.Node:
    node = _dotted_field(text, line, col)
    if node is not None:
        return node
    # pad the columns so errors report the field's real column, then move it to its real line
    padded = " " * max(col - 2, 0) + "(" + text.replace("\n", " ") + ")"
    try:
        node = _run(padded, "fexpr", filename, source)
    except TgError as exc:
        exc.line += line - 1
        exc.end_line += line - 1
        raise
    if line > 1:
        _shift_lines(node, line - 1)
    return node


def _shift_lines(root: ast.Node, delta: int) -> None:
    for node in ast.walk(root):
        node.line += delta
        node.end_line += delta


_INDENTED_START = re.compile(r"[ \t\f]+(?=[^ \t\f\r\n#\\])")


def parse(source: str, filename: str = "<stdin>") -> ast.Module:
    """Parse a whole program. Raises TgError (exit code 2) for syntax errors."""
    text = source.rstrip(" \t\f")
    if not text.endswith("\n"):
        text += "\n"
    indented = _INDENTED_START.match(text)
    if indented:
        col = indented.end() + 1
        raise TgError("IndentationError", "unexpected indent", filename=filename, line=1, col=col, end_col=col + 1)
    return _run(text, "module", filename, source)


def parse_expression(source: str, filename: str = "<stdin>") -> ast.Node:
    """Parse one expression (used by tests and tools)."""
    return _run(source, "fexpr", filename, source)
