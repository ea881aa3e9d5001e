"""Tensor dtypes and PyTorch's type-promotion rules."""

from __future__ import annotations

import numpy as np


class DType:
    """A torch dtype: printed as `torch.float32`, backed by a NumPy dtype."""

    __slots__ = ("name", "np", "is_floating_point", "category", "itemsize")
    _tg_public = frozenset({"is_floating_point", "itemsize"})

    def __init__(self, name: str, np_dtype: type, category: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category  # 0 bool, 1 integer, 2 floating: promotion compares these
        self.is_floating_point = category == 2
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (by_name, (self.name,))


bool_ = DType("bool", np.bool_, 0)
int32 = DType("int32", np.int32, 1)
int64 = DType("int64", np.int64, 1)
float32 = DType("float32", np.float32, 2)
float64 = DType("float64", np.float64, 2)

DEFAULT_FLOAT = float32
ALL = (bool_, int32, int64, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
# torch's aliases for the same dtype objects
ALIASES = {"float": float32, "double": float64, "long": int64, "int": int32, "bool": bool_,
           "float32": float32, "float64": float64, "int64": int64, "int32": int32}


def by_name(name: str) -> DType:
    return _BY_NAME[name]


def of_array(array: np.ndarray) -> DType:
    return _BY_NP[array.dtype]


def from_numpy(np_dtype) -> DType:
    return _BY_NP[np.dtype(np_dtype)]


def scalar_dtype(value) -> DType:
    """The dtype a Python scalar takes when it decides a result's category."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    return DEFAULT_FLOAT


def _wider(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return a if a.itemsize >= b.itemsize else b


def promote(dims: list[DType], zero_dims: list[DType], scalars: list[DType]) -> DType:
    """Result dtype of an op, by PyTorch's rule.

    Operands fall in three priority groups: tensors with dimensions, 0-d tensors,
    Python scalars. A lower group only matters when it brings a higher category
    (bool < integer < floating) than every group above it.
    """
    result = None
    for group in (dims, zero_dims, scalars):
        if not group:
            continue
        best = group[0]
        for d in group[1:]:
            best = _wider(best, d)
        if result is None:
            result = best
        elif best.category > result.category:
            result = best
    return result
