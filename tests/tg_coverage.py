"""What a .tg program uses, read from its syntax tree: the facts behind the coverage table.

`program_features(source)` parses a program with the project's own parser and returns a
set of feature strings: the statements, expression forms, builtins and PyTorch calls it
contains (``stmt:while``, ``torch.linspace``, ``method:add_``, ``kw:keepdim``), and what
a light data flow over its assignments shows about them:

  ``cg:OP``        a gradient made with create_graph=True through OP is printed with its
                   grad_fn (``print(g)``, ``g.grad_fn``, ``graph(g.grad_fn)``);
  ``nf:OP``        the ``next_functions`` of a tensor OP made are printed;
  ``d2:OP``        a gradient made through OP is differentiated again;
  ``write:KIND:TARGET``  a write ``t[KIND] = v`` into a leaf under no_grad, a non-leaf in grad
                   mode or a plain tensor, followed by a backward and a print of a grad_fn;
  ``iter:grad``    a loop over a tensor that requires grad prints its rows' grad_fn;
  ``zero:...``     ops whose results can be -0. (see _negative_zero_features).

The flow is deliberately simple (names only, statements in text order, loops once) and is
exact for the generator's programs, which bind each value to a fresh name.
"""

from __future__ import annotations

import numpy as np

from autodiff.parser import ast, parse

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


def _dotted(node) -> str | None:
    """'torch.autograd.grad' for that attribute chain on a name, else None."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _constant(node):
    """The Python value of a literal (numbers, lists of them, unary minus), else None."""
    if type(node) is ast.Constant and type(node.value) in (int, float, bool):
        return node.value
    if type(node) is ast.UnaryOp and node.op == "-":
        inner = _constant(node.operand)
        return None if inner is None else -inner
    if type(node) in (ast.List, ast.Tuple):
        items = [_constant(e) for e in node.elts]
        return None if any(i is None for i in items) else items
    return None


def index_kind(index) -> str:
    """The kind of an index expression, as the coverage table names them."""
    t = type(index)
    if t is ast.Slice:
        if index.step is not None:
            return "a::k"
        lower = _constant(index.lower) if index.lower is not None else None
        if index.upper is None:
            return ":" if index.lower is None else "0:" if lower == 0 else "a:"
        return "a:b"
    if t is ast.Constant and index.value is Ellipsis:
        return "..."
    if t is ast.Constant and index.value is None:
        return "None"
    if _constant(index) is not None and type(_constant(index)) is int:
        return "int"
    if t is ast.Tuple:
        kinds = [index_kind(e) for e in index.elts]
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
        return "bool mask"
    if t is ast.Call and _dotted(index.func) == "torch.tensor":
        return "index tensor"
    return "other"


class Flow:
    """Walks one program's statements in order, collecting features."""

    def __init__(self, source: str):
        self.source_lines = source.splitlines()
        self.features: set[str] = set()
        self.names: dict[str, Info] = {}
        self.defs: dict[str, ast.FunctionDef] = {}
        self.graph_helpers: set[str] = set()  # defs whose body reads .next_functions
        self.grad_off = []  # stack: is grad mode off in the enclosing with blocks
        self.function: str | None = None
        self.cg_backward: Info | None = None  # what the last backward(create_graph=True) saw
        self.writes: list[tuple[int, str]] = []  # (line, feature) waiting for backward + grad_fn
        self.backward_lines: list[int] = []
        self.grad_fn_lines: list[int] = []

    def add(self, feature: str) -> None:
        self.features.add(feature)

    # --- expressions --------------------------------------------------------------------
    def info(self, node) -> Info:  # noqa: PLR0911, PLR0912 - one case per node type
        t = type(node)
        if t is ast.Name:
            return self.names.get(node.id, OTHER)
        if t is ast.Constant:
            return Info("number" if type(node.value) in (int, float) else "other",
                        zeros=node.value == 0 and type(node.value) in (int, float))
        if t in (ast.List, ast.Tuple):
            parts = [self.info(e) for e in node.elts]
            return Info("list" if t is ast.List else "tuple",
                        ops=frozenset().union(*(p.ops for p in parts)),
                        rg=any(p.rg for p in parts), cg=any(p.cg for p in parts),
                        zeros=any(p.zeros for p in parts))
        if t is ast.BinOp:
            return self._elementwise(BINOPS.get(node.op), [node.left, node.right])
        if t is ast.UnaryOp:
            if node.op == "-":
                inner = self.info(node.operand)
                if inner.kind == "tensor" and inner.zeros:
                    self.add("zero:neg")
                return self._elementwise("neg", [node.operand])
            return self.info(node.operand) if node.op == "+" else Info("bool")
        if t is ast.Subscript:
            base = self.info(node.value)
            if base.kind in ("tensor", "grads", "list", "tuple"):
                elt = Info("tensor", base.ops, base.top, base.rg, base.cg, base.zeros)
                if base.kind == "tensor":
                    op = "index:" + index_kind(node.index)
                    return Info("tensor", base.ops | {op}, op, base.rg, base.cg, base.zeros)
                return elt if base.kind == "grads" or base.rg else base
            return OTHER
        if t is ast.Attribute:
            return self._attribute(node)
        if t is ast.Call:
            return self._call(node)
        if t is ast.IfExp:
            return self.info(node.body)
        return OTHER

    def _elementwise(self, op, operands) -> Info:
        parts = [self.info(o) for o in operands]
        if not any(p.kind == "tensor" for p in parts):
            return Info("number")
        if op == "mul" and any(p.literal is not None and np.any(np.asarray(p.literal) == 0)
                               for p in parts):
            self.add("zero:mul by zero")
        shapes = [np.shape(p.literal) for p in parts if p.literal is not None]
        if op and len(shapes) == 2 and shapes[0] != shapes[1]:
            op = op + "(broadcast)"
        return self._result(op, parts)

    def _result(self, op, parts, literal=None) -> Info:
        ops = frozenset().union(*(p.ops for p in parts))
        return Info("tensor", ops | ({op} if op else set()), op, any(p.rg for p in parts),
                    any(p.cg for p in parts), any(p.zeros for p in parts), literal)

    def _attribute(self, node) -> Info:
        base = self.info(node.value)
        name = _dotted(node)
        if name and name.split(".")[0] in MODULES and name.split(".")[0] not in self.names:
            self.add(name if not name.startswith("F.") else name)
            return OTHER
        self.add("attr:" + node.attr)
        if node.attr == "grad" and self.cg_backward is not None:
            return Info("tensor", self.cg_backward.ops, None, True, True)
        if node.attr == "T" and base.kind == "tensor":
            return self._result("T", [base])
        if node.attr in ("data", "values") and base.kind == "tensor":
            return base
        return OTHER

    def _call(self, node) -> Info:
        func = node.func
        name = _dotted(func)
        args = [self.info(a) for a in node.args]
        kws = {k.arg: k.value for k in node.keywords}
        for k in node.keywords:
            self.add("kw:" + str(k.arg))
            self.info(k.value)
        if type(func) is ast.Name:
            return self._name_call(func.id, node, args, kws)
        if name and name.split(".")[0] in MODULES and name.split(".")[0] not in self.names:
            return self._module_call(name, node, args, kws)
        if type(func) is not ast.Attribute:
            return OTHER
        receiver = self.info(func.value)
        method = func.attr
        self.add("method:" + method)
        if method in ("zero_", "fill_") and receiver.kind == "tensor" and receiver.ops:
            self.add(f"zero:{method} on a result")
        if method == "backward":
            self.backward_lines.append(node.line)
            if "create_graph" in kws and _constant(kws["create_graph"]):
                self.cg_backward = receiver
        if method in ("requires_grad_", "double", "float") and receiver.kind == "tensor":
            return Info("tensor", receiver.ops, receiver.top, True, receiver.cg, receiver.zeros,
                        receiver.literal)
        if method == "reshape" and receiver.literal is not None and node.args:
            shape = [_constant(a) for a in node.args]
            if all(type(n) is int for n in shape):
                result = self._op(method, node, [receiver] + args, kws)
                result.literal = receiver.literal.reshape(shape)
                return result
        if method in ("detach", "detach_") or method in NOT_TENSORS or receiver.kind != "tensor":
            return Info("tensor", zeros=receiver.zeros) if method == "detach" else OTHER
        return self._op(method, node, [receiver] + args, kws)

    def _op(self, op, node, parts, kws) -> Info:
        """The result of a tensor op called by name (method, torch.X or F.X)."""
        if op in REDUCTIONS and (len(node.args) > (0 if type(node.func) is ast.Attribute and
                                                    _dotted(node.func.value) not in MODULES
                                                    else 1) or "dim" in kws):
            keep = "keepdim" in kws and _constant(kws["keepdim"])
            op = f"{op}(dim{', keepdim' if keep else ''})"
        elif op in ("max", "min", "maximum", "minimum") and len(parts) >= 1:
            self._ties(op, parts)
        if op in ("maximum", "minimum", "add", "sub", "mul", "div") and len(parts) == 2:
            shapes = [np.shape(p.literal) for p in parts if p.literal is not None]
            if len(shapes) == 2 and shapes[0] != shapes[1]:
                op += "(broadcast)"
        if op == "mul" and any(p.literal is not None and np.any(np.asarray(p.literal) == 0)
                               for p in parts):
            self.add("zero:mul by zero")
        return self._result(op if op.split("(")[0] in OPS | {"where"} else None, parts)

    def _ties(self, op, parts) -> None:
        values = [p.literal for p in parts if p.literal is not None]
        if op in ("maximum", "minimum") and len(values) == 2:
            try:
                if np.any(np.asarray(values[0]) == np.asarray(values[1])):
                    self.add(f"zero:{op} tie")
            except ValueError:
                pass
        elif op in ("max", "min") and len(parts) == 1 and values:
            flat = np.ravel(values[0])
            extreme = flat.max() if op == "max" else flat.min()
            if flat.size > 1 and np.sum(flat == extreme) > 1:
                self.add(f"zero:{op} tie")

    def _module_call(self, name, node, args, kws) -> Info:
        self.add(name)
        short = name.split(".")[-1]
        if name in ("torch.tensor", "torch.ones", "torch.zeros", "torch.full", "torch.eye",
                    "torch.arange", "torch.linspace", "torch.rand", "torch.randn",
                    "torch.ones_like", "torch.zeros_like", "torch.empty_like"):
            literal = _constant(node.args[0]) if name == "torch.tensor" and node.args else None
            try:
                literal = None if literal is None else np.asarray(literal, dtype=float)
            except ValueError:  # a ragged list (a program torch rejects)
                literal = None
            rg = "requires_grad" in kws and bool(_constant(kws["requires_grad"]))
            zeros = name in ("torch.zeros", "torch.zeros_like") or (
                literal is not None and bool(np.any(literal == 0)))
            return Info("tensor", rg=rg, zeros=zeros, literal=literal)
        if name == "torch.autograd.grad":
            self.backward_lines.append(node.line)
            out = args[0] if args else OTHER
            if out.cg:
                for op in out.ops:
                    self.add("d2:" + op)
            cg = "create_graph" in kws and bool(_constant(kws["create_graph"]))
            return Info("grads", out.ops, None, cg, cg, out.zeros)
        if name == "torch.autograd.backward":
            self.backward_lines.append(node.line)
            return OTHER
        if name == "torch.set_grad_enabled" and self.function is None:
            self.add("grad mode: set_grad_enabled statement")
        if short in ("is_grad_enabled", "manual_seed", "set_grad_enabled", "no_grad",
                     "enable_grad") or name.startswith("math."):
            return OTHER
        if short in ("cat", "stack") and node.args and type(node.args[0]) in (ast.List, ast.Tuple):
            args = [self.info(e) for e in node.args[0].elts]
        return self._op(short, node, args, kws)

    def _name_call(self, fname, node, args, kws) -> Info:
        self.add("builtin:" + fname if fname not in self.defs else "call:def")
        if fname in self.defs:
            if node.keywords:
                self.add("call:def keyword")
            if fname == self.function:
                self.add("stmt:recursion")
            if fname in self.graph_helpers and node.args:
                self._shown(node.args[0], via_graph=True)
            if fname == "show" and len(node.args) == 2:
                return OTHER
            return self._result(None, args) if any(a.kind == "tensor" for a in args) else OTHER
        if fname == "print":
            for k in node.keywords:
                self.add(f"print {k.arg}=")
            for a in node.args:
                self._shown(a)
                if type(a) is ast.Call and type(a.func) is ast.Attribute and \
                        a.func.attr == "tolist" and type(a.func.value) is ast.Call:
                    made_by = _dotted(a.func.value.func)
                    if made_by in ("torch.linspace", "torch.arange"):
                        self.add(f"print:{made_by[6:]} tolist")
            return OTHER
        if fname in ("list", "tuple", "enumerate", "zip") and args:
            if any(a.kind == "tensor" for a in args):
                self.add(f"iter:{fname}(tensor)")
            return Info("list", args[0].ops, None, args[0].rg, args[0].cg)
        return OTHER

    # --- what a print shows ---------------------------------------------------------------
    def _shown(self, node, via_graph=False) -> None:
        for sub in ast.walk(node):
            if type(sub) is ast.Attribute and sub.attr == "grad_fn":
                self.grad_fn_lines.append(sub.line)
                self._grad_fn_of(self.info(sub.value), via_graph or
                                 self._reads_next_functions(node, sub))
            elif type(sub) in (ast.Name, ast.Subscript) and sub is node:
                value = self.info(sub)
                if value.kind == "tensor" and value.cg:  # a tensor prints its grad_fn
                    self.grad_fn_lines.append(sub.line)
                    for op in value.ops:
                        self.add("cg:" + op)

    @staticmethod
    def _reads_next_functions(root, grad_fn_node) -> bool:
        return any(type(s) is ast.Attribute and s.attr == "next_functions" and
                   s.value is grad_fn_node for s in ast.walk(root))

    def _grad_fn_of(self, value: Info, next_functions: bool) -> None:
        if value.kind != "tensor":
            return
        if value.cg:
            for op in value.ops:
                self.add("cg:" + op)
        if next_functions and value.top:
            self.add("nf:" + value.top)

    # --- statements ---------------------------------------------------------------------
    def run(self, tree) -> set[str]:
        self.block(tree.body)
        for line, feature in self.writes:
            if any(b > line for b in self.backward_lines) and \
                    any(g > line for g in self.grad_fn_lines):
                self.add(feature)
        self._source_features()
        return self.features

    def block(self, body) -> None:
        for stmt in body:
            self.statement(stmt)

    def bind(self, target, value: Info) -> None:
        if type(target) is ast.Name:
            self.names[target.id] = value
        elif type(target) is ast.Tuple:
            for elt in target.elts:
                self.bind(elt, Info("tensor", value.ops, value.top, value.rg, value.cg)
                          if value.kind in ("tensor", "grads") else OTHER)

    def statement(self, s) -> None:  # noqa: PLR0912 - one case per statement type
        t = type(s)
        name = t.__name__
        if t is ast.Import:
            self.add(f"stmt:import {s.module}" + (f" as {s.asname}" if s.asname else ""))
        elif t is ast.Assign:
            value = self.info(s.value)
            for target in s.targets:
                self.assign(target, value, s)
        elif t is ast.AugAssign:
            self.add(f"stmt:augassign {s.op}=")
            value = self.info(ast.BinOp(s.target, s.op, s.value))
            if type(s.target) is ast.Subscript:
                self.write(s.target, s, augmented=True)
            else:
                self.bind(s.target, value)
        elif t is ast.ExprStmt:
            self.add("stmt:expression")
            self.info(s.value)
        elif t is ast.If:
            self.add("stmt:if")
            self.info(s.test)
            self.block(s.body)
            if len(s.orelse) == 1 and type(s.orelse[0]) is ast.If and \
                    self.source_lines[s.orelse[0].line - 1].lstrip().startswith("elif"):
                self.add("stmt:elif")
            elif s.orelse:
                self.add("stmt:else")
            self.block(s.orelse)
        elif t is ast.While:
            self.add("stmt:while")
            self.info(s.test)
            self.block(s.body)
        elif t is ast.For:
            self.loop(s)
        elif t is ast.FunctionDef:
            self.define(s)
        elif t is ast.With:
            self.with_block(s)
        elif t is ast.Return:
            self.add("stmt:return")
            if self.grad_off:
                self.add("grad mode: return inside with")
            if s.value is not None:
                self.info(s.value)
        elif t is ast.Assert:
            self.add("stmt:assert" + (" with message" if s.msg is not None else ""))
            self.info(s.test)
        else:
            self.add("stmt:" + name.lower())

    def assign(self, target, value: Info, s) -> None:
        if type(target) is ast.Tuple:
            self.add("stmt:assign tuple")
            self.bind(target, value)
        elif type(target) is ast.Subscript:
            self.write(target, s)
        elif type(target) is ast.Attribute:
            self.add(f"stmt:assign attribute {target.attr}")
            self.info(target.value)
        else:
            self.add("stmt:assign")
            self.bind(target, value)

    def write(self, target, s, augmented=False) -> None:
        """`t[index] = v` (or op=): where it writes, and through what kind of index."""
        self.add("stmt:assign subscript" + (" augmented" if augmented else ""))
        base = self.info(target.value)
        if base.kind != "tensor":
            return
        kind = index_kind(target.index)
        if base.rg and not base.ops and self.grad_off and self.grad_off[-1]:
            where = "leaf under no_grad"
        elif base.rg and base.ops and not (self.grad_off and self.grad_off[-1]):
            where = "non-leaf in grad mode"
        elif not base.rg:
            where = "plain tensor"
        else:
            return
        self.writes.append((s.line, f"write:{kind}:{where}"))
        if augmented:
            self.writes.append((s.line, f"write:augmented:{where}"))
        value = self.info(s.value)
        if type(target.value) is ast.Name:
            self.names[target.value.id] = Info(
                "tensor", base.ops | value.ops | {"setitem"}, "setitem:" + kind,
                base.rg or value.rg, base.cg, True)

    def loop(self, s) -> None:
        it = s.iter
        kind = "other"
        if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id in (
                "range", "enumerate", "zip"):
            kind = it.func.id
        elif type(it) is ast.List:
            kind = "list"
        elif type(it) is ast.Tuple:
            kind = "tuple"
        source = self.info(it)
        if source.kind == "tensor":
            kind = "tensor"
        elif kind == "other" and source.kind in ("list", "tuple"):
            kind = source.kind
        self.add(f"stmt:for {kind}")
        if type(s.target) is ast.Tuple:
            self.add("stmt:for tuple target")
        iterated = [source]
        if kind in ("enumerate", "zip"):
            iterated = [self.info(a) for a in it.args]
        row = next((i for i in iterated if i.kind in ("tensor", "list", "tuple") and i.rg), None)
        tensor_rows = any(i.kind == "tensor" for i in iterated) or source.kind in ("list", "tuple")
        row_info = Info("tensor", (row.ops if row else frozenset()) | {"unbind"}, "unbind",
                        row is not None, False) if tensor_rows else OTHER
        before = len(self.grad_fn_lines)
        targets = s.target.elts if type(s.target) is ast.Tuple else (s.target,)
        for target in targets:
            self.bind(target, row_info if kind != "enumerate" or target is not targets[0]
                      else Info("number"))
        self.block(s.body)
        if row is not None and len(self.grad_fn_lines) > before:
            self.add("iter:grad")

    def define(self, s) -> None:
        self.add("stmt:def")
        if any(p.default is not None for p in s.params):
            self.add("stmt:def default")
        self.defs[s.name] = s
        if any(type(n) is ast.Attribute and n.attr == "next_functions" for n in ast.walk(s)):
            self.graph_helpers.add(s.name)  # prints the graph under the grad_fn it is given
        saved, outer_names = self.function, dict(self.names)
        self.function = s.name
        for p in s.params:
            self.names[p.name] = OTHER
        self.block(s.body)
        self.function, self.names = saved, outer_names

    def with_block(self, s) -> None:
        ctx = _dotted(s.context.func) if type(s.context) is ast.Call else None
        off = self.grad_off[-1] if self.grad_off else False
        if ctx == "torch.no_grad":
            self.add("with:no_grad")
            off = True
        elif ctx == "torch.enable_grad":
            self.add("with:enable_grad")
            off = False
        elif ctx == "torch.set_grad_enabled":
            flag = _constant(s.context.args[0]) if s.context.args else None
            self.add(f"with:set_grad_enabled({flag if flag is not None else 'expression'})")
            off = flag is False
        if self.grad_off:
            self.add("with:nested grad-mode blocks")
        self.grad_off.append(off)
        self.block(s.body)
        self.grad_off.pop()
        after = s.end_line
        for line in self.source_lines[after - 1:]:
            if "is_grad_enabled()" in line:
                self.add("grad mode: is_grad_enabled() after a with block")
            if ".requires_grad" in line and "print" in line:
                self.add("grad mode: requires_grad read after a with block")

    def _source_features(self) -> None:
        for text in self.source_lines:
            stripped = text.strip()
            if not stripped:
                self.add("src:blank line")
            elif stripped.startswith("#") or "  # " in text:
                self.add("src:comment")
            if text.rstrip().endswith((",", "(", "[", "+")):
                self.add("src:continuation line")


def program_features(source: str) -> set[str]:
    """The features of one program (see the module docstring)."""
    tree = parse(source, "<program>")
    flow = Flow(source)
    features = flow.run(tree)
    lines = source.splitlines()
    for node in ast.walk(tree):
        features |= _expression_features(node)
        if type(node) is ast.Constant and type(node.value) is float and node.line == node.end_line \
                and "e" in lines[node.line - 1][node.col - 1:node.end_col - 1].lower():
            features.add("expr:float with exponent")
    return features


def _expression_features(node) -> set[str]:
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
    return set()
