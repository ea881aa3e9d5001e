"""Losses: mse_loss, nll_loss, cross_entropy, and the backward ops PyTorch computes their
gradients with (MseLossBackwardBackward0, NllLossBackwardBackward0)."""

from __future__ import annotations

import warnings

import numpy as np

from ..numerics import summation
from ..graph.nodes import record
from .operands import binary, finish, type_word
from .activation import log_softmax
from .index import index
from .losses import reduction_of
from .reduce import mean, sum
from .registry import Check, Family, any_, no_in_place
from ..core.unsupported import Unsupported

family = Family("Losses", inplace=no_in_place("a loss: a new tensor"))
op, exposes, word = family.op, family.exposes, family.word

# === losses =======================================================================================

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


@exposes(MSE, nn=("mse_loss",),
         params=("input", "target", "size_average", "reduce", "reduction", "weight"))
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = reduction_of(reduction, size_average, reduce)
    x, y, dt = binary(input, target)
    if input.array.shape != target.array.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    diff = (x - y) ** 2
    n = diff.size
    out = diff if reduction == "none" else \
        (summation.total(diff) / n if reduction == "mean" else summation.total(diff))
    return record(MSE, finish(out, dt), (input, target), {"reduction": reduction, "n": n})


def _classes(like, values):
    """A tensor of class indices (for gradient checks), of the same tensor class as `like`
    (made through the public API, so that the same check runs on torch's tensors too)."""
    return like.new_tensor(values).long()


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


# the target is not an input of torch's node: next_functions lists the log-probabilities only
NLL = op("NllLossBackward0",
         lambda F, g, out, logp, reduction, n, cols:
         F.nll_loss_backward(g, logp, cols, reduction, n),
         saves="i", explain="negative log-likelihood: -1/n at each target class",
         formulas=("∂/∂logp = -[class = target]/n",),
         check=Check(lambda a: nll_loss(a.log_softmax(1), _classes(a, [0, 2])), (any_(2, 3),)))


def _check_nll_shapes(shape: tuple, target: tuple) -> None:
    """torch's checks of nll_loss's input and target shapes, in its order (an input of more
    than 2 dims, whose target has its spatial dims too, is not supported here)."""
    if not shape:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if len(shape) == 1 and len(target) == 1:
        if target[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                             f"{target[0]}")
    elif len(shape) != 1 and shape[0] != (target[0] if target else 0):
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                         f"({target[0] if target else 0}).")
    if len(shape) > 2:
        wanted = [shape[0], *shape[2:]]
        if list(target) != wanted:
            raise RuntimeError(f"Expected target size {wanted}, got {list(target)}")
        raise Unsupported("nll_loss / cross_entropy of an input with more than 2 dims")
    if len(target) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")


@exposes(NLL, nn=("nll_loss",))
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = reduction_of(reduction, size_average, reduce)
    if weight is not None:
        raise Unsupported("nll_loss / cross_entropy with weight=")
    logp = input.array
    cols = target.array
    _check_nll_shapes(logp.shape, cols.shape)
    if cols.dtype != np.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{type_word(cols.dtype)}")
    if logp.dtype.kind != "f":
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for "
                                  f"'{type_word(logp.dtype)}'")
    if logp.ndim == 1:
        logp, cols2 = logp[None, :], cols.reshape(1)
    else:
        cols2 = cols
    n_classes = logp.shape[1]
    if (cols2 == ignore_index).any():
        raise Unsupported("nll_loss / cross_entropy with a target equal to ignore_index")
    bad = cols2[(cols2 < 0) | (cols2 >= n_classes)]
    if bad.size:
        raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    picked = -logp[np.arange(logp.shape[0]), cols2]
    n = picked.size
    out = picked if reduction == "none" else summation.nll_total(picked)
    if reduction == "mean":
        out = out / out.dtype.type(n)
    if input.array.ndim == 1 and reduction == "none":
        out = out.reshape(())
    return record(NLL, np.asarray(out, dtype=logp.dtype), (input,),
                  {"reduction": reduction, "n": n, "cols": cols})


@exposes(nn=("cross_entropy",))
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    if label_smoothing:
        raise Unsupported("cross_entropy with label_smoothing=")
    return nll_loss(log_softmax(input, 0 if input.array.ndim == 1 else 1), target, weight,
                    size_average, ignore_index, reduce, reduction)
