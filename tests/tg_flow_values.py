"""The expression half of the coverage reader's data flow: what each value is (tg_coverage.py)."""

from __future__ import annotations

import numpy as np
from tg_syntax import (BINOPS, MODULES, NOT_TENSORS, OPS, OTHER, REDUCTIONS, Info, constant,
                       dotted, index_kind)

from autodiff.parser import ast



IN_PLACE_METHODS = {"add_", "sub_", "mul_", "div_", "zero_", "fill_", "copy_"}
# what a view of a tensor is made by (the `top` op of its flow Info)
VIEW_TOPS = {"reshape", "view", "flatten", "unsqueeze", "squeeze", "t", "T", "transpose",
             "permute", "expand", *(f"index:{k}" for k in ("int", "a:b", "a:", "0:", ":", "a::k",
                                                            "..., k", ":, j", "None", "...",
                                                            "i, j", "i, j:", "i, ..."))}


class ValueFlow:
    """Mixed into Flow: the Info of expressions, and the features their evaluation shows."""

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
        name = dotted(node)
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
        name = dotted(func)
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
        if method in IN_PLACE_METHODS and receiver.kind == "tensor" and receiver.rg and \
                receiver.top in VIEW_TOPS:
            self.add("inplace:a view of a tensor requiring grad")
        if method in IN_PLACE_METHODS and receiver.kind == "tensor" and \
                receiver.top == "expand":
            self.add("inplace:an expand's view")
        if method == "register_hook":
            self.add(f"hook:{'leaf' if not receiver.ops else 'non-leaf'}")
        if method == "backward":
            self.backward_lines.append(node.line)
            if "create_graph" in kws and constant(kws["create_graph"]):
                self.cg_backward = receiver
        if method in ("requires_grad_", "double", "float") and receiver.kind == "tensor":
            return Info("tensor", receiver.ops, receiver.top, True, receiver.cg, receiver.zeros,
                        receiver.literal)
        if method == "reshape" and receiver.literal is not None and node.args:
            shape = [constant(a) for a in node.args]
            if all(type(n) is int for n in shape):
                result = self._op(method, node, [receiver] + args, kws)
                result.literal = receiver.literal.reshape(shape)
                return result
        if method in ("detach", "detach_") or method in NOT_TENSORS or receiver.kind != "tensor":
            return Info("tensor", zeros=receiver.zeros) if method == "detach" else OTHER
        return self._op(method, node, [receiver] + args, kws)

    def _op(self, op, node, parts, kws) -> Info:
        """The result of a tensor op called by name (method, torch.X or F.X)."""
        if op in ("broadcast_to", "expand_as"):
            op = "expand"  # (the same view, under other names)
        if op in REDUCTIONS and (len(node.args) > (0 if type(node.func) is ast.Attribute and
                                                    dotted(node.func.value) not in MODULES
                                                    else 1) or "dim" in kws):
            keep = "keepdim" in kws and constant(kws["keepdim"])
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
            literal = constant(node.args[0]) if name == "torch.tensor" and node.args else None
            try:
                literal = None if literal is None else np.asarray(literal, dtype=float)
            except ValueError:  # a ragged list (a program torch rejects)
                literal = None
            rg = "requires_grad" in kws and bool(constant(kws["requires_grad"]))
            zeros = name in ("torch.zeros", "torch.zeros_like") or (
                literal is not None and bool(np.any(literal == 0)))
            return Info("tensor", rg=rg, zeros=zeros, literal=literal)
        if name == "torch.autograd.grad":
            self.backward_lines.append(node.line)
            out = args[0] if args else OTHER
            if out.cg:
                for op in out.ops:
                    self.add("d2:" + op)
            cg = "create_graph" in kws and bool(constant(kws["create_graph"]))
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
                    made_by = dotted(a.func.value.func)
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
