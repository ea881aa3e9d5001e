"""Recurrent modules: RNN (tanh or relu), LSTM, GRU and their cells, as torch's CPU runs them.

Parameters are named, shaped and ordered as torch's (weight_ih_l0, weight_hh_l0, bias_ih_l0,
bias_hh_l0, then the `_reverse` direction, layer by layer) and all drawn uniform(±1/√hidden)
in that order. The forward follows torch's native kernels op by op (a whole sequence's input
projection first, then per step the hidden projection added and the gates), so the graph
and its grad_fn names are torch's; a float32 LSTM runs, as torch's does on the CPU, one
oneDNN node per layer and direction (ops/rnn.py).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from . import init
from .layers import _uninitialised
from .module import Module
from ..ops.linalg import linear
from ..ops.random import dropout as dropout_op
from ..ops.rnn import mkldnn_lstm_layer, transpose_in_place
from ..ops.activation import relu, sigmoid, tanh
from ..ops.pieces import chunk
from ..ops.index import select
from ..ops.shape import cat, squeeze_dim, stack, transpose, unbind, unsqueeze
from ..tensors.parameter import announce, make_parameter
from ..tensors.tensor import Tensor


def _zeros(shape, like) -> Tensor:
    return Tensor._wrap(np.zeros(shape, like.array.dtype))


def _unsupported(name: str, what: str):
    raise NotImplementedError(f"nn.{name}({what}=...) is not supported by autodiff")


# --- the cells, as torch's native kernels compose them -----------------------------------------

def _rnn_cell(nonlinearity):
    def step(x_projected, h, w_hh, b_hh):
        return nonlinearity(linear(h, w_hh, b_hh) + x_projected)
    return step


def _lstm_cell(x_projected, state, w_hh, b_hh):
    h, c = state
    gates = linear(h, w_hh, b_hh) + x_projected
    i, f, g, o = chunk(gates, 4, 1)
    i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
    c = f * c + i * g
    return o * tanh(c), c


def _gru_cell(x_projected, h, w_hh, b_hh):
    xr, xz, xn = chunk(x_projected, 3, 1)
    hr, hz, hn = chunk(linear(h, w_hh, b_hh), 3, 1)
    r = sigmoid(hr + xr)
    z = sigmoid(hz + xz)
    n = tanh(xn + hn * r)
    return (h - n) * z + n


_CELLS = {"RNN_TANH": _rnn_cell(tanh), "RNN_RELU": _rnn_cell(relu), "LSTM": _lstm_cell,
          "GRU": _gru_cell}


def _output_of(mode, state):
    return state[0] if mode == "LSTM" else state


def _native_layer(mode, steps, state, weights, projected: bool):
    """One direction over the steps (already projected through weight_ih when `projected`)."""
    w_ih, w_hh, b_ih, b_hh = weights
    cell = _CELLS[mode]
    outputs = []
    for x in steps:
        state = cell(x if projected else linear(x, w_ih, b_ih), state, w_hh, b_hh)
        outputs.append(_output_of(mode, state))
    if not outputs:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    return outputs, state


def _native(mode, input, hidden, layers, num_layers, p, train, bidirectional, batch_first):
    """torch's _rnn_impl: a stack of full (or bidirectional) layers, each final state kept."""
    layer_input = transpose(input, 0, 1) if batch_first else input
    if mode == "LSTM":
        states = list(zip(unbind(hidden[0], 0), unbind(hidden[1], 0)))
    else:
        states = list(unbind(hidden, 0))
    finals = []
    for layer in range(num_layers):
        if bidirectional:
            steps = unbind(layer_input, 0)
            forward, state = _native_layer(mode, steps, states[2 * layer], layers[2 * layer], False)
            backward, back_state = _native_layer(mode, steps[::-1], states[2 * layer + 1],
                                                 layers[2 * layer + 1], False)
            out = cat([stack(forward, 0), stack(backward[::-1], 0)], -1)
            finals += [state, back_state]
        else:
            w_ih, _, b_ih, _ = layers[layer]
            steps = unbind(linear(layer_input, w_ih, b_ih), 0)
            outputs, state = _native_layer(mode, steps, states[layer], layers[layer], True)
            out = stack(outputs, 0)
            finals.append(state)
        layer_input = out
        if p != 0 and train and layer < num_layers - 1:
            layer_input = dropout_op(layer_input, p, True)
    if mode == "LSTM":
        hidden_out = (stack([s[0] for s in finals], 0), stack([s[1] for s in finals], 0))
    else:
        hidden_out = stack(finals, 0)
    if batch_first:
        layer_input = transpose(layer_input, 0, 1) if mode == "LSTM" else \
            transpose_in_place(layer_input, 0, 1)
    return layer_input, hidden_out


def _mkldnn_lstm(input, hidden, layers, num_layers, p, train, bidirectional, batch_first):
    """torch's oneDNN LSTM: one node per layer and direction, the states selected from hx."""
    hx, cx = hidden
    layer_input = transpose(input, 0, 1) if batch_first else input
    directions = 2 if bidirectional else 1
    hy, cy = [], []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            w_ih, w_hh, b_ih, b_hh = layers[index]
            if b_ih is None:
                b_ih, b_hh = _zeros(w_ih.array.shape[:1], w_ih), _zeros(w_hh.array.shape[:1], w_hh)
            out, h, c = mkldnn_lstm_layer(layer_input, w_ih, w_hh, b_ih, b_hh,
                                          select(hx, 0, index), select(cx, 0, index),
                                          direction > 0)
            outputs.append(out)
            hy.append(h)
            cy.append(c)
        layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
        if p != 0 and train and layer < num_layers - 1:
            layer_input = dropout_op(layer_input, p, True)
    output = transpose(layer_input, 0, 1) if batch_first else layer_input
    return output, (stack(hy, 0), stack(cy, 0))


# --- the modules -------------------------------------------------------------------------------

_COMMON = frozenset({"input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size", "mode", "reset_parameters",
                     "flatten_parameters", "all_weights"})
# the parameters' names, for the torch reference's allow-list of attribute names (a program
# reads them as registered parameters; layers past 9 are read as well, not listed)
_PARAMETER_NAMES = frozenset(f"{kind}_l{layer}{suffix}" for kind in
                             ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
                             for layer in range(10) for suffix in ("", "_reverse"))


class RNNBase(Module):
    _tg_public = Module._tg_public | _COMMON | _PARAMETER_NAMES
    # each class's forward names its own kernel, as torch's do: a program may reassign
    # `mode` (a plain attribute) without changing which kernel runs
    _kind = "RNN"

    def _kernel(self) -> str:
        return self._kind

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", UserWarning,
                          stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: "
                            f"{type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size:
            _unsupported(name, "proj_size")
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gates = {"LSTM": 4, "GRU": 3}.get(mode, 1) * hidden_size
        directions = 2 if bidirectional else 1
        self._tg_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                width = input_size if layer == 0 else hidden_size * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gates, width)), ("weight_hh", (gates, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gates,)), ("bias_hh", (gates,))]
                names = []
                for kind, shape in shapes:
                    names.append(f"{kind}_l{layer}{suffix}")
                    setattr(self, names[-1], make_parameter(_uninitialised(shape, dtype)))
                self._tg_names.append(names)
        self.reset_parameters()
        for param in self.parameters():
            announce(param)

    _tg_internal = Module._tg_internal | {"_tg_names"}

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op on the CPU, as in torch."""

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._tg_names]

    def _layers(self):
        out = []
        for names in self._tg_names:
            params = [getattr(self, name) for name in names]
            out.append(tuple(params) if len(params) == 4 else tuple(params) + (None, None))
        return out

    # -- checks, in torch's order and words --------------------------------------------------
    def _check_input(self, input):
        weight = self._tg_names and getattr(self, self._tg_names[0][0])
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _expected_hidden(self, input):
        batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    @staticmethod
    def _check_hidden(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _prepare(self, input, hx):
        """Unbatched input made a batch of one; hx checked, or zeros; (input, hx, batched)."""
        name = self._kind
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             + (" tensor instead" if name == "RNN" else " instead"))
        batched = input.dim() == 3
        if not batched:
            input = unsqueeze(input, 0 if self.batch_first else 1)
        if hx is None:
            hx = _zeros(self._expected_hidden(input), input)
        elif batched and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                               f"{hx.dim()}-D tensor")
        elif not batched:
            if hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{hx.dim()}-D tensor")
            hx = unsqueeze(hx, 1)
        self._check_input(input)
        self._check_hidden(hx, self._expected_hidden(input))
        return input, hx, batched

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx)
        output, hidden = _native(self._kernel(), input, hx, self._layers(), self.num_layers,
                                 self.dropout, self.training, self.bidirectional,
                                 self.batch_first)
        if not batched:
            output = squeeze_dim(output, 0 if self.batch_first else 1)
            hidden = squeeze_dim(hidden, 1)
        return output, hidden

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', ...)."""

    _tg_public = RNNBase._tg_public | {"nonlinearity"}

    def _kernel(self) -> str:
        return "RNN_TANH" if self.mode == "RNN_TANH" else "RNN_RELU"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity, args = args[3], args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    """GRU(input_size, hidden_size, num_layers=1, ...)."""

    _kind = "GRU"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """LSTM(input_size, hidden_size, num_layers=1, ...): forward returns (output, (h_n, c_n))."""

    _kind = "LSTM"

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        batched = input.dim() == 3
        if not batched:
            input = unsqueeze(input, 0 if self.batch_first else 1)
        expected = self._expected_hidden(input)
        if hx is None:
            hx = (_zeros(expected, input), _zeros(expected, input))
        else:
            h, c = hx
            if batched and (h.dim() != 3 or c.dim() != 3):
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({h.dim()}-D, {c.dim()}-D) tensors")
            if not batched:
                if h.dim() != 2 or c.dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D "
                                       f"but got ({h.dim()}-D, {c.dim()}-D) tensors")
                h, c = unsqueeze(h, 1), unsqueeze(c, 1)
            hx = (h, c)
        self._check_input(input)
        self._check_hidden(hx[0], expected, "Expected hidden[0] size {}, got {}")
        self._check_hidden(hx[1], expected, "Expected hidden[1] size {}, got {}")
        run = _mkldnn_lstm if input.array.dtype == np.float32 and input.array.size else None
        if run is None:
            output, hidden = _native("LSTM", input, hx, self._layers(), self.num_layers,
                                     self.dropout, self.training, self.bidirectional,
                                     self.batch_first)
        else:
            output, hidden = run(input, hx, self._layers(), self.num_layers, self.dropout,
                                 self.training, self.bidirectional, self.batch_first)
        if not batched:
            output = squeeze_dim(output, 0 if self.batch_first else 1)
            hidden = (squeeze_dim(hidden[0], 1), squeeze_dim(hidden[1], 1))
        return output, hidden


# --- cells -----------------------------------------------------------------------------------

class RNNCellBase(Module):
    _tg_public = Module._tg_public | {"input_size", "hidden_size", "bias", "weight_ih",
                                      "weight_hh", "bias_ih", "bias_hh", "reset_parameters"}

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = make_parameter(_uninitialised((num_chunks * hidden_size, input_size),
                                                       dtype))
        self.weight_hh = make_parameter(_uninitialised((num_chunks * hidden_size, hidden_size),
                                                       dtype))
        if bias:
            self.bias_ih = make_parameter(_uninitialised((num_chunks * hidden_size,), dtype))
            self.bias_hh = make_parameter(_uninitialised((num_chunks * hidden_size,), dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()
        for param in self.parameters():
            announce(param)

    reset_parameters = RNNBase.reset_parameters

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _check(self, input, hx, number):
        """torch's cell checks: the input's features, then the state's batch and width."""
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        if input.shape[0] != hx.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{number} "
                               f"batch size {hx.shape[0]}")
        if hx.shape[1] != self.hidden_size:
            raise RuntimeError(f"hidden{number} has inconsistent hidden_size: got "
                               f"{hx.shape[1]}, expected {self.hidden_size}")

    def _batch(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = unsqueeze(input, 0)
        if hx is None:
            hx = _zeros((input.shape[0], self.hidden_size), input)
        elif not batched:
            hx = unsqueeze(hx, 0)
        return input, hx, batched


class RNNCell(RNNCellBase):
    _tg_public = RNNCellBase._tg_public | {"nonlinearity"}

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, batched = self._batch(input, hx, "RNNCell")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check(input, hx, 0)
        step = _CELLS["RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"]
        out = step(linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return out if batched else squeeze_dim(out, 0)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._batch(input, hx, "GRUCell")
        self._check(input, hx, 0)
        out = _gru_cell(linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                        self.bias_hh)
        return out if batched else squeeze_dim(out, 0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = unsqueeze(input, 0)
        if hx is None:
            zeros = _zeros((input.shape[0], self.hidden_size), input)
            hx = (zeros, zeros)
        elif not batched:
            hx = (unsqueeze(hx[0], 0), unsqueeze(hx[1], 0))
        self._check(input, hx[0], 0)
        self._check(input, hx[1], 1)
        h, c = _lstm_cell(linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                          self.bias_hh)
        return (h, c) if batched else (squeeze_dim(h, 0), squeeze_dim(c, 0))


MODULES = {cls.__name__: cls for cls in (RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell)}
