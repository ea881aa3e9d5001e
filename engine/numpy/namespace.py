"""`numpy` and `numpy.random` as a .tg program imports them (see numpy/data.py): the data
functions, each unwrapping its arguments and wrapping its result, with the memory limit
checked before an array of a given size is made; the dtypes and constants; and a
RandomState of the run's own behind `np.random`.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .data import unwrap, unwrap_keywords, wrap
from ..core.session import check_allocation


def _function(name: str, numpy_function: Callable, sized: Callable | None = None) -> Callable:
    def function(*args, **kwargs):
        args, kwargs = unwrap(args), unwrap_keywords(kwargs)
        if sized is not None:
            shape, dtype = sized(*args, **kwargs)
            check_allocation(shape, dtype)
        return wrap(numpy_function(*args, **kwargs))
    function.__name__ = function.__qualname__ = name
    return function


def _shape(size: Any) -> tuple:
    if size is None:
        return ()
    return tuple(size) if isinstance(size, (tuple, list)) else (size,)


def _dtype(dtype: Any, default=np.float64):
    return np.dtype(default if dtype is None else dtype)


def _filled(shape=None, *args, dtype=None, **kwargs):
    return _shape(shape), _dtype(dtype)


def _filled_like(a, *args, dtype=None, **kwargs):
    return np.shape(a), _dtype(dtype, np.asarray(a).dtype)


def _arange(*args, dtype=None, **kwargs):
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
    count = max(0, math.ceil((stop - start) / step)) if step else 0
    return (count,), _dtype(dtype, np.int64)


def _linspace(start, stop, num=50, *args, dtype=None, **kwargs):
    return (int(num),), _dtype(dtype)


def _eye(n, m=None, *args, dtype=None, **kwargs):
    return (n, n if m is None else m), _dtype(dtype)


def _outer(a, b, *args, **kwargs):
    return (np.size(a), np.size(b)), np.result_type(np.asarray(a), np.asarray(b))


_CREATION = {"zeros": _filled, "ones": _filled, "empty": _filled, "full": _filled,
             "zeros_like": _filled_like, "ones_like": _filled_like, "full_like": _filled_like,
             "arange": _arange, "linspace": _linspace, "eye": _eye, "identity": _eye,
             "outer": _outer}
_COMPUTE = ("array", "asarray", "exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh",
            "sqrt", "abs", "absolute", "square", "power", "sign", "floor", "ceil", "round",
            "clip", "maximum", "minimum", "where", "sum", "mean", "std", "var", "max", "min",
            "amax", "amin", "argmax", "argmin", "prod", "cumsum", "dot", "matmul", "transpose",
            "reshape", "concatenate", "stack", "vstack", "hstack", "allclose", "isclose",
            "array_equal", "sort", "argsort", "unique", "expand_dims", "squeeze", "flip",
            "add", "subtract", "multiply", "divide")
_VALUES = {"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan, "newaxis": None,
           "float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32,
           "bool_": np.bool_, "uint8": np.uint8}


def _sized_random(*dims, **kwargs):  # rand(d0, d1, ...), randn(...)
    return tuple(dims), np.dtype(np.float64)


def _sized_at(position: int) -> Callable:
    """The size of a draw whose `size` is the argument at `position` (or `size=`)."""
    def sized(*args, size=None, **kwargs):
        if size is None and len(args) > position:
            size = args[position]
        return _shape(size), np.dtype(np.float64)
    return sized


class RandomNamespace:
    """`np.random`: NumPy's legacy functions on a RandomState of this run."""

    _tg_module_name = "numpy.random"
    _DRAWS = {"rand": _sized_random, "randn": _sized_random, "random": _sized_at(0),
              "random_sample": _sized_at(0), "normal": _sized_at(2), "uniform": _sized_at(2),
              "randint": _sized_at(2), "choice": _sized_at(1), "permutation": None, "shuffle": None}
    _tg_public = frozenset(_DRAWS) | {"seed"}

    def __init__(self) -> None:
        self._state = np.random.RandomState(0)
        for name, sized in self._DRAWS.items():
            setattr(self, name, _function(name, getattr(self._state, name), sized))

    def seed(self, seed=None) -> None:
        self._state.seed(seed)

    def __repr__(self) -> str:
        return "<module 'numpy.random'>"


class NumpyNamespace:
    """`numpy`: the data functions above, the dtypes and constants, and `random`."""

    _tg_module_name = "numpy"
    _tg_public = frozenset(_CREATION) | frozenset(_COMPUTE) | frozenset(_VALUES) | {"random"}

    def __init__(self) -> None:
        self.random = RandomNamespace()

    def __repr__(self) -> str:
        return "<module 'numpy'>"


for _name, _sized in _CREATION.items():
    setattr(NumpyNamespace, _name, staticmethod(_function(_name, getattr(np, _name), _sized)))
for _name in _COMPUTE:
    setattr(NumpyNamespace, _name, staticmethod(_function(_name, getattr(np, _name))))
for _name, _value in _VALUES.items():
    setattr(NumpyNamespace, _name, _value)


def namespace() -> NumpyNamespace:
    """A fresh `numpy` for one run (its random state is the run's own)."""
    return NumpyNamespace()
