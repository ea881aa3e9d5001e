"""NumPy for data only: what `import numpy as np` gives a .tg program.

An array reaches a program only inside `ndarray` below, whose public names are an
allow-list of NumPy methods that compute: nothing that touches files, buffers or raw
memory (`tofile`, `dump`, `ctypes`, `data`, `base`, `__array_interface__`, ...) is
reachable. Functions unwrap their arguments, call NumPy and wrap array results; a NumPy
scalar result stays a NumPy scalar (prints as NumPy prints it; the sandbox gives it
`item` and `tolist` only). Only bool, integer and floating arrays exist: an object or
string array could hold host objects, so making one is refused. `np.random` draws from a
RandomState of the run's own, so a seeded program prints real NumPy's numbers; an
unseeded one starts from seed 0 (NumPy would seed from the operating system).

`torch.from_numpy(a)` and `t.numpy()` share memory both ways, as PyTorch's do;
`torch.tensor(a)` copies and keeps the array's dtype. The `np` namespace itself is in
numpy/namespace.py, loaded when a program imports numpy.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..core.session import check_allocation, is_grad_enabled
from ..core.unsupported import Unsupported

_KINDS = frozenset("biuf")  # bool, signed and unsigned integer, floating
_TENSOR_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int64, np.int32, np.bool_))


def _refused(what: str) -> Unsupported:
    return Unsupported(what, "in .tg programs")


class ndarray:  # noqa: N801 - named as NumPy's, for Python's messages ("'ndarray' object ...")
    """A NumPy array as a program sees it."""

    __slots__ = ("_array", "__weakref__")
    _tg_known_as = "numpy.ndarray"  # its other NumPy names are "not supported in .tg programs"
    _tg_type_name = "numpy.ndarray"  # as torch's own errors name the type
    __hash__ = None  # as NumPy's: arrays are mutable

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def tg_type_name(self) -> str:  # how `type()` and the sandbox's errors name the class
        return "numpy.ndarray"

    # printing: NumPy's own text
    def __repr__(self) -> str:
        return repr(self._array)

    def __str__(self) -> str:
        return str(self._array)

    def __format__(self, spec: str) -> str:
        return format(self._array, spec)

    def __array__(self, dtype=None, copy=None):  # NumPy's own functions take the wrapper
        return self._array if dtype is None else self._array.astype(dtype)

    def __len__(self) -> int:
        return len(self._array)

    def __iter__(self):
        return (wrap(item) for item in self._array)

    def __getitem__(self, key):
        return wrap(self._array[unwrap(key)])

    def __setitem__(self, key, value) -> None:
        self._array[unwrap(key)] = unwrap(value)

    def __contains__(self, value) -> bool:
        return unwrap(value) in self._array

    def __bool__(self) -> bool:
        return bool(self._array)

    def __float__(self) -> float:
        return float(self._array)

    def __int__(self) -> int:
        return int(self._array)

    def __index__(self) -> int:
        return operator.index(self._array)

    @property
    def T(self) -> "ndarray":  # noqa: N802 - NumPy's name
        return wrap(self._array.T)

    @property
    def shape(self) -> tuple:
        return self._array.shape

    @property
    def dtype(self):
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def size(self) -> int:
        return self._array.size


_METHODS = ("all", "any", "argmax", "argmin", "argsort", "astype", "clip", "copy", "cumprod",
            "cumsum", "diagonal", "dot", "fill", "flatten", "item", "max", "mean", "min",
            "nonzero", "prod", "ravel", "repeat", "reshape", "round", "sort", "squeeze", "std",
            "sum", "swapaxes", "take", "tolist", "trace", "transpose", "var")


def _method(name: str) -> Callable:
    def method(self, *args, **kwargs):
        return wrap(getattr(self._array, name)(*unwrap(args), **unwrap_keywords(kwargs)))
    method.__name__ = method.__qualname__ = name
    return method


def _operator(op: Callable, reflected: bool = False) -> Callable:
    def apply(self, other):
        if not _is_data(other):
            return NotImplemented
        other = unwrap(other)
        _check_broadcast(self._array, other)
        return wrap(op(other, self._array) if reflected else op(self._array, other))
    return apply


def _in_place(op: Callable) -> Callable:
    def apply(self, other):
        if not _is_data(other):
            return NotImplemented
        op(self._array, unwrap(other))  # NumPy writes into the array: views and tensors see it
        return self
    return apply


for _name in _METHODS:
    setattr(ndarray, _name, _method(_name))
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
              "lshift", "rshift"):
    _op = getattr(operator, _name + ("_" if _name in ("and", "or") else ""))
    setattr(ndarray, f"__{_name}__", _operator(_op))
    setattr(ndarray, f"__r{_name}__", _operator(_op, reflected=True))
    setattr(ndarray, f"__i{_name}__", _in_place(getattr(operator, f"i{_name}")))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(ndarray, f"__{_name}__", _operator(getattr(operator, _name)))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(ndarray, f"__{_name}__", (lambda op: lambda self: wrap(op(self._array)))(getattr(operator, _name)))
ndarray._tg_public = frozenset(_METHODS) | {"T", "shape", "dtype", "ndim", "size"}


def _is_data(value: Any) -> bool:
    kind = type(value)
    return kind is ndarray or kind in (int, float, bool, list, tuple) or isinstance(value, np.generic)


def _check_broadcast(a: np.ndarray, b: Any) -> None:
    shape = np.shape(b)
    if shape and a.shape and shape != a.shape:
        try:
            out = np.broadcast_shapes(a.shape, shape)
        except ValueError:
            return  # NumPy raises its own error
        check_allocation(out, np.result_type(a, np.asarray(b).dtype) if np.ndim(b) else a.dtype)


# ---- moving values across the wrapper ----

def wrap(value: Any) -> Any:
    """A NumPy result as a program gets it."""
    if type(value) is np.ndarray:
        if value.dtype.kind not in _KINDS:
            raise _refused(f"a numpy array of dtype {value.dtype}")
        return ndarray(value)
    if isinstance(value, np.generic) and value.dtype.kind not in _KINDS:
        raise _refused(f"a numpy value of dtype {value.dtype}")
    if type(value) is tuple:
        return tuple(wrap(v) for v in value)
    return value


def unwrap(value: Any) -> Any:
    """A program's value as NumPy should get it."""
    kind = type(value)
    if kind is ndarray:
        return value._array
    if kind is list or kind is tuple:
        if any(type(v) in (ndarray, list, tuple) or _is_tensor(v) for v in value):
            return kind(unwrap(v) for v in value)
        return value
    if _is_tensor(value):
        return tensor_array(value)
    return value


def unwrap_keywords(kwargs: dict) -> dict:
    return {k: unwrap(v) for k, v in kwargs.items()}


def _is_tensor(value: Any) -> bool:
    return getattr(type(value), "_tg_known_as", None) == "torch.Tensor"  # (tensors/tensor.py imports us)


def tensor_array(t) -> np.ndarray:
    """`t.numpy()`'s array: the tensor's own storage (writes show on both sides). torch
    refuses a tensor that requires grad only while grad mode is on (a custom Function's
    forward and `torch.no_grad()` run with it off)."""
    if t.requires_grad and is_grad_enabled():
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    return t.own_array()  # a 0-d tensor keeps a NumPy scalar until something shares it


def to_numpy(t) -> ndarray:
    """Tensor.numpy()."""
    return ndarray(tensor_array(t))


def storage(array: Any) -> np.ndarray:
    """torch.from_numpy's array: the wrapped array itself (the tensor shares its memory)."""
    if type(array) is not ndarray:
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    data = array._array
    if data.dtype not in _TENSOR_DTYPES:
        raise Unsupported(f"torch.from_numpy of a {data.dtype} array")
    return data


def array_of(data: Any) -> np.ndarray | None:
    """torch.tensor(data) for NumPy data: a copy keeping its dtype (None: not NumPy data)."""
    if type(data) is not ndarray:
        return None
    array = data._array
    if array.dtype not in _TENSOR_DTYPES:
        raise Unsupported(f"torch.tensor of a {array.dtype} array")
    return array.copy()
