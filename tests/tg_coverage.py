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
  ``zero:...``     ops whose results can be -0.: zero_/fill_ on a result, a product with a
                   literal holding 0, negation, maximum/minimum and max/min with ties.

The flow is deliberately simple (names only, statements in text order, loops once) and is
exact for the generator's programs, which bind each value to a fresh name.
"""

from __future__ import annotations

import re

from tg_flow_values import ValueFlow
from tg_syntax import OTHER, Info, constant, dotted, expression_features, index_kind

from autodiff.parser import ast, parse


class Flow(ValueFlow):
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
        elif t is ast.ClassDef:
            self.define_class(s)
        elif t is ast.With:
            self.with_block(s)
        elif t is ast.Return:
            self.add("stmt:return")
            if self.grad_off:
                self.add("grad mode: return inside with")
            if s.value is not None:
                self.info(s.value)
        elif t is ast.Try:  # (programs that show an error and go on: the body counts too)
            self.add("stmt:try")
            self.block(s.body)
            for handler in s.handlers:
                self.block(handler.body)
            self.block(s.orelse or [])
            self.block(s.finalbody or [])
        elif t is ast.Assert:
            self.add("stmt:assert" + (" with message" if s.msg is not None else ""))
            self.info(s.test)
        elif t is ast.Yield:
            self.add("stmt:yield from" if s.delegate else "stmt:yield")
            if self.grad_off and self.grad_off[-1]:
                self.add("grad mode: yield inside a grad-mode block")
            if s.value is not None:
                self.info(s.value)
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
        elif type(it) is ast.Call and type(it.func) is ast.Name and it.func.id in self.defs \
                and any(type(n) is ast.Yield for n in ast.walk(self.defs[it.func.id])):
            kind = "generator"
        source = self.info(it)
        if source.kind == "tensor" and kind != "generator":
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

    def define_class(self, s) -> None:
        bases = [dotted(base) for base in s.bases]
        for base in bases:
            self.add(f"class:{base}")
        for stmt in s.body:
            if type(stmt) is ast.FunctionDef:
                for base in bases:
                    self.add(f"class method:{base}.{stmt.name}")
                self.define(stmt)

    def define(self, s) -> None:
        for d in s.decorators:
            name = dotted(d.func if type(d) is ast.Call else d)
            self.add(f"decorator:{name}{'()' if type(d) is ast.Call else ''}"
                     if name and name.startswith("torch.") or name == "staticmethod"
                     else "decorator:a program's own")
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
        ctx = dotted(s.context.func) if type(s.context) is ast.Call else None
        off = self.grad_off[-1] if self.grad_off else False
        if ctx == "torch.no_grad":
            self.add("with:no_grad")
            off = True
        elif ctx == "torch.enable_grad":
            self.add("with:enable_grad")
            off = False
        elif ctx == "torch.inference_mode":
            self.add("with:inference_mode")
            off = True
            made = {t.id for stmt in s.body if type(stmt) is ast.Assign
                    for t in stmt.targets if type(t) is ast.Name}
            later = "\n".join(self.source_lines[s.body[-1].end_line:])
            if any(re.search(rf"\b{name}\b", later) for name in made):
                self.add("grad mode: an inference tensor used after its block")
        elif ctx == "torch.set_grad_enabled":
            flag = constant(s.context.args[0]) if s.context.args else None
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
        features |= expression_features(node)
        if type(node) is ast.Constant and type(node.value) is float and node.line == node.end_line \
                and "e" in lines[node.line - 1][node.col - 1:node.end_col - 1].lower():
            features.add("expr:float with exponent")
    return features
