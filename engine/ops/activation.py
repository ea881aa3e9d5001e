"""Activations: relu, sigmoid, tanh, softmax, log_softmax, leaky_relu, gelu, softplus, elu,
hardtanh, relu6, logsigmoid, silu, and the backward ops PyTorch computes their gradients with.

PyTorch computes the gradients of these ops with ops of their own (tanh_backward,
_softmax_backward_data, leaky_relu_backward, ...), whose names appear in a double backward.
Their array versions compute in the order torch's kernels do, so float32 results agree.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..numerics import summation
from ..graph.nodes import record
from .operands import ArgumentTypeError, c_order, dims, floating, type_word
from .arith import sub
from .inplace import inplace as write_in_place
from .math import _erf, in_double
from .registry import IN_PLACE, Check, Family, any_, away_from_zero, no_in_place

family = Family("Activations", inplace=no_in_place(
    "a softmax, or an nn.functional op whose in-place form is its inplace=True argument"))
op, exposes, word = family.op, family.exposes, family.word

def _tanh_backward_array(g, y):
    return g * (1 - y * y)


def _sigmoid_backward_array(g, y):
    return g * (1 - y) * y


def _threshold_backward_array(g, y, threshold):
    if type(g) is np.ndarray and type(y) is np.ndarray and g.shape == y.shape:
        # (a copy with the zeros put in: a third the cost of np.where on a float array)
        out = g.copy(order="K")
        np.putmask(out, y <= threshold, 0)
        return out
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


_exp = in_double(np.exp)
_log = in_double(np.log)
_tanh = in_double(np.tanh)


def _sigmoid(x):
    return 1 / (1 + _exp(-x))


@exposes(TANH, functions=("tanh",), methods=("tanh",), nn=("tanh",), inplace=IN_PLACE)
def tanh(a):
    return record(TANH, _tanh(floating(a)), (a,))


@exposes(SIGMOID, functions=("sigmoid",), methods=("sigmoid",), nn=("sigmoid",), inplace=IN_PLACE)
def sigmoid(a):
    return record(SIGMOID, _sigmoid(floating(a)), (a,))


@exposes(RELU, functions=("relu",), methods=("relu",), nn=("relu",), inplace=IN_PLACE)
def relu(a, inplace=False):
    x = a.array
    out = np.maximum(0, x)
    if out.dtype != x.dtype:  # (a bool tensor's: torch refuses it)
        raise RuntimeError("Boolean inputs not supported for relu")
    result = record(RELU, out, (a,))
    return write_in_place(a, result) if inplace else result


# === softmax and log_softmax =====================================================================

def _exp_sums(shifted, dim):
    """exp of a max-shifted input and its sums over `dim`, kept, in torch's softmax kernels'
    order: along the last dim by vector lanes, along another one element after another."""
    e = _exp(shifted)
    return e, _kernel_sums(e, dim)


def _softmax_array(x, dim):
    e, sums = _exp_sums(x - _row_max(x, dim), dim)
    return e * (1 / sums)  # (torch multiplies by the sum's reciprocal)


def _row_max(x, dim):
    # (-inf for an empty dim: its softmax is as empty as torch's)
    return np.max(x, axis=dim, keepdims=True, initial=-np.inf)


def _kernel_sums(values, dim):
    """Sums over `dim`, kept, in the order of torch's softmax kernels (see _exp_sums)."""
    if values.ndim == 0:
        return values
    if dim == values.ndim - 1:
        return summation.along_last_by_lanes(values)
    return np.add.accumulate(values, axis=dim).take([-1], axis=dim)


def _softmax_backward_array(g, y, dim):
    return y * (g - _kernel_sums(g * y, dim))


def _log_softmax_backward_array(g, y, dim):
    return g - _exp(y) * _kernel_sums(g, dim)


SOFTMAX_BACKWARD = op(
    "SoftmaxBackwardDataBackward0",
    lambda F, gg, o, g, y, dim: F.softmax_backward(gg, y, dim),
    # torch's softmax_double_backward, term by term in its order (the graph shows it)
    lambda F, gg, o, g, y, dim: g * gg - F.sum_dims(y * g, (dim,), True) * gg
    - g * F.sum_dims(y * gg, (dim,), True),
    saves="i", explain="the gradient of softmax, y·(g - Σ g·y), as an op of its own",
    formulas=("∂/∂g = y·(δ - y)", "∂/∂y"), check=Check(lambda a: a.softmax(1), (any_(2, 3),)))
LOG_SOFTMAX_BACKWARD = op(
    "LogSoftmaxBackwardDataBackward0",
    # the transpose of g -> g - softmax·Σg is gg -> gg - Σ(gg·softmax), as torch builds it
    lambda F, gg, o, g, y, dim: gg - F.sum_dims(gg * F.exp(y), (dim,), True),
    lambda F, gg, o, g, y, dim: -F.sum_dims(g, (dim,), True) * F.exp(y) * gg,
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


def _implicit_dim(forward):
    """torch.nn.functional's form of torch.softmax/log_softmax: dim may be left out (torch
    then warns and picks one), where torch.X and Tensor.X require it."""
    def functional(input, dim=None, _stacklevel=3, dtype=None):
        return forward(input, _softmax_dim(dim, input.array.ndim, forward.__name__), dtype)
    functional.__name__ = functional.__qualname__ = forward.__name__
    return functional


def _kernel_input(a, dim, dtype, kernel: str):
    """(array, dim) a softmax kernel computes with: in `dtype` when given; torch's `kernel`
    (its lastdim variant for the last dim) refuses a tensor that is not floating."""
    x = a.array if dtype is None else a.array.astype(dtype.np)
    d = dims(dim, x.ndim)[0]
    if x.dtype.kind != "f":
        variant = "_lastdim" if d == x.ndim - 1 or not x.ndim else ""
        raise NotImplementedError(f"\"{kernel}{variant}_kernel_impl\" not implemented for "
                                  f"'{type_word(x.dtype)}'")
    return x, d


@exposes(SOFTMAX, functions=("softmax",), methods=("softmax",))
def softmax(a, dim, dtype=None):
    x, d = _kernel_input(a, dim, dtype, "softmax")
    # torch's kernel works on a contiguous copy and returns a contiguous result
    return record(SOFTMAX, c_order(_softmax_array(x, d)), (a,), {"dim": d})


@exposes(LOG_SOFTMAX, functions=("log_softmax",), methods=("log_softmax",))
def log_softmax(a, dim, dtype=None):
    x, d = _kernel_input(a, dim, dtype, "log_softmax")
    shifted = x - _row_max(x, d)
    out = shifted - _log(_exp_sums(shifted, d)[1])
    return record(LOG_SOFTMAX, c_order(out), (a,), {"dim": d})


exposes(SOFTMAX, nn=("softmax",))(_implicit_dim(softmax))
exposes(LOG_SOFTMAX, nn=("log_softmax",))(_implicit_dim(log_softmax))


# === more activations ==============================================================================

def _activation_backward(name, compute, second, explain, check, **defaults):
    """The backward op of an activation, as torch computes it: inputs (g, a), its own grad_fn
    name, and its own rule for a third derivative. `check`: the activation's own (its first
    derivative builds this op)."""
    params = tuple(defaults)
    word_name = name.replace("BackwardBackward0", "").lower() + "_backward"
    entry = op(name, lambda F, gg, o, g, a, **p: getattr(F, word_name)(gg, a, *p.values()),
               second, saves="i", explain=explain, formulas=("∂/∂g", "∂/∂a"), check=check)

    def tensor_version(g, a, *args):
        values = dict(zip(params, args))
        return record(entry, compute(g.array, a.array, *args), (g, a), values or None)
    tensor_version.__name__ = word_name
    word(word_name, compute)(tensor_version)
    return entry


def _leaky_backward_array(g, a, slope):
    return np.where(a > 0, g, g * slope).astype(g.dtype, copy=False)


def _gelu_cdf_pdf(a):
    return 0.5 * (1 + _erf(a / np.sqrt(2.0))), np.exp(-0.5 * a * a) / np.sqrt(2 * np.pi)


def _gelu_backward_array(g, a, approximate):
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi)
        inner = k * (a + 0.044715 * a ** 3)
        t = np.tanh(inner)
        d_inner = k * (1 + 3 * 0.044715 * a * a)
        return (g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * d_inner)).astype(g.dtype, copy=False)
    cdf, pdf = _gelu_cdf_pdf(a)
    return (g * (cdf + a * pdf)).astype(g.dtype, copy=False)


def _softplus_backward_array(g, a, beta, threshold):
    z = np.exp(a * beta)
    return np.where(a * beta > threshold, g, g * z / (z + 1)).astype(g.dtype, copy=False)


def _elu_backward_array(g, a, alpha):
    return np.where(a > 0, g, g * alpha * np.exp(a)).astype(g.dtype, copy=False)


def _hardtanh_backward_array(g, a, low, high):
    return np.where((a <= low) | (a >= high), 0, g).astype(g.dtype, copy=False)


def _logsigmoid_backward_array(g, a):
    return (g * _sigmoid(-a)).astype(g.dtype, copy=False)


LEAKY_RELU_BACKWARD = _activation_backward(
    "LeakyReluBackwardBackward0", _leaky_backward_array,
    lambda F, gg, o, g, a, slope: F.zeros_like(gg),
    "the gradient of leaky_relu: g where a > 0, slope·g elsewhere",
    Check(lambda a: leaky_relu(a, 0.2) * a, (away_from_zero(3),)), slope=0.01)
GELU_BACKWARD = _activation_backward(
    "GeluBackwardBackward0", _gelu_backward_array,
    lambda F, gg, o, g, a, approximate: gg * g * F.gelu_second(a, approximate),
    "the gradient of gelu, g·(Φ(a) + a·φ(a)), as an op of its own",
    Check(lambda a: gelu(a), (any_(3),)), approximate="none")
SOFTPLUS_BACKWARD = _activation_backward(
    "SoftplusBackwardBackward0", _softplus_backward_array,
    lambda F, gg, o, g, a, beta, threshold: gg * g * F.softplus_second(a, beta, threshold),
    "the gradient of softplus, g·σ(βa), as an op of its own",
    Check(lambda a: softplus(a), (any_(3),)), beta=1.0, threshold=20.0)
ELU_BACKWARD = _activation_backward(
    "EluBackwardBackward0", _elu_backward_array,
    lambda F, gg, o, g, a, alpha: F.where(a > 0, 0.0, F.elu_backward(gg * g, a, alpha)),
    "the gradient of elu: g where a > 0, g·α·eᵃ elsewhere",
    Check(lambda a: elu(a), (away_from_zero(3),)), alpha=1.0)
HARDTANH_BACKWARD = _activation_backward(
    "HardtanhBackwardBackward0", _hardtanh_backward_array,
    lambda F, gg, o, g, a, low, high: F.zeros_like(gg),
    "the gradient of hardtanh: g strictly between the bounds",
    Check(lambda a: hardtanh(a, -0.5, 0.5) * a, (away_from_zero(4),)), low=-1.0, high=1.0)
LOGSIGMOID_BACKWARD = _activation_backward(
    "LogSigmoidBackwardBackward0", _logsigmoid_backward_array,
    lambda F, gg, o, g, a: gg * g * F.logsigmoid_second(a),
    "the gradient of log σ(a), g·σ(-a), as an op of its own",
    Check(lambda a: logsigmoid(a), (any_(3),)))


def _gelu_second_array(a, approximate):
    if approximate == "tanh":
        eps = 1e-4  # the tanh form's second derivative is only used in a third-order backward
        return (_gelu_backward_array(np.ones_like(a), a + eps, "tanh")
                - _gelu_backward_array(np.ones_like(a), a - eps, "tanh")) / (2 * eps)
    _, pdf = _gelu_cdf_pdf(a)
    return pdf * (2 - a * a)


def _softplus_second_array(a, beta, threshold):
    z = np.exp(a * beta)
    return np.where(a * beta > threshold, 0, beta * z / ((z + 1) * (z + 1)))


def _logsigmoid_second_array(a):
    s = _sigmoid(a)
    return -s * (1 - s)


for _name, _compute in (("gelu_second", _gelu_second_array),
                        ("softplus_second", _softplus_second_array),
                        ("logsigmoid_second", _logsigmoid_second_array)):
    # second derivatives as constants of a (used only inside third-order backward passes)
    word(_name, _compute)(lambda *args, _c=_compute: type(args[0])._wrap(
        np.asarray(_c(args[0].array, *args[1:]))))

LEAKY_RELU = op("LeakyReluBackward0",
                lambda F, g, out, a, slope: F.leakyrelu_backward(g, a, slope), saves="i",
                explain="leaky relu: g where a > 0, slope·g elsewhere",
                formulas=("∂/∂a = 1 or slope",),
                check=Check(lambda a: leaky_relu(a, 0.2), (away_from_zero(3),)))
GELU = op("GeluBackward0", lambda F, g, out, a, approximate: F.gelu_backward(g, a, approximate),
          saves="i", explain="gelu: a·Φ(a)", formulas=("∂gelu/∂a = Φ(a) + a·φ(a)",),
          check=Check(lambda a: gelu(a), (any_(3),)))
SOFTPLUS = op("SoftplusBackward0",
              lambda F, g, out, a, beta, threshold: F.softplus_backward(g, a, beta, threshold),
              saves="i", explain="softplus: ln(1 + e^(βa))/β", formulas=("∂/∂a = σ(βa)",),
              check=Check(lambda a: softplus(a), (any_(3),)))
ELU = op("EluBackward0", lambda F, g, out, a, alpha: F.elu_backward(g, a, alpha), saves="i",
         explain="elu: a where a > 0, α(eᵃ - 1) elsewhere", formulas=("∂/∂a = 1 or α·eᵃ",),
         check=Check(lambda a: elu(a), (away_from_zero(3),)))
HARDTANH = op("HardtanhBackward0",
              lambda F, g, out, a, low, high: F.hardtanh_backward(g, a, low, high), saves="i",
              explain="hardtanh clips a to [min, max]: g inside, 0 outside",
              formulas=("∂/∂a = [min < a < max]",),
              check=Check(lambda a: hardtanh(a, -0.5, 0.5), (away_from_zero(4),)))
LOGSIGMOID = op("LogSigmoidBackward0", lambda F, g, out, a: F.logsigmoid_backward(g, a),
                saves="i", explain="log σ(a)", formulas=("∂log σ(a)/∂a = σ(-a)",),
                check=Check(lambda a: logsigmoid(a), (any_(3),)))
def _silu_vjp(F, g, out, a):
    s = F.sigmoid(a)  # (once: torch's formula makes one sigmoid node of it)
    return g * s * F.add_scalar(a * F.one_minus(s), 1)


SILU = op("SiluBackward0", _silu_vjp, saves="i", explain="silu: a·σ(a)",
          formulas=("∂/∂a = σ(a)·(1 + a·(1 - σ(a)))",),
          check=Check(lambda a: silu(a), (any_(3),)))

word("one_minus", lambda t: 1 - t)(
    lambda t: sub(type(t)._wrap(np.array(1, dtype=t.array.dtype)), t))
word("sigmoid", _sigmoid)(sigmoid)


@exposes(LEAKY_RELU, nn=("leaky_relu",))
def leaky_relu(input, negative_slope=0.01, inplace=False):
    _number("negative_slope", negative_slope)
    x = input.array
    out = np.where(x > 0, x, x * x.dtype.type(negative_slope)).astype(x.dtype, copy=False)
    return _maybe_inplace(input, record(LEAKY_RELU, out, (input,), {"slope": negative_slope}),
                          inplace)


@exposes(GELU, nn=("gelu",))
def gelu(input, approximate="none"):
    x = floating(input)
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi)
        out = 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x ** 3)))
    elif approximate == "none":
        out = x * 0.5 * (1 + _erf(x / np.sqrt(2.0)))
    else:
        raise RuntimeError("approximate argument must be either none or tanh.")
    return record(GELU, out.astype(x.dtype, copy=False), (input,), {"approximate": approximate})


@exposes(SOFTPLUS, nn=("softplus",))
def softplus(input, beta=1.0, threshold=20.0):
    _number("beta", beta)
    _number("threshold", threshold)
    x = floating(input)
    out = np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)
    return record(SOFTPLUS, out.astype(x.dtype, copy=False), (input,),
                  {"beta": beta, "threshold": threshold})


@exposes(ELU, nn=("elu",))
def elu(input, alpha=1.0, inplace=False):
    _number("alpha", alpha)
    x = floating(input)
    out = np.where(x > 0, x, alpha * np.expm1(x)).astype(x.dtype, copy=False)
    return _maybe_inplace(input, record(ELU, out, (input,), {"alpha": alpha}), inplace)


@exposes(HARDTANH, nn=("hardtanh",))
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:  # (torch's F.hardtanh checks this first: a str fails the comparison)
        raise ValueError("min_val cannot be greater than max_val")
    x = input.array
    out = np.clip(x, min_val, max_val).astype(x.dtype, copy=False)
    return _maybe_inplace(input, record(HARDTANH, out, (input,),
                                        {"low": min_val, "high": max_val}), inplace)


@exposes(HARDTANH, nn=("relu6",))
def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


@exposes(LOGSIGMOID, nn=("logsigmoid",))
def logsigmoid(input):
    x = floating(input)
    out = -np.logaddexp(0, -x)
    return record(LOGSIGMOID, out.astype(x.dtype, copy=False), (input,))


@exposes(SILU, nn=("silu",))
def silu(input, inplace=False):
    x = floating(input)
    return _maybe_inplace(input, record(SILU, (x * _sigmoid(x)).astype(x.dtype, copy=False),
                                        (input,)), inplace)


def _number(param: str, value) -> None:
    """torch's parser takes a Python number (or a 0-d tensor) for a Number parameter."""
    if type(value) not in (int, float, bool) and not (
            hasattr(value, "array") and getattr(value.array, "ndim", 1) == 0):
        raise ArgumentTypeError(param, "Number", value)


def _maybe_inplace(input, result, inplace):
    return write_in_place(input, result) if inplace else result

