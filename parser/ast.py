"""The .tg syntax tree: small slotted dataclasses named after Python's `ast` nodes.

Every node carries 1-based `line`/`col` of its first character and `end_line`/`end_col`
of the position just after its last character (Lark's convention), so a caret span
is `end_col - col` characters long when the node fits on one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(slots=True, kw_only=True)
class Node:
    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0


# ---- expressions ----

@dataclass(slots=True)
class Name(Node):
    id: str


@dataclass(slots=True)
class Constant(Node):
    value: Any  # int, float, str, bool, None or Ellipsis


@dataclass(slots=True)
class FormattedValue(Node):
    value: Node
    conversion: Optional[str]  # 'r', 's', 'a' or None
    spec: Optional["FString"]


@dataclass(slots=True)
class FString(Node):
    parts: tuple  # of str and FormattedValue


@dataclass(slots=True)
class List(Node):
    elts: tuple


@dataclass(slots=True)
class Tuple(Node):
    elts: tuple


@dataclass(slots=True)
class BinOp(Node):
    left: Node
    op: str  # the Python operator text: '+', '**', '@', ...
    right: Node


@dataclass(slots=True)
class UnaryOp(Node):
    op: str  # '-', '+', '~', 'not'
    operand: Node


@dataclass(slots=True)
class BoolOp(Node):
    op: str  # 'and' or 'or'
    values: tuple


@dataclass(slots=True)
class Compare(Node):
    left: Node
    ops: tuple  # of '<', '==', 'in', 'not in', 'is', 'is not', ...
    comparators: tuple


@dataclass(slots=True)
class IfExp(Node):
    test: Node
    body: Node
    orelse: Node


@dataclass(slots=True)
class Keyword(Node):
    arg: str
    value: Node


@dataclass(slots=True)
class Call(Node):
    func: Node
    args: tuple
    keywords: tuple  # of Keyword


@dataclass(slots=True)
class Attribute(Node):
    value: Node
    attr: str


@dataclass(slots=True)
class Subscript(Node):
    value: Node
    index: Node  # an expression, a Slice or a Tuple of them


@dataclass(slots=True)
class Slice(Node):
    lower: Optional[Node]
    upper: Optional[Node]
    step: Optional[Node]


# ---- statements ----

@dataclass(slots=True)
class Module(Node):
    body: tuple


@dataclass(slots=True)
class Assign(Node):
    targets: tuple  # `a = b = 1` has two targets
    value: Node


@dataclass(slots=True)
class AugAssign(Node):
    target: Node
    op: str  # '+', '-', ... (without '=')
    value: Node


@dataclass(slots=True)
class ExprStmt(Node):
    value: Node


@dataclass(slots=True)
class If(Node):
    test: Node
    body: tuple
    orelse: tuple


@dataclass(slots=True)
class While(Node):
    test: Node
    body: tuple


@dataclass(slots=True)
class For(Node):
    target: Node
    iter: Node
    body: tuple


@dataclass(slots=True)
class Break(Node):
    pass


@dataclass(slots=True)
class Continue(Node):
    pass


@dataclass(slots=True)
class Pass(Node):
    pass


@dataclass(slots=True)
class Param(Node):
    name: str
    default: Optional[Node]


@dataclass(slots=True)
class FunctionDef(Node):
    name: str
    params: tuple  # of Param
    body: tuple


@dataclass(slots=True)
class Return(Node):
    value: Optional[Node]


@dataclass(slots=True)
class Assert(Node):
    test: Node
    msg: Optional[Node]


@dataclass(slots=True)
class With(Node):
    context: Node
    name: Optional[str]
    body: tuple


@dataclass(slots=True)
class Import(Node):
    module: str  # dotted name, e.g. 'torch.nn'
    asname: Optional[str]
