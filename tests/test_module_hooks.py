"""nn.Module hooks (forward pre-hooks, forward hooks, full and non-full backward hooks, their
handles) and Tensor.register_post_accumulate_grad_hook: each program prints under autodiff
exactly as under real PyTorch (skipped without torch), warnings carry torch's text; without
torch, the hooks' gradients are checked against the module's own."""

from __future__ import annotations

import re

import numpy as np
import pytest

from autodiff.engine.api import nn, torch as T
from torch_programs import assert_prints_as_torch, run_under_torch

_HEAD = "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"

PROGRAMS = {
    "forward": _HEAD + """
lin = nn.Linear(3, 2)
def fh(m, i, o):
    print("fwd", type(m).__name__, type(i), len(i), o.shape, o.grad_fn)
def ph(m, i):
    print("pre", i[0].shape)
h1 = lin.register_forward_hook(fh)
h2 = lin.register_forward_pre_hook(ph)
print(h1, h1.id, h2.id)
x = torch.randn(4, 3)
y = lin(x)
print(h1.remove(), h1.remove())
y = lin(x)
h2.remove()
print(lin(x).grad_fn)
def scale(m, args):
    return args[0] * 10
def kw(m, args, kwargs, out):
    print("kw", kwargs, out.shape)
    return out + 1
def pre_kw(m, args, kwargs):
    return (args[0] * 2,), kwargs
lin3 = nn.Linear(3, 1)
lin3.register_forward_pre_hook(scale)
lin3.register_forward_hook(kw, with_kwargs=True)
lin3.register_forward_pre_hook(pre_kw, with_kwargs=True, prepend=True)
print(lin3(torch.ones(1, 3)))
def bad(m, args, kwargs):
    return 3
lin3.register_forward_pre_hook(bad, with_kwargs=True)
try:
    lin3(torch.ones(1, 3))
except RuntimeError as e:
    print(e)
seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
for name, m in seq.named_children():
    m.register_forward_hook(lambda m, i, o, name=name: print(name, tuple(o.shape)))
print(seq(torch.randn(2, 3)).shape)
""",
    "full_backward": _HEAD + """
lin = nn.Linear(3, 2)
def bh(m, gi, go):
    print("bwd", type(m).__name__, gi, go)
h = lin.register_full_backward_hook(bh)
y = lin(torch.randn(4, 3))
print(y.grad_fn, y.grad_fn.next_functions[0][0])
y.sum().backward()
xr = torch.randn(4, 3, requires_grad=True)
y = lin(xr)
(y * torch.arange(2.0)).sum().backward()
print(xr.grad)
h.remove()
print(lin(xr).grad_fn)
try:
    lin.register_backward_hook(bh)
except RuntimeError as e:
    print(e)
def double_in(m, gi, go):
    return (gi[0] * 2,)
seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
seq.register_full_backward_hook(bh)
seq.register_full_backward_hook(double_in)
xr.grad = None
seq(xr).sum().backward()
print(xr.grad)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 4)
        self.b = nn.Linear(4, 2)
    def forward(self, x, y, k=1.0):
        return self.b(self.a(x)).tanh() * y * k, x.sum()
net = Net()
net.register_full_backward_hook(bh)
w = torch.randn(2, 2, requires_grad=True)
o, s = net(xr[:2], w, k=2.0)
(o.sum() + s).backward()
print(w.grad, o.grad_fn, s.grad_fn)
with torch.no_grad():
    print(net(xr[:2], w)[0].grad_fn)
""",
    "non_full_backward": _HEAD + """
def bh(m, gi, go):
    print("bwd", [None if g is None else g for g in gi], go)
lin2 = nn.Linear(3, 2)
lin2.register_backward_hook(bh)
xr = torch.randn(4, 3, requires_grad=True)
y = lin2(xr)
print(y.grad_fn)
y.sum().backward()
y = lin2(torch.randn(3, requires_grad=True))
y.sum().backward()
seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
seq.register_backward_hook(bh)
seq(xr).sum().backward()
try:
    seq.register_full_backward_hook(bh)
except RuntimeError as e:
    print(e)
""",
    "post_accumulate": _HEAD + """
p = torch.randn(2, requires_grad=True)
def pah(t):
    print("post acc", t.grad)
hh = p.register_post_accumulate_grad_hook(pah)
h2 = p.register_hook(lambda g: g * 2)
print(hh.id, h2.id)
(p * 2).sum().backward()
print(torch.autograd.grad((p * 3).sum(), p))
hh.remove()
(p * 2).sum().backward()
print(p.grad)
for t in (p * 2, torch.ones(2)):
    try:
        t.register_post_accumulate_grad_hook(pah)
    except RuntimeError as e:
        print(e)
""",
}

_WARNING = re.compile(r"(?:Future|User)Warning: .*")


@pytest.fixture(scope="module")
def reference():
    return run_under_torch(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_and_warns_as_torch(name, reference):
    assert_prints_as_torch(name, PROGRAMS[name], reference[name], warnings=_WARNING)


def test_full_backward_hook_sees_the_gradients_backward_computes():
    T.manual_seed(1)
    lin = nn.Linear(3, 2)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    x = T.randn(5, 3, requires_grad=True)
    g = T.randn(5, 2)
    lin(x).backward(g)
    (gi,), (go,) = seen[0]
    np.testing.assert_array_equal(go.numpy(), g.numpy())
    np.testing.assert_allclose(gi.numpy(), g.numpy() @ lin.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(gi.numpy(), x.grad.numpy())


def test_a_replaced_grad_input_reaches_the_leaf():
    lin = nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda m, gi, go: (T.ones(3, 2) * 7,))
    x = T.randn(3, 2, requires_grad=True)
    lin(x).sum().backward()
    assert x.grad.tolist() == [[7.0, 7.0]] * 3
