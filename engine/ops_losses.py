"""Binary losses and L1: binary_cross_entropy, binary_cross_entropy_with_logits, l1_loss, and
logit (the target's gradient of binary_cross_entropy).

binary_cross_entropy is an op with a backward op of its own (BinaryCrossEntropyBackward0,
then BinaryCrossEntropyBackwardBackward0 in a double backward); the gradient of
binary_cross_entropy_with_logits is a composition of ordinary ops in torch (sigmoid, sub, mul,
div), and so it is here; l1_loss is `(input - target).abs()` reduced, as torch 2.x records it.
Array versions compute in the order of torch's CPU kernels.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import summation
from .graph import record
from .operands import ArgumentTypeError, binary, floating
from .ops_math import abs as abs_
from .ops_arith import sub
from .ops_activation import logsigmoid
from .ops_reduce import mean, sum
from .registry import Check, Family, any_

family = Family("Binary losses and L1")
op, exposes, word = family.op, family.exposes, family.word

_REDUCTIONS = ("none", "mean", "sum")
_EPSILON = 1e-12  # torch's floor for x(1 - x) in the gradient of binary_cross_entropy


def reduction_of(reduction, size_average=None, reduce=None) -> str:
    """A loss's reduction: torch's legacy size_average/reduce arguments folded in (with its
    warning), else `reduction` checked."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        folded = "none" if not reduce else ("mean" if size_average else "sum")
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{folded}' instead.", UserWarning, stacklevel=3)
        return folded
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(array, reduction):
    if reduction == "mean":
        return summation.total(array) / array.size
    return summation.total(array) if reduction == "sum" else array


def _constant(like, tensor, shape=None):
    """A weight for the rules: a tensor without history, broadcast to the loss's shape; a
    rule takes it in its own flavour with `F.gradient(w)` (an array in a plain backward)."""
    if tensor is None:
        return None
    array = tensor.array if shape is None else np.broadcast_to(tensor.array, shape)
    return type(like)._wrap(array)


# === logit ========================================================================================

def _logit_array(x):
    return np.log(x / (1 - x))


def _logit_vjp(F, g, out, a):
    inside = (a >= 0) & (a <= 1)
    return F.where(inside, g / (a * F.one_minus(a)), np.nan)


LOGIT = op("LogitBackward0", _logit_vjp, saves="i", explain="logit, log(a / (1 - a))",
           formulas=("∂logit(a)/∂a = 1/(a(1 - a)): g/(a(1 - a))",),
           check=Check(lambda a: a.sigmoid().logit(), (any_(3),)))


@word("logit", _logit_array)
@exposes(LOGIT, functions=("logit",), methods=("logit",))
def logit(a, eps=None):
    if eps is not None and type(eps) not in (int, float):
        raise ArgumentTypeError("eps", "float", eps)
    x = floating(a)
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return record(LOGIT, _logit_array(x), (a,))


# === binary_cross_entropy ========================================================================

def _bce_backward_array(g, x, t, weight, reduction):
    one = x.dtype.type(1)
    grad = g * (x - t) / np.maximum((one - x) * x, x.dtype.type(_EPSILON))
    if weight is not None:
        grad = grad * weight.array
    if reduction == "mean":
        grad = grad / x.dtype.type(x.size)
    return grad.astype(x.dtype, copy=False)


def _bce_double_input(F, gg, out, g, x, t, weight, reduction):
    """∂/∂x of the gradient g·(x - t)/(x(1 - x)) (torch's binary_cross_entropy_double_backward)."""
    numerator = x * x - F.mul_scalar(x, 2) * t + t
    denominator = F.add_scalar(x, _EPSILON) ** 2 * F.add_scalar(F.one_minus(x), _EPSILON) ** 2
    grad = numerator / denominator * (gg * g)
    if weight is not None:
        grad = grad * F.gradient(weight)
    return F.div_scalar(grad, _numel(x)) if reduction == "mean" else grad


def _bce_double_grad(F, gg, out, g, x, t, weight, reduction):
    grad = (x - t) / (F.add_scalar(x, _EPSILON) * F.add_scalar(F.one_minus(x), _EPSILON)) * gg
    if weight is not None:
        grad = grad * F.gradient(weight)
    return F.div_scalar(grad, _numel(x)) if reduction == "mean" else grad


def _bce_double_target(F, gg, out, g, x, t, weight, reduction):
    grad = -gg * g
    if weight is not None:
        grad = grad * F.gradient(weight)
    grad = grad / F.clamp_min(F.one_minus(x) * x, _EPSILON)
    return F.div_scalar(grad, _numel(x)) if reduction == "mean" else grad


def _numel(v) -> int:
    return v.size if type(v) is np.ndarray else v.numel()


def _clamp_min_tensor(t, low):
    """A clamp made under no_grad in torch's formula: a constant, not recorded."""
    return type(t)._wrap(np.maximum(t.array, t.array.dtype.type(low)))


word("clamp_min", lambda a, low: np.maximum(a, a.dtype.type(low)))(_clamp_min_tensor)

BCE_BACKWARD = op(
    "BinaryCrossEntropyBackwardBackward0", _bce_double_grad, _bce_double_input,
    _bce_double_target, saves="i",
    explain="the gradient of binary cross-entropy, g·(x - t)/(x(1 - x)), as an op of its own",
    formulas=("∂/∂g = (x - t)/(x(1 - x))", "∂/∂x = (x² - 2xt + t)/(x(1 - x))²·g",
              "∂/∂t = -g/(x(1 - x))"),
    check=Check(lambda x, t: binary_cross_entropy(x.sigmoid(), t.sigmoid()),
                (any_(2, 3), any_(2, 3))))


@word("binary_cross_entropy_backward", _bce_backward_array)
def binary_cross_entropy_backward(g, x, t, weight, reduction):
    out = _bce_backward_array(g.array, x.array, t.array, weight, reduction)
    return record(BCE_BACKWARD, out, (g, x, t), {"weight": weight, "reduction": reduction})


def _bce_input_vjp(F, g, out, x, t, weight, reduction):
    return F.binary_cross_entropy_backward(g, x, t, weight, reduction)


def _bce_target_vjp(F, g, out, x, t, weight, reduction):
    grad = -F.logit(x) * g
    if weight is not None:
        grad = grad * F.gradient(weight)
    return F.div_scalar(grad, _numel(t)) if reduction == "mean" else grad


BCE = op("BinaryCrossEntropyBackward0", _bce_input_vjp, _bce_target_vjp, saves="i",
         explain="binary cross-entropy -(t·log x + (1 - t)·log(1 - x)) of probabilities x",
         formulas=("∂/∂x = (x - t)/(x(1 - x)): g·(x - t)/max(x(1 - x), 1e-12)",
                   "∂/∂t = -logit(x): -g·log(x/(1 - x))"),
         check=Check(lambda x, t: binary_cross_entropy(x.sigmoid(), t.sigmoid()),
                     (any_(2, 3), any_(2, 3))))


def _target_shape_check(input, target, message):
    if input.array.shape != target.array.shape:
        raise ValueError(message.format(target=target.shape, input=input.shape))


@exposes(BCE, nn=("binary_cross_entropy",))
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = reduction_of(reduction, size_average, reduce)
    _target_shape_check(input, target, "Using a target size ({target}) that is different to the "
                        "input size ({input}) is deprecated. Please ensure they have the same size.")
    x, t, dt = binary(input, target)
    if not np.all((x >= 0) & (x <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not np.all((t >= 0) & (t <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    floor = dt.type(-100)
    loss = ((t - dt.type(1)) * np.maximum(np.log1p(-x), floor)
            - t * np.maximum(np.log(x), floor))
    w = _constant(input, weight, x.shape)
    if w is not None:
        loss = loss * w.array
    return record(BCE, np.asarray(_reduce(loss.astype(dt, copy=False), reduction)),
                  (input, target), {"weight": w, "reduction": reduction})


# === binary_cross_entropy_with_logits ===========================================================

def _log_sigmoid_array(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


word("log_sigmoid", _log_sigmoid_array)(logsigmoid)


def _logits_input_vjp(F, g, out, x, t, weight, pos_weight, reduction):
    if pos_weight is None:
        grad = F.sigmoid(x) - t
    else:
        scaled = F.gradient(pos_weight) * t
        grad = (F.add_scalar(scaled, 1) - t) * F.sigmoid(x) - scaled
    grad = grad * g
    if weight is not None:
        grad = grad * F.gradient(weight)
    return F.div_scalar(grad, _numel(x)) if reduction == "mean" else grad


def _logits_target_vjp(F, g, out, x, t, weight, pos_weight, reduction):
    if pos_weight is None:
        grad = -x * g
    else:
        grad = (F.log_sigmoid(-x) - F.log_sigmoid(x) * F.gradient(pos_weight)) * g
    if weight is not None:
        grad = grad * F.gradient(weight)
    return F.div_scalar(grad, _numel(t)) if reduction == "mean" else grad


BCE_LOGITS = op(
    "BinaryCrossEntropyWithLogitsBackward0", _logits_input_vjp, _logits_target_vjp, saves="i",
    explain="binary cross-entropy of logits x: of sigmoid(x), computed stably",
    formulas=("∂/∂x = σ(x) - t: g·(σ(x) - t)", "∂/∂t = -x: -g·x"),
    check=Check(lambda x, t: binary_cross_entropy_with_logits(x, t.sigmoid()),
                (any_(2, 3), any_(2, 3))))


@exposes(BCE_LOGITS, nn=("binary_cross_entropy_with_logits",))
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = reduction_of(reduction, size_average, reduce)
    _target_shape_check(input, target,
                        "Target size ({target}) must be the same as input size ({input})")
    x, t, dt = binary(input, target)
    log_sigmoid = _log_sigmoid_array(x)
    pw = _constant(input, pos_weight)
    if pw is not None:
        log_sigmoid = log_sigmoid * ((pw.array - dt.type(1)) * t + dt.type(1))
    loss = (dt.type(1) - t) * x - log_sigmoid
    w = _constant(input, weight, x.shape)
    if w is not None:
        loss = loss * w.array
    return record(BCE_LOGITS, np.asarray(_reduce(loss.astype(dt, copy=False), reduction)),
                  (input, target), {"weight": w, "pos_weight": pw, "reduction": reduction})


# === l1_loss: a composition in torch ============================================================

@exposes(nn=("l1_loss",))
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = reduction_of(reduction, size_average, reduce)
    if input.array.shape != target.array.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    diff = abs_(sub(input, target))
    if reduction == "none":
        return diff
    return mean(diff) if reduction == "mean" else sum(diff)
