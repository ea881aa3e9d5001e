"""The .tg syntax tree: small slotted classes named after Python's `ast` nodes.

Every node carries 1-based `line`/`col` of its first character and `end_line`/`end_col`
of the position just after its last character (Lark's convention), so a caret span
is `end_col - col` characters long when the node fits on one line. A node is built as
`Name("x", line=1, col=5, end_line=1, end_col=6)`: its fields in `_fields` order, then
the span by keyword. Plain classes, not dataclasses: making 33 dataclasses cost ~10 ms of
every start-up (issue 5). Node's generic constructor costs twice a written-out one, so the
five nodes made most often (70 % of a typical parse) write theirs out.
"""

from __future__ import annotations


class Node:
    __slots__ = ("line", "col", "end_line", "end_col")
    _fields: tuple[str, ...] = ()  # a node's own fields; `__slots__` is the same tuple

    def __init__(self, *values, line: int = 0, col: int = 0, end_line: int = 0, end_col: int = 0) -> None:
        if len(values) != len(self._fields):
            raise TypeError(f"{type(self).__name__} takes {len(self._fields)} fields, got {len(values)}")
        for name, value in zip(self._fields, values):
            setattr(self, name, value)
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields + Node.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # mutable and compared by value

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields + Node.__slots__, self._values()))
        return f"{type(self).__name__}({fields})"



def walk(root: Node):
    """Every node under `root`, root included (in no particular order), as Python's ast.walk."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        for name in node._fields:
            value = getattr(node, name)
            if isinstance(value, Node):
                stack.append(value)
            elif isinstance(value, (tuple, list)):
                stack.extend(v for v in value if isinstance(v, Node))


# ---- expressions ----

class Name(Node):
    __slots__ = _fields = ('id',)

    def __init__(self, id, *, line=0, col=0, end_line=0, end_col=0):  # a hot node: written out
        self.id = id
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


class Constant(Node):
    # value: int, float, str, bool, None or Ellipsis
    __slots__ = _fields = ('value',)

    def __init__(self, value, *, line=0, col=0, end_line=0, end_col=0):
        self.value = value
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


class FormattedValue(Node):
    # conversion: 'r', 's', 'a' or None
    __slots__ = _fields = ('value', 'conversion', 'spec')


class FString(Node):
    # parts: of str and FormattedValue
    __slots__ = _fields = ('parts',)


class List(Node):
    __slots__ = _fields = ('elts',)


class Tuple(Node):
    __slots__ = _fields = ('elts',)


class BinOp(Node):
    # op: the Python operator text: '+', '**', '@', ...
    __slots__ = _fields = ('left', 'op', 'right')

    def __init__(self, left, op, right, *, line=0, col=0, end_line=0, end_col=0):
        self.left, self.op, self.right = left, op, right
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


class UnaryOp(Node):
    # op: '-', '+', '~', 'not'
    __slots__ = _fields = ('op', 'operand')


class BoolOp(Node):
    # op: 'and' or 'or'; values: a list (the parser appends to it as it meets each operand)
    __slots__ = _fields = ('op', 'values')


class Compare(Node):
    # ops: a list of '<', '==', 'in', 'not in', 'is', 'is not', ...; comparators a list too
    __slots__ = _fields = ('left', 'ops', 'comparators')


class IfExp(Node):
    __slots__ = _fields = ('test', 'body', 'orelse')


class Keyword(Node):
    # arg: the name, or None for `**value`
    __slots__ = _fields = ('arg', 'value')


class Call(Node):
    # keywords: of Keyword
    __slots__ = _fields = ('func', 'args', 'keywords')

    def __init__(self, func, args, keywords, *, line=0, col=0, end_line=0, end_col=0):
        self.func, self.args, self.keywords = func, args, keywords
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


class Attribute(Node):
    __slots__ = _fields = ('value', 'attr')

    def __init__(self, value, attr, *, line=0, col=0, end_line=0, end_col=0):
        self.value, self.attr = value, attr
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


class Subscript(Node):
    # index: an expression, a Slice or a Tuple of them
    __slots__ = _fields = ('value', 'index')


class Slice(Node):
    __slots__ = _fields = ('lower', 'upper', 'step')


class Starred(Node):
    # `*value` among a call's arguments, in a list/tuple/set display or an assignment target
    __slots__ = _fields = ('value',)


class Dict(Node):
    # keys: None for a `**mapping` entry (its mapping in values)
    __slots__ = _fields = ('keys', 'values')


class Set(Node):
    __slots__ = _fields = ('elts',)


class Lambda(Node):
    # params: of Param
    __slots__ = _fields = ('params', 'body')


class Comprehension(Node):
    # one `for target in iter if ... if ...` clause
    __slots__ = _fields = ('target', 'iter', 'ifs')


class ListComp(Node):
    __slots__ = _fields = ('elt', 'generators')


class SetComp(Node):
    __slots__ = _fields = ('elt', 'generators')


class GeneratorExp(Node):
    __slots__ = _fields = ('elt', 'generators')


class DictComp(Node):
    __slots__ = _fields = ('key', 'value', 'generators')

# ---- statements ----

class Module(Node):
    __slots__ = _fields = ('body',)


class Assign(Node):
    # targets: `a = b = 1` has two targets
    __slots__ = _fields = ('targets', 'value')


class AnnAssign(Node):
    # `target: annotation [= value]`; simple: the target is a name without parentheses
    __slots__ = _fields = ('target', 'annotation', 'value', 'simple')


class AugAssign(Node):
    # op: '+', '-', ... (without '=')
    __slots__ = _fields = ('target', 'op', 'value')


class ExprStmt(Node):
    __slots__ = _fields = ('value',)


class If(Node):
    __slots__ = _fields = ('test', 'body', 'orelse')


class While(Node):
    __slots__ = _fields = ('test', 'body')


class For(Node):
    __slots__ = _fields = ('target', 'iter', 'body')


class Break(Node):
    __slots__ = _fields = ()


class Continue(Node):
    __slots__ = _fields = ()


class Pass(Node):
    __slots__ = _fields = ()


class Param(Node):
    # kind: '' (positional or keyword), 'pos' (positional-only, before `/`), '*' (*args),
    # 'kw' (keyword-only), '**' (**kwargs); annotation: an expression or None
    __slots__ = _fields = ('name', 'default', 'kind', 'annotation')


class FunctionDef(Node):
    # params: of Param; decorators: expressions, outermost first; returns: the `-> annotation`
    __slots__ = _fields = ('name', 'params', 'body', 'decorators', 'returns')


class ClassDef(Node):
    # bases: expressions; keywords: of Keyword
    __slots__ = _fields = ('name', 'bases', 'keywords', 'body', 'decorators')


class Return(Node):
    __slots__ = _fields = ('value',)


class Assert(Node):
    __slots__ = _fields = ('test', 'msg')


class With(Node):
    __slots__ = _fields = ('context', 'name', 'body')


class Import(Node):
    # module: dotted name, e.g. 'torch.nn'
    __slots__ = _fields = ('module', 'asname')


class ImportFrom(Node):
    # names: of (name, asname or None); (('*', None),) for `import *`
    __slots__ = _fields = ('module', 'names')


class Try(Node):
    # handlers: of ExceptHandler
    __slots__ = _fields = ('body', 'handlers', 'orelse', 'finalbody')


class ExceptHandler(Node):
    # type: an expression or None (a bare `except:`); name: str or None
    __slots__ = _fields = ('type', 'name', 'body')


class Yield(Node):
    # a statement: `yield value` (value None for a bare `yield`), `yield from value` (delegate)
    __slots__ = _fields = ('value', 'delegate')


class Raise(Node):
    __slots__ = _fields = ('exc', 'cause')


class Delete(Node):
    __slots__ = _fields = ('targets',)


class Global(Node):
    __slots__ = _fields = ('names',)


class Nonlocal(Node):
    __slots__ = _fields = ('names',)
