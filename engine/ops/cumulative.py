"""Cumulative sums and products along a dim: cumsum, cumprod.

Their backward rules are torch's (the facts of its public derivatives.yaml): cumsum's
gradient is the reversed cumulative sum of g; cumprod's is that sum of out·g divided by
the input when no element is zero, and otherwise, while gradients are being recorded
(create_graph), a sum over the products that omit each element, built from slices,
cumprod, prod and stack so that it can be differentiated again. A plain backward through
zeros takes torch's masked formula instead, which gives +0 wherever no term reaches.
"""

from __future__ import annotations

import numpy as np

from ..graph.nodes import record
from .operands import array_dtype, array_of, dims
from .registry import METHOD_IN_PLACE, Check, Family, any_, away_from_zero

family = Family("Cumulative sums and products", inplace=METHOD_IN_PLACE)
op, exposes, word = family.op, family.exposes, family.word


def _scanned(ufunc, x, dim: int, dtype):
    """torch's CPU scan: integers and bools in int64, float32 accumulated in double, a sum
    from +0. and a product from 1."""
    out_dt = np.dtype(np.int64) if x.dtype.kind in "biu" else x.dtype
    if dtype is not None:
        out_dt = dtype.np
        x = x.astype(out_dt)
    if x.ndim == 0:
        return np.array(x, dtype=out_dt)
    acc = np.float64 if out_dt.kind == "f" and out_dt.itemsize < 8 else out_dt
    out = ufunc.accumulate(x, axis=dim, dtype=acc)
    if ufunc is np.add and out_dt.kind == "f":
        out += 0.0  # torch's running sum starts from +0.: a prefix of -0.s sums to +0.
    return out.astype(out_dt, copy=False)


def _recording(g) -> bool:
    """Whether a rule runs under create_graph (torch's grad mode inside backward)."""
    return not isinstance(g, (np.ndarray, np.generic))


def _trivial(a, dim) -> bool:
    shape = a.shape
    return int(np.prod(shape)) <= 1 or shape[dim] == 1


def _reversed_cumsum(F, w, dim):
    return F.flip(F.cumsum(F.flip(w, (dim,)), dim), (dim,))


# === cumsum =====================================================================================

def _cumsum_vjp(F, g, out, a, dim, in_dtype):
    g = F.cast(g, in_dtype)
    return g if _trivial(g, dim) else _reversed_cumsum(F, g, dim)


CUMSUM = op("CumsumBackward0", _cumsum_vjp,
            explain="a running sum: element i gets the sum of g over i and every later position",
            formulas=("∂(Σ_{j≤k} a_j)/∂a_i = [i ≤ k]: g summed from the end",),
            check=Check(lambda a: a.cumsum(1), (any_(2, 3),)))


@exposes(CUMSUM, functions=("cumsum",), methods=("cumsum",))
def cumsum(a, dim, dtype=None):
    return _running(CUMSUM, np.add, a, dim, dtype)


def _running(entry, ufunc, a, dim, dtype):
    """A running sum or product along `dim`, recorded with the input's dtype (the rules
    cast the gradient back to it)."""
    x = a.array
    d = dims(dim, x.ndim)[0]
    return record(entry, _scanned(ufunc, x, d, dtype), (a,), {"dim": d, "in_dtype": x.dtype})


word("cumsum", lambda g, dim: _scanned(np.add, g, dim, None))(cumsum)


# === cumprod ====================================================================================

def _cumprod_vjp(F, g, out, a, dim, in_dtype):
    g = F.cast(g, in_dtype)
    if _trivial(a, dim):
        return g
    if not (array_of(a) == 0).any():
        return _reversed_cumsum(F, out * g, dim) / a
    if not _recording(g):
        return _cumprod_masked_grad(g, a, out, dim)
    return _cumprod_omitted_products(F, g, a, dim)


def _cumprod_omitted_products(F, g, a, dim):
    """Σ_{k≥i} g_k · Π_{j≤k, j≠i} a_j for each i, as torch builds it under create_graph: the
    products of the elements before i (prod) times the running products after i (cumprod),
    each written into its place of a zero tensor (so the graph shows CopySlices)."""
    n = a.shape[dim]
    ones_shape = tuple(1 if d == dim else s for d, s in enumerate(a.shape))
    ones = F.expand(F.ones((1,), array_dtype(g)), ones_shape)
    grad = F.zeros(tuple(a.shape), array_dtype(g))
    for k in range(n):
        if k == 0:
            omitted = F.cat([ones, F.cumprod(F.slice(a, dim, 1, n), dim)], dim)
        else:
            until = F.prod_keepdim(F.slice(a, dim, 0, k), dim)
            if k == n - 1:
                omitted = until
            else:
                after = F.cumprod(F.slice(a, dim, k + 1, n), dim)
                omitted = F.cat([until, F.expand(until, tuple(after.shape)) * after], dim)
        grad[(slice(None),) * dim + (k,)] = F.sum_dims(F.slice(g, dim, k, n) * omitted, (dim,),
                                                       False)
    return grad


def _cumprod_masked_grad(g, a, out, dim):
    """torch's plain-backward formula where an element is zero (arrays): before the first
    zero, the reversed sum of out·g over the input; at the first zero, the products up to
    the second; +0 after it."""
    is_zero = a == 0
    seen = np.cumsum(is_zero, axis=dim)
    grad = np.zeros(a.shape, dtype=g.dtype)
    before = seen == 0
    w = np.where(before, out * g, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        head = np.flip(_scanned(np.add, np.flip(w, dim), dim, None), dim) / a
    grad[before] = head[before]
    between = seen == 1
    first = np.zeros_like(between)
    np.put_along_axis(first, np.expand_dims(np.argmax(between, axis=dim), dim), True, dim)
    first &= between
    between &= ~first
    after = _scanned(np.multiply, np.where(between, a, 1), dim, None) * np.where(seen != 1, 0, g)
    n = a.shape[dim]
    shifted = np.concatenate([np.ones_like(np.take(out, [0], axis=dim)),
                              np.take(out, range(n - 1), axis=dim)], axis=dim)
    at_zero = np.sum(after, axis=dim, keepdims=True) * shifted
    grad[first] = at_zero[first]
    return grad


CUMPROD = op("CumprodBackward0", _cumprod_vjp, saves="io",
             explain="a running product: element i gets g times the products it is part of",
             formulas=("∂(Π_{j≤k} a_j)/∂a_i = Π_{j≤k, j≠i} a_j: Σ_{k≥i} g·out/a",),
             check=Check(lambda a: a.cumprod(1), (away_from_zero(2, 3),)))


@exposes(CUMPROD, functions=("cumprod",), methods=("cumprod",))
def cumprod(a, dim, dtype=None):
    return _running(CUMPROD, np.multiply, a, dim, dtype)


word("cumprod", lambda g, dim: _scanned(np.multiply, g, dim, None))(cumprod)
