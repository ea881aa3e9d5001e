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

from ..numerics import summation
from ..graph.nodes import record
from .operands import ArgumentTypeError, binary, floating, result_dtype, type_word
from .math import abs as abs_
from .arith import sub
from .activation import logsigmoid
from .reduce import mean, sum
from .registry import IN_PLACE, Check, Family, any_, no_in_place, positive

family = Family("Binary losses and L1", inplace=no_in_place("a loss or a similarity: a new tensor"))
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
@exposes(LOGIT, functions=("logit",), methods=("logit",), inplace=IN_PLACE)
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

@exposes(nn=("l1_loss",),
         params=("input", "target", "size_average", "reduce", "reduction", "weight"))
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


# === smooth_l1_loss and huber_loss: ops with backward ops of their own ===========================
#
# One pair of kernels for both, `kind` naming which: smooth L1 is 0.5·z²/β inside |z| < β and
# z - 0.5β outside; Huber is 0.5·z² inside |z| < δ and δ(z - 0.5δ) outside (Huber = β·smooth L1).

def _robust_array(x, t, kind, limit):
    dt = x.dtype.type
    z = np.abs(x - t)
    half, lim = dt(0.5), dt(limit)
    if kind == "smooth_l1":
        return np.where(z < lim, half * z * z / lim, z - half * lim)
    return np.where(z < lim, half * z * z, lim * (z - half * lim))


def _robust_backward_array(g, x, t, reduction, kind, limit):
    """torch's kernel: blocks of two vectors from the start (their formula in the dtype), then
    element by element (where β or δ stays a double, the product rounded back once)."""
    dt = x.dtype
    norm = dt.type(1.0 / x.size) if reduction == "mean" else dt.type(1.0)
    d = x - t
    g = np.broadcast_to(g, d.shape)
    sign = np.where(d > 0, dt.type(1), dt.type(-1))
    lim = dt.type(limit)
    if kind == "smooth_l1":
        vector = norm * np.where(np.abs(d) >= lim, sign, d / lim) * g
        edge = norm * g
        scalar = np.where(d <= -limit, -edge, np.where(
            d >= limit, edge, ((norm * d * g).astype(np.float64) / limit).astype(dt)))
    else:
        vector = norm * np.where(np.abs(d) >= lim, sign * lim, d) * g
        edge = ((norm * g).astype(np.float64) * limit).astype(dt)
        scalar = np.where(d <= -limit, -edge, np.where(d >= limit, edge, norm * d * g))
    whole = d.size - d.size % _VECTOR_BLOCK.get(dt, d.size + 1)
    out = np.array(scalar, dtype=dt).reshape(-1)
    out[:whole] = np.asarray(vector, dtype=dt).reshape(-1)[:whole]
    return out.reshape(d.shape)


_VECTOR_BLOCK = {np.dtype(np.float32): 16, np.dtype(np.float64): 8}


def _inside(x, t, limit):
    """|x - t| < limit as 0/1 in x's dtype: a constant of the rules (torch makes it type_as)."""
    return (np.abs(x - t) < limit).astype(x.dtype)


def _inside_tensor(x, t, limit):
    return type(x)._wrap(_inside(x.array, t.array, limit))


word("robust_inside", _inside)(_inside_tensor)


def _robust_double(F, gg_g, x, t, reduction, kind, limit):
    """torch's smooth_l1 / huber_loss_double_backward of gg·g."""
    if kind == "smooth_l1" and limit == 0:
        return F.zeros_like(gg_g)
    grad = gg_g * F.robust_inside(x, t, limit)
    if kind == "smooth_l1":
        grad = F.div_scalar(grad, limit)
    return F.div_scalar(grad, _numel(x)) if reduction == "mean" else grad


def _robust_grad_output(F, gg, out, g, x, t, reduction, kind, limit):
    if reduction == "none":
        return F.robust_loss_backward(gg, x, t, reduction, kind, limit)
    return F.sum_all(F.robust_loss_backward(F.ones_like(g), x, t, reduction, kind, limit) * gg)


def _robust_backward_op(name, title):
    return op(name, _robust_grad_output,
              lambda F, gg, out, g, x, t, reduction, kind, limit:
              _robust_double(F, gg * g, x, t, reduction, kind, limit),
              lambda F, gg, out, g, x, t, reduction, kind, limit:
              -_robust_double(F, gg * g, x, t, reduction, kind, limit),
              saves="i", explain=f"the gradient of the {title} loss, as an op of its own",
              formulas=("∂/∂g = the slope at each element (±1 outside the limit)",
                        "∂/∂x = g·[|x - t| < limit] (÷ limit for smooth L1)",
                        "∂/∂t = -g·[|x - t| < limit]"),
              check=Check(lambda x, t: _robust_call(kind_of[name], x, t),
                          (any_(2, 3), any_(2, 3))))


kind_of = {"SmoothL1LossBackwardBackward0": "smooth_l1", "HuberLossBackwardBackward0": "huber",
           "SmoothL1LossBackward0": "smooth_l1", "HuberLossBackward0": "huber"}


def _robust_call(kind, x, t):
    return smooth_l1_loss(x, t, beta=0.7) if kind == "smooth_l1" else huber_loss(x, t, delta=0.7)


SMOOTH_L1_BACKWARD = _robust_backward_op("SmoothL1LossBackwardBackward0", "smooth L1")
HUBER_BACKWARD = _robust_backward_op("HuberLossBackwardBackward0", "Huber")


def _ones_like_tensor(g):
    return type(g)._wrap(np.ones_like(g.array))


word("ones_like", np.ones_like)(_ones_like_tensor)


@word("robust_loss_backward", _robust_backward_array)
def robust_loss_backward(g, x, t, reduction, kind, limit):
    out = _robust_backward_array(g.array, x.array, t.array, reduction, kind, limit)
    entry = SMOOTH_L1_BACKWARD if kind == "smooth_l1" else HUBER_BACKWARD
    return record(entry, out, (g, x, t), {"reduction": reduction, "kind": kind, "limit": limit})


def _robust_op(name, title, formula):
    return op(name,
              lambda F, g, out, x, t, reduction, kind, limit:
              F.robust_loss_backward(g, x, t, reduction, kind, limit),
              lambda F, g, out, x, t, reduction, kind, limit:
              F.robust_loss_backward(g, t, x, reduction, kind, limit),
              saves="i", explain=title, formulas=formula,
              check=Check(lambda x, t: _robust_call(kind_of[name], x, t),
                          (any_(2, 3), any_(2, 3))))


SMOOTH_L1 = _robust_op(
    "SmoothL1LossBackward0", "smooth L1 loss: 0.5·z²/β where |z| < β, else |z| - 0.5β (z = x - t)",
    ("∂/∂x = z/β inside, sign(z) outside", "∂/∂t = -∂/∂x"))
HUBER = _robust_op(
    "HuberLossBackward0", "Huber loss: 0.5·z² where |z| < δ, else δ(|z| - 0.5δ) (z = x - t)",
    ("∂/∂x = z inside, δ·sign(z) outside", "∂/∂t = -∂/∂x"))


def _size_warning(input, target):
    if input.array.shape != target.array.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _robust(input, target, reduction, kind, limit):
    """Broadcast, then torch's checks in its order, then the op (smooth L1 with β = 0 is
    torch's l1_loss, a composition)."""
    from .shape import broadcast_tensors  # noqa: PLC0415 - ops_shape builds on this family

    input, target = broadcast_tensors(input, target)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if kind == "smooth_l1" and limit == 0.0:
        diff = abs_(sub(input, target))
        if reduction == "none":
            return diff
        return mean(diff) if reduction == "mean" else sum(diff)
    if kind == "smooth_l1" and limit < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if kind == "huber" and limit <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, t, dt = binary(input, target)
    if dt.kind != "f":
        raise NotImplementedError(f"\"{kind}_cpu\" not implemented for '{type_word(dt)}'")
    loss = np.asarray(_robust_array(x, t, kind, limit), dtype=dt)
    entry = SMOOTH_L1 if kind == "smooth_l1" else HUBER
    return record(entry, np.asarray(_reduce(loss, reduction), dtype=dt), (input, target),
                  {"reduction": reduction, "kind": kind, "limit": float(limit)})


@exposes(SMOOTH_L1, nn=("smooth_l1_loss",))
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = reduction_of(reduction, size_average, reduce)
    return _robust(input, target, reduction, "smooth_l1", beta)


@exposes(HUBER, nn=("huber_loss",))
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _size_warning(input, target)
    if weight is not None:
        from ..core.unsupported import Unsupported  # noqa: PLC0415 - an error path

        raise Unsupported("torch.nn.functional.huber_loss with weight=")
    return _robust(input, target, reduction, "huber", delta)


# === kl_div: a composition in torch (xlogy, exp, sub, mul, then the reduction) ====================

def _xlogy_array(x, y):
    dt = np.result_type(x, y)
    y = np.asarray(y, dt)
    logs = np.log(y.astype(np.float64)).astype(dt) if dt == np.float32 else np.log(y)
    out = np.where(x == 0, dt.type(0), x * logs)
    return np.asarray(np.where(np.isnan(y), dt.type(np.nan), out), dtype=dt)


def _values(v):
    """An input's values as an array, whatever the rules' flavour (a number stays a number)."""
    return v if type(v) is np.ndarray or type(v) in (int, float, bool) else v.array


def _xlogy_self_vjp(F, g, out, a, b):
    """torch's formula: xlogy(g, b), zero where a = 0 and b ≤ 0 (where the product has no
    log to differentiate)."""
    return F.masked_fill(F.xlogy(g, b), (_values(a) == 0) & (np.asarray(_values(b)) <= 0), 0.0)


XLOGY = op("XlogyBackward0", _xlogy_self_vjp,
           lambda F, g, out, a, b: g * a / b,
           saves="i", explain="x·log(y), 0 where x = 0 (kl_div's target term)",
           formulas=("∂/∂x = log y (0 where x = 0, y ≤ 0): xlogy(g, y)",
                     "∂/∂y = x/y: g·x/y"),
           check=Check(lambda a, b: xlogy(a, b), (any_(2, 3), positive(2, 3))))


XLOGY_NUMBER_SELF = op(
    "XlogyBackward1", lambda F, g, out, b, self: F.mul_scalar(g, self) / b, saves="i",
    explain="c·log(y) for a number c", formulas=("∂/∂y = c/y: g·c/y",),
    check=Check(lambda b: xlogy(2.0, b), (positive(3),)))
XLOGY_NUMBER_OTHER = op(
    "XlogyBackward2", lambda F, g, out, a, other: _xlogy_self_vjp(F, g, out, a, other),
    saves="i", explain="x·log(c) for a number c", formulas=("∂/∂x = log c: xlogy(g, c)",),
    check=Check(lambda a: xlogy(a, 2.0), (any_(3),)))


@word("xlogy", _xlogy_array)
@exposes(XLOGY, XLOGY_NUMBER_SELF, XLOGY_NUMBER_OTHER, functions=("xlogy",), methods=("xlogy",),
         inplace=IN_PLACE)
def xlogy(a, b):
    if type(a) in (int, float, bool):  # torch.xlogy(2, t): its (Number self, Tensor other)
        y, _, dt = binary(b, a, floating=True)
        out = _xlogy_array(np.asarray(a, dt), np.asarray(y, dt))
        return record(XLOGY_NUMBER_SELF, out, (b,), {"self": a})
    x, y, dt = binary(a, b, floating=True)
    out = _xlogy_array(np.asarray(x, dt), np.asarray(y, dt))
    if type(b) in (int, float, bool):
        return record(XLOGY_NUMBER_OTHER, out, (a,), {"other": b})
    return record(XLOGY, out, (a, b))


_KL_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


@exposes(nn=("kl_div",))
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    from .arith import div, mul  # noqa: PLC0415 - ops_arith builds on this family
    from .math import exp  # noqa: PLC0415

    if size_average is not None or reduce is not None:
        reduction = reduction_of(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(_KL_MEAN_WARNING, UserWarning, stacklevel=2)
        if reduction != "batchmean" and reduction not in _REDUCTIONS:
            raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = mul(exp(target), sub(target, input))
    else:
        loss = sub(xlogy(target, target), mul(target, input))
    if reduction == "none":
        return loss
    if reduction == "mean":
        return mean(loss)
    total = sum(loss)
    if reduction == "batchmean" and input.array.ndim:
        return div(total, input.array.shape[0])
    return total


# === cosine_similarity: a composition in torch ===================================================

@exposes(nn=("cosine_similarity",))
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Each side divided by its norm along dim (clamped to eps, unrecorded, as torch clamps
    the clone of the norm in place under no_grad), multiplied, summed over dim."""
    from .arith import div, mul  # noqa: PLC0415
    from .reduce import norm  # noqa: PLC0415
    from .shape import broadcast_tensors, clone  # noqa: PLC0415

    common = result_dtype(x1, x2)
    if common.kind != "f":
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{type_word(common)}")
    x1, x2 = (t if t.array.dtype.kind == "f" else type(t)._wrap(t.array.astype(common))
              for t in (x1, x2))
    x1, x2 = broadcast_tensors(x1, x2)
    norms = []
    for side in (x1, x2):
        n = clone(norm(side, 2, dim, True))
        n.array = np.maximum(n.array, n.array.dtype.type(eps))
        norms.append(n)
    return sum(mul(div(x1, norms[0]), div(x2, norms[1])), dim)
