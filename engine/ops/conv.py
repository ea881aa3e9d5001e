"""Convolution and pooling: conv1d/conv2d, conv_transpose1d/2d, max_pool2d, avg_pool2d,
adaptive_avg_pool2d.

A convolution is bilinear in (input, weight), and so are its two backward products: the
input's gradient (a transposed convolution of g with the weight) and the weight's (a
correlation of the input with g). Each derivative of one of the three is one of the three
again, so every order of differentiation is made of the same array functions, recorded as
torch records them (ConvolutionBackward0, then ConvolutionBackwardBackward0). Pooling's
backward is likewise an op of its own (torch's *BackwardBackward0 under create_graph).

Arrays are computed with sliding windows and a tensordot per group (one BLAS product),
so the last float32 bit may differ from torch's own kernels, which add in their own order.
A 1-d convolution runs as a 2-d one over a unit height. A transposed convolution is the
input gradient of the convolution with the same weight, so it is made of the same three
array functions with their roles exchanged.
"""

from __future__ import annotations


import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..graph.nodes import LEGACY_TYPE_NAMES, record
from .operands import ArgumentTypeError, type_word
from .reduce import mean
from .shape import cat, squeeze_dim, unsqueeze
from .registry import Check, Family, any_, no_in_place
from ..core.session import check_allocation, warn_once
from ..core.unsupported import Unsupported

family = Family("Convolution and pooling", inplace=no_in_place(
    "a convolution or a pooling: its result has another shape"))
op, exposes, word = family.op, family.exposes, family.word


# === the array functions ==========================================================================
#
# Geometry (`geo`) is a tuple (stride, padding, dilation, groups) with 2-d tuples; padding
# holds (before, after) pairs, as padding='same' may pad a side more than the other.

def _planar(a):
    """A (N, C, L) array of a 1-d convolution as (N, C, 1, L)."""
    return a[:, :, None, :] if a.ndim == 3 else a


def _windows(xp, kernel, stride, dilation):
    """(N, C, OH, OW, KH, KW): every window of the padded input, dilated and strided."""
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    view = sliding_window_view(xp, spans, axis=(2, 3))
    return view[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]


def _padded(x, padding, fill=0):
    if not any(side for pair in padding for side in pair):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(padding), constant_values=fill)


def _conv_array(x, w, b, geo):
    stride, padding, dilation, groups = geo
    flat = x.ndim == 3
    x, w = _planar(x), _planar(w)
    cols = _windows(_padded(x, padding), w.shape[2:], stride, dilation)
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    parts = [np.tensordot(cols[:, i * cg:(i + 1) * cg], w[i * og:(i + 1) * og],
                          axes=([1, 4, 5], [1, 2, 3])) for i in range(groups)]
    out = parts[0] if groups == 1 else np.concatenate(parts, axis=3)
    out = out.transpose(0, 3, 1, 2)
    if b is not None:
        out = out + b[:, None, None]
    out = np.ascontiguousarray(out, dtype=x.dtype)
    return out[:, :, 0, :] if flat else out


def _input_grad_array(g, w, x_shape, geo):
    """The input's gradient: each window's share g·w added back where the window read."""
    stride, padding, dilation, groups = geo
    flat = g.ndim == 3
    g, w = _planar(g), _planar(w)
    n, c = x_shape[0], x_shape[1]
    h, wd = (1, x_shape[2]) if flat else x_shape[2:]
    og, oh, ow = w.shape[0] // groups, g.shape[2], g.shape[3]
    parts = [np.tensordot(g[:, i * og:(i + 1) * og], w[i * og:(i + 1) * og], axes=([1], [0]))
             for i in range(groups)]  # each (N, OH, OW, C/groups, KH, KW)
    cols = parts[0] if groups == 1 else np.concatenate(parts, axis=3)
    (top, bottom), (left, right) = padding
    xp = np.zeros((n, c, h + top + bottom, wd + left + right), dtype=g.dtype)
    for kh in range(w.shape[2]):
        for kw in range(w.shape[3]):
            r, s = kh * dilation[0], kw * dilation[1]
            xp[:, :, r:r + stride[0] * (oh - 1) + 1:stride[0],
               s:s + stride[1] * (ow - 1) + 1:stride[1]] += cols[..., kh, kw].transpose(0, 3, 1, 2)
    out = np.ascontiguousarray(xp[:, :, top:top + h, left:left + wd])
    return out[:, :, 0, :] if flat else out


def _weight_grad_array(x, g, w_shape, geo):
    stride, padding, dilation, groups = geo
    flat = x.ndim == 3
    x, g = _planar(x), _planar(g)
    kernel = (1, w_shape[2]) if flat else w_shape[2:]
    # (cut to g's size: a transposed convolution's output_padding leaves windows g has no part in)
    cols = _windows(_padded(x, padding), kernel, stride, dilation)[:, :, :g.shape[2], :g.shape[3]]
    cg, og = x.shape[1] // groups, g.shape[1] // groups
    parts = [np.tensordot(g[:, i * og:(i + 1) * og], cols[:, i * cg:(i + 1) * cg],
                          axes=([0, 2, 3], [0, 2, 3])) for i in range(groups)]
    out = np.ascontiguousarray(parts[0] if groups == 1 else np.concatenate(parts, axis=0),
                               dtype=x.dtype)
    return out[:, :, 0, :] if flat else out


def _bias_grad_array(g):
    return g.sum(axis=(0,) + tuple(range(2, g.ndim)))


def _conv_backward_array(g, x, w, which, geo):
    if which == "input":
        return _input_grad_array(g, w, x.shape, geo)
    if which == "weight":
        return _weight_grad_array(x, g, w.shape, geo)
    return _bias_grad_array(g)


# === convolution ==================================================================================
#
# One entry for both: torch's transposed convolution is the same ConvolutionBackward0 node
# (convolution(..., transposed=True)). With C(x, w) the convolution, I(g, w) its input
# gradient and W(x, g) its weight gradient, the transposed convolution is T(x, w) = I(x, w);
# its input gradient is C(g, w), its weight gradient W(g, x) (g plays the convolution's
# input), both cut to x's size where output_padding made the output longer than the windows
# x was spread from. A node of the transposed one records `size` (its output's shape), its
# gradient nodes `transposed`.

def _conv_t_array(x, w, b, geo, size):
    out = _input_grad_array(x, w, size, geo)
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * (out.ndim - 2))
    return np.ascontiguousarray(out, dtype=x.dtype)


def _cut(a, shape):
    return np.ascontiguousarray(a[(slice(None), slice(None)) +
                                  tuple(slice(0, n) for n in shape[2:])])


def _conv_t_backward_array(g, x, w, which, geo):
    if which == "input":
        return _cut(_conv_array(g, w, None, geo), x.shape)
    if which == "weight":
        return _weight_grad_array(g, x, w.shape, geo)
    return _bias_grad_array(g)


def _t_dg(F, gg, out, g, x, w, which, geo):
    if which == "input":
        return F.conv_transpose(gg, w, geo, tuple(g.shape))
    if which == "weight":
        return F.conv_transpose(x, gg, geo, tuple(g.shape))
    return _spread_bias(F, gg, g)


def _t_dx(F, gg, out, g, x, w, which, geo):
    return F.conv_t_backward(g, x, gg, "input", geo) if which == "weight" else F.zeros_like(x)


def _t_dw(F, gg, out, g, x, w, which, geo):
    return F.conv_t_backward(g, gg, w, "weight", geo) if which == "input" else F.zeros_like(w)


def _spread_bias(F, gg, g):
    """The bias gradient's derivative by g: gg at every position of its channel."""
    shaped = F.reshape(gg, (1, -1) + (1,) * (len(g.shape) - 2))
    return F.expand(shaped, tuple(g.shape))


def _dg(F, gg, out, g, x, w, which, geo, transposed=False):
    if transposed:
        return _t_dg(F, gg, out, g, x, w, which, geo)
    if which == "input":
        return F.convolution(gg, w, geo)
    if which == "weight":
        return F.convolution(x, gg, geo)
    return _spread_bias(F, gg, g)


def _dx(F, gg, out, g, x, w, which, geo, transposed=False):
    if transposed:
        return _t_dx(F, gg, out, g, x, w, which, geo)
    return F.conv_backward(g, x, gg, "input", geo) if which == "weight" else F.zeros_like(x)


def _dw(F, gg, out, g, x, w, which, geo, transposed=False):
    if transposed:
        return _t_dw(F, gg, out, g, x, w, which, geo)
    return F.conv_backward(g, gg, w, "weight", geo) if which == "input" else F.zeros_like(w)


def _conv_check(x, w, b, xt, wt, bt):
    plain = conv2d(x, w, b, stride=(1, 2), padding=1, dilation=(2, 1))
    transposed = conv_transpose2d(xt, wt, bt, stride=(2, 1), padding=(1, 0),
                                  output_padding=(1, 0), groups=2, dilation=(1, 2))
    return cat([plain.reshape(-1), transposed.reshape(-1)])


# the convolution, the transposed one and their own gradients are checked on the same
# strided, padded, dilated (grouped) cases
_CONV_CHECK = Check(_conv_check, (any_(2, 2, 5, 5), any_(3, 2, 3, 2), any_(3),
                                  any_(2, 4, 3, 3), any_(4, 2, 2, 3), any_(4)))


CONV_BACKWARD = op(
    "ConvolutionBackwardBackward0", _dg, _dx, _dw, saves="i",
    explain="a convolution's (or a transposed one's) gradient, as an op of its own (it is "
            "linear in g, and in the input or the weight it multiplies)",
    formulas=("∂/∂g = the convolution (transposed: the transposed one) with the other operand",
              "∂/∂x = the input gradient of g with the incoming weight (transposed: the "
              "convolution of g with it)",
              "∂/∂w = the weight gradient of the incoming input with g (transposed: of g with "
              "the incoming input)"),
    check=_CONV_CHECK)


@word("conv_backward", _conv_backward_array)
def conv_backward(g, x, w, which, geo):
    out = _conv_backward_array(g.array, x.array, w.array, which, geo)
    return record(CONV_BACKWARD, out, (g, x, w), {"which": which, "geo": geo})


def _conv_vjp(which: str):
    def rule(F, g, out, x, w, b, geo, size=None):
        if size is None:
            return F.conv_backward(g, x, w, which, geo)
        return F.conv_t_backward(g, x, w, which, geo)
    return rule


CONV = op(
    "ConvolutionBackward0", _conv_vjp("input"), _conv_vjp("weight"), _conv_vjp("bias"),
    saves="i", reads=((1,), (0,), ()),
    explain="a convolution: each output is a window of the input times the kernel, summed, "
            "plus the channel's bias (a transposed one spreads each input element times the "
            "kernel over a window of the output, windows `stride` apart)",
    formulas=("∂/∂x = g convolved back with w (each window gets g·w where it read; "
              "transposed: the convolution of g with w)",
              "∂/∂w = Σ over batch and positions of g times the window of x it saw "
              "(transposed: x times the window of g it spread to)",
              "∂/∂b = Σ g over batch and positions"),
    check=_CONV_CHECK)


def _convolution_tensor(a, w, geo):
    return record(CONV, _conv_array(a.array, w.array, None, geo), (a, w, None), {"geo": geo})


word("convolution", lambda a, w, geo: _conv_array(a, w, None, geo))(_convolution_tensor)


def _expand_arg(value, n: int, name: str) -> tuple:
    """stride/padding/dilation as n ints (an int or a 1-element list is repeated)."""
    if isinstance(value, bool) or not isinstance(value, (int, tuple, list)) or \
            isinstance(value, (tuple, list)) and not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ArgumentTypeError(name, "tuple of ints", value)
    items = (value,) * n if isinstance(value, int) else tuple(value)
    if len(items) == 1:
        items = items * n
    if len(items) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values "
                           f"to match the convolution dimensions, but got {name}={list(items)}")
    return items


_SAME_WARNING = (  # torch's own, from its C++ source (once a run)
    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
    "copy of the input be created (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)")


def _padding_pairs(padding, kernel, dilation, stride, n: int) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pairs = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pairs.append((total // 2, total - total // 2))
        if any(low != high for low, high in pairs):
            warn_once(_SAME_WARNING, stacklevel=4)
        return tuple(pairs)
    pads = _expand_arg(padding, n, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pads)


def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _convolve(input, weight, bias, stride, padding, dilation, groups, n: int):
    """conv1d (n=1) and conv2d (n=2): torch's checks, then one ConvolutionBackward0 (an
    unbatched input goes through unsqueeze and squeeze, as in torch)."""
    x, w = input.array, weight.array
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"conv{n}d, but got input of size: {_sizes(x.shape)}")
    unbatched = x.ndim == n + 1
    stride = _expand_arg(stride, n, "stride")
    dilation = _expand_arg(dilation, n, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    for name, values in (("stride", stride), ("dilation", dilation)):
        if len(set(values)) > 1 and w.ndim - 2 != n or n > 1 and w.ndim - 2 != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of "
                               f"{w.ndim - 2} values to match the convolution dimensions, but "
                               f"got {name}={list(values)}")
    if w.ndim != n + 2:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
                           f"{_sizes(w.shape)}, but got {x.ndim + unbatched}-dimensional input "
                           f"of size {_sizes((1,) + x.shape if unbatched else x.shape)} instead")
    pairs = _padding_pairs(padding, w.shape[2:], dilation, stride, n)
    shape = (1,) + x.shape if unbatched else x.shape
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_sizes(w.shape)}] instead")
    if shape[1] != w.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_sizes(w.shape)}, expected "
                           f"input{_sizes(shape)} to have {w.shape[1] * groups} channels, but "
                           f"got {shape[1]} channels instead")
    if bias is not None and (bias.array.ndim != 1 or bias.array.shape[0] != w.shape[0]):
        raise RuntimeError(f"Given weight of size {_sizes(w.shape)}, expected bias to be "
                           f"1-dimensional with {w.shape[0]} elements, but got bias of size "
                           f"{_sizes(bias.array.shape)} instead")
    padded = [shape[2 + i] + sum(pairs[i]) for i in range(n)]
    spans = [dilation[i] * (w.shape[2 + i] - 1) + 1 for i in range(n)]
    if any(p < s for p, s in zip(padded, spans)):
        raise RuntimeError(
            "Calculated padded input size per channel: (" + " x ".join(map(str, padded)) +
            "). Kernel size: (" + " x ".join(map(str, spans)) +
            "). Kernel size can't be greater than actual input size")
    if w.dtype != x.dtype:
        if x.dtype == np.float32:
            raise RuntimeError(f"Input type ({LEGACY_TYPE_NAMES['float32']}) and weight type "
                               f"({LEGACY_TYPE_NAMES.get(w.dtype.name, w.dtype.name)}) should be "
                               "the same or input should be a MKLDNN tensor and weight is a "
                               "dense tensor")
        raise RuntimeError(f"expected scalar type {type_word(x.dtype)} but found "
                           f"{type_word(w.dtype)}")
    if bias is not None and bias.array.dtype != x.dtype:
        raise RuntimeError(f"Input type ({type_word(x.dtype).lower()}) and bias type "
                           f"({type_word(bias.array.dtype).lower()}) should be the same")
    if x.dtype.kind != "f":
        raise RuntimeError(f'"slow_conv2d_cpu" not implemented for \'{type_word(x.dtype)}\'')
    out_shape = (shape[0], w.shape[0]) + tuple((p - s) // st + 1 for p, s, st in
                                               zip(padded, spans, stride))
    check_allocation(out_shape, x.dtype)
    # the windows are gathered into one array per product (and again in backward)
    check_allocation(out_shape[:1] + (shape[1] // groups,) + out_shape[2:] + tuple(w.shape[2:]),
                     x.dtype)
    if n == 1:  # the array functions take 2-d geometry: a unit height
        stride, dilation, pairs = (1,) + stride, (1,) + dilation, ((0, 0),) + pairs
    geo = (stride, pairs, dilation, groups)
    a = unsqueeze(input, 0) if unbatched else input
    out = record(CONV, _conv_array(a.array, w, None if bias is None else bias.array, geo),
                 (a, weight, bias), {"geo": geo})
    return squeeze_dim(out, 0) if unbatched else out


@exposes(CONV, functions=("conv2d",), nn=("conv2d",))
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolve(input, weight, bias, stride, padding, dilation, groups, 2)


@exposes(functions=("conv1d",), nn=("conv1d",))
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolve(input, weight, bias, stride, padding, dilation, groups, 1)


# === transposed convolution (the convolution's entries: see there) ===============================

@word("conv_t_backward", _conv_t_backward_array)
def conv_t_backward(g, x, w, which, geo):
    out = _conv_t_backward_array(g.array, x.array, w.array, which, geo)
    return record(CONV_BACKWARD, out, (g, x, w), {"which": which, "geo": geo, "transposed": True})


def _conv_transpose_tensor(a, w, geo, size):
    out = _conv_t_array(a.array, w.array, None, geo, size)
    return record(CONV, out, (a, w, None), {"geo": geo, "size": size})


word("conv_transpose", lambda a, w, geo, size: _conv_t_array(a, w, None, geo, size))(
    _conv_transpose_tensor)


def _pairs_of(values, n: int, fill: int) -> tuple:
    """A 1-d geometry as torch's 2-d kernel words it: a unit height in front."""
    return ((fill,) + tuple(values)) if n == 1 else tuple(values)


def _convolve_transposed(input, weight, bias, stride, padding, output_padding, groups, dilation,
                         n: int):
    """conv_transpose1d (n=1) and conv_transpose2d (n=2): torch's checks, then one
    ConvolutionBackward0 (an unbatched input through unsqueeze and squeeze, as in torch)."""
    x, w = input.array, weight.array
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"conv_transpose{n}d, but got input of size: {_sizes(x.shape)}")
    unbatched = x.ndim == n + 1
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise ArgumentTypeError("groups", "int", groups)
    args = {name: _expand_arg(value, n, name) for name, value in (
        ("stride", stride), ("padding", padding), ("output_padding", output_padding),
        ("dilation", dilation))}
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    for name, values in args.items():  # (a 1-d one's single values stretch, as conv1d's)
        if len(set(values)) > 1 and w.ndim - 2 != n or n > 1 and w.ndim - 2 != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of "
                               f"{w.ndim - 2} values to match the convolution dimensions, but "
                               f"got {name}={list(values)}")
    stride, pads, extra, dilation = (args[k] for k in ("stride", "padding", "output_padding",
                                                       "dilation"))
    if w.ndim != n + 2:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
                           f"{_sizes(w.shape)}, but got {x.ndim + unbatched}-dimensional input "
                           f"of size {_sizes((1,) + x.shape if unbatched else x.shape)} instead")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in extra):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    shape = (1,) + x.shape if unbatched else x.shape
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_sizes(w.shape)}] instead")
    if shape[1] != w.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {_sizes(w.shape)}, expected "
                           f"input{_sizes(shape)} to have {w.shape[0]} channels, but got "
                           f"{shape[1]} channels instead")
    channels = w.shape[1] * groups
    if bias is not None and (bias.array.ndim != 1 or bias.array.shape[0] != channels):
        raise RuntimeError(f"Given transposed=1, weight of size {_sizes(w.shape)}, expected bias "
                           f"to be 1-dimensional with {channels} elements, but got bias of size "
                           f"{_sizes(bias.array.shape)} instead")
    d2, s2, o2 = _pairs_of(dilation, n, 1), _pairs_of(stride, n, 1), _pairs_of(extra, n, 0)
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d2[0]}, dilation_width: {d2[1]}")
    if any(o >= s and o >= d for o, s, d in zip(extra, stride, dilation)):
        raise RuntimeError(
            f"output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {o2[0]} output_padding_width: {o2[1]} stride_height: "
            f"{s2[0]} stride_width: {s2[1]} dilation_height: {d2[0]} dilation_width: {d2[1]}")
    if 0 in shape[2:]:
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got input "
                           f"shape: {_sizes(shape[:2] + _pairs_of(shape[2:], n, 1))}")
    sizes = tuple((shape[2 + i] - 1) * stride[i] - 2 * pads[i] +
                  dilation[i] * (w.shape[2 + i] - 1) + extra[i] + 1 for i in range(n))
    if any(s < 1 for s in sizes):
        raise RuntimeError(
            "Given input size per channel: (" + " x ".join(map(str, _pairs_of(shape[2:], n, 1))) +
            "). Calculated output size per channel: (" +
            " x ".join(map(str, _pairs_of(sizes, n, 1))) + "). Output size is too small")
    if w.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {type_word(x.dtype)} but found "
                           f"{type_word(w.dtype)}")
    if x.dtype.kind != "f" and x.dtype != np.int64:
        raise NotImplementedError(f'"slow_conv_transpose2d_out_cpu" not implemented for '
                                  f"'{type_word(x.dtype)}'")
    size = (shape[0], channels) + sizes
    check_allocation(size, x.dtype)
    check_allocation(shape[:1] + sizes + (channels,) + tuple(w.shape[2:]), x.dtype)
    if n == 1:
        stride, dilation = (1,) + stride, (1,) + dilation
        pads = (0,) + pads
    geo = (stride, tuple((p, p) for p in pads), dilation, groups)
    a = unsqueeze(input, 0) if unbatched else input
    b = None if bias is None else bias.array.astype(x.dtype, copy=False)
    out = record(CONV, _conv_t_array(a.array, w, b, geo, size), (a, weight, bias),
                 {"geo": geo, "size": size})
    return squeeze_dim(out, 0) if unbatched else out


@exposes(CONV, functions=("conv_transpose2d",), nn=("conv_transpose2d",))
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _convolve_transposed(input, weight, bias, stride, padding, output_padding, groups,
                                dilation, 2)


@exposes(functions=("conv_transpose1d",), nn=("conv_transpose1d",))
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _convolve_transposed(input, weight, bias, stride, padding, output_padding, groups,
                                dilation, 1)


# === pooling: windows and output sizes as torch computes them ==================================

def _pool_arg(value, name: str, what: str, default=None) -> tuple:
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0 and default):
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) in (1, 2):
        items = tuple(value)
        return items * 2 if len(items) == 1 else items
    raise RuntimeError(f"{name}: {what}")


def _pool_size(size, k, pad, stride, dilation, ceil_mode) -> int:
    span = dilation * (k - 1) + 1
    numerator = size + 2 * pad - span + ((stride - 1) if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_geometry(x, kernel, stride, padding, dilation, ceil_mode, name: str):
    """The pooling checks torch makes, and the output's height and width."""
    if x.ndim not in (3, 4) or x.size == 0:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} "
                           f"kW: {kernel[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    h, w = x.shape[-2:]
    oh = _pool_size(h, kernel[0], padding[0], stride[0], dilation[0], ceil_mode)
    ow = _pool_size(w, kernel[1], padding[1], stride[1], dilation[1], ceil_mode)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input size: ({x.shape[-3]}x{h}x{w}). Calculated output size: "
                           f"({x.shape[-3]}x{oh}x{ow}). Output size is too small")
    return oh, ow


def _pool_windows(x, kernel, stride, padding, dilation, out_hw, fill):
    """(N, C, OH, OW, KH, KW) windows of x padded with `fill` (enough for ceil_mode too)."""
    extra = [max(0, (o - 1) * s + d * (k - 1) + 1 - (n + p)) for o, s, d, k, n, p in
             zip(out_hw, stride, dilation, kernel, x.shape[2:], padding)]
    xp = _padded(x, ((padding[0], extra[0]), (padding[1], extra[1])), fill)
    cols = _windows(xp, kernel, stride, dilation)
    return cols[:, :, :out_hw[0], :out_hw[1]]


def _batched(x):
    return x[None] if x.ndim == 3 else x


# === max_pool2d ===================================================================================

def _max_pool_backward_array(g, shape, indices):
    """g added at each output's argmax (flat position within its plane)."""
    planes = int(np.prod(shape[:-2]))
    area = shape[-2] * shape[-1]
    flat = (indices.reshape(planes, -1) + (np.arange(planes) * area)[:, None]).ravel()
    total = np.bincount(flat, weights=g.reshape(-1), minlength=planes * area)
    return total.astype(g.dtype).reshape(shape)


def _max_pool_gather(F, gg, indices):
    """The derivative of the scatter above by g: gg read at the argmax positions."""
    flat = F.reshape(gg, tuple(gg.shape[:-2]) + (-1,))
    picked = F.gather(flat, -1, indices.reshape(indices.shape[:-2] + (-1,)))
    return F.reshape(picked, indices.shape)


MAX_POOL_BACKWARD = op(
    "MaxPool2DWithIndicesBackwardBackward0",
    lambda F, gg, out, g, x, indices: _max_pool_gather(F, gg, indices),
    lambda F, gg, out, g, x, indices: F.zeros_like(x),
    saves="i", explain="max pooling's gradient, as an op of its own",
    formulas=("∂/∂g = gg read at each window's maximum", "∂/∂x = 0"),
    check=Check(lambda x: max_pool2d(x, 2, 1), (any_(1, 2, 4, 4),)))


@word("max_pool_backward", lambda g, x, indices: _max_pool_backward_array(g, x.shape, indices))
def max_pool_backward(g, x, indices):
    out = _max_pool_backward_array(g.array, x.array.shape, indices)
    return record(MAX_POOL_BACKWARD, out, (g, x), {"indices": indices})


MAX_POOL = op("MaxPool2DWithIndicesBackward0",
              lambda F, g, out, x, indices: F.max_pool_backward(g, x, indices),
              saves="i", explain="max pooling: each window's largest element (the first of equal "
                                 "ones)",
              formulas=("∂/∂x = g at each window's maximum, 0 elsewhere",),
              check=Check(lambda x: max_pool2d(x, (2, 3), (1, 2), padding=1),
                          (any_(2, 2, 5, 6),)))


def _window_args(name, kernel_size, stride, padding):
    """A pooling's kernel, stride (the kernel when omitted) and padding as pairs, with torch's
    words for a bad one."""
    kernel = _pool_arg(kernel_size, name, "kernel_size must either be a single int, or a tuple "
                                          "of two ints")
    stride = _pool_arg(stride, name, "stride must either be omitted, a single int, or a tuple "
                                     "of two ints", kernel)
    padding = _pool_arg(padding, name, "padding must either be a single int, or a tuple of two "
                                       "ints")
    return kernel, stride, padding


@exposes(MAX_POOL, functions=("max_pool2d",), nn=("max_pool2d",))
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    name = "max_pool2d"
    kernel, stride, padding = _window_args(name, kernel_size, stride, padding)
    dilation = _pool_arg(dilation, name, "dilation must be either a single int, or a tuple of "
                                         "two ints")
    x = input.array
    oh, ow = _pool_geometry(x, kernel, stride, padding, dilation, ceil_mode, name)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    cols = _pool_windows(_batched(x), kernel, stride, padding, dilation, (oh, ow), low)
    cols = cols.reshape(cols.shape[:4] + (-1,))
    # NaN wins, as in torch's kernel; otherwise the first maximum in window order
    pick = np.argmax(np.isnan(cols) | (cols == cols.max(axis=-1, keepdims=True)), axis=-1) \
        if x.dtype.kind == "f" else np.argmax(cols, axis=-1)
    values = np.take_along_axis(cols, pick[..., None], axis=-1)[..., 0]
    rows = (np.arange(oh) * stride[0] - padding[0])[:, None] + (pick // kernel[1]) * dilation[0]
    columns = (np.arange(ow) * stride[1] - padding[1]) + (pick % kernel[1]) * dilation[1]
    indices = (rows * x.shape[-1] + columns).astype(np.int64)
    if x.ndim == 3:
        values, indices = values[0], indices[0]
    out = record(MAX_POOL, np.ascontiguousarray(values), (input,), {"indices": indices})
    if return_indices:
        return out, type(input)._wrap(indices)
    return out


@exposes(nn=("max_pool2d_with_indices",))
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# === avg_pool2d ===================================================================================

def _avg_divisors(size_hw, kernel, stride, padding, out_hw, count_include_pad, divisor_override):
    """(OH, OW): what each window's sum is divided by, as torch's kernel computes it."""
    if divisor_override:
        return np.full(out_hw, divisor_override)
    sides = []
    for n, k, s, p, o in zip(size_hw, kernel, stride, padding, out_hw):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        whole = end - start
        inside = np.minimum(end, n) - np.maximum(start, 0)
        sides.append(whole if count_include_pad else inside)
    return sides[0][:, None] * sides[1][None, :]


def _avg_backward_array(g, shape, kernel, stride, padding, divisors):
    g = _batched(g) / divisors.astype(g.dtype)
    n = g.shape[0]
    h, w = shape[-2:]
    oh, ow = g.shape[2:]
    rows, cols = (oh - 1) * stride[0] + kernel[0], (ow - 1) * stride[1] + kernel[1]
    xp = np.zeros((n, g.shape[1], max(rows, h + padding[0]), max(cols, w + padding[1])),
                  dtype=g.dtype)
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            xp[:, :, kh:kh + stride[0] * (oh - 1) + 1:stride[0],
               kw:kw + stride[1] * (ow - 1) + 1:stride[1]] += g
    out = xp[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + w]
    return np.ascontiguousarray(out.reshape(shape))


def _avg_forward_array(x, kernel, stride, padding, out_hw, divisors):
    cols = _pool_windows(_batched(x), kernel, stride, padding, (1, 1), out_hw, 0)
    total = np.zeros(cols.shape[:4], dtype=x.dtype)
    for kh in range(kernel[0]):  # added in window order, as torch's kernel adds
        for kw in range(kernel[1]):
            total += cols[..., kh, kw]
    out = total / divisors.astype(x.dtype)
    return np.ascontiguousarray(out.reshape(x.shape[:-2] + tuple(out_hw)), dtype=x.dtype)


AVG_POOL_BACKWARD = op(
    "AvgPool2DBackwardBackward0",
    lambda F, gg, out, g, x, pool: F.avg_pool(gg, pool),
    lambda F, gg, out, g, x, pool: F.zeros_like(x),
    saves="i", explain="average pooling's gradient, as an op of its own",
    formulas=("∂/∂g = the average pooling of gg", "∂/∂x = 0"),
    check=Check(lambda x: avg_pool2d(x, 2, 1), (any_(1, 2, 4, 4),)))


@word("avg_pool_backward",
      lambda g, x, pool: _avg_backward_array(g, x.shape, *pool[:3], pool[4]))
def avg_pool_backward(g, x, pool):
    out = _avg_backward_array(g.array, x.array.shape, *pool[:3], pool[4])
    return record(AVG_POOL_BACKWARD, out, (g, x), {"pool": pool})


AVG_POOL = op("AvgPool2DBackward0",
              lambda F, g, out, x, pool: F.avg_pool_backward(g, x, pool),
              saves="i", explain="average pooling: each window's mean",
              formulas=("∂/∂x = g/(window size) at every element of its window",),
              check=Check(lambda x: avg_pool2d(x, (2, 3), (1, 2), padding=1, ceil_mode=True),
                          (any_(2, 2, 5, 6),)))


def _avg_pool_tensor(a, pool):
    kernel, stride, padding, out_hw, divisors = pool
    out = _avg_forward_array(a.array, kernel, stride, padding, out_hw, divisors)
    return record(AVG_POOL, out, (a,), {"pool": pool})


word("avg_pool", lambda a, pool: _avg_forward_array(a, *pool[:4], pool[4]))(_avg_pool_tensor)


@exposes(AVG_POOL, nn=("avg_pool2d",))
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    name = "avg_pool2d"
    kernel, stride, padding = _window_args(name, kernel_size, stride, padding)
    x = input.array
    if x.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got -3)")
    if x.ndim == 2:
        raise IndexError("Dimension out of range (expected to be in range of [-2, 1], but "
                         "got -3)")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out_hw = _pool_geometry(x, kernel, stride, padding, (1, 1), ceil_mode, name)
    divisors = _avg_divisors(x.shape[-2:], kernel, stride, padding, out_hw, count_include_pad,
                             divisor_override)
    return _avg_pool_tensor(input, (kernel, stride, padding, out_hw, divisors))


# === adaptive_avg_pool2d ==========================================================================

@exposes(nn=("adaptive_avg_pool2d",))
def adaptive_avg_pool2d(input, output_size):
    """torch takes the mean over the plane for a 1x1 output (MeanBackward1); other sizes are
    not supported yet."""
    x = input.array
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{_sizes(x.shape)}")
    size = _pool_arg(output_size, "adaptive_avg_pool2d", "output_size must be 2")
    size = tuple(x.shape[-2 + i] if s is None else s for i, s in enumerate(size))
    if size == (1, 1):
        return mean(input, (-1, -2), keepdim=True)
    raise Unsupported(f"adaptive_avg_pool2d to an output size other than 1 ({size})")

