"""Tensor.new_zeros, new_ones, new_full, new_tensor: a new tensor with this tensor's dtype
(unless told otherwise), sharing nothing with it and outside its graph."""

from __future__ import annotations

from .operands import shape_arg
from .registry import Family

family = Family("New tensors")
exposes = family.exposes


def _creation():
    from . import creation  # noqa: PLC0415 - creation builds on the Tensor class this feeds

    return creation


@exposes(methods=("new_zeros",))
def new_zeros(a, *size, dtype=None, requires_grad=False, device=None):
    return _creation().zeros(*size, dtype=dtype or a.dtype, requires_grad=requires_grad,
                             device=device)


@exposes(methods=("new_ones",))
def new_ones(a, *size, dtype=None, requires_grad=False, device=None):
    return _creation().ones(*size, dtype=dtype or a.dtype, requires_grad=requires_grad,
                            device=device)


@exposes(methods=("new_full",))
def new_full(a, size, fill_value, dtype=None, requires_grad=False, device=None):
    if not isinstance(size, (tuple, list)):
        raise TypeError("new_full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    return _creation().full(shape_arg((size,)), fill_value, dtype=dtype or a.dtype,
                            requires_grad=requires_grad, device=device)


@exposes(methods=("new_tensor",))
def new_tensor(a, data, dtype=None, requires_grad=False, device=None):
    return _creation().tensor(data, dtype=dtype or a.dtype, requires_grad=requires_grad,
                              device=device)
