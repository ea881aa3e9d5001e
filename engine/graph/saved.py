"""`grad_fn._saved_*`: what a node saved for backward, under torch's attribute names.

The names each node has come from torch (saved_names.py, generated); a name torch's node
lacks is Python's AttributeError, as in torch. The values are read off what the node keeps:
`self`/`other` its first/second input, `result` its output, `X_sym_sizes` (`X_sym_numel`)
the shape (size) of input X, any other name the op's recorded parameter of that name. A
saved tensor torch would not have saved (no input needs the rule that reads it) is None,
as torch's unpacking of an undefined saved variable gives.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.unsupported import Unsupported
from .nodes import _FREED, FROM_TENSORS, SECOND_BACKWARD, AccumulateGrad, Node, _read_positions
from .saved_names import SAVED

PREFIX = "_saved_"
RAW_PREFIX = "_raw_saved_"
# torch's name of an input -> its position among the op's inputs
_POSITIONS = {"self": 0, "other": 1, "mat2": 1, "vec": 1, "exponent": 1, "tensor1": 1,
              "tensor2": 2}
# torch's name of a parameter -> the names the engine's ops record it under
_ALIASES = {"dim": ("dim", "dims"), "min": ("min", "low"), "max": ("max", "high")}
_DEFAULTS = {"alpha": 1}  # a parameter the forward records only when not its default
_MISSING = object()
# nodes of ops whose Tensor overload takes a Python number as a wrapped 0-d tensor
_WRAPS_NUMBERS = frozenset({"MulBackward0", "DivBackward0"})


def is_saved_name(name: str) -> bool:
    """A name this module answers for (the sandbox asks it only for these)."""
    return name.startswith(PREFIX) or name.startswith(RAW_PREFIX)


def _no_attribute(node, name: str) -> AttributeError:
    kind = "AccumulateGrad" if type(node) is AccumulateGrad else node.tg_type_name()
    return AttributeError(f"'{kind}' object has no attribute '{name}'")


def saved_attribute(node, name: str):
    """`node.<name>` for a `_saved_*` or `_raw_saved_*` name, or the error torch (or
    autodiff, for one it lacks) gives."""
    if not isinstance(node, Node) or node.op.node_rule is not None:
        raise _no_attribute(node, name)  # AccumulateGrad, a program's Function: none in torch
    raw = name.startswith(RAW_PREFIX)
    key = name[len(RAW_PREFIX if raw else PREFIX):]
    names = SAVED.get(node.op.name)
    if names is None:
        raise Unsupported(f"{node.op.name}.{name}")
    if key not in names:
        raise _no_attribute(node, name)
    value = _value(node, key)
    if raw:  # torch's SavedTensor handles: only for tensors
        if value is _MISSING or hasattr(value, "_grad_fn") or value is None:
            raise Unsupported(f"{node.op.name}.{name}")
        raise _no_attribute(node, name)
    if value is _MISSING:
        raise Unsupported(f"{node.op.name}.{name}")
    return value


def _value(node, key: str):
    if key == "result":
        if not node.op.saves_out:
            return _MISSING
        if node.out is None:
            raise RuntimeError(SECOND_BACKWARD)
        cls = _tensor_class(node)
        return cls._wrap(node.out, grad_fn=node) if cls is not None else _MISSING
    for suffix, measure in (("_sym_sizes", tuple), ("_sym_numel", math.prod)):
        if key.endswith(suffix):
            position = _POSITIONS.get(key[:-len(suffix)])
            if position is None or position >= len(node.meta) or node.meta[position] is None:
                return _MISSING
            shape = node.meta[position][0]
            return tuple(shape) if measure is tuple else math.prod(shape)
    params = node.params or {}
    for alias in _ALIASES.get(key, (key,)):
        if alias in params:
            value = params[alias]
            if type(value).__module__ == "numpy" and hasattr(value, "shape"):  # indices, a mask
                return _tensor_class(node)._wrap(value)
            return value
    position = _POSITIONS.get(key)
    if position is not None:
        return _input(node, position)
    return _DEFAULTS.get(key, _MISSING)


def _input(node, position: int):
    if not node.op.saves_inputs:
        return _MISSING
    saved = node.saved
    if saved is _FREED:
        raise RuntimeError(SECOND_BACKWARD)
    if saved is None or position >= len(saved):
        return _MISSING
    if position not in _read_positions(node.op.reads, node.next_functions):
        return None  # no rule that runs reads it: torch did not save it
    value = saved[position]
    if node.op.name in _WRAPS_NUMBERS and type(value) in (bool, int, float):
        # torch's Tensor overload saw the number as a 0-d tensor (int64, float64 or bool)
        return _tensor_class(node)._wrap(np.asarray(value, dtype={bool: np.bool_, int: np.int64,
                                                                  float: np.float64}[type(value)]))
    return value


def _tensor_class(node):
    saved = node.saved if node.saved is not _FREED else None
    for value in saved or ():
        if hasattr(value, "_grad_fn"):
            return type(value)
    return FROM_TENSORS["tensor_class"]()
