"""Parse .tg source into the AST of `autodiff.parser.ast`.

The Lark LALR parser is built once per process, on first use.
"""

from __future__ import annotations

from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedInput, VisitError

from . import ast
from .diagnostics import EXIT_RUNTIME, EXIT_SYNTAX, TgError
from .errors import translate
from .indenter import CheckedIndenter
from .transform import ToAst

__all__ = ["parse", "parse_expression", "ast", "TgError", "EXIT_SYNTAX", "EXIT_RUNTIME"]

_GRAMMAR = Path(__file__).with_name("tg.lark")
_parser: Lark | None = None


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        _parser = Lark(_GRAMMAR.read_text(), parser="lalr", lexer="contextual",
                       start=["module", "fexpr"], postlex=CheckedIndenter(),
                       propagate_positions=True, maybe_placeholders=True)
        _skip_unit_rules(_parser)
    return _parser


def _skip_unit_rules(parser: Lark) -> None:
    """Speed: a pass-through `?rule: other` reduction just hands its child on.

    Lark would still recompute the (identical) positions at each of the ~14 precedence levels
    an atom climbs through; that was ~40% of parse time. Same result, so skip it.
    """
    callbacks = parser.parser.parser.parser.callbacks  # LALR frontend -> LALR_Parser -> _Parser
    for rule in callbacks:
        if rule.options.expand1 and not rule.alias and len(rule.expansion) == 1 \
                and not rule.expansion[0].is_term:
            callbacks[rule] = _first_child


def _first_child(children: list):
    return children[0]


def _run(text: str, start: str, filename: str, source_for_errors: str):
    parser = _get_parser()
    parser.options.postlex.filename = filename
    parser.options.postlex.whole_module = start == "module"
    try:
        tree = parser.parse(text, start=start)
    except UnexpectedInput as exc:
        raise translate(exc, source_for_errors, filename) from None
    transformer = ToAst(filename, lambda t, line, col: _parse_field(t, line, col, filename, source_for_errors))
    try:
        return transformer.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, TgError):
            raise exc.orig_exc from None
        raise


def _parse_field(text: str, line: int, col: int, filename: str, source: str) -> ast.Node:
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


def parse(source: str, filename: str = "<stdin>") -> ast.Module:
    """Parse a whole program. Raises TgError (exit code 2) for syntax errors."""
    text = source.rstrip(" \t\f")
    if not text.endswith("\n"):
        text += "\n"
    return _run(text, "module", filename, source)


def parse_expression(source: str, filename: str = "<stdin>") -> ast.Node:
    """Parse one expression (used by tests and tools)."""
    return _run(source, "fexpr", filename, source)
