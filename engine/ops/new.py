"""New tensors made by a tensor method (Tensor.new_zeros, new_ones, new_full, new_tensor: this
tensor's dtype unless told otherwise, sharing nothing with it, outside its graph), and the
making of every new leaf, which tensors/creation.py's functions share."""

from __future__ import annotations

import numpy as np

from ..core import devices
from .operands import check_sizes, data_as, infer_array, shape_arg
from .registry import Family, no_in_place
from ..core.session import check_allocation, check_fill_value, current

family = Family("New tensors", inplace=no_in_place("makes a new tensor"))
exposes = family.exposes


def new_leaf(cls, array, requires_grad):
    """A new leaf tensor over `array` (torch's refusal of grad on non-floating dtypes)."""
    if requires_grad and array.dtype.kind != "f":
        raise RuntimeError(
            "Only Tensors of floating point and complex dtype can require gradients")
    t = cls._wrap(array, requires_grad=requires_grad)
    made = current().observers.tensor_made
    if made is not None:
        made(t)  # (`autodiff check` perturbs leaves by creation index)
    return t


def _filled(a, size, value, dtype, requires_grad, device):
    devices.check(device)
    dt = (dtype or a.dtype).np
    shape = shape_arg(size)
    check_sizes(shape)
    check_allocation(shape, dt)
    check_fill_value(value, dt)
    return new_leaf(type(a), np.full(shape, value, dtype=dt), requires_grad)


@exposes(methods=("new_zeros",), params=("input", "size"))
def new_zeros(a, *size, dtype=None, requires_grad=False, device=None):
    return _filled(a, size, 0, dtype, requires_grad, device)


@exposes(methods=("new_ones",), params=("input", "size"))
def new_ones(a, *size, dtype=None, requires_grad=False, device=None):
    return _filled(a, size, 1, dtype, requires_grad, device)


@exposes(methods=("new_full",))
def new_full(a, size, fill_value, dtype=None, requires_grad=False, device=None):
    if not isinstance(size, (tuple, list)):
        raise TypeError("new_full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    return _filled(a, (size,), fill_value, dtype, requires_grad, device)


@exposes(methods=("new_tensor",))
def new_tensor(a, data, dtype=None, requires_grad=False, device=None):
    devices.check(device)
    dt = dtype or a.dtype
    array = data_as(infer_array(data, floats=dt.is_floating_point), dt.np)
    return new_leaf(type(a), array, requires_grad)
