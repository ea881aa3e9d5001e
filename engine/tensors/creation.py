"""Creation functions: torch.tensor, ones, zeros, full, eye, arange, linspace (the random
ones are in tensors/random_creation.py)."""

from __future__ import annotations

import numpy as np

from ..core import devices, dtypes
from ..numerics import ranges
from ..ops.operands import NUMPY_DATA, check_sizes, data_as, infer_array, shape_arg
from ..ops.new import new_leaf
from ..core.session import check_allocation, check_fill_value
from .tensor import Tensor


def finish_creation(array, dtype, requires_grad) -> Tensor:
    if dtype is not None:
        array = array.astype(dtype.np)
    return new_leaf(Tensor, array, requires_grad)


def tensor(data, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    array = infer_array(data, floats=dtype is not None and dtype.is_floating_point)
    if dtype is None and array.dtype == np.float64 and type(data) is not Tensor \
            and type(data).__module__ != NUMPY_DATA:
        array = array.astype(dtypes.DEFAULT_FLOAT.np)  # Python floats take the default dtype
    if dtype is not None and type(data) is not Tensor:
        array = data_as(array, dtype.np)
    return finish_creation(array, dtype, requires_grad)


def from_numpy(array) -> Tensor:
    """A tensor over the NumPy array's memory (writes show on both sides)."""
    from ..numpy.data import storage  # noqa: PLC0415 - loaded when a program imports numpy

    data = storage(array)
    return finish_creation(data if data.ndim else data[()], None, False)


def _filled(value, shape, dtype, requires_grad):
    dt = dtype or dtypes.DEFAULT_FLOAT
    shape = shape_arg(shape)
    check_sizes(shape)
    check_allocation(shape, dt.np)
    check_fill_value(value, dt.np)
    return finish_creation(np.full(shape, value, dtype=dt.np), None, requires_grad)


def ones(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    return _filled(1, size, dtype, requires_grad)


def zeros(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    return _filled(0, size, dtype, requires_grad)


def ones_like(t, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    return _filled(1, t.array.shape, dtype or t.dtype, requires_grad)


def zeros_like(t, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    return _filled(0, t.array.shape, dtype or t.dtype, requires_grad)


# torch leaves the memory of an empty tensor as it finds it: zeros are one such content
empty = zeros
empty_like = zeros_like


def full(size, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _filled(fill_value, (size,), dtype, requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    dt = dtype or dtypes.DEFAULT_FLOAT
    check_allocation((n, n if m is None else m), dt.np)
    return finish_creation(np.eye(n, m, dtype=dt.np), None, requires_grad)


def arange(start=None, end=None, step=1, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    if start is None:  # torch.arange(end=5): torch's (Number end) form by its name
        if end is None or step != 1:
            raise TypeError("arange() received an invalid combination of arguments")
        start = 0
    elif end is None:
        start, end = 0, start
    floating = any(isinstance(v, float) for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dt = dtype or (dtypes.DEFAULT_FLOAT if floating else dtypes.int64)
    count = max(0, int(np.ceil((end - start) / step)))
    check_allocation((count,), dt.np)
    kind = dt.np.kind
    exact = 2 ** (24 if dt.np == np.float32 else 53) if kind == "f" else None
    if not floating and kind in "iuf" and (exact is None or max(abs(start), abs(end)) <= exact):
        # whole numbers the dtype holds exactly: NumPy fills the dtype directly, one pass
        array = np.arange(start, start + step * count, step, dtype=dt.np)
    else:
        array = ranges.arange_values(start, step, count, dt.np)
    return finish_creation(array, None, requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    dt = dtype or dtypes.DEFAULT_FLOAT
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    check_allocation((steps,), dt.np)
    if dt.np.kind == "f":
        array = ranges.linspace_values(start, end, steps, dt.np) if steps else np.zeros(0, dt.np)
    else:  # integer dtypes: the ends truncated, the step in double, each value truncated
        start, end = int(start), int(end)
        if steps == 1:
            end = start  # one step is the start alone
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        half = steps // 2
        index = np.arange(steps, dtype=np.float64)
        array = np.where(index < half, ranges.fma64(step, index, start),
                         ranges.fma64(-step, steps - 1 - index, end)).astype(dt.np)
    return finish_creation(array, None, requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    devices.check(device)
    return _filled(fill_value, t.array.shape, dtype or t.dtype, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """The data as a tensor without a copy where torch makes none: a tensor of that dtype is
    returned itself, a NumPy array of that dtype shared, anything else copied."""
    devices.check(device)
    if type(data) is Tensor:
        return data if dtype is None or dtype.np == data.array.dtype else data.to(dtype)
    if type(data).__module__ == NUMPY_DATA:
        shared = from_numpy(data)
        return shared if dtype is None or dtype.np == shared.array.dtype else shared.to(dtype)
    return tensor(data, dtype=dtype)


def get_default_dtype():
    return dtypes.DEFAULT_FLOAT


def logspace(start, end, steps, base=10.0, dtype=None, requires_grad=False,
             device=None) -> Tensor:
    """base ** linspace(start, end, steps), each exponent taken from the nearer end as torch's
    kernel takes it, the power in double precision."""
    devices.check(device)
    dt = dtype or dtypes.DEFAULT_FLOAT
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    check_allocation((steps,), dt.np)
    scalar = dt.np.type if dt.np.kind == "f" else np.float64  # the kernel's scalar type
    first, last = float(scalar(start)), float(scalar(end))
    if steps == 1:
        exponents = np.array([first])
    else:
        step = float(scalar(last - first)) / (steps - 1)
        index = np.arange(steps, dtype=np.float64)
        exponents = np.where(index < steps // 2, first + step * index,
                             last - step * (steps - 1 - index))
    with np.errstate(over="ignore"):
        array = np.power(float(base), exponents)
    return finish_creation(array.astype(dt.np), None, requires_grad)
