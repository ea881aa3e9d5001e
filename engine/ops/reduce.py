"""Reductions: sum, mean, prod, norm, max/min (whole, along a dim, elementwise)."""

from __future__ import annotations

import builtins

import math

import numpy as np

from ..numerics import summation
from ..graph.nodes import NUMBERS, record
from .arith import clamp_min, div, div_scalar
from .shape import expand, expand_as
from .operands import (
    NotAnOperand,
    array_dtype,
    array_of,
    binary,
    c_order,
    dims,
    elementwise_result,
    floating,
    reduce_dims,
    type_word,
)
from ..core.printing import format_return_type
from .registry import Check, Family, any_, away_from_zero, no_in_place

family = Family("Reductions", inplace=no_in_place("a reduction: its result has another shape"))
op, exposes, word = family.op, family.exposes, family.word


def _unsqueeze_dims(F, g, dims_, ndim, keepdim):
    """torch's sum_backward: a reduced gradient gets its dims back, lowest first."""
    if keepdim or ndim == 0:
        return g
    for d in sorted(dims_):
        g = F.unsqueeze(g, d)
    return g


def _count(shape, dims_=None) -> int:
    n = 1
    for i, d in enumerate(shape):
        if dims_ is None or i in dims_:
            n *= d
    return n


# === sum and mean ===============================================================================

SUM_ALL = op("SumBackward0", lambda F, g, out, a, shape: F.expand(g, shape),
             explain="a sum of all elements: every element gets g",
             formulas=("∂(Σa)/∂aᵢ = 1: g expanded to a's shape",), check=Check(lambda a: a.sum(), (any_(2, 3),)))
SUM_DIM = op("SumBackward1",
             lambda F, g, out, a, shape, dims, keepdim:
             F.expand(_unsqueeze_dims(F, g, dims, len(shape), keepdim), shape),
             explain="a sum over dims: g is spread back along them",
             formulas=("∂(Σ_d a)/∂a = 1: g expanded",), check=Check(lambda a: a.sum(dim=1), (any_(2, 3),)))


def _accumulating(a, dim, dtype, axis):
    """sum and prod: the array, the dims (numpy's `axis` is torch's too) and the result
    dtype (integers and bools accumulate in int64, as torch's do)."""
    x = a.array
    out_dt = np.int64 if x.dtype.kind in "biu" else x.dtype
    if dtype is not None:
        out_dt = dtype.np
    return x, (dim if axis is None else axis), out_dt


@exposes(SUM_ALL, SUM_DIM, functions=("sum",), methods=("sum",))
def sum(a, dim=None, keepdim=False, dtype=None, axis=None):
    x, dim, out_dt = _accumulating(a, dim, dtype, axis)
    if out_dt != x.dtype:
        x = x.astype(out_dt)
    if dim is None:
        return record(SUM_ALL, summation.total(x), (a,), {"shape": x.shape})
    chosen = reduce_dims(dim, x.ndim)
    out = c_order(summation.along(x, tuple(chosen), keepdim))
    return record(SUM_DIM, out, (a,), {"shape": x.shape, "dims": chosen, "keepdim": keepdim})


def _sum_dims_arrays(g, dims_, keepdim):
    return summation.along(g, tuple(dims_), keepdim)


word("sum_dims", _sum_dims_arrays)(lambda g, dims_, keepdim: sum(g, dims_, keepdim))
word("sum_all", summation.total)(lambda g: sum(g))

MEAN_ALL = op("MeanBackward0",
              lambda F, g, out, a, shape: F.spread_mean(g, shape, _count(shape)),
              explain="a mean of n elements: each gets g/n", formulas=("∂(Σa/n)/∂aᵢ = 1/n: g/n expanded",),
              check=Check(lambda a: a.mean(), (any_(2, 3),)))
MEAN_DIM = op("MeanBackward1",
              lambda F, g, out, a, shape, dims, keepdim:
              F.div_scalar(F.expand(_unsqueeze_dims(F, g, dims, len(shape), keepdim), shape),
                           _count(shape, dims)),
              explain="a mean over dims: g/n spread back along them",
              formulas=("∂mean_d(a)/∂a = 1/n: g/n expanded",),
              check=Check(lambda a: a.mean(0, keepdim=True), (any_(2, 3),)))


def _spread_mean_array(g, shape, n):
    # g/n is one value: dividing it once and filling equals torch's division of every element
    if n and not g.shape:
        out = np.empty(shape, g.dtype)  # (np.full's Python wrapper costs more than the fill)
        out.fill(g / n)
        return out
    return np.broadcast_to(g, shape) / n


word("spread_mean", _spread_mean_array)(
    lambda g, shape, n: div_scalar(expand(g, shape), n))  # (torch's graph: Expand, then Div)


@exposes(MEAN_ALL, MEAN_DIM, functions=("mean",), methods=("mean",))
def mean(a, dim=None, keepdim=False, dtype=None, axis=None):
    dim = dim if axis is None else axis  # numpy's name, which torch takes too
    x = a.array
    if dtype is not None:
        x = x.astype(dtype.np)
    if x.dtype.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {type_word(x.dtype)}")
    if dim is None:
        return record(MEAN_ALL, summation.total(x) / x.size, (a,), {"shape": x.shape})
    chosen = reduce_dims(dim, x.ndim)  # (torch's mean is its sum divided by the count)
    out = c_order(summation.along(x, tuple(chosen), keepdim) / _count(x.shape, chosen))
    return record(MEAN_DIM, out, (a,), {"shape": x.shape, "dims": chosen, "keepdim": keepdim})


# === prod =======================================================================================

def _prod_vjp(F, g, out, a, dims_, keepdim):
    """torch's prod_backward: g·(prod/a) when no element of the input is zero; else the
    product of all the other elements by exclusive running products from both ends
    (_prod_others), which stays differentiable; for the whole product, over the input
    made contiguous and flat. A plain backward of a whole product with two zeros or more
    takes torch's shortcut: every gradient is 0."""
    if a.ndim == 0:
        return g
    if dims_ is not None and not keepdim:
        g, out = F.unsqueeze(g, dims_[0]), F.unsqueeze(out, dims_[0])
    zeros = np.count_nonzero(array_of(a) == 0)
    if not zeros:
        return g * (out / a)
    if dims_ is not None:
        return _prod_others(F, g, a, dims_[0])
    if zeros > 1 and not hasattr(g, "_grad_fn"):
        return np.zeros_like(a)
    flat = F.reshape(F.contiguous(a), (-1,))
    return F.reshape(_prod_others(F, g, flat, 0), tuple(a.shape))


def _prod_others(F, g, a, dim):
    """g times, for each element, the product of the others along dim: the running product
    of the elements before it times that of the elements after it (both exclusive), each
    a cumprod of the input shifted by one behind a row of ones; exact where some are zero."""
    n = a.shape[dim]
    if n == 1:  # no other element: g itself, which depends on no input
        return g
    ones = F.ones(tuple(1 if d == dim else s for d, s in enumerate(a.shape)), array_dtype(g))
    before = F.cumprod(F.cat([ones, F.slice(a, dim, 0, n - 1)], dim), dim)
    after = F.cumprod(F.cat([ones, F.flip(F.slice(a, dim, 1, n), (dim,))], dim), dim)
    return g * (before * F.flip(after, (dim,)))


PROD_ALL = op("ProdBackward0", lambda F, g, out, a: _prod_vjp(F, g, out, a, None, False),
              saves="io", explain="a product of all elements: each gets g times the others",
              formulas=("∂(Πa)/∂aᵢ = Π_{k≠i} a_k",),
              check=Check(lambda a: a.prod(), (away_from_zero(2, 3),)))
PROD_DIM = op("ProdBackward1", _prod_vjp, saves="io",
              explain="a product along a dim: each gets g times the others in its row",
              formulas=("∂(Π_d a)/∂aᵢ = Π_{k≠i} a_k",),
              check=Check(lambda a: a.prod(1), (away_from_zero(2, 3),)))


@exposes(PROD_ALL, PROD_DIM, functions=("prod",), methods=("prod",))
def prod(a, dim=None, keepdim=False, dtype=None, axis=None):
    x, dim, out_dt = _accumulating(a, dim, dtype, axis)
    if dim is None:
        return record(PROD_ALL, np.prod(x, dtype=out_dt), (a,))
    chosen = reduce_dims(dim, x.ndim)
    out = c_order(np.prod(x, axis=chosen, keepdims=keepdim, dtype=out_dt))
    return record(PROD_DIM, out, (a,), {"dims_": chosen, "keepdim": keepdim})


word("prod_keepdim", lambda g, dim: np.prod(g, axis=dim, keepdims=True))(
    lambda g, dim: prod(g, dim, True))


# === norm =======================================================================================

def _norm_vjp(F, g, out, a, dims_, keepdim, p=2.0):
    """torch's norm_backward, formula for formula (so signs of zero and graphs agree)."""
    if dims_ is not None and not keepdim:
        g = _unsqueeze_dims(F, g, dims_, a.ndim, False)
        out = _unsqueeze_dims(F, out, dims_, a.ndim, False)
    if p == 2.0:  # torch masks the 0/0 at a zero norm to 0
        return g * F.masked_fill(a / out, out == 0, 0.0)
    if p == 0.0:
        return F.zeros_like(a)
    if p == 1.0:
        return F.sgn(a) * g
    size = F.abs(a)
    if math.isinf(p):  # amax's derivative: the extremes share g, a NaN counts as one
        mask = (size == out) | (size != size)
        every = tuple(range(a.ndim)) if dims_ is None else dims_
        return F.sgn(a) * ((g / F.sum_dims(mask, every, True)) * mask)
    if p < 1.0:
        return F.sgn(a) * F.masked_fill(size ** (p - 1), a == 0, 0.0) * g * out ** (1 - p)
    scaled = F.sgn(a) * size ** (p - 1) if p < 2.0 else a * size ** (p - 2)
    return scaled * F.masked_fill(g / out ** (p - 1), out == 0, 0.0)


NORM = op("LinalgVectorNormBackward0", _norm_vjp, saves="io",
          explain="a vector p-norm ‖a‖ₚ (2 unless given): for p = 2 each element gets g·a/‖a‖, "
                  "for p = 1 g·sign(a), for p = ∞ the largest |a| share g",
          formulas=("∂‖a‖ₚ/∂a = sign(a)·|a|^(p-1)/‖a‖ₚ^(p-1): g·a/out for p = 2",),
          check=Check(lambda a: a.norm() + a.norm(3) + a.norm(1, dim=1), (away_from_zero(2, 3),)))


def _vector_norm(x, p, axis, keepdims):
    size = np.abs(x)
    if p == 2.0:
        rows = _last_dim_rows(x, axis)
        if rows is not None:  # torch's vectorised kernel: its order of additions
            out = summation.norm2_rows(rows)
            shape = tuple(1 if axis is None or i in axis else n for i, n in enumerate(x.shape))
            return out.reshape(shape if keepdims else tuple(
                n for i, n in enumerate(x.shape) if axis is not None and i not in axis))
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
    if p == math.inf:
        return np.max(size, axis=axis, keepdims=keepdims) if size.size else np.zeros(())
    if p == -math.inf:
        return np.min(size, axis=axis, keepdims=keepdims)
    if p == 0.0:
        return np.sum(size != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
    if p == 1.0:
        return np.sum(size, axis=axis, keepdims=keepdims)
    return np.sum(size ** p, axis=axis, keepdims=keepdims) ** (1 / p)


def _last_dim_rows(x, axis):
    """x as rows of the one run of memory each norm reads (all of x, or its last dim), when
    torch takes its vectorised path there; else None."""
    if x.dtype.kind != "f" or x.dtype.itemsize < 4 or not x.flags.c_contiguous or not x.size:
        return None
    if axis is None or len(axis) == x.ndim:
        return x.reshape(1, -1)
    if tuple(axis) == (x.ndim - 1,):
        return x.reshape(-1, x.shape[-1])
    return None


@exposes(NORM, methods=("norm",), params=("input", "p", "dim", "keepdim", "dtype"))
@exposes(NORM, functions=("norm",), params=("input", "p", "dim", "keepdim", "out", "dtype"))
def norm(a, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "fro" or p is None:
        p = 2.0
    elif type(p) is str:
        raise NotImplementedError(f"torch.norm with p='{p}' (a matrix norm)")
    elif type(p) not in (int, float):
        raise TypeError(f"norm(): argument 'p' must be Number, not {type(p).__name__}")
    if a.array.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {type_word(a.array.dtype)}")
    x = floating(a)
    if dtype is not None:  # computed in dtype, a widening of the input's
        if dtype.np.kind != "f":
            raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {type_word(dtype.np)}")
        if np.promote_types(x.dtype, dtype.np) != dtype.np:
            raise RuntimeError(
                f"linalg.vector_norm: the dtype of the input ({type_word(x.dtype)}) should be "
                f"convertible without narrowing to the specified dtype ({type_word(dtype.np)})")
        x = x.astype(dtype.np, copy=False)
    chosen = None if dim is None else reduce_dims(dim, x.ndim)
    out = c_order(np.asarray(_vector_norm(x, float(p), chosen, keepdim)))
    return record(NORM, out.astype(x.dtype, copy=False), (a,),
                  {"dims_": chosen, "keepdim": keepdim, "p": float(p)})


def vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None):
    """torch.linalg.vector_norm: the norm op under its linalg name (torch.norm calls it too)."""
    return norm(x, float(ord) if type(ord) is int else ord, dim, keepdim, dtype)


def linalg_norm(A, ord=None, dim=None, keepdim=False, dtype=None):
    """torch.linalg.norm: without `ord`, the 2-norm of the elements (Frobenius for a matrix);
    a vector's p-norm; a matrix norm by `ord` is not offered."""
    if ord is not None and (A.array.ndim >= 2 if dim is None else
                            isinstance(dim, (tuple, list)) and len(dim) == 2):
        from ..core.unsupported import Unsupported  # noqa: PLC0415 - an error path

        raise Unsupported(f"torch.linalg.norm with ord={ord!r} (a matrix norm)")
    return vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype)


LINALG = {"vector_norm": vector_norm, "norm": linalg_norm}


@exposes(nn=("normalize",))
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """F.normalize, as torch composes it: input / norm(input, p, dim).clamp_min(eps)."""
    if out is not None:
        from ..core.unsupported import Unsupported  # noqa: PLC0415 - an error path

        raise Unsupported("torch.nn.functional.normalize with out=")
    return div(input, expand_as(clamp_min(norm(input, p, dim, True), eps), input))


# === max and min ================================================================================

class ReturnType(tuple):
    """torch.return_types.max/min: a (values, indices) pair with names."""

    _tg_public = frozenset({"values", "indices"})
    kind = "max"

    def __new__(cls, kind, values, indices):
        pair = tuple.__new__(cls, (values, indices))
        pair.kind = kind
        return pair

    def tg_type_name(self) -> str:
        return f"torch.return_types.{self.kind}"

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self) -> str:
        return format_return_type(self.kind, repr(self[0]), repr(self[1]))

    __str__ = __repr__


def _evenly_distribute(F, g, out, a):
    """Whole-tensor max/min: tied elements share the gradient evenly."""
    mask = a == out
    return F.masked_fill(F.zeros_like(a), mask, g / mask.sum())


def _to_index(F, g, out, a, dim, keepdim, indices):
    """max/min along a dim: the gradient goes to the returned index."""
    if not keepdim and a.ndim:
        g = F.unsqueeze(g, dim)
        indices = np.expand_dims(indices, dim)
    return F.scatter(F.zeros_like(a), dim, indices, g)


MAX_ALL = op("MaxBackward1", _evenly_distribute, saves="io",
             explain="the largest element gets g (tied elements share it)",
             formulas=("∂max(a)/∂aᵢ = [aᵢ = max]/count",),
             check=Check(lambda a: a.max(), (any_(2, 3),)))
MIN_ALL = op("MinBackward1", _evenly_distribute, saves="io",
             explain="the smallest element gets g (tied elements share it)",
             formulas=("∂min(a)/∂aᵢ = [aᵢ = min]/count",),
             check=Check(lambda a: a.min(), (any_(2, 3),)))
MAX_DIM = op("MaxBackward0", _to_index, saves="i",
             explain="along a dim, each row's largest element gets g",
             formulas=("g placed at the argmax",),
             check=Check(lambda a: a.max(dim=1).values, (any_(2, 3),)))
MIN_DIM = op("MinBackward0", _to_index, saves="i",
             explain="along a dim, each row's smallest element gets g",
             formulas=("g placed at the argmin",),
             check=Check(lambda a: a.min(0, keepdim=True)[0], (any_(2, 3),)))


def _extreme(kind, a, dim, keepdim):
    x = a.array
    if dim is None:
        if x.size == 0:
            raise RuntimeError(
                f"{kind}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        out = x.max() if kind == "max" else x.min()
        return record(MAX_ALL if kind == "max" else MIN_ALL, out, (a,))
    d = dims(dim, x.ndim)[0]
    if not x.ndim:
        result = record(MAX_DIM if kind == "max" else MIN_DIM, x, (a,),
                        {"dim": 0, "keepdim": keepdim, "indices": np.zeros((), np.int64)})
        return ReturnType(kind, result, type(a)._wrap(np.zeros((), np.int64)))
    idx = c_order(np.argmax(x, axis=d) if kind == "max" else np.argmin(x, axis=d))
    values = c_order(np.take_along_axis(x, np.expand_dims(idx, d), axis=d))
    if not keepdim:
        values = np.squeeze(values, d)
        idx_out = idx
    else:
        idx_out = np.expand_dims(idx, d)
    entry = MAX_DIM if kind == "max" else MIN_DIM
    result = record(entry, values, (a,), {"dim": d, "keepdim": keepdim, "indices": idx_out})
    return ReturnType(kind, result, type(a)._wrap(idx_out.astype(np.int64)))


@exposes(MAX_ALL, MAX_DIM, functions=("max",), methods=("max",),
         params=("input", ("dim", "other"), "keepdim"))
def max(a, dim=None, keepdim=False, *, axis=None):
    dim = dim if axis is None else axis  # numpy's name, which torch takes too
    if dim is not None and type(dim) not in NUMBERS and not isinstance(dim, (tuple, list)):
        return maximum(a, dim)  # torch.max(a, b) of two tensors
    return _extreme("max", a, dim, keepdim)


@exposes(MIN_ALL, MIN_DIM, functions=("min",), methods=("min",),
         params=("input", ("dim", "other"), "keepdim"))
def min(a, dim=None, keepdim=False, *, axis=None):
    dim = dim if axis is None else axis  # numpy's name, which torch takes too
    if dim is not None and type(dim) not in NUMBERS and not isinstance(dim, (tuple, list)):
        return minimum(a, dim)
    return _extreme("min", a, dim, keepdim)


@exposes(functions=("argmax",), methods=("argmax",))
def argmax(a, dim=None, keepdim=False, *, axis=None):
    dim = dim if axis is None else axis  # numpy's name, which torch takes too
    return _arg_extreme(np.argmax, a, dim, keepdim, "argmax")


@exposes(functions=("argmin",), methods=("argmin",))
def argmin(a, dim=None, keepdim=False, *, axis=None):
    dim = dim if axis is None else axis  # numpy's name, which torch takes too
    return _arg_extreme(np.argmin, a, dim, keepdim, "argmin")


def _arg_extreme(pick, a, dim, keepdim, name: str):
    x = a.array
    if x.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        out = np.asarray(pick(x.reshape(-1)), dtype=np.int64)
        return type(a)._wrap(out.reshape((1,) * x.ndim) if keepdim else out)
    d = dims(dim, x.ndim)[0]
    out = pick(x, axis=d) if x.ndim else np.zeros((), np.int64)
    if keepdim and x.ndim:
        out = np.expand_dims(out, d)
    return type(a)._wrap(np.asarray(out, dtype=np.int64))


def _split_tie(F, g, a, b, loses):
    """maximum/minimum: a tie gives each input half; the losing side gets nothing."""
    return F.masked_fill(F.where(a == b, F.div_scalar(g, 2), g), loses, 0.0)


MAXIMUM = op("MaximumBackward0", lambda F, g, out, a, b: _split_tie(F, g, a, b, a < b),
             lambda F, g, out, a, b: _split_tie(F, g, a, b, a > b), saves="i",
             explain="elementwise max: the larger input gets g (a tie gives each half)",
             formulas=("g where a > b", "g where b > a"),
             check=Check(lambda a, b: a.maximum(b), (any_(2, 3), any_(3))))
MINIMUM = op("MinimumBackward0", lambda F, g, out, a, b: _split_tie(F, g, a, b, a > b),
             lambda F, g, out, a, b: _split_tie(F, g, a, b, a < b), saves="i",
             explain="elementwise min: the smaller input gets g (a tie gives each half)",
             formulas=("g where a < b", "g where b < a"),
             check=Check(lambda a, b: a.minimum(b), (any_(2, 3), any_(3))))


@exposes(MAXIMUM, functions=("maximum",), methods=("maximum",))
def maximum(a, b):
    x, y, dt = _tensor_pair(a, b, "maximum")
    # NumPy returns its second argument on a tie, torch its first: 0. and -0. show it
    return record(MAXIMUM, elementwise_result(np.maximum(y, x), x, y, dt), (a, b))


@exposes(MINIMUM, functions=("minimum",), methods=("minimum",))
def minimum(a, b):
    x, y, dt = _tensor_pair(a, b, "minimum")
    return record(MINIMUM, elementwise_result(np.minimum(y, x), x, y, dt), (a, b))


def _tensor_pair(a, b, name):
    if type(b) is not type(a):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(b).__name__}")
    try:
        return binary(a, b)
    except NotAnOperand:
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor") from None


_ = builtins  # the builtins stay reachable under this module's sum/max/min
