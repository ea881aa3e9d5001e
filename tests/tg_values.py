"""Shadow values and the text of literals, shared by the program builder and its ops.

A `Var` is one variable of the program being written: its name and its value computed in
float64 NumPy (the shadow), with what the builder needs to know to use it further.
"""

from __future__ import annotations

import math

import numpy as np


def _fmt(x) -> str:
    """A Python literal for a shadow number (ints stay ints, floats keep full precision)."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if x == 0 and math.copysign(1.0, x) < 0:
        return "-0."
    return repr(int(x)) + "." if x == int(x) and abs(x) < 1e15 else repr(x)


def _lit(a: np.ndarray) -> str:
    return _fmt(a.item()) if a.ndim == 0 else "[" + ", ".join(_lit(s) for s in a) + "]"


def _args(shape) -> str:
    return ", ".join(str(n) for n in shape)


def _tup(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class Var:
    __slots__ = ("name", "value", "dtype", "rg", "leaf", "contig", "tag", "deps", "history")

    def __init__(self, name, value, dtype, rg, leaf, contig=True, tag="leaf", deps=None):
        self.name, self.value, self.dtype = name, np.asarray(value), dtype
        self.rg, self.leaf, self.contig, self.tag = rg, leaf, contig, tag
        self.deps = frozenset([name]) if deps is None else deps  # the leaves it is computed from
        self.history: frozenset[str] = frozenset()  # the op tokens (Builder.choose) it went through

    @property
    def shape(self) -> tuple:
        return self.value.shape

    @property
    def ndim(self) -> int:
        return self.value.ndim


def _gap(values: np.ndarray) -> float:
    """Smallest distance between two of the values (inf for fewer than two)."""
    flat = np.sort(values.ravel())
    return float(np.min(np.diff(flat))) if flat.size > 1 else math.inf


def _max_gap_along(v: np.ndarray, dim: int) -> float:
    """Smallest distance between the top two of each slice along dim (for max and min)."""
    if v.shape[dim] < 2:
        return math.inf
    s = np.sort(v, axis=dim)
    top = np.take(s, [-1], axis=dim) - np.take(s, [-2], axis=dim)
    bottom = np.take(s, [1], axis=dim) - np.take(s, [0], axis=dim)
    return float(min(top.min(), bottom.min()))


def _softmax(v, d):
    e = np.exp(v - v.max(axis=d, keepdims=True))
    return e / e.sum(axis=d, keepdims=True)



def _broadcasts(s1, s2) -> bool:
    return all(a == b or a == 1 or b == 1 for a, b in zip(reversed(s1), reversed(s2)))


def _apply(sym, a, b):
    with np.errstate(all="ignore"):
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide,
                "**": np.power}[sym](np.asarray(a, dtype=np.float64), b)


def _factor(r, n: int) -> tuple:
    """A random shape with n elements and 0 to 3 dims (0 dims only when n == 1)."""
    dims = r.randint(0 if n == 1 else 1, 3)
    shape = []
    rest = n
    for _ in range(dims - 1):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = r.choice(divisors)
        shape.append(d)
        rest //= d
    if dims:
        shape.append(rest)
    return tuple(shape)
