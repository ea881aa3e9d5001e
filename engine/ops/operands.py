"""What every op does with its arguments before computing: PyTorch's type promotion of
tensors and Python numbers, broadcasting checks, and `dim=` normalisation."""

from __future__ import annotations

import builtins

import numpy as np

from ..core import dtypes
from ..numerics import summation
from ..graph.nodes import NUMBERS
from ..numerics.layout import elementwise_layout
from ..core.session import check_allocation, current

_PROMOTED: dict = {}


class NotAnOperand(TypeError):
    """An operand that is neither a tensor nor a Python number: an operator then returns
    NotImplemented, so Python raises its own TypeError (as it does for torch)."""


def _operand_key(x):
    kind = type(x)
    if kind in NUMBERS:
        return (kind, 2)
    array = getattr(x, "array", None)
    if type(array) is not np.ndarray and not isinstance(array, np.generic):
        raise NotAnOperand(f"unsupported operand type: '{kind.__name__}'")
    return (array.dtype, 0 if array.ndim else 1)


def result_dtype(*operands) -> np.dtype:
    """PyTorch's promotion of tensors and Python numbers, as a NumPy dtype (cached)."""
    key = tuple(_operand_key(x) for x in operands)
    found = _PROMOTED.get(key)
    if found is None:
        groups: list[list] = [[], [], []]
        for kind, group in key:
            groups[group].append(dtypes.scalar_dtype(kind(0)) if group == 2
                                 else dtypes.from_numpy(kind))
        found = _PROMOTED[key] = dtypes.promote(*groups).np
    return found


def cast(x, dt):
    """An operand NumPy computes with in dtype `dt` (Python numbers stay weak)."""
    if type(x) in NUMBERS:
        return x
    a = x.array
    return a if a.dtype == dt else a.astype(dt)


def binary(a, b, floating: bool = False, mixed=None):
    """(x, y, dtype): arrays for a binary op on tensor `a` and tensor-or-number `b`, and the
    dtype of the result; `floating` promotes integer results to the default float. `mixed(a,
    b)` checks operands of dtypes that promote (of one dtype, or a float tensor and a Python
    int or float, they skip it: the common cases stay fast)."""
    x = a.array
    dt = x.dtype
    kind = type(b)
    if kind is type(a):
        y = b.array
        other = y.dtype  # (dtype objects are shared: `is` settles the usual case quickly)
        if (other is dt or other == dt) and (not floating or dt.kind == "f"):
            if x.shape != y.shape:
                check_broadcast(x.shape, y.shape, dt)
            return x, y, dt
    elif dt.kind == "f" and (kind is float or kind is int):
        return x, b, dt  # NumPy keeps a Python number weak, as torch does
    dt = result_dtype(a, b)  # (NotAnOperand first: `t - None` is Python's TypeError)
    if mixed is not None:
        mixed(a, b)
    if floating and dt.kind != "f":
        dt = dtypes.DEFAULT_FLOAT.np
    if kind is type(a) and a.array.shape != b.array.shape:
        check_broadcast(a.array.shape, b.array.shape, dt)
    return cast(a, dt), cast(b, dt), dt


def c_order(out):
    """`out` laid out as torch lays out a new result of a reduction or softmax: contiguous
    (NumPy's follow the input's memory order; the layout decides what a reshape records)."""
    return out if out.flags.c_contiguous else out.copy(order="C")


def finish(out, dt):
    have = out.dtype
    return out if have is dt or have == dt else out.astype(dt)


# `_as_c_order(x) is x` tells what x.flags.c_contiguous tells (for arrays of one dim or more)
# for half the cost, where every elementwise op asks it: no flags object is built
_as_c_order = np.ascontiguousarray


def elementwise_result(out, x, y, dt):
    """An elementwise result of x and y (arrays or numbers) in torch's layout for it, which
    differs from NumPy's only when an input is not contiguous (numerics/layout.py), and in dtype `dt`.
    `x` is an array, `y` an array or a Python number (a 0-d array or a NumPy scalar counts
    as not contiguous here: numerics/layout.py then finds nothing to change)."""
    if out.ndim > 1 and not (_as_c_order(x) is x
                             and (type(y) is not np.ndarray or _as_c_order(y) is y)):
        out = elementwise_layout(out, (x, y))
    have = out.dtype
    return out if have is dt or have == dt else out.astype(dt)


_BROADCASTS: set = set()  # shape pairs already checked: loops meet the same ones


def check_broadcast(a_shape, b_shape, dtype) -> None:
    """torch's error for shapes that do not broadcast (NumPy's would name other things)."""
    key = (a_shape, b_shape, dtype, current().max_bytes)
    if key in _BROADCASTS:
        return
    ndim = builtins.max(len(a_shape), len(b_shape))
    a_full = (1,) * (ndim - len(a_shape)) + tuple(a_shape)
    b_full = (1,) * (ndim - len(b_shape)) + tuple(b_shape)
    for dim in range(ndim - 1, -1, -1):
        m, n = a_full[dim], b_full[dim]
        if m != n and m != 1 and n != 1:
            raise RuntimeError(f"The size of tensor a ({m}) must match the size of tensor b "
                               f"({n}) at non-singleton dimension {dim}")
    # a broadcast result can be far larger than either operand
    check_allocation(tuple(builtins.max(m, n) for m, n in zip(a_full, b_full)), dtype)
    if len(_BROADCASTS) < 10_000:
        _BROADCASTS.add(key)


def floating(a) -> np.ndarray:
    """The tensor's array, cast to the default float when it is not floating already."""
    x = a.array
    return x if x.dtype.kind == "f" else x.astype(dtypes.DEFAULT_FLOAT.np)


class ArgumentTypeError(TypeError):
    """An argument of a type torch's parser refuses: signatures.call_error words it with the
    op's name and the argument's position, as torch does."""

    def __init__(self, param: str, kind: str, value) -> None:
        super().__init__(f"argument '{param}' must be {kind}, not {type(value).__name__}")
        self.param, self.kind, self.value = param, kind, value


def _dim_item(d, given):
    if isinstance(d, (int, np.integer)):
        return d
    array = getattr(d, "array", None)
    if array is not None and array.ndim == 0 and array.dtype.kind in "iu":
        return int(array)  # (a 0-d integer tensor is an int to torch's parser)
    raise ArgumentTypeError("dim", "int", given)


def dims(dim, ndim: int) -> tuple:
    """Normalize `dim=` (int or sequence, negative allowed) with torch's range error."""
    if isinstance(dim, (list, tuple)):
        chosen = [_dim_item(d, dim) for d in dim]
    else:
        chosen = (_dim_item(dim, dim),)
    result = []
    low, high = -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1
    for d in chosen:
        if not low <= d <= high:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{low}, {high}], but got {d})")
        result.append(d % builtins.max(ndim, 1) if ndim else 0)
    return tuple(result)


def reduce_dims(dim, ndim: int) -> tuple:
    """`dim=` of a reduction: on a 0-d tensor, dim 0 or -1 reduces nothing, as in torch."""
    chosen = dims(dim, ndim)
    return () if ndim == 0 else chosen


def shape_arg(shape) -> tuple:
    """`reshape(2, 3)` and `reshape((2, 3))` alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(d) for d in shape)


_TYPE_WORDS = {"int64": "Long", "int32": "Int", "bool": "Bool", "float32": "Float",
               "float64": "Double"}


def type_word(dt) -> str:
    """torch's scalar type name in messages: Float, Long, ..."""
    return _TYPE_WORDS[np.dtype(dt).name]


def not_implemented(kernel: str, dt) -> NotImplementedError:
    """torch's error for a kernel without a version for dtype `dt`."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{type_word(dt)}'")


_C_TYPES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "bool": "bool"}


def c_type_word(dt) -> str:
    """The C name some of torch's messages give a dtype (its TypeMeta): float, long int, ..."""
    return _C_TYPES[np.dtype(dt).name]


def sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast gradient array back to an input's shape (torch's at::sum_to: one sum
    over the leading and the stretched dims, in torch's order)."""
    lead = g.ndim - len(shape)
    if lead == 1 and shape == g.shape[1:]:
        return summation.along(g, (0,), False)  # (the usual case: a bias's batch dim)
    axes = tuple(range(lead))
    if 1 in shape:
        axes += tuple(i + lead for i, n in enumerate(shape) if n == 1 and g.shape[i + lead] != 1)
    if axes:
        g = summation.along(g, axes, True)
    return g if g.shape == shape else g.reshape(shape)


def array_dtype(v) -> np.dtype:
    """The NumPy dtype of an array or of a tensor's array (rules see either)."""
    return v.dtype if type(v) is np.ndarray or isinstance(v, np.generic) else v.array.dtype


def array_of(v):
    """The array of a tensor, or the array itself (rules see either)."""
    return v if type(v) is np.ndarray or isinstance(v, np.generic) else v.array


def is_tensor(value) -> bool:
    """A tensor (for modules that do not name the Tensor class: those it is made from)."""
    return hasattr(value, "_grad_fn") and hasattr(value, "array")


def check_sizes(shape) -> None:
    """torch's error for a negative size in a new tensor's shape."""
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(shape)}")


_DATA_NUMBERS = (bool, int, float)


NUMPY_DATA = "autodiff.engine.numpy.data"  # the module of a program's NumPy arrays


def data_as(array: np.ndarray, target: np.dtype) -> np.ndarray:
    """A program's numbers (read by infer_array) in the dtype it asked for: torch converts
    each number with a range check, where NumPy's astype would wrap 2**31 to -2**31."""
    if target.kind in "iu" and array.size and array.dtype.kind in "iuf":
        info = np.iinfo(target)
        if not (info.min <= array.min() and array.max() <= info.max):  # (nan fails both)
            raise RuntimeError(f"value cannot be converted to type {target.name} without "
                               "overflow")
    return array.astype(target)


def infer_array(data, floats: bool = False) -> np.ndarray:
    """The NumPy array torch.tensor builds from nested lists of numbers, bools and tensors
    (Python floats as float64 here: torch.tensor narrows them to the default dtype). An
    integer beyond int64 is torch's error, unless a float among the data (or `floats`, a
    floating dtype asked for) makes them all floats."""
    try:
        if type(data) is list and data and all(type(v) in _DATA_NUMBERS for v in data):
            array = np.array(data)  # the common flat case; NumPy infers bool/int64/float64 alike
        else:
            array = _infer_nested(data)
        if array.dtype != np.uint64 and array.dtype.kind != "O":
            return array
    except _BeyondInt64:
        pass
    # NumPy keeps an integer beyond int64 as uint64, or as Python objects
    if not (floats or _has_float(data)):
        raise ValueError("Overflow when unpacking long long")
    return np.asarray(_as_floats(data), dtype=np.float64)


class _BeyondInt64(Exception):
    pass


def _has_float(data) -> bool:
    if type(data) is float:
        return True
    if is_tensor(data):
        return data.array.dtype.kind == "f"
    return isinstance(data, (list, tuple)) and any(_has_float(d) for d in data)


def _as_floats(data):
    if is_tensor(data):
        return data.array.tolist()
    if isinstance(data, (list, tuple)):
        return [_as_floats(d) for d in data]
    return float(data)


def _infer_nested(data):
    if is_tensor(data):
        return np.array(data.array, copy=True)
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
            return np.zeros(0, dtype=np.float32)
        return np.stack(items)
    if isinstance(data, bool):
        return np.asarray(data, dtype=np.bool_)
    if isinstance(data, int):
        if not -2 ** 63 <= data < 2 ** 63:
            raise _BeyondInt64
        return np.asarray(data, dtype=np.int64)
    if isinstance(data, float):
        return np.asarray(data, dtype=np.float64)
    if type(data).__module__ == NUMPY_DATA:
        from ..numpy.data import array_of  # noqa: PLC0415 - loaded when a program imports numpy

        return array_of(data)  # NumPy data keeps its dtype, as in torch
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
