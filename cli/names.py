"""Labels for graph nodes and tensors in terms of the program's own variable names."""

from __future__ import annotations

import warnings

from autodiff.engine.graph.nodes import AccumulateGrad, watched_grad_fn
from autodiff.text.i18n import _

from .trace import Trace

_MAX_PARTS = 40  # a chain longer than this ends in "…"


def grad_of(tensor):
    """`tensor.grad` without PyTorch's non-leaf warning (the report reads every tensor)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tensor.grad


def shape_text(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def dtype_text(dtype) -> str:
    return str(dtype).removeprefix("torch.")


class Namer:
    """Names of nodes and leaves in one traced program."""

    def __init__(self, trace: Trace) -> None:
        self.tensors = trace.tensor_names()
        self.nodes = trace.node_names()

    def name_of(self, node) -> str | None:
        if type(node) is AccumulateGrad:
            return self.tensors.get(id(node.variable))
        return self.nodes.get(id(node))

    def label(self, node) -> str:
        if type(node) is AccumulateGrad:
            name = self.tensors.get(id(node.variable))
            return _("{name} (leaf)").format(name=name) if name else \
                _("leaf {shape}").format(shape=shape_text(node.variable.shape))
        name = self.nodes.get(id(node))
        return f"{name} = {node.name()}" if name else node.name()

    def chain(self, tensor) -> str:
        """`out = MeanBackward0 ← z = MulBackward0 ← x (leaf)`; branches in parentheses,
        a node already shown marked `↑`, runs of one op under one name (or none: a loop's
        `y = y * 2`) collapsed to `y = Op ×n`."""
        if watched_grad_fn(tensor) is None:
            name = self.tensors.get(id(tensor), _("tensor"))
            return (_("{name} (leaf)") if tensor.requires_grad else _("{name} (no graph)")).format(
                name=name)
        budget = [_MAX_PARTS]
        return self._chain(watched_grad_fn(tensor), set(), budget)

    def _chain(self, node, seen: set, budget: list) -> str:
        parts: list[str] = []
        while True:
            if budget[0] <= 0:
                parts.append("…")
                break
            budget[0] -= 1
            if id(node) in seen:
                parts.append(self.label(node) + (" ↑" if type(node) is not AccumulateGrad else ""))
                break
            seen.add(id(node))
            kids = _children(node)
            count = 1
            name = self.name_of(node)
            while (len(kids) == 1 and type(kids[0]) is not AccumulateGrad
                   and kids[0].name() == node.name() and self.name_of(kids[0]) == name
                   and id(kids[0]) not in seen):
                node = kids[0]
                seen.add(id(node))
                kids = _children(node)
                count += 1
            parts.append(self.label(node) + (f" ×{count}" if count > 1 else ""))
            if len(kids) == 1:
                node = kids[0]
                continue
            if kids:
                parts.append("(" + ", ".join(self._chain(k, seen, budget) for k in kids) + ")")
            break
        return " ← ".join(parts)


def _children(node) -> list:
    """The distinct nodes a node sends gradients to, in input order."""
    kids, ids = [], set()
    for child, _slot in node.next_functions:
        if child is not None and id(child) not in ids:
            ids.add(id(child))
            kids.append(child)
    return kids
