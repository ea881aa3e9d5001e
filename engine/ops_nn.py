"""Activations and losses: relu, sigmoid, tanh, softmax, log_softmax, mse_loss, nll_loss,
cross_entropy, and the backward ops PyTorch computes them with (TanhBackward, ...).

PyTorch computes the gradients of these ops with ops of their own (tanh_backward,
_softmax_backward_data, mse_loss_backward, ...), whose names appear in a double backward.
Their array versions compute in the order torch's kernels do, so float32 results agree.
"""

from __future__ import annotations

import warnings

import numpy as np

from .graph import record
from .operands import binary, dims, finish, floating, type_word
from .ops_index import index
from .ops_reduce import mean, sum
from .registry import Check, Family, any_, away_from_zero

family = Family("Activations and losses")
op, exposes, word = family.op, family.exposes, family.word


def _tanh_backward_array(g, y):
    return g * (1 - y * y)


def _sigmoid_backward_array(g, y):
    return g * (1 - y) * y


def _threshold_backward_array(g, y, threshold):
    return np.where(y <= threshold, 0, g).astype(g.dtype, copy=False)


TANH_BACKWARD = op("TanhBackwardBackward0",
                   lambda F, gg, o, g, y: F.tanh_backward(gg, y),
                   lambda F, gg, o, g, y: gg * (F.mul_scalar(y, -2) * g), saves="i",
                   explain="the gradient of tanh, g·(1 - y²), as an op of its own",
                   formulas=("∂/∂g = 1 - y²", "∂/∂y = -2·y·g"),
                   check=Check(lambda a: a.tanh(), (any_(3),)))
SIGMOID_BACKWARD = op("SigmoidBackwardBackward0",
                      lambda F, gg, o, g, y: F.sigmoid_backward(gg, y),
                      lambda F, gg, o, g, y: gg * g * F.add_scalar(F.mul_scalar(y, -2), 1),
                      saves="i", explain="the gradient of sigmoid, g·(1 - y)·y, as an op of its own",
                      formulas=("∂/∂g = (1 - y)·y", "∂/∂y = g·(1 - 2y)"),
                      check=Check(lambda a: a.sigmoid(), (any_(3),)))
THRESHOLD_BACKWARD = op("ThresholdBackwardBackward0",
                        lambda F, gg, o, g, y, threshold: F.threshold_backward(gg, y, threshold),
                        lambda F, gg, o, g, y, threshold: F.zeros_like(gg), saves="i",
                        explain="the gradient of relu: g where the input was positive",
                        formulas=("∂/∂g = [y > 0]", "∂/∂y = 0"),
                        check=Check(lambda a: a.relu() * a, (away_from_zero(3),)))


def _pair_word(entry, compute, name, **params):
    def tensor_version(g, y, *args):
        extra = dict(zip(params, args))
        return record(entry, compute(g.array, y.array, *args), (g, y), extra or None)
    tensor_version.__name__ = name
    return word(name, compute)(tensor_version)


tanh_backward = _pair_word(TANH_BACKWARD, _tanh_backward_array, "tanh_backward")
sigmoid_backward = _pair_word(SIGMOID_BACKWARD, _sigmoid_backward_array, "sigmoid_backward")
threshold_backward = _pair_word(THRESHOLD_BACKWARD, _threshold_backward_array,
                                "threshold_backward", threshold=None)

TANH = op("TanhBackward0", lambda F, g, out, a: F.tanh_backward(g, out), saves="o",
          explain="tanh", formulas=("∂(tanh a)/∂a = 1 - tanh²a: g·(1 - out²)",),
          check=Check(lambda a: a.tanh(), (any_(3),)))
SIGMOID = op("SigmoidBackward0", lambda F, g, out, a: F.sigmoid_backward(g, out), saves="o",
             explain="sigmoid", formulas=("∂σ(a)/∂a = σ(a)(1-σ(a)): g·(1-out)·out",),
             check=Check(lambda a: a.sigmoid(), (any_(3),)))
RELU = op("ReluBackward0", lambda F, g, out, a: F.threshold_backward(g, out, 0), saves="o",
          explain="relu lets the gradient through where the input was positive",
          formulas=("∂relu(a)/∂a = [a > 0]: g·[out > 0]",), check=Check(lambda a: a.relu(), (away_from_zero(3),)))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@exposes(TANH, functions=("tanh",), methods=("tanh",), nn=("tanh",))
def tanh(a):
    return record(TANH, np.tanh(floating(a)), (a,))


@exposes(SIGMOID, functions=("sigmoid",), methods=("sigmoid",), nn=("sigmoid",))
def sigmoid(a):
    return record(SIGMOID, _sigmoid(floating(a)), (a,))


@exposes(RELU, functions=("relu",), methods=("relu",), nn=("relu",))
def relu(a):
    return record(RELU, np.maximum(a.array, 0).astype(a.array.dtype, copy=False), (a,))


# === softmax and log_softmax =====================================================================

def _softmax_array(x, dim):
    shifted = x - np.max(x, axis=dim, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=dim, keepdims=True)


def _softmax_backward_array(g, y, dim):
    return y * (g - np.sum(g * y, axis=dim, keepdims=True))


def _log_softmax_backward_array(g, y, dim):
    return g - np.exp(y) * np.sum(g, axis=dim, keepdims=True)


SOFTMAX_BACKWARD = op(
    "SoftmaxBackwardDataBackward0",
    lambda F, gg, o, g, y, dim: F.softmax_backward(gg, y, dim),
    lambda F, gg, o, g, y, dim: gg * g - gg * F.sum_dims(g * y, (dim,), True)
    - g * F.sum_dims(gg * y, (dim,), True),
    saves="i", explain="the gradient of softmax, y·(g - Σ g·y), as an op of its own",
    formulas=("∂/∂g = y·(δ - y)", "∂/∂y"), check=Check(lambda a: a.softmax(1), (any_(2, 3),)))
LOG_SOFTMAX_BACKWARD = op(
    "LogSoftmaxBackwardDataBackward0",
    lambda F, gg, o, g, y, dim: F.log_softmax_backward(gg, y, dim),
    lambda F, gg, o, g, y, dim: -gg * F.exp(y) * F.sum_dims(g, (dim,), True),
    saves="i", explain="the gradient of log-softmax, g - softmax·Σg, as an op of its own",
    formulas=("∂/∂g = δ - softmax", "∂/∂y = -softmax·Σg"),
    check=Check(lambda a: a.log_softmax(1), (any_(2, 3),)))
softmax_backward = _pair_word(SOFTMAX_BACKWARD, _softmax_backward_array, "softmax_backward",
                              dim=None)
log_softmax_backward = _pair_word(LOG_SOFTMAX_BACKWARD, _log_softmax_backward_array,
                                  "log_softmax_backward", dim=None)

SOFTMAX = op("SoftmaxBackward0", lambda F, g, out, a, dim: F.softmax_backward(g, out, dim),
             saves="o", explain="softmax", formulas=("∂softmax/∂a: out·(g - Σ g·out)",),
             check=Check(lambda a: a.softmax(1), (any_(2, 3),)))
LOG_SOFTMAX = op("LogSoftmaxBackward0",
                 lambda F, g, out, a, dim: F.log_softmax_backward(g, out, dim), saves="o",
                 explain="log-softmax", formulas=("∂log_softmax/∂a: g - softmax(a)·Σg",),
                 check=Check(lambda a: a.log_softmax(1), (any_(2, 3),)))


def _softmax_dim(dim, ndim, name):
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                      "call to include dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if ndim in (0, 1, 3) else 1  # torch's legacy implicit choice
    return dims(dim, ndim)[0]


@exposes(SOFTMAX, functions=("softmax",), methods=("softmax",), nn=("softmax",))
def softmax(a, dim=None, dtype=None):
    x = floating(a) if dtype is None else a.array.astype(dtype.np)
    d = _softmax_dim(dim, x.ndim, "softmax")
    return record(SOFTMAX, _softmax_array(x, d), (a,), {"dim": d})


@exposes(LOG_SOFTMAX, functions=("log_softmax",), methods=("log_softmax",), nn=("log_softmax",))
def log_softmax(a, dim=None, dtype=None):
    x = floating(a) if dtype is None else a.array.astype(dtype.np)
    d = _softmax_dim(dim, x.ndim, "log_softmax")
    shifted = x - np.max(x, axis=d, keepdims=True)
    out = shifted - np.log(np.sum(np.exp(shifted), axis=d, keepdims=True))
    return record(LOG_SOFTMAX, out, (a,), {"dim": d})


# === losses =======================================================================================

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _mse_backward_array(g, a, b, reduction, n):
    """torch's kernel: the scale in the tensor's dtype, times (a - b), times g."""
    scale = np.result_type(a, b).type(2.0 / n if reduction == "mean" else 2.0)
    return scale * (a - b) * g


def _mse_scale(reduction, n) -> float:
    return 2.0 / n if reduction == "mean" else 2.0


MSE_BACKWARD = op(
    "MseLossBackwardBackward0",
    lambda F, gg, o, g, a, b, reduction, n: F.mul_scalar(a - b, _mse_scale(reduction, n)) * gg,
    lambda F, gg, o, g, a, b, reduction, n: F.mul_scalar(gg * g, _mse_scale(reduction, n)),
    lambda F, gg, o, g, a, b, reduction, n: F.mul_scalar(gg * g, -_mse_scale(reduction, n)),
    saves="i", explain="the gradient of the mean squared error, 2(a - b)·g/n, as an op of its own",
    formulas=("∂/∂g = 2(a - b)/n", "∂/∂a = 2g/n", "∂/∂b = -2g/n"),
    check=Check(lambda a, b: mse_loss(a, b), (any_(2, 3), any_(2, 3))))


@word("mse_loss_backward", _mse_backward_array)
def mse_loss_backward(g, a, b, reduction, n):
    x, y = a.array, b.array
    return record(MSE_BACKWARD, _mse_backward_array(g.array, x, y, reduction, n), (g, a, b),
                  {"reduction": reduction, "n": n})


MSE = op("MseLossBackward0",
         lambda F, g, out, a, b, reduction, n: F.mse_loss_backward(g, a, b, reduction, n),
         lambda F, g, out, a, b, reduction, n: F.mse_loss_backward(g, b, a, reduction, n),
         saves="i", explain="mean squared error",
         formulas=("∂/∂a = 2(a - b)/n: 2(a - b)/n·g", "∂/∂b = -2(a - b)/n: -2(a - b)/n·g"),
         check=Check(lambda a, b: mse_loss(a, b), (any_(2, 3), any_(2, 3))))


@exposes(MSE, nn=("mse_loss",))
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_reduction(reduction)
    x, y, dt = binary(input, target)
    if input.array.shape != target.array.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    diff = (x - y) ** 2
    n = diff.size
    out = diff if reduction == "none" else (diff.mean() if reduction == "mean" else diff.sum())
    return record(MSE, finish(out, dt), (input, target), {"reduction": reduction, "n": n})


def _classes(like, values):
    """A tensor of class indices (for gradient checks), of the same tensor class as `like`."""
    return type(like)._wrap(np.array(values, dtype=np.int64))


def _picked(target):
    cols = target if type(target) is np.ndarray else np.asarray(target)
    return (cols,) if cols.ndim == 0 else (np.arange(cols.shape[0]), cols)


def _nll_backward_array(g, logp, target, reduction, n):
    z = np.zeros(logp.shape, dtype=logp.dtype)
    if reduction == "none" and np.ndim(target):
        z[_picked(target)] = -g
    else:
        z[_picked(target)] = -(g / n if reduction == "mean" else g)
    return z


NLL_BACKWARD = op(
    "NllLossBackwardBackward0",
    lambda F, gg, o, g, logp, target, reduction, n: F.nll_loss_values(gg, target, reduction, n),
    lambda F, gg, o, g, logp, target, reduction, n: F.zeros_like(logp),
    saves="i", explain="the gradient of the negative log-likelihood, as an op of its own",
    formulas=("∂/∂g = -[class = target]/n", "∂/∂logp = 0"),
    check=Check(lambda a: cross_entropy(a, _classes(a, [0, 2])), (any_(2, 3),)))


@word("nll_loss_backward", _nll_backward_array)
def nll_loss_backward(g, logp, target, reduction, n):
    z = _nll_backward_array(g.array, logp.array, target, reduction, n)
    return record(NLL_BACKWARD, z, (g, logp), {"target": target, "reduction": reduction, "n": n})


def _nll_values_array(gg, target, reduction, n):
    picked = -gg[_picked(target)]
    if reduction == "none":
        return picked
    return picked.mean() if reduction == "mean" else picked.sum()


@word("nll_loss_values", _nll_values_array)
def nll_loss_values(gg, target, reduction, n):
    """nll_loss of an incoming gradient, with fixed targets (the derivative of its backward)."""
    picked = -index(gg, _picked(target))
    if reduction == "none":
        return picked
    return mean(picked) if reduction == "mean" else sum(picked)


NLL = op("NllLossBackward0",
         lambda F, g, out, logp, target, reduction, n, cols: F.nll_loss_backward(g, logp, cols, reduction, n),
         None, saves="i", explain="negative log-likelihood: -1/n at each target class",
         formulas=("∂/∂logp = -[class = target]/n", ""),
         check=Check(lambda a: nll_loss(a.log_softmax(1), _classes(a, [0, 2])), (any_(2, 3),)))


@exposes(NLL, nn=("nll_loss",))
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    _check_reduction(reduction)
    logp = input.array
    cols = target.array
    if cols.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {type_word(cols.dtype)}")
    if logp.ndim == 1:
        logp, cols2 = logp[None, :], cols.reshape(1)
    else:
        cols2 = cols
    n_classes = logp.shape[1]
    bad = cols2[(cols2 < 0) | (cols2 >= n_classes)]
    if bad.size:
        raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    picked = -logp[np.arange(logp.shape[0]), cols2]
    n = picked.size
    out = picked if reduction == "none" else (picked.mean() if reduction == "mean" else picked.sum())
    if input.array.ndim == 1 and reduction == "none":
        out = out.reshape(())
    return record(NLL, np.asarray(out, dtype=logp.dtype), (input, target),
                  {"reduction": reduction, "n": n, "cols": cols})


@exposes(nn=("cross_entropy",))
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    return nll_loss(log_softmax(input, 1 if input.array.ndim > 1 else 0), target,
                    reduction=reduction)
