"""Statistics and orderings: var/std, logsumexp, amax/amin, sort/argsort, topk.

Each rule is the formula torch's own backward uses (var_backward, std_backward,
logsumexp_backward, scale_grad_by_count, value_selecting_reduction_backward), with the same
ops in the same order, so a gradient made with create_graph=True prints torch's graph.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..core import dtypes
from ..graph.nodes import NUMBERS, record
from .operands import c_order, dims, reduce_dims
from .reduce import ReturnType, _to_index, _unsqueeze_dims
from .registry import Check, Family, any_, no_in_place

family = Family("Statistics and orderings", inplace=no_in_place(
    "a statistic or an ordering: a new tensor"))
op, exposes, word = family.op, family.exposes, family.word


def _mean_keepdim_arrays(a, dims_):
    return np.mean(a, axis=dims_, keepdims=dims_ is not None)


@word("mean_keepdim", _mean_keepdim_arrays)
def _mean_keepdim_tensor(a, dims_):
    from .reduce import mean  # noqa: PLC0415 - the module's `mean` is a torch name

    return mean(a) if dims_ is None else mean(a, dims_, True)


# === var and std =================================================================================

def _var_vjp(F, g, out, a, dims_, correction, keepdim):
    """torch's var_backward: 2/(n - correction)·g·(a - mean(a))."""
    if dims_ is None or a.ndim == 0:
        dof = int(np.prod(a.shape)) - correction
        if dof <= 0:  # 2/0: inf where a differs from its mean, nan where it does not
            values = np.asarray(a.array if hasattr(a, "_grad_fn") else a)
            with np.errstate(invalid="ignore"):
                infinite = np.sign(values - values.mean()) * np.inf
            return g * F.gradient(infinite.astype(values.dtype))  # a constant, as in torch
        return F.mul_scalar(g, 2.0 / dof) * (a - F.mean_keepdim(a, None))
    if not keepdim and a.ndim > 1:
        g = _unsqueeze_dims(F, g, dims_, a.ndim, False)
    n = 1
    for d in dims_:
        n *= a.shape[d]
    dof = n - correction
    scale = 2.0 / dof if dof else float("inf")
    return F.mul_scalar(g, scale) * (a - F.mean_keepdim(a, dims_))


def _std_vjp(F, g, out, a, dims_, correction, keepdim):
    """torch's std_backward: var's rule of g/(2·std), 0 where std is 0."""
    return _var_vjp(F, F.masked_fill(g / F.mul_scalar(out, 2), out == 0, 0.0),
                    out, a, dims_, correction, keepdim)


VAR = op("VarBackward0", _var_vjp, saves="i",
         explain="the variance Σ(a - mean)²/(n - correction): each element gets g times its "
                 "distance from the mean, doubled and divided by n - correction",
         formulas=("∂var(a)/∂a = 2(a - mean)/(n - correction)",),
         check=Check(lambda a: a.var(1), (any_(3, 4),)))
STD = op("StdBackward0", _std_vjp, saves="io",
         explain="the standard deviation √var: var's gradient times 1/(2·std)",
         formulas=("∂std(a)/∂a = (a - mean)/((n - correction)·std)",),
         check=Check(lambda a: a.std(), (any_(3, 4),)))


def _spread(name, a, dim, unbiased, keepdim, correction):
    """var/std's arguments as torch reads them: (array, dims or None, correction)."""
    if isinstance(dim, bool):  # var(True): the old `unbiased` form
        dim, unbiased = None, dim
    x = a.array
    if x.dtype.kind != "f":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 0 if unbiased is False else 1
    chosen = None if dim is None else reduce_dims(dim, x.ndim)
    if chosen == () and x.ndim:
        chosen = None
    n = x.size if chosen is None else int(np.prod([x.shape[d] for d in chosen]))
    out_size = x.size // n if n else 0
    dof = n - correction
    if dof <= 0 and out_size:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=4)
    wide = x.astype(np.float64)
    axis = None if chosen is None else chosen
    with np.errstate(divide="ignore", invalid="ignore"):
        centred = wide - np.sum(wide, axis=axis, keepdims=True) / n
        squares = np.sum(centred * centred, axis=axis, keepdims=keepdim)
        var_ = squares / max(dof, 0)
    return x, var_, chosen, correction


@exposes(VAR, functions=("var",), methods=("var",))
def var(a, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    x, var_, chosen, correction = _spread("var", a, dim if axis is None else axis, unbiased,
                                          keepdim, correction)
    out = c_order(np.asarray(var_.astype(x.dtype)))
    return record(VAR, out if out.ndim else out[()], (a,),
                  {"dims_": chosen, "correction": correction, "keepdim": keepdim})


@exposes(STD, functions=("std",), methods=("std",))
def std(a, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    x, var_, chosen, correction = _spread("std", a, dim if axis is None else axis, unbiased,
                                          keepdim, correction)
    out = c_order(np.asarray(np.sqrt(var_).astype(x.dtype)))
    return record(STD, out if out.ndim else out[()], (a,),
                  {"dims_": chosen, "correction": correction, "keepdim": keepdim})


# === logsumexp ===================================================================================

def _logsumexp_vjp(F, g, out, a, dims_, keepdim):
    """torch's logsumexp_backward: g·exp(a - out), the reduced dims put back first."""
    if not keepdim and a.ndim:
        g = _unsqueeze_dims(F, g, dims_, a.ndim, False)
        out = _unsqueeze_dims(F, out, dims_, a.ndim, False)
    return g * F.exp(a - out)


LOGSUMEXP = op("LogsumexpBackward0", _logsumexp_vjp, saves="io",
               explain="log Σ eᵃ: each element gets g times its softmax weight",
               formulas=("∂logsumexp(a)/∂a = softmax(a): g·exp(a - out)",),
               check=Check(lambda a: a.logsumexp(1), (any_(3, 4),)))

_REQUIRED = object()


@exposes(LOGSUMEXP, functions=("logsumexp",), methods=("logsumexp",))
def logsumexp(a, dim=_REQUIRED, keepdim=False):
    if dim is _REQUIRED:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    x = a.array
    if x.dtype.kind != "f":
        x = x.astype(dtypes.DEFAULT_FLOAT.np)
    chosen = reduce_dims(dim, x.ndim)
    if not chosen:
        return record(LOGSUMEXP, x.copy(), (a,), {"dims_": chosen, "keepdim": keepdim})
    peak = np.max(x, axis=chosen, keepdims=True) if x.size else np.zeros((1,) * x.ndim, x.dtype)
    peak = np.where(np.isinf(peak), 0, peak)  # torch's guard: inf - inf would be nan
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        total = np.log(np.sum(np.exp(x - peak), axis=chosen, keepdims=True)) + peak
    if not keepdim:
        total = np.squeeze(total, chosen)
    out = c_order(np.asarray(total.astype(x.dtype, copy=False)))
    return record(LOGSUMEXP, out if out.ndim else out[()], (a,),
                  {"dims_": chosen, "keepdim": keepdim})


# === amax and amin ===============================================================================

def _restore_reduced_dims(F, t, dims_, keepdim):
    """torch's restore_reduced_dims: t reshaped with a 1 at each reduced dim (a view even
    when no dim was named; a 0-d input's dim 0 gives shape [1], summed back later)."""
    if keepdim:
        return t
    shape = list(np.shape(t) if type(t) is np.ndarray or isinstance(t, np.generic) else t.shape)
    target = [1 if i in dims_ else None for i in range(len(shape) + len(dims_))]
    rest = iter(shape)
    return F.reshape(t, tuple(n if n is not None else next(rest) for n in target))


def _count_scaled(F, g, out, a, dims_, keepdim):
    """torch's scale_grad_by_count: g split evenly among the elements equal to the extreme."""
    g = _restore_reduced_dims(F, g, dims_, keepdim)
    mask = _restore_reduced_dims(F, out, dims_, keepdim) == a
    counts = F.sum_dims(mask, (dims_ or tuple(range(a.ndim))) if mask.ndim else (), True)
    return (g / counts) * mask


AMAX = op("AmaxBackward0", _count_scaled, saves="io",
          explain="the largest elements get g, split evenly among ties",
          formulas=("∂amax(a)/∂aᵢ = [aᵢ = max]/count",),
          check=Check(lambda a: a.amax(1), (any_(3, 4),)))
AMIN = op("AminBackward0", _count_scaled, saves="io",
          explain="the smallest elements get g, split evenly among ties",
          formulas=("∂amin(a)/∂aᵢ = [aᵢ = min]/count",),
          check=Check(lambda a: a.amin((0, 1), keepdim=True), (any_(3, 4),)))


def _extreme(kind, entry, a, dim, keepdim):
    x = a.array
    named = () if dim in ((), []) else dims(dim, x.ndim)  # (none: every dim)
    chosen = tuple(range(x.ndim)) if not named or not x.ndim else named
    if x.size == 0:
        if dim in ((), []):
            raise RuntimeError(
                f"{kind}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        for d in chosen:
            if x.shape[d] == 0:
                raise IndexError(f"{kind}(): Expected reduction dim {d} to have non-zero size.")
    reduce = np.max if kind == "amax" else np.min
    out = c_order(np.asarray(reduce(x, axis=chosen, keepdims=keepdim)))
    return record(entry, out if out.ndim else out[()], (a,), {"dims_": named, "keepdim": keepdim})


@exposes(AMAX, functions=("amax",), methods=("amax",))
def amax(a, dim=(), keepdim=False):
    return _extreme("amax", AMAX, a, dim, keepdim)


@exposes(AMIN, functions=("amin",), methods=("amin",))
def amin(a, dim=(), keepdim=False):
    return _extreme("amin", AMIN, a, dim, keepdim)


# === sort, argsort, topk =========================================================================

def _order(x, d, descending):
    """The indices that sort x along d. torch's CPU sort keeps ties in their order for the
    sizes it insertion-sorts (up to 16 along the dim), as a stable sort does; NaN is largest."""
    if not descending:
        return np.argsort(x, axis=d, kind="stable")
    flipped = np.flip(x, axis=d)
    picked = np.flip(np.argsort(flipped, axis=d, kind="stable"), axis=d)
    return x.shape[d] - 1 - picked


def _sorted_pair(a, dim, descending):
    x = a.array
    if not x.ndim:
        return x, np.zeros((), np.int64), 0
    d = dims(dim, x.ndim)[0]
    idx = c_order(_order(x, d, descending)).astype(np.int64)
    return np.take_along_axis(x, idx, axis=d), idx, d


def _to_indices(F, g, out, a, dim, indices):
    return _to_index(F, g, out, a, dim, True, indices) if a.ndim else g


SORT = op("SortBackward0", _to_indices, saves="i",
          explain="a sort reorders a: each element gets the g of the place it moved to",
          formulas=("g placed back at the sorted indices",),
          check=Check(lambda a: a.sort(1, descending=True).values * a.sort(1).values,
                      (any_(3, 4),)))
TOPK = op("TopkBackward0", _to_indices, saves="i",
          explain="the k largest (or smallest) elements get their g, the others nothing",
          formulas=("g placed at the chosen indices",),
          check=Check(lambda a: a.topk(2, 0).values.exp(), (any_(4, 3),)))


@exposes(SORT, functions=("sort",), methods=("sort",))
def sort(a, dim=-1, descending=False, stable=False):
    values, idx, d = _sorted_pair(a, dim, descending)
    result = record(SORT, values, (a,), {"dim": d, "indices": idx})
    return ReturnType("sort", result, type(a)._wrap(idx))


@exposes(functions=("argsort",), methods=("argsort",))
def argsort(a, dim=-1, descending=False, stable=False):
    return type(a)._wrap(_sorted_pair(a, dim, descending)[1])


@exposes(TOPK, functions=("topk",), methods=("topk",))
def topk(a, k, dim=-1, largest=True, sorted=True):
    if type(k) not in NUMBERS or isinstance(k, float):
        raise TypeError(f"topk(): argument 'k' (position 1) must be int, not {type(k).__name__}")
    x = a.array
    size = x.shape[dims(dim, x.ndim)[0]] if x.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, idx, d = _sorted_pair(a, dim, largest)
    if x.ndim:
        keep = (slice(None),) * d + (slice(0, k),)
        values, idx = c_order(values[keep]), c_order(idx[keep])
    result = record(TOPK, values, (a,), {"dim": d, "indices": idx})
    return ReturnType("topk", result, type(a)._wrap(idx))

