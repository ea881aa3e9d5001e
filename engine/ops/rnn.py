"""Recurrent layers' own ops: the oneDNN LSTM layer torch's CPU nn.LSTM runs on float32
(one node for a whole layer and direction: MkldnnRnnLayerBackward0), and the in-place
transpose_ its RNN and GRU apply to a batch_first output (TransposeBackward1).

The recurrent cells otherwise are compositions of ordinary ops (nn/rnn.py), as in torch's
native kernels. The LSTM layer's forward adds, per step, the input's and the hidden state's
matrix products first and both biases (summed once) after, as oneDNN does.
"""

from __future__ import annotations

import numpy as np

from ..graph.nodes import record, record_outputs
from .activation import _sigmoid, _tanh
from .registry import Check, Family, any_, no_in_place
from .shape import TRANSPOSE

family = Family("Recurrent layers", inplace=no_in_place("a whole recurrent layer"))
op, exposes = family.op, family.exposes


def _arrays(value):
    return getattr(value, "array", value)


def _lstm_steps(x, w_ih, w_hh, bias, h, c, reverse):
    """The layer's forward on arrays: per step (h, c, gates i f g o, c before)."""
    steps, batch, _ = x.shape
    projected = (x.reshape(steps * batch, -1) @ w_ih.T).reshape(steps, batch, -1)
    n = w_hh.shape[1]
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    saved = {}
    for t in order:
        gates = (projected[t] + h @ w_hh.T) + bias
        i, f = _sigmoid(gates[:, :n]), _sigmoid(gates[:, n:2 * n])
        g, o = _tanh(gates[:, 2 * n:3 * n]), _sigmoid(gates[:, 3 * n:])
        c_before, h_before = c, h
        c = f * c + i * g
        tanh_c = _tanh(c)
        h = o * tanh_c
        saved[t] = (h, c, i, f, g, o, c_before, h_before, tanh_c)
    return saved, list(order)


_LAST: list = []  # (key, gradients): the seven rules of one node share one backward pass


def _lstm_backward(grads, x, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse):
    key = (id(grads), id(x))
    if _LAST and _LAST[0][0] == key and _LAST[0][1] is grads:
        return _LAST[0][2]
    arrays = [_arrays(v) for v in (x, w_ih, w_hh, b_ih, b_hh, hx, cx)]
    xa, wi, wh, bi, bh, h0, c0 = arrays
    saved, order = _lstm_steps(xa, wi, wh, bi + bh, h0, c0, reverse)
    g_out, g_h, g_c = (None if g is None else _arrays(g) for g in (list(grads) + [None] * 3)[:3])
    dt = xa.dtype
    dh_next = np.zeros_like(h0) if g_h is None else g_h.astype(dt)
    dc_next = np.zeros_like(c0) if g_c is None else g_c.astype(dt)
    d_gates = np.zeros(xa.shape[:2] + (wi.shape[0],), dt)
    d_wh = np.zeros_like(wh)
    for t in reversed(order):
        h, c, i, f, g, o, c_before, h_before, tanh_c = saved[t]
        dh = dh_next if g_out is None else g_out[t] + dh_next
        dc = dc_next + dh * o * (1 - tanh_c * tanh_c)
        gates = np.concatenate([dc * g * i * (1 - i), dc * c_before * f * (1 - f),
                                dc * i * (1 - g * g), dh * tanh_c * o * (1 - o)], axis=1)
        d_gates[t] = gates
        d_wh += gates.T @ h_before
        dh_next = gates @ wh
        dc_next = dc * f
    flat = d_gates.reshape(-1, wi.shape[0])
    d_bias = flat.sum(0)
    result = (d_gates.reshape(-1, wi.shape[0]) @ wi).reshape(xa.shape),  \
        flat.T @ xa.reshape(-1, xa.shape[2]), d_wh, d_bias, d_bias.copy(), dh_next, dc_next
    _LAST[:] = [(key, grads, result)]
    return result


def _lstm_rule(position):
    def rule(F, grads, out, x, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse):
        if any(hasattr(g, "array") for g in grads if g is not None):
            # torch differentiates its composed backward here; a gradient without a graph
            # would make a second derivative silently wrong
            raise NotImplementedError("create_graph=True through a float32 nn.LSTM is not "
                                      "supported by autodiff")
        return F.gradient(_lstm_backward(grads, x, w_ih, w_hh, b_ih, b_hh, hx, cx,
                                         reverse)[position])
    return rule


def _check_layer(x, w_ih, w_hh, b_ih, b_hh, hx, cx):
    out, h, c = mkldnn_lstm_layer(x, w_ih, w_hh, b_ih, b_hh, hx, cx, False)
    return out.sum() + (h * 2).sum() + (c * 3).sum()


MKLDNN_LSTM_LAYER = op(
    "MkldnnRnnLayerBackward0", *(_lstm_rule(k) for k in range(7)), saves="i", second_order=False,
    explain="one LSTM layer over a whole sequence (oneDNN's kernel): the gradients go back "
            "through every step, last step first",
    formulas=("∂/∂x: the gates' gradients · W_ih", "∂/∂W_ih: Σ gates' gradientsᵀ · x",
              "∂/∂W_hh: Σ gates' gradientsᵀ · h before", "∂/∂b_ih: Σ gates' gradients",
              "∂/∂b_hh: Σ gates' gradients", "∂/∂h0: what reaches the first step's h",
              "∂/∂c0: what reaches the first step's c"),
    check=Check(_check_layer, (any_(3, 2, 2), any_(8, 2), any_(8, 2), any_(8), any_(8),
                               any_(2, 2), any_(2, 2)), rtol=1e-5, atol=1e-6))


@exposes(MKLDNN_LSTM_LAYER)
def mkldnn_lstm_layer(x, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse):
    """One LSTM layer and direction over (steps, batch, features): (output, h, c)."""
    xa = x.array
    saved, order = _lstm_steps(xa, w_ih.array, w_hh.array, b_ih.array + b_hh.array,
                               hx.array, cx.array, reverse)
    output = np.stack([saved[t][0] for t in range(xa.shape[0])]) if order else \
        np.zeros(xa.shape[:2] + (w_hh.array.shape[1],), xa.dtype)
    last = saved[order[-1]]
    return record_outputs(MKLDNN_LSTM_LAYER, [output, last[0], last[1]],
                          (x, w_ih, w_hh, b_ih, b_hh, hx, cx), {"reverse": reverse})


TRANSPOSE_IN_PLACE = op(
    "TransposeBackward1", TRANSPOSE.vjps[0], views=True,
    explain="an in-place transpose_: g is transposed back",
    formulas=("g with the dims swapped back",),
    check=Check(lambda a: transpose_in_place(a * 1, 0, 1), (any_(2, 3),)))


@exposes(TRANSPOSE_IN_PLACE)
def transpose_in_place(a, dim0, dim1):
    """torch's `out.transpose_(0, 1)` on a result of its own (the tensor is new here)."""
    return record(TRANSPOSE_IN_PLACE, np.swapaxes(a.array, dim0, dim1), (a,),
                  {"dim0": dim0, "dim1": dim1})
