"""What `autodiff graph --show values,grads,saved` adds to each node: its value, the gradient
that reached it, what it saved for backward (as arrays for the drawings' short forms, and
as PyTorch prints them for JSON and the HTML page)."""

from __future__ import annotations

from autodiff.engine.graph.nodes import AccumulateGrad, watched_grad_fn
from autodiff.engine.tensors.inspection import node_op, saved_inputs, saved_result, value_array
from autodiff.engine.tensors.tensor import Tensor

from .trace import Trace


def add_details(trace: Trace, ids: dict, nodes: dict, show: frozenset) -> None:
    """Values, gradients and saved tensors of each node, for --show."""
    import numpy as np

    from autodiff.engine.core.printing import format_tensor
    from .explain_text import input_symbols

    from .names import grad_of

    # a node's value: from a tensor still held (a name, an earlier binding), else the result
    # the node saved
    made_by: dict[int, Tensor] = {}
    for t in [*trace.tensors().values(), *trace.kept.values(), *trace.created]:
        if watched_grad_fn(t) is not None:
            made_by.setdefault(id(watched_grad_fn(t)), t)
    steps: dict[int, object] = {}
    for call in trace.calls:  # the last backward call that ran a node speaks for it
        for step in call.steps:
            steps[id(step.node)] = step
    for key, g in ids.items():
        node = nodes[key]
        leaf = type(node) is AccumulateGrad
        tensor = node.variable if leaf else made_by.get(key)
        step = steps.get(key)
        result = value_array(tensor) if tensor is not None else (
            step.out if step is not None and step.out is not None else saved_result(node))
        if "values" in show and result is not None:
            g.details["value_array"] = np.array(result, copy=True)
        if "grads" in show:
            grad = grad_of(tensor) if leaf and tensor is not None else None
            if grad is not None:
                g.details["grad_array"] = np.array(value_array(grad), copy=True)
            elif step is not None and type(step.grad_in) is not list:
                g.details["grad_array"] = step.grad_in
        if "saved" in show and not leaf:
            inputs = step.inputs if step is not None else saved_inputs(node)
            out = step.out if step is not None else saved_result(node)
            saved = {}
            op = node_op(node)
            names = input_symbols(op, len(inputs or ()))
            for j, value in enumerate(inputs or ()):
                if value is not None and op.saves_inputs:
                    saved[names[j] or f"input {j}"] = np.asarray(
                        value_array(value) if type(value) is Tensor else value)
            if out is not None:
                saved["result"] = np.asarray(out)
            if saved:
                g.details["saved_arrays"] = saved
    for g in ids.values():  # the JSON forms, as PyTorch prints tensors
        for key in ("value", "grad"):
            if key + "_array" in g.details:
                g.details[key] = format_tensor(g.details[key + "_array"])
        if "saved_arrays" in g.details:
            g.details["saved"] = {k: format_tensor(v) for k, v in g.details["saved_arrays"].items()}
