"""Python's operator precedence, applied to operators that tg.lark parses flat, left to right.

`expr` and `test` in tg.lark are single left-recursive rules (one reduction per operator
instead of one per precedence level per operand). Each reduction hands `insert` the tree
built so far, the operator and its right operand; `insert` walks down the tree's right edge
past operators that bind looser than the new one and makes the subtree where it stops the
new operator's left operand: exactly where Python's grammar would have put it.
"""

from __future__ import annotations

from . import ast
from autodiff.text.diagnostics import TgError

# Deeper expressions are refused (the interpreter compiles expressions recursively); the
# parser refuses them as it builds, which also keeps each insertion's walk short.
MAX_EXPR_DEPTH = 200

# Binding strength, loosest first, as in Python's precedence table.
PREC = {"if": 0, "or": 1, "and": 2,
        "<": 4, ">": 4, "==": 4, ">=": 4, "<=": 4, "!=": 4, "in": 4, "not in": 4, "is": 4, "is not": 4,
        "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
        "*": 10, "/": 10, "//": 10, "%": 10, "@": 10, "**": 12}
_UNARY = {"not": 3, "-": 11, "+": 11, "~": 11}
_COMPARE, _IF, _POW = 4, 0, 12  # if-else and ** group from the right, comparisons chain


def _prec(node) -> int:
    """The precedence of an operator node, or -1 for an operand (a name, a call, ...)."""
    kind = type(node)
    if kind is ast.BinOp or kind is ast.BoolOp:
        return PREC[node.op]
    if kind is ast.UnaryOp:
        return _UNARY[node.op]
    if kind is ast.Compare:
        return _COMPARE
    if kind is ast.IfExp:
        return _IF
    return -1


def _last(node):
    kind = type(node)
    if kind is ast.BinOp:
        return node.right
    if kind is ast.UnaryOp:
        return node.operand
    if kind is ast.Compare:
        return node.comparators[-1]
    if kind is ast.BoolOp:
        return node.values[-1]
    return node.orelse  # IfExp


def _set_last(node, value) -> None:
    kind = type(node)
    if kind is ast.BinOp:
        node.right = value
    elif kind is ast.UnaryOp:
        node.operand = value
    elif kind is ast.Compare:
        node.comparators[-1] = value
    elif kind is ast.BoolOp:
        node.values[-1] = value
    else:
        node.orelse = value


_OPERATORS = frozenset({ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.IfExp})


def insert(root, op: str, right, outer: dict, test=None):
    """`root op right` with Python's precedence; returns the new root.

    Nodes in `outer` were parenthesized: they are operands whatever their operator, and as
    children they span their parentheses (`outer[id(node)][1:]` is that span). For
    `op == "if"`, `test` is the condition and `right` the else branch.
    """
    prec = PREC[op]
    path = []  # the operator nodes we went right through; they now end where `right` ends
    node = root
    while type(node) in _OPERATORS and id(node) not in outer:
        level = _prec(node)
        if level < prec or (level == prec and (prec == _POW or prec == _IF)):
            path.append(node)
            if len(path) > MAX_EXPR_DEPTH:
                raise TgError("SyntaxError", "expression nested too deeply", line=right.line,
                              col=right.col, end_col=right.col + 1)
            node = _last(node)
            continue
        if level == prec and (type(node) is ast.Compare or type(node) is ast.BoolOp):
            # a < b < c is one comparison, a and b and c one BoolOp; their lists grow in place
            if type(node) is ast.Compare:
                node.ops.append(op)
                node.comparators.append(right)
            else:
                node.values.append(right)
            path.append(node)
            node = None
        break
    span = outer.get(id(right)) if outer else None
    end_line, end_col = (span[3], span[4]) if span else (right.end_line, right.end_col)
    if node is not None:
        span = outer.get(id(node)) if outer else None
        line, col = (span[1], span[2]) if span else (node.line, node.col)
        if prec > _COMPARE:
            new = ast.BinOp(node, op, right, line=line, col=col, end_line=end_line, end_col=end_col)
        elif prec == _COMPARE:
            new = ast.Compare(node, [op], [right], line=line, col=col, end_line=end_line, end_col=end_col)
        elif prec:
            new = ast.BoolOp(op, [node, right], line=line, col=col, end_line=end_line, end_col=end_col)
        else:
            new = ast.IfExp(test, node, right, line=line, col=col, end_line=end_line, end_col=end_col)
        if not path:
            return new
        _set_last(path[-1], new)
    for above in path:
        above.end_line, above.end_col = end_line, end_col
    return root
