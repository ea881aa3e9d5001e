"""nn.RNN / nn.LSTM / nn.GRU and their cells against live torch (skipped without it):
initialisation under manual_seed, outputs and final states, parameter and input gradients,
shapes over sampled option combinations, printing, grad_fn names and torch's errors."""

from __future__ import annotations

import io
import itertools
import re

import numpy as np
import pytest

from autodiff.engine.api import nn, torch as ad
from autodiff.interpreter import run_source
from torch_programs import assert_prints_as_torch, run_under_torch

torch = pytest.importorskip("torch")

_KINDS = ("RNN", "LSTM", "GRU")


def _array(t) -> np.ndarray:
    return np.asarray(t.tolist(), np.float32)


def _pair(kind: str, seed: int, *args, **kwargs):
    """The same module made by both, each under manual_seed(seed)."""
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, kind)(*args, **kwargs)
    ad.manual_seed(seed)
    ours = getattr(nn, kind)(*args, **kwargs)
    return ours, theirs


def _flat(result):
    out, hidden = result
    return [out] + (list(hidden) if isinstance(hidden, tuple) else [hidden])


def _compare(ours, theirs, x: np.ndarray, with_state: bool, tally: list):
    """Forward and backward of both on x (and a random initial state): close, and counted
    bit-equal or not."""
    rng = np.random.default_rng(x.size)
    ox = ad.tensor(x.tolist(), requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    o_args, t_args = [ox], [tx]
    o_state = t_state = None
    if with_state:
        batched = x.ndim == 3
        batch = (x.shape[0] if theirs.batch_first else x.shape[1]) if batched else None
        layers = theirs.num_layers * (2 if theirs.bidirectional else 1)
        shape = (layers, batch, theirs.hidden_size) if batched else (layers, theirs.hidden_size)
        states = [rng.standard_normal(shape).astype(np.float32)
                  for _ in range(2 if isinstance(theirs, torch.nn.LSTM) else 1)]
        o_state = [ad.tensor(s.tolist(), requires_grad=True) for s in states]
        t_state = [torch.tensor(s, requires_grad=True) for s in states]
        o_args.append(tuple(o_state) if len(states) == 2 else o_state[0])
        t_args.append(tuple(t_state) if len(states) == 2 else t_state[0])
    o_outs, t_outs = _flat(ours(*o_args)), _flat(theirs(*t_args))
    for o, t in zip(o_outs, t_outs):
        assert tuple(o.shape) == tuple(t.shape)
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__ or \
            re.sub(" object.*", "", repr(o.grad_fn)) == re.sub(" object.*", "", repr(t.grad_fn))
    weights = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for t in t_outs]
    o_loss = sum((o * ad.tensor(w.tolist())).sum() for o, w in zip(o_outs, weights))
    t_loss = sum((t * torch.tensor(w)).sum() for t, w in zip(t_outs, weights))
    o_loss.backward()
    t_loss.backward()
    pairs = [(o.detach(), t.detach()) for o, t in zip(o_outs, t_outs)]
    pairs += [(ox.grad, tx.grad)]
    pairs += [(po.grad, pt.grad) for po, pt in zip(ours.parameters(), theirs.parameters())]
    if with_state:
        pairs += [(so.grad, st.grad) for so, st in zip(o_state, t_state)]
    for o, t in pairs:
        np.testing.assert_allclose(_array(o), t.numpy(), rtol=2e-4, atol=2e-5)
    tally.append(all(np.array_equal(_array(o), t.numpy()) for o, t in pairs[:len(t_outs)]))


def test_initialisation_is_torchs():
    for kind in _KINDS:
        ours, theirs = _pair(kind, 0, 3, 4, num_layers=2, bidirectional=True)
        names = [n for n, _ in theirs.named_parameters()]
        assert [n for n, _ in ours.named_parameters()] == names
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for (_, po), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert np.array_equal(_array(po), pt.detach().numpy())
    for kind in ("RNNCell", "LSTMCell", "GRUCell"):
        ours, theirs = _pair(kind, 1, 3, 5)
        assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
        for po, pt in zip(ours.parameters(), theirs.parameters()):
            assert np.array_equal(_array(po), pt.detach().numpy())


def test_sampled_options_match_torch():
    rng = np.random.default_rng(7)
    options = list(itertools.product(_KINDS, (1, 2), (True, False), (False, True), (False, True),
                                     (False, True), (False, True)))
    tally: list = []
    for k, (kind, layers, bias, batch_first, bidirectional, state, unbatched) in enumerate(options):
        if rng.random() > 0.5:
            continue
        kwargs = dict(num_layers=layers, bias=bias, batch_first=batch_first,
                      bidirectional=bidirectional)
        if kind == "RNN" and k % 2:
            kwargs["nonlinearity"] = "relu"
        size, hidden = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        ours, theirs = _pair(kind, k, size, hidden, **kwargs)
        steps, batch = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        shape = (steps, size) if unbatched else \
            ((batch, steps, size) if batch_first else (steps, batch, size))
        _compare(ours, theirs, rng.standard_normal(shape).astype(np.float32), state, tally)
    assert len(tally) > 50
    # (float32: the matrix products' and tanh's last bits are not always torch's)
    assert sum(tally) >= len(tally) // 10, f"{sum(tally)} of {len(tally)} bit-equal"


def test_cells_match_torch():
    rng = np.random.default_rng(3)
    for kind, bias, batched, state in itertools.product(("RNNCell", "LSTMCell", "GRUCell"),
                                                        (True, False), (True, False),
                                                        (True, False)):
        ours, theirs = _pair(kind, 2, 3, 4, bias=bias)
        x = rng.standard_normal((2, 3) if batched else (3,)).astype(np.float32)
        ox, tx = ad.tensor(x.tolist(), requires_grad=True), torch.tensor(x, requires_grad=True)
        o_args, t_args = [ox], [tx]
        if state:
            shape = (2, 4) if batched else (4,)
            states = [rng.standard_normal(shape).astype(np.float32)
                      for _ in range(2 if kind == "LSTMCell" else 1)]
            o_state = tuple(ad.tensor(s.tolist(), requires_grad=True) for s in states)
            t_state = tuple(torch.tensor(s, requires_grad=True) for s in states)
            o_args.append(o_state if kind == "LSTMCell" else o_state[0])
            t_args.append(t_state if kind == "LSTMCell" else t_state[0])
        o_out, t_out = ours(*o_args), theirs(*t_args)
        o_out = o_out if isinstance(o_out, tuple) else (o_out,)
        t_out = t_out if isinstance(t_out, tuple) else (t_out,)
        for o, t in zip(o_out, t_out):
            assert re.sub(" object.*", "", repr(o.grad_fn)) == \
                re.sub(" object.*", "", repr(t.grad_fn))
            np.testing.assert_allclose(_array(o), t.detach().numpy(), rtol=1e-5, atol=1e-6)
        sum(o.sum() * (k + 1) for k, o in enumerate(o_out)).backward()
        sum(t.sum() * (k + 1) for k, t in enumerate(t_out)).backward()
        for po, pt in zip(list(ours.parameters()) + [ox], list(theirs.parameters()) + [tx]):
            np.testing.assert_allclose(_array(po.grad), pt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_lstm_layer_gradient_against_finite_differences():
    """The oneDNN node's own backward (not a composition): float64 central differences."""
    rng = np.random.default_rng(0)
    ad.manual_seed(0)
    m = nn.LSTM(2, 3, bidirectional=True)
    x = rng.standard_normal((4, 2, 2))

    def loss(values):
        t = ad.tensor(values.tolist(), dtype=ad.float32, requires_grad=True)
        out, (h, c) = m(t)
        return (out * out).sum() + h.sum() + (c * 2).sum(), t

    value, t = loss(x)
    value.backward()
    eps = 1e-2
    for index in [(0, 0, 0), (1, 1, 1), (3, 0, 1), (2, 1, 0)]:
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        numeric = (loss(up)[0].item() - loss(down)[0].item()) / (2 * eps)
        assert abs(numeric - t.grad.tolist()[index[0]][index[1]][index[2]]) < 2e-3


PROGRAMS = {
    "prints": """import torch
import torch.nn as nn
torch.manual_seed(0)
m = nn.LSTM(3, 4)
print(m.weight_ih_l0)
print(m, nn.LSTM(3, 4, num_layers=2, batch_first=True), nn.GRU(2, 3, bias=False, dropout=0.0))
print(nn.RNN(3, 4, nonlinearity='relu', bidirectional=True), nn.RNN(3, 4, 2, 'relu'))
print(nn.RNNCell(3, 4), nn.RNNCell(3, 4, nonlinearity='relu', bias=False), nn.LSTMCell(2, 3),
      nn.GRUCell(2, 3))
print(list(nn.GRU(2, 3, num_layers=2, bidirectional=True).state_dict().keys()))
print(m.flatten_parameters(), m.input_size, m.hidden_size, m.num_layers, m.bias,
      m.batch_first, m.dropout, m.bidirectional, m.proj_size)
x = torch.randn(5, 2, 3)
for mod in (m, nn.LSTM(3, 4, batch_first=True), nn.LSTM(3, 4, bidirectional=True),
            nn.GRU(3, 4, batch_first=True), nn.RNN(3, 4, batch_first=True), nn.GRU(3, 2),
            nn.RNN(3, 2, bidirectional=True), nn.LSTM(3, 2, bias=False)):
    out, h = mod(x)
    print(out.grad_fn, out.shape, h[0].grad_fn if isinstance(h, tuple) else h.grad_fn)
    out, h = mod(x[0])
    print(out.grad_fn, out.shape)
out, (h, c) = m(x)
print(out[-1], h, c)
out.pow(2).sum().backward()
print(m.weight_hh_l0.grad, m.bias_ih_l0.grad)
cell = nn.LSTMCell(3, 4)
h, c = cell(x[0])
print(h, c)
print(nn.GRUCell(3, 4)(x[0]), nn.RNNCell(3, 4)(x[0, 0]))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
opt.step()
print(m(x)[0].sum())
""",
    "errors": """import torch
import torch.nn as nn
m = nn.LSTM(3, 4)
g = nn.GRU(3, 4, batch_first=True)
r = nn.RNN(3, 4)
calls = [lambda: m(torch.randn(5, 2, 2)), lambda: m(torch.randn(5, 2, 3, 1)),
         lambda: m(torch.randn(5, 2, 3), (torch.zeros(1, 3, 4), torch.zeros(1, 2, 4))),
         lambda: m(torch.randn(5, 2, 3), (torch.zeros(1, 2, 4), torch.zeros(1, 2, 5))),
         lambda: m(torch.randn(5, 3), (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))),
         lambda: g(torch.randn(2, 5, 3), torch.zeros(1, 5, 4)),
         lambda: g(torch.randn(2, 5, 3), torch.zeros(5, 4)),
         lambda: r(torch.randn(5, 3), torch.zeros(1, 1, 4)),
         lambda: r(torch.randn(5, 2, 3, dtype=torch.float64)),
         lambda: nn.RNNCell(3, 4)(torch.randn(2, 5)),
         lambda: nn.RNNCell(3, 4)(torch.randn(2, 3), torch.randn(3, 4)),
         lambda: nn.GRUCell(3, 4)(torch.randn(2, 3), torch.randn(2, 5)),
         lambda: nn.LSTMCell(3, 4)(torch.randn(2, 3), (torch.randn(2, 4), torch.randn(2, 5))),
         lambda: nn.LSTMCell(3, 4)(torch.randn(2, 2, 3)),
         lambda: nn.RNN(3, 4, nonlinearity='sigmoid'), lambda: nn.GRU(3, 4, proj_size=2),
         lambda: nn.LSTM(3, 0), lambda: nn.LSTM(3, 4, dropout=2), lambda: nn.LSTM(3, 4, bias=1),
         lambda: nn.LSTM(3, 4, proj_size=4)]
for call in calls:
    try:
        call()
    except Exception as e:
        print(type(e).__name__, e)
""",
    "dropout_and_double": """import torch
import torch.nn as nn
torch.manual_seed(1)
for kind in (nn.LSTM, nn.GRU, nn.RNN):
    m = kind(2, 3, num_layers=3, dropout=0.5)
    x = torch.randn(4, 2, 2)
    out, h = m(x)
    print(out[-1], out.grad_fn)
    m.eval()
    print(m(x)[0][-1])
d = nn.LSTM(2, 3).double()
out, (h, c) = d(torch.randn(3, 1, 2, dtype=torch.float64))
print(out, out.grad_fn, h.grad_fn, c.grad_fn)
""",
}


@pytest.fixture(scope="module")
def reference():
    return run_under_torch(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_and_errs_as_torch(name, reference):
    assert_prints_as_torch(name, PROGRAMS[name], reference[name], may_fail=True)


def test_reassigned_mode_keeps_the_kernel():
    # torch's GRU and LSTM forwards call their own kernel, and RNN reads `mode` only to choose
    # tanh or relu: reassigning the plain attribute `mode` changes no output
    source = """import torch
import torch.nn as nn
x = torch.randn(3, 1, 2)
for kind, options in ((nn.LSTM, {}), (nn.GRU, {}), (nn.RNN, {"nonlinearity": "tanh"})):
    m = kind(2, 3, **options)
    before = m(x)[0]
    m.mode = "RNN_RELU"
    print(torch.equal(before, m(x)[0]))
r = nn.RNN(2, 3, nonlinearity="relu")
before = r(x)[0]
r.mode = "RNN_TANH"
print(torch.equal(before, r(x)[0]))
"""
    out = io.StringIO()
    result = run_source(source, "mode.tg", out=out, err=io.StringIO())
    assert result.error is None
    assert out.getvalue().split() == ["True", "True", "False", "False"]
