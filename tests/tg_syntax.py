"""Facts about single nodes of a .tg syntax tree, for the coverage table (tg_coverage.py)."""

from __future__ import annotations

from autodiff.parser import ast

# Differentiable ops by the names the table uses; BinOp and UnaryOp map onto them.
OPS = {"add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "sin", "cos",
       "tanh", "sigmoid", "relu", "clamp", "maximum", "minimum", "where", "matmul", "mm", "mv",
       "dot", "outer", "sum", "mean", "max", "min", "norm", "prod", "reshape", "view",
       "flatten", "unsqueeze", "squeeze", "t", "transpose", "permute", "expand", "cat", "stack",
       "softmax", "log_softmax", "mse_loss", "cross_entropy", "clone"}
BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow", "@": "matmul"}
REDUCTIONS = {"sum", "mean", "max", "min", "norm", "prod"}
MODULES = {"torch", "F", "nn", "math"}
NOT_TENSORS = {"item", "tolist", "size", "dim", "numel", "name", "is_grad_enabled", "pop",
               "append", "backward", "retain_grad", "manual_seed"}



class Info:
    """What the flow knows about a value."""

    __slots__ = ("kind", "ops", "top", "rg", "cg", "zeros", "literal")

    def __init__(self, kind="other", ops=frozenset(), top=None, rg=False, cg=False,
                 zeros=False, literal=None):
        self.kind, self.ops, self.top, self.rg, self.cg = kind, ops, top, rg, cg
        self.zeros, self.literal = zeros, literal  # may hold zeros; value when a literal


OTHER = Info()


def dotted(node) -> str | None:
    """'torch.autograd.grad' for that attribute chain on a name, else None."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def constant(node):
    """The Python value of a literal (numbers, lists of them, unary minus), else None."""
    if type(node) is ast.Constant and type(node.value) in (int, float, bool):
        return node.value
    if type(node) is ast.UnaryOp and node.op == "-":
        inner = constant(node.operand)
        return None if inner is None else -inner
    if type(node) in (ast.List, ast.Tuple):
        items = [constant(e) for e in node.elts]
        return None if any(i is None for i in items) else items
    return None


def index_kind(index) -> str:
    """The kind of an index expression, as the coverage table names them."""
    t = type(index)
    if t is ast.Slice:
        if index.step is not None:
            return "a::k"
        lower = constant(index.lower) if index.lower is not None else None
        if index.upper is None:
            return ":" if index.lower is None else "0:" if lower == 0 else "a:"
        return "a:b"
    if t is ast.Constant and index.value is Ellipsis:
        return "..."
    if t is ast.Constant and index.value is None:
        return "None"
    if t is ast.Constant and type(index.value) is bool:
        return "bool"
    if constant(index) is not None and type(constant(index)) is int:
        return "int"
    if t is ast.Tuple:
        kinds = [index_kind(e) for e in index.elts]
        advanced = {"list", "index tensor", "bool mask", "0-d bool mask", "bool"}
        if set(kinds) & advanced and set(kinds) - advanced:
            return "basic and advanced"
        if kinds[0] == "...":
            return "..., k"
        if kinds[0] == ":" and len(kinds) == 2:
            return ":, j"
        if kinds[0] == "int" and len(kinds) == 2:
            return "i, j" if kinds[1] == "int" else "i, j:" if kinds[1] in ("a:", "0:") else "i, ..."
        return "tuple"
    if t is ast.List:
        return "list"
    if t is ast.Compare:
        left = index.left
        reduced = type(left) is ast.Call and type(left.func) is ast.Attribute and \
            left.func.attr in ("sum", "mean", "max", "min") and not left.args
        return "0-d bool mask" if reduced else "bool mask"
    if t is ast.Call and dotted(index.func) == "torch.tensor":
        return "index tensor"
    return "other"


def expression_features(node) -> set[str]:
    t = type(node)
    if t is ast.Constant:
        v = node.value
        if v is None or type(v) is bool:
            return {f"expr:{v}"}
        return {"expr:" + {int: "int", float: "float", str: "str"}.get(type(v), "other")}
    if t is ast.FString:
        spec = any(type(p) is ast.FormattedValue and p.spec is not None for p in node.parts)
        return {"expr:f-string"} | ({"expr:f-string format spec"} if spec else set())
    if t is ast.BinOp:
        return {"binop:" + node.op}
    if t is ast.UnaryOp:
        return {"unary:" + node.op}
    if t is ast.BoolOp:
        return {"boolop:" + node.op}
    if t is ast.Compare:
        return {"compare:" + op for op in node.ops} | (
            {"compare:chained"} if len(node.ops) > 1 else set())
    if t is ast.IfExp:
        return {"expr:a if c else b"}
    if t in (ast.List, ast.Tuple):
        return {"expr:" + t.__name__.lower()}
    if t is ast.Subscript:
        return {"index:" + index_kind(node.index)}
    if t is ast.Call and node.keywords:
        return {"call:keyword arguments"}
    if t in COMPREHENSIONS:
        return {COMPREHENSIONS[t]}
    return set()


COMPREHENSIONS = {ast.Lambda: "expr:lambda", ast.ListComp: "expr:list comprehension",
                  ast.DictComp: "expr:dict comprehension", ast.SetComp: "expr:set comprehension",
                  ast.GeneratorExp: "expr:generator expression"}
