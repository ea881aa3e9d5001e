"""Normalization: batch_norm and layer_norm (F.batch_norm, F.layer_norm, and the nn modules
BatchNorm1d/2d and LayerNorm over them), with torch's CPU kernels' arithmetic.

torch computes these with kernels of their own (native_batch_norm, native_layer_norm), not
with sum and var, and its float results depend on their order of operations; the array
versions here follow them (measured against torch 2.13 on x86-64, whose batch-norm kernels
run on 8-float AVX2 vectors, the C compiler fusing a*b + c in vector code):

- batch-norm statistics: for a (N, C) input (one value per channel and sample) the batch is
  split between torch's threads, each summing its rows one after another in the input's
  dtype; the per-thread sums are added in double. With more values per sample (N, C, L...),
  each channel is summed one element after another in double. The variance sum adds
  (x - mean)² the same ways (fused in the per-thread sums). The output is x·α + β (fused),
  α = invstd·w, β = b - mean·α (fused).
- batch-norm backward: Σg and Σ(x - mean)·g as the statistics are summed (for N, C, L...:
  each sample's plane summed in vectors of 8, the 8 lanes folded as a tree), then
  dx = (g - Σg/N - (x - mean)·k)·invstd·w with k = Σ(x - mean)g·invstd²/N (fused in the
  vector part of a row, not in its scalar tail).
- layer_norm: each row's mean and variance by torch's vectorised Welford (RowwiseMoments),
  the output (x - mean)·rstd·w + b (the last two fused); its backward is in NumPy's order.

Under create_graph the gradients are composed of ordinary ops (torch's double backward is one
node of its own, NativeBatchNormBackwardBackward0, which is not reproduced).
"""

from __future__ import annotations

import numpy as np

from ..core.printing import format_size
from ..graph.nodes import record
from ..numerics.fma import fma32, fma64
from .registry import Check, Family, any_, no_in_place

family = Family("Normalization", inplace=no_in_place("a normalization: a new tensor"))
op, exposes, word = family.op, family.exposes, family.word

_LANES = 8  # floats per vector in torch's batch-norm kernels (AVX2)
_THREADS = 2  # at::get_num_threads() on the reference machine: how the batch is split


def _fma(dtype):
    return fma32 if dtype == np.float32 else fma64


def _thread_rows(n: int) -> list:
    """The rows each of torch's threads takes in parallel_for(0, n, grain 1)."""
    threads = min(_THREADS, n) if n > 1 else 1
    chunk = -(-n // threads)
    return [(t * chunk, min(n, (t + 1) * chunk)) for t in range(threads) if t * chunk < n]


def _per_thread_sums(rows: np.ndarray, term) -> np.ndarray:
    """Σ term(i) over the rows of each thread, row after row, in the rows' dtype, then the
    thread sums added in double (torch's two-pass channels-last reduction)."""
    total = np.zeros(rows.shape[1], np.float64)
    for begin, end in _thread_rows(rows.shape[0]):
        acc = np.zeros(rows.shape[1], rows.dtype)
        for i in range(begin, end):
            acc = term(i, acc)
        total = total + acc
    return total.astype(rows.dtype)


def _planes(x: np.ndarray) -> np.ndarray:
    """(C, N·L): each channel's values in memory order (sample after sample)."""
    n, c = x.shape[:2]
    return np.moveaxis(x.reshape(n, c, -1), 1, 0).reshape(c, -1)


def _sequential_double(values: np.ndarray) -> np.ndarray:
    """Σ along the last axis, one element after another, in double."""
    if values.shape[-1] == 0:
        return np.zeros(values.shape[:-1])
    return np.add.accumulate(values.astype(np.float64), axis=-1)[..., -1]


def _batch_stats(x: np.ndarray):
    """Each channel's mean and Σ(x - mean)², as torch's batch_norm_cpu_collect_stats."""
    c = x.shape[1]
    count = x.size // c
    if x.size // (x.shape[0] * c) == 1:  # (N, C): one value per sample and channel
        rows = x.reshape(-1, c)
        fma = _fma(x.dtype)
        mean = _thread_mean(rows, count)
        centred = rows - mean
        var_sum = _per_thread_sums(rows, lambda i, acc: fma(centred[i], centred[i], acc))
        return mean, var_sum
    planes = _planes(x)
    mean = (_sequential_double(planes) / count).astype(x.dtype)
    centred = planes - mean[:, None]
    return mean, _sequential_double(centred * centred).astype(x.dtype)


def _thread_mean(rows: np.ndarray, count: int) -> np.ndarray:
    total = np.zeros(rows.shape[1], np.float64)
    for begin, end in _thread_rows(rows.shape[0]):
        acc = np.zeros(rows.shape[1], rows.dtype)
        for i in range(begin, end):
            acc = rows[i] + acc
        total = total + acc
    return (total / count).astype(rows.dtype)


def _channel_shape(x: np.ndarray) -> tuple:
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _eval_invstd(running_var: np.ndarray, eps: float) -> np.ndarray:
    dt = running_var.dtype.type
    return dt(1) / np.sqrt(running_var + dt(eps))


def _batch_norm_array(x, w, b, running_mean, running_var, training, momentum, eps):
    """(output, the mean and invstd backward uses), updating the running statistics."""
    dt = x.dtype
    c = x.shape[1]
    n = x.size // c
    if training:
        mean, var_sum = _batch_stats(x)
        with np.errstate(divide="ignore"):
            invstd = (1.0 / np.sqrt((var_sum / dt.type(n)).astype(np.float64) + eps)).astype(dt)
        m = dt.type(momentum)
        if running_mean is not None:
            running_mean[...] = m * mean + (dt.type(1) - m) * running_mean
        if running_var is not None:
            unbiased = (var_sum / dt.type(n - 1)).astype(np.float64)
            running_var[...] = (np.float64(m) * unbiased +
                                ((dt.type(1) - m) * running_var).astype(np.float64)).astype(dt)
    else:
        mean, invstd = running_mean, _eval_invstd(running_var, eps)
    fma = _fma(dt)
    alpha = invstd if w is None else invstd * w
    beta = fma(-mean, alpha, np.zeros(c, dt) if b is None else b)
    shape = _channel_shape(x)
    out = fma(x, np.broadcast_to(alpha.reshape(shape), x.shape),
              np.broadcast_to(beta.reshape(shape), x.shape))
    return np.asarray(out, dt).reshape(x.shape), mean, invstd


def _tree_fold(lanes: np.ndarray) -> np.ndarray:
    """An 8-lane vector's elements added as torch's vec_reduce_all folds it (xor 4, 2, 1)."""
    for step in (4, 2, 1):
        lanes = lanes + lanes[..., np.arange(_LANES) ^ step]
    return lanes[..., 0]


def _reduce_all(planes: np.ndarray) -> np.ndarray:
    """torch's vec::reduce_all of a sum over the last axis: vectors of 8 added lane by lane,
    a partial last vector into the first lanes, then the lanes folded."""
    size = planes.shape[-1]
    if size < _LANES:  # one partial vector: its lanes added one after another
        acc = planes[..., 0] if size else np.zeros(planes.shape[:-1], planes.dtype)
        for i in range(1, size):
            acc = acc + planes[..., i]
        return acc
    full = size - size % _LANES
    acc = planes[..., :_LANES]
    for d in range(_LANES, full, _LANES):
        acc = acc + planes[..., d:d + _LANES]
    if full < size:
        rest = size - full
        acc = np.concatenate([acc[..., :rest] + planes[..., full:], acc[..., rest:]], axis=-1)
    return _tree_fold(acc)


def _batch_norm_backward_array(g, x, w, mean, invstd, running_var, training, eps, which):
    """One of (dx, dw, db) as torch's batch_norm_cpu_backward kernels compute it."""
    dt = x.dtype
    c = x.shape[1]
    n = x.size // c
    fma = _fma(dt)
    if not training:  # (the backward kernel adds eps in double, the forward in float)
        invstd = (1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(dt)
    ones = np.ones(c, dt)
    weight = ones if w is None else w
    if _expanded(g) or not x.flags.c_contiguous:
        return _strided_backward(g, x, weight, mean, invstd, training, which)
    if x.size // (x.shape[0] * c) == 1:  # (N, C)
        rows, grows = x.reshape(-1, c), g.reshape(-1, c)
        centred = rows - mean
        total = _per_thread_sums(grows, lambda i, acc: acc + grows[i])
        dotp = _per_thread_sums(grows, lambda i, acc: fma(centred[i], grows[i], acc))
        if which == "bias":
            return total
        if which == "weight":
            return dotp * invstd
        if not training:
            return (grows * invstd * weight).reshape(x.shape)
        k = dotp * invstd * invstd / dt.type(n)
        grad_mean = total / dt.type(n)
        vector = c - c % _LANES  # (the row's scalar tail is not fused)
        fused = fma(-centred, np.broadcast_to(k, rows.shape), grows - grad_mean)
        plain = grows - grad_mean - centred * k
        dx = np.concatenate([fused[:, :vector], plain[:, vector:]], axis=1)
        return (dx * invstd * weight).reshape(x.shape)
    planes = np.moveaxis(x.reshape(x.shape[0], c, -1), 1, 0)  # (C, N, L)
    gplanes = np.moveaxis(g.reshape(x.shape[0], c, -1), 1, 0)
    shape = _channel_shape(x)
    total = dotp = None
    if which == "bias" or (which == "input" and training):
        total = _sequential_double(_reduce_all(gplanes))
    if which == "weight" or (which == "input" and training):
        centred = planes - mean[:, None, None]
        dotp = _sequential_double(_dot_planes(centred, gplanes, fma))
    done = _without_input_terms(which, training, total, dotp, g, weight, invstd, shape, dt)
    if done is not None:
        return done
    k, grad_mean = _input_terms(total, dotp, invstd, n, dt)
    xm = x - mean.reshape(shape)
    dx = fma(-xm, np.broadcast_to(k.reshape(shape), x.shape),
             g - grad_mean.reshape(shape))
    return np.asarray(dx, dt).reshape(x.shape) * invstd.reshape(shape) * weight.reshape(shape)


def _without_input_terms(which, training, total, dotp, g, weight, invstd, shape, dt):
    """The bias's (Σg) or weight's (Σ(x - mean)·g · invstd) gradient, or the input's in eval
    mode (g · invstd · weight); None for the input's in training, which needs _input_terms."""
    if which == "bias":
        return total.astype(dt)
    if which == "weight":
        return (dotp * invstd).astype(dt)
    if not training:
        return g * invstd.reshape(shape) * weight.reshape(shape)
    return None


def _input_terms(total, dotp, invstd, n, dt):
    """k = Σ(x - mean)·g · invstd² / n and the mean gradient Σg / n, rounded as torch rounds."""
    return dotp.astype(dt) * invstd * invstd / dt.type(n), (total / n).astype(dt)


def _expanded(g: np.ndarray) -> bool:
    """Whether torch's gradient here would be an expanded one (the gradient of a sum or a
    mean, whose strides are 0): the engine materialises those, so a gradient with one value
    everywhere is taken for one (a contiguous one made by hand is then taken the other way)."""
    if not g.flags.c_contiguous:
        return True
    return g.size > 1 and bool((g.reshape(-1) == g.reshape(-1)[0]).all())


def _strided_backward(g, x, weight, mean, invstd, training, which):
    """torch's generic backward (a gradient or input not contiguous, as the expanded gradient
    of a sum): Σg and Σ(x - mean)·g one element after another in double, then elementwise
    kernels that round each step."""
    dt = x.dtype
    n = x.size // x.shape[1]
    shape = _channel_shape(x)
    centred = x - mean.reshape(shape)
    planes, gplanes = _planes(np.ascontiguousarray(centred)), _planes(np.ascontiguousarray(g))
    total = _sequential_double(gplanes)
    dotp = _sequential_double(planes * gplanes)
    done = _without_input_terms(which, training, total, dotp, g, weight, invstd, shape, dt)
    if done is not None:
        return done
    k, grad_mean = _input_terms(total, dotp, invstd, n, dt)
    dx = g - grad_mean.reshape(shape) - centred * k.reshape(shape)
    return dx * invstd.reshape(shape) * weight.reshape(shape)


def _dot_planes(centred, gplanes, fma):
    """Σ (x - mean)·g of each (channel, sample) plane, as torch's map2_reduce_all: the
    products of whole vectors added (not fused), those of a partial last one fused."""
    size = centred.shape[-1]
    if size < _LANES:
        return _reduce_all(centred * gplanes)
    products = centred * gplanes
    acc = products[..., :_LANES]
    full = size - size % _LANES
    for d in range(_LANES, full, _LANES):
        acc = acc + products[..., d:d + _LANES]
    if full < size:
        rest = size - full
        tail = fma(centred[..., full:], gplanes[..., full:], acc[..., :rest])
        acc = np.concatenate([tail, acc[..., rest:]], axis=-1)
    return _tree_fold(acc)


# --- under create_graph: the same gradients from ordinary, differentiable ops ----------------------

def _stats_tensors(x, axes, training, mean, invstd, eps):
    """mean and invstd as tensors: recomputed from x (so they are differentiated too) when
    they were the batch's, else the constant running statistics."""
    cls = type(x)
    shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    if not training:
        return cls._wrap(mean.reshape(shape)), cls._wrap(invstd.reshape(shape))
    m = x.mean(axes, keepdim=True)
    centred = x - m
    return m, ((centred * centred).mean(axes, keepdim=True) + eps).rsqrt()


def _normalized_backward_tensor(g, x, w, which, stat_axes, param_shape, mean, invstd,
                                training, eps):
    """dx, dw or db of (x - mean)·invstd·w + b, composed of tensor ops."""
    m, inv = _stats_tensors(x, stat_axes, training, mean, invstd, eps)
    xhat = (x - m) * inv
    lead = x.ndim - len(param_shape)  # the dims a parameter is broadcast over, in front
    if len(param_shape) == 1 and stat_axes != tuple(range(lead, x.ndim)):
        # batch norm: one parameter per channel (dim 1)
        over = stat_axes
        as_input = (1, -1) + (1,) * (x.ndim - 2)
    else:
        over = tuple(range(lead))
        as_input = param_shape
    if which == "bias":
        return g.sum(over) if over else g
    if which == "weight":
        return (g * xhat).sum(over) if over else g * xhat
    gw = g if w is None else g * w.reshape(as_input)
    if not training:
        return gw * inv
    return inv * (gw - gw.mean(stat_axes, keepdim=True)
                  - xhat * (gw * xhat).mean(stat_axes, keepdim=True))


def _bn_backward_tensor(g, x, w, mean, invstd, running_var, training, eps, which):
    axes = (0,) + tuple(range(2, x.ndim))
    inv = invstd if training else \
        (1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(invstd.dtype)
    return _normalized_backward_tensor(g, x, w, which, axes, (x.shape[1],), mean, inv,
                                       training, eps)


word("batch_norm_backward", _batch_norm_backward_array)(_bn_backward_tensor)


def _bn_rule(which):
    def vjp(F, g, out, x, w, b, mean, invstd, running_var, training, eps):
        return F.batch_norm_backward(g, x, w, mean, invstd, running_var, training, eps, which)
    return vjp


def _check_batch_norm(x, w, b):
    return batch_norm(x, None, None, w, b, True)


BATCH_NORM = op(
    "NativeBatchNormBackward0", _bn_rule("input"), _bn_rule("weight"), _bn_rule("bias"),
    saves="i",
    explain="batch normalization: each channel centred on its mean over the batch (and "
            "positions), divided by its standard deviation √(var + eps), times w plus b; "
            "in training the mean and variance depend on every element, so each element's "
            "gradient also goes through them",
    formulas=("∂/∂x = w·invstd·(g - mean(g) - x̂·mean(g·x̂)), x̂ = (x - mean)·invstd "
              "(w·invstd·g with the running statistics)",
              "∂/∂w = Σ g·x̂ over the batch and positions",
              "∂/∂b = Σ g over the batch and positions"),
    check=Check(_check_batch_norm, (any_(4, 3), any_(3), any_(3)), rtol=1e-5, atol=1e-6))


def _same_dtype(t, dt):
    return None if t is None else np.asarray(t.array, dt)


def _verify_batch_size(shape) -> None:
    size = 1
    for n in (shape[0],) + tuple(shape[2:]):
        size *= n
    if size == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {format_size(shape)}")


def _check_per_channel(name: str, t, c: int) -> None:
    if t is not None and t.array.size != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.array.size}")


@exposes(BATCH_NORM, nn=("batch_norm",))
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    x = input.array
    if training:
        _verify_batch_size(x.shape)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if x.ndim < 2:
        raise RuntimeError(f"batch_norm(): expected at least 2 dimensions for input, but got "
                           f"{x.ndim}")
    if x.dtype.kind != "f":
        from .operands import type_word  # noqa: PLC0415 - an error path

        raise RuntimeError(f'"batch_norm" not implemented for \'{type_word(x.dtype)}\'')
    c = x.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        _check_per_channel(name, t, c)
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")
    dt = x.dtype
    rm = None if running_mean is None else running_mean.array
    rv = None if running_var is None else running_var.array
    if training:  # the running statistics are updated in place (their version stays)
        rm_new = None if rm is None else np.array(rm, dt)
        rv_new = None if rv is None else np.array(rv, dt)
        out, mean, invstd = _batch_norm_array(x, _same_dtype(weight, dt), _same_dtype(bias, dt),
                                              rm_new, rv_new, True, momentum, eps)
        for target, value in ((rm, rm_new), (rv, rv_new)):
            if target is not None:
                target[...] = value
        saved_var = None
    else:
        mean = np.asarray(rm, dt)
        saved_var = np.asarray(rv, dt)
        out, mean, invstd = _batch_norm_array(x, _same_dtype(weight, dt), _same_dtype(bias, dt),
                                              mean, saved_var, False, momentum, eps)
    return record(BATCH_NORM, out, (input, weight, bias),
                  {"mean": mean, "invstd": invstd, "running_var": saved_var,
                   "training": bool(training), "eps": eps})


# === layer_norm ====================================================================================

def _layer_axes(x: np.ndarray, normalized_shape: tuple) -> tuple:
    return tuple(range(x.ndim - len(normalized_shape), x.ndim))


def _add_moments(add, into, fma):
    """torch's AddMoments: the (count, mean, M2) `add` merged into `into`."""
    count_add, mean_add, m2_add = add
    count, mean, m2 = into
    total = count + count_add
    dt = mean.dtype.type
    c = dt(0) if total == 0 else dt(count_add) / dt(total)
    delta = mean_add - mean
    return (total, fma(np.full_like(delta, c), delta, mean),
            m2 + fma(delta * delta * c, np.full_like(delta, dt(count)), m2_add))


def _row_moments(rows: np.ndarray):
    """Each row's mean and variance as torch's RowwiseMoments: Welford's method on vectors of
    8 lanes (chunks of 16 vectors merged as a binary counter), the scalar tail, then the
    lanes merged into it (fused where the vector code is)."""
    dt = rows.dtype
    fma = lambda a, b, c: np.asarray(_fma(dt)(a, b, c), dt)  # noqa: E731
    m, n_all = rows.shape
    n = n_all // _LANES
    chunks = -(-n // 16)
    depth = int(np.ceil(np.log2(chunks))) if chunks > 1 else 0
    zero = np.zeros((m, _LANES), dt)
    stack = [(0, zero, zero) for _ in range(max(depth, 1))]
    for i in range(chunks):
        size = min(16, n - i * 16)
        mean, m2 = zero, zero
        for j in range(size):
            x = rows[:, (i * 16 + j) * _LANES:(i * 16 + j + 1) * _LANES]
            delta = x - mean
            mean = fma(delta, np.full_like(delta, dt.type(1) / dt.type(j + 1)), mean)
            m2 = fma(delta, x - mean, m2)
        stack[0] = _add_moments((size, mean, m2), stack[0], fma)
        mask, j = i + 1, 1
        while j < depth and mask & 1 == 0:
            stack[j] = _add_moments(stack[j - 1], stack[j], fma)
            stack[j - 1] = (0, zero, zero)
            mask >>= 1
            j += 1
    for j in range(1, depth):
        stack[0] = _add_moments(stack[j], stack[0], fma)
    count, mean, m2 = 0, np.zeros(m, dt), np.zeros(m, dt)
    for i in range(n * _LANES, n_all):  # (scalar code: not fused)
        x = rows[:, i]
        delta = x - mean
        count += 1
        mean = mean + delta / dt.type(count)
        m2 = m2 + delta * (x - mean)
    vectors = (n, stack[0][1], stack[0][2])
    for lane in range(_LANES):
        count, mean, m2 = _add_moments((vectors[0], vectors[1][:, lane], vectors[2][:, lane]),
                                       (count, mean, m2), fma)
    return mean, m2 / dt.type(n_all)


def _layer_norm_array(x, w, b, axes, eps):
    dt = x.dtype
    k = len(axes)
    lead = x.shape[:x.ndim - k]
    rows = np.ascontiguousarray(x).reshape(int(np.prod(lead, dtype=np.int64)), -1)
    mean, var = _row_moments(rows) if rows.size else (np.zeros(rows.shape[0], dt),) * 2
    rstd = dt.type(1) / np.sqrt(var + dt.type(eps))
    shape = lead + (1,) * k
    mean, rstd = mean.reshape(shape), rstd.reshape(shape)
    out = (x - mean) * rstd
    if w is not None or b is not None:
        scale = np.ones(x.shape[x.ndim - k:], dt) if w is None else w
        shift = np.zeros(scale.shape, dt) if b is None else b
        out = _fma(dt)(out, np.broadcast_to(scale, x.shape), np.broadcast_to(shift, x.shape))
    return np.asarray(out, dt).reshape(x.shape), mean, rstd


def _layer_norm_backward_array(g, x, w, mean, rstd, axes, eps, which):
    """dx in NumPy's order; dw and db as torch's kernel: Σ over rows, the rows split between
    its threads, each adding g·(rstd·x - rstd·mean) row after row (fused), in float."""
    dt = x.dtype
    fma = _fma(dt)
    k = len(axes)
    if which in ("weight", "bias"):
        rows = np.ascontiguousarray(x).reshape(-1, int(np.prod(x.shape[x.ndim - k:])))
        grows = np.ascontiguousarray(g).reshape(rows.shape)
        if which == "bias":
            terms = grows
            total = _float_thread_sums(rows.shape[0], lambda i, acc: acc + terms[i], rows)
        else:
            a = rstd.reshape(-1, 1)
            terms = np.asarray(fma(np.broadcast_to(a, rows.shape), rows,
                                   np.broadcast_to(-a * mean.reshape(-1, 1), rows.shape)), dt)
            total = _float_thread_sums(rows.shape[0],
                                       lambda i, acc: fma(grows[i], terms[i], acc), rows)
        return np.asarray(total, dt).reshape(x.shape[x.ndim - k:])
    xhat = (x - mean) * rstd
    gw = g if w is None else g * w
    return rstd * (gw - np.mean(gw, axis=axes, keepdims=True, dtype=dt)
                   - xhat * np.mean(gw * xhat, axis=axes, keepdims=True, dtype=dt))


def _float_thread_sums(n_rows, term, rows):
    """Σ term over rows per thread (row after row), then the thread sums added, all in the
    rows' dtype."""
    total = np.zeros(rows.shape[1], rows.dtype)
    for begin, end in _thread_rows(n_rows):
        acc = np.zeros(rows.shape[1], rows.dtype)
        for i in range(begin, end):
            acc = np.asarray(term(i, acc), rows.dtype)
        total = total + acc
    return total


def _ln_backward_tensor(g, x, w, mean, rstd, axes, eps, which):
    return _normalized_backward_tensor(g, x, w, which, axes, tuple(x.shape[axes[0]:]) if axes
                                       else (), mean, rstd, True, eps)


word("layer_norm_backward", _layer_norm_backward_array)(_ln_backward_tensor)


def _ln_rule(which):
    def vjp(F, g, out, x, w, b, mean, rstd, axes, eps):
        return F.layer_norm_backward(g, x, w, mean, rstd, axes, eps, which)
    return vjp


def _check_layer_norm(x, w, b):
    return layer_norm(x, (3,), w, b)


LAYER_NORM = op(
    "NativeLayerNormBackward0", _ln_rule("input"), _ln_rule("weight"), _ln_rule("bias"),
    saves="i",
    explain="layer normalization: each sample's last dims centred on their mean, divided by "
            "their standard deviation √(var + eps), times w plus b; the mean and variance "
            "depend on every element of the sample, so each gradient also goes through them",
    formulas=("∂/∂x = invstd·(g·w - mean(g·w) - x̂·mean(g·w·x̂)), x̂ = (x - mean)·invstd",
              "∂/∂w = Σ g·x̂ over the leading dims",
              "∂/∂b = Σ g over the leading dims"),
    check=Check(_check_layer_norm, (any_(2, 3), any_(3), any_(3)), rtol=1e-5, atol=1e-6))


@exposes(LAYER_NORM, nn=("layer_norm",))
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    x = input.array
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(int(n) for n in normalized_shape)
    k = len(shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.array.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.array.shape)} and normalized_shape "
                               f"= {list(shape)}")
    if x.ndim < k or tuple(x.shape[x.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(str(n) for n in shape)}], but got input of size"
                           f"{list(x.shape)}")
    if x.dtype.kind != "f":
        from .operands import type_word  # noqa: PLC0415 - an error path

        raise RuntimeError(f'"LayerNormKernelImpl" not implemented for \'{type_word(x.dtype)}\'')
    dt = x.dtype
    axes = _layer_axes(x, shape)
    out, mean, rstd = _layer_norm_array(x, _same_dtype(weight, dt), _same_dtype(bias, dt),
                                        axes, eps)
    return record(LAYER_NORM, out, (input, weight, bias),
                  {"mean": mean, "rstd": rstd, "axes": axes, "eps": eps})
