"""Read-only views of a tensor's value and of a graph node's bookkeeping, for the tools that
show a run (`autodiff graph`, `explain`, `check`): what they may read, without reaching for
the attributes the engine keeps for itself. Nothing returned here may be written to: arrays
are the engine's own (copy one to keep it past the next in-place change or backward).
"""

from __future__ import annotations

from ..graph.nodes import AccumulateGrad, released

__all__ = ["value_array", "saved_inputs", "saved_result", "node_params", "input_meta",
           "node_op"]


def value_array(tensor):
    """The tensor's value: a NumPy array (a NumPy scalar for some 0-d results)."""
    return tensor.array


def saved_inputs(node) -> tuple | None:
    """What the node saved of its inputs for its rules (tensors and Python numbers, in the
    op's argument order), or None: an AccumulateGrad, an op whose rules read no input, or a
    node a backward without retain_graph has released."""
    if type(node) is AccumulateGrad or released(node):
        return None
    saved = node.saved
    return tuple(saved) if isinstance(saved, (tuple, list)) else None


def saved_result(node):
    """The forward result's array when the node's rules read it (None otherwise or once
    released)."""
    return None if type(node) is AccumulateGrad else node.out


def node_params(node) -> dict | None:
    """The non-tensor arguments the op recorded (dim, keepdim, ...), or None."""
    if type(node) is AccumulateGrad:
        return None
    return node.params or None


def input_meta(node) -> tuple:
    """(shape, dtype) of each of the node's inputs, None for a Python-number input; an
    AccumulateGrad has none."""
    return () if type(node) is AccumulateGrad else node.meta


def node_op(node):
    """The op-table entry a node applies (its name, formulas, what it saves), or None for an
    AccumulateGrad."""
    return None if type(node) is AccumulateGrad else node.op
