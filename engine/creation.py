"""Creation functions: torch.tensor, ones, zeros, full, eye, arange, linspace (the random
ones are in random_creation.py)."""

from __future__ import annotations

import numpy as np

from . import dtypes, ranges
from .operands import check_sizes, shape_arg
from .session import check_allocation, current
from .tensor import Tensor

_NUMBERS = (bool, int, float)


def _infer(data):
    """The NumPy array torch.tensor builds from nested lists of numbers, bools and tensors."""
    if type(data) is list and data and all(type(v) in _NUMBERS for v in data):
        return np.array(data)  # the common flat case; NumPy infers bool/int64/float64 alike
    return _infer_nested(data)


def _infer_nested(data):
    if type(data) is Tensor:
        return data.array.copy()
    if isinstance(data, (list, tuple)):
        items = [_infer_nested(d) for d in data]
        shapes = {i.shape for i in items}
        if len(shapes) > 1:
            first = items[0].shape
            bad = next(i for i in items if i.shape != first)
            raise ValueError(
                f"expected sequence of length {first[0] if first else 0} at dim 1 "
                f"(got {bad.shape[0] if bad.shape else 0})")
        if not items:
            return np.zeros(0, dtype=dtypes.DEFAULT_FLOAT.np)
        return np.stack(items)
    if isinstance(data, bool):
        return np.asarray(data, dtype=np.bool_)
    if isinstance(data, int):
        return np.asarray(data, dtype=np.int64)
    if isinstance(data, float):
        return np.asarray(data, dtype=np.float64)  # narrowed by tensor() unless dtype= says
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def finish_creation(array, dtype, requires_grad) -> Tensor:
    if dtype is not None:
        array = array.astype(dtype.np)
    if requires_grad and array.dtype.kind != "f":
        raise RuntimeError(
            "Only Tensors of floating point and complex dtype can require gradients")
    t = Tensor._wrap(array, requires_grad=requires_grad)
    created = current().observers.created
    if created is not None:
        created(t)  # (`autodiff check` perturbs leaves by creation index)
    return t


def tensor(data, dtype=None, requires_grad=False) -> Tensor:
    array = _infer(data)
    if dtype is None and array.dtype == np.float64 and type(data) is not Tensor:
        array = array.astype(dtypes.DEFAULT_FLOAT.np)  # Python floats take the default dtype
    return finish_creation(array, dtype, requires_grad)


def _filled(value, shape, dtype, requires_grad):
    dt = dtype or dtypes.DEFAULT_FLOAT
    shape = shape_arg(shape)
    check_sizes(shape)
    check_allocation(shape, dt.np)
    return finish_creation(np.full(shape, value, dtype=dt.np), None, requires_grad)


def ones(*size, dtype=None, requires_grad=False) -> Tensor:
    return _filled(1, size, dtype, requires_grad)


def zeros(*size, dtype=None, requires_grad=False) -> Tensor:
    return _filled(0, size, dtype, requires_grad)


def ones_like(t, dtype=None, requires_grad=False) -> Tensor:
    return _filled(1, t.array.shape, dtype or t.dtype, requires_grad)


def zeros_like(t, dtype=None, requires_grad=False) -> Tensor:
    return _filled(0, t.array.shape, dtype or t.dtype, requires_grad)


# torch leaves the memory of an empty tensor as it finds it: zeros are one such content
empty = zeros
empty_like = zeros_like


def full(size, fill_value, dtype=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _filled(fill_value, (size,), dtype, requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False) -> Tensor:
    dt = dtype or dtypes.DEFAULT_FLOAT
    check_allocation((n, n if m is None else m), dt.np)
    return finish_creation(np.eye(n, m, dtype=dt.np), None, requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    floating = any(isinstance(v, float) for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
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


def linspace(start, end, steps, dtype=None, requires_grad=False) -> Tensor:
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
