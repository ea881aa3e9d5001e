"""Parse .tg source into the AST of `autodiff.parser.ast`.

The Lark LALR parser reads tokens from TgLexer and builds the AST as it reduces (ToAst is
its transformer), so no parse tree is made. It is built once per process, on first use,
from Lark's cache file when there is one (see `_cache_file`).
"""

from __future__ import annotations

import gc
import hashlib
import os
import re
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedInput

from . import ast
from .diagnostics import EXIT_RUNTIME, EXIT_SYNTAX, TgError
from .errors import translate
from .lexer import TgLexer
from .transform import ToAst

__all__ = ["EXIT_RUNTIME", "EXIT_SYNTAX", "TgError", "ast", "parse", "parse_expression"]

_GRAMMAR = Path(__file__).with_name("tg.lark")
_parser: Lark | None = None
_to_ast = ToAst()
_KEYWORDS: set[str] = set()  # the grammar's keywords, read from its terminals


def _cache_file(grammar: str) -> str | None:
    """Where Lark may keep the built tables: the user's cache directory, if it is writable.

    Loading them takes ~20 ms instead of ~400 ms for the LALR analysis. Lark checks the
    grammar, options and versions stored in the file and rebuilds when they differ; it
    also carries on without a cache when the file cannot be read or written.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "autodiff-tg")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return None
    digest = hashlib.sha256(grammar.encode()).hexdigest()[:16]
    return os.path.join(folder, f"tg-parser-{digest}.lark")


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        grammar = _GRAMMAR.read_text()
        cache = _cache_file(grammar)
        cached = cache is not None and os.path.exists(cache)
        _parser = _build(grammar, cache)
        if cache is not None and not cached and os.path.exists(cache):
            # Load what Lark just saved: a loaded parser names rules with plain strings, where
            # a built one uses Lark's Token, whose Python __eq__ runs on every reduction (~8%).
            _parser = _build(grammar, cache)
        _KEYWORDS.update(t.pattern.value for t in _parser.terminals
                         if t.pattern.type == "str" and t.pattern.value.isidentifier())
    return _parser


def _build(grammar: str, cache: str | None) -> Lark:
    return Lark(grammar, parser="lalr", lexer=TgLexer, start=["module", "fexpr"], transformer=_to_ast,
                maybe_placeholders=False, cache=cache or False)


def _run(text: str, start: str, filename: str, source_for_errors: str):
    parser = _get_parser()
    saved = _to_ast.parse_fexpr, _to_ast.outer  # an f-string field is parsed inside a parse
    _to_ast.parse_fexpr = lambda t, line, col: _parse_field(t, line, col, filename, source_for_errors)
    _to_ast.outer = {}
    collecting = gc.isenabled()
    gc.disable()  # the AST has no cycles; collections would rescan it as it grows (~12%)
    try:
        return parser.parse(text, start=start)
    except UnexpectedInput as exc:
        raise translate(exc, source_for_errors, filename) from None
    except TgError as exc:
        exc.filename = filename  # the lexer and ToAst do not know it
        raise
    finally:
        _to_ast.parse_fexpr, _to_ast.outer = saved
        if collecting:
            gc.enable()


_DOTTED = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


def _dotted_field(text: str, line: int, col: int) -> ast.Node | None:
    """`{x}`, `{w.grad}`: most fields; built directly, a parse costs ~45 µs (issue 5)."""
    if not _DOTTED.fullmatch(text):
        return None
    names = text.split(".")
    if any(name in _KEYWORDS for name in names):
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
    # pad the columns so Lark reports the field's real column, then move it to its real line
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
    stack = [root]
    while stack:
        node = stack.pop()
        node.line += delta
        node.end_line += delta
        for name in node.__slots__:
            value = getattr(node, name)
            if isinstance(value, ast.Node):
                stack.append(value)
            elif isinstance(value, tuple):
                stack.extend(v for v in value if isinstance(v, ast.Node))


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
