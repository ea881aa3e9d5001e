"""Predicates and logic (no gradient): all/any, isnan/isinf/isfinite, logical_and/or/xor/not,
count_nonzero, nonzero, numel and is_tensor. Their results are bool or int64 tensors (or
Python values), as torch's are."""

from __future__ import annotations

import numpy as np

from ..core import inference
from .operands import binary, reduce_dims
from .operands import is_tensor as _is_tensor
from .registry import Family, in_place_gap, no_in_place

family = Family("Predicates and logic", inplace=no_in_place(
    "a predicate or a count: a new bool or integer tensor"))
exposes = family.exposes
_LOGICAL_WRITE = in_place_gap("a logical op written into its tensor (`x.logical_not_()`) is not "
                              "offered")


def _wrap(a, array):
    return type(a)._wrap(np.asarray(array))


def _truth(a, reduce, dim, keepdim):
    x = a.array.astype(bool, copy=False)
    chosen = None if dim is None else reduce_dims(dim, a.array.ndim)
    return _wrap(a, reduce(x, axis=chosen, keepdims=keepdim))


@exposes(functions=("all",), methods=("all",))
def all(a, dim=None, keepdim=False, *, axis=None):
    return _truth(a, np.all, dim if axis is None else axis, keepdim)


@exposes(functions=("any",), methods=("any",))
def any(a, dim=None, keepdim=False, *, axis=None):
    return _truth(a, np.any, dim if axis is None else axis, keepdim)


def _elementwise(name, test):
    def forward(a):
        x = a.array
        return _wrap(a, test(x) if x.dtype.kind == "f" else np.full(x.shape, name == "isfinite"))
    forward.__name__ = forward.__qualname__ = name
    return exposes(functions=(name,), methods=(name,))(forward)


isnan = _elementwise("isnan", np.isnan)
isinf = _elementwise("isinf", np.isinf)
isfinite = _elementwise("isfinite", np.isfinite)


def _logical(name, compute):
    def forward(a, other):
        if type(other) is not type(a):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        x, y, _ = binary(a, other)  # (torch's broadcast error for shapes that do not fit)
        return _wrap(a, compute(np.asarray(x).astype(bool), np.asarray(y).astype(bool)))
    forward.__name__ = forward.__qualname__ = name
    return exposes(functions=(name,), methods=(name,), inplace=_LOGICAL_WRITE)(forward)


logical_and = _logical("logical_and", np.logical_and)
logical_or = _logical("logical_or", np.logical_or)
logical_xor = _logical("logical_xor", np.logical_xor)


@exposes(functions=("logical_not",), methods=("logical_not",), inplace=_LOGICAL_WRITE)
def logical_not(a):
    return _wrap(a, np.logical_not(a.array))


@exposes(functions=("count_nonzero",), methods=("count_nonzero",))
def count_nonzero(a, dim=None):
    x = a.array
    chosen = None if dim is None else reduce_dims(dim, x.ndim)
    return _wrap(a, np.count_nonzero(x, axis=chosen).astype(np.int64))


@exposes(functions=("nonzero",), methods=("nonzero",))
def nonzero(a, *, as_tuple=False):
    x = a.array
    flat = x.reshape(-1) if not x.ndim else x  # a 0-d tensor counts as one element
    found = np.argwhere(flat).astype(np.int64)
    if as_tuple:
        return tuple(_wrap(a, np.ascontiguousarray(found[:, i])) for i in range(found.shape[1]))
    if not x.ndim:
        return _wrap(a, np.zeros((found.shape[0], 0), np.int64))
    return _wrap(a, found)


@exposes(functions=("numel",))
def numel(a):
    return int(a.array.size)


@exposes(functions=("is_tensor",), params=("obj",))
def is_tensor(value):
    return _is_tensor(value)


@exposes(functions=("is_inference",), methods=("is_inference",))
def is_inference(a):
    """Whether inference mode made this tensor, or what it is a view of (core/inference.py)."""
    return inference.is_inference(a)

