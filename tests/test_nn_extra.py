"""nn pieces of training-loop tutorials (clip_grad_norm_, clip_grad_value_, smooth_l1 / huber /
kl_div / cosine_similarity and their modules, Embedding): each program here prints and errs
under autodiff exactly as under real PyTorch (skipped without torch), and the gradients of the
new ops agree with central finite differences (no torch needed)."""

from __future__ import annotations


import numpy as np
import pytest

from autodiff.engine.api import functional as F
from autodiff.engine.api import nn, torch as T
from torch_programs import assert_prints_as_torch, run_under_torch

PROGRAMS = {
    "clip": "import torch\nimport torch.nn as nn\nfrom torch.nn.utils import clip_grad_norm_\ntorch.manual_seed(0)\nm = nn.Linear(3, 2)\nx = torch.randn(4, 3)\nm(x).pow(2).sum().backward()\nn = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)\nprint(n, n.dtype, n.item(), n.requires_grad)\nprint(m.weight.grad, m.bias.grad)\nprint(nn.utils.clip_grad_norm_(m.parameters(), 0.1, norm_type='inf').item())\nprint(clip_grad_norm_(m.parameters(), 0.1, norm_type=1).item())\nprint(nn.utils.clip_grad_value_(m.parameters(), 0.01), m.weight.grad)\nprint(clip_grad_norm_([], 1.0))\nprint(clip_grad_norm_((p for p in []), 1.0))\nw = torch.zeros(3, requires_grad=True)\nw.grad = torch.tensor([float('nan'), 1., 2.])\nprint(clip_grad_norm_(w, 1.0), w.grad)\ntry:\n    clip_grad_norm_([w], 1.0, error_if_nonfinite=True)\nexcept RuntimeError as e:\n    print(e)\n",
    "embedding": 'import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ntorch.manual_seed(0)\ne = nn.Embedding(10, 3)\nprint(e, e.weight)\ne2 = nn.Embedding(10, 3, padding_idx=0)\nprint(e2, e2.weight[:2], e2.padding_idx)\nprint(nn.Embedding(5, 2, padding_idx=-1).padding_idx, nn.Embedding(5, 2, scale_grad_by_freq=True))\ni = torch.tensor([[0, 2, 0], [4, 3, 9]])\nout = e2(i)\nprint(out, out.grad_fn, out.grad_fn.next_functions)\nout.sum().backward()\nprint(e2.weight.grad)\nfor idx in (torch.tensor([10]), torch.tensor([-1]), torch.tensor([1.0]), torch.tensor(3), [1, 2]):\n    try:\n        print(e(idx))\n    except Exception as ex:\n        print(type(ex).__name__, ex)\nfor args in ((10, 3, 10), (10, 3, -11)):\n    try:\n        nn.Embedding(*args)\n    except Exception as ex:\n        print(type(ex).__name__, ex)\nw = torch.randn(4, 2, requires_grad=True)\nprint(F.embedding(torch.tensor([1, 1, 3]), w, padding_idx=1))\ntry:\n    print(F.embedding(torch.tensor([1]), torch.randn(4)))\nexcept Exception as ex:\n    print(type(ex).__name__, ex)\nprint(F.embedding(torch.tensor([1], dtype=torch.int32), w))\nprint(e.num_embeddings, e.embedding_dim, e.max_norm, e.norm_type, e.scale_grad_by_freq, e.sparse)\nx = e(torch.tensor([1, 2, 1]))\ng = torch.autograd.grad((x * x).sum(), e.weight, create_graph=True)[0]\nprint(g, g.grad_fn)\nprint(torch.autograd.grad((g * g).sum(), e.weight))\nprint(nn.Embedding.from_pretrained(torch.ones(2, 2)), nn.Embedding.from_pretrained(torch.ones(2, 2)).weight)\nprint(type(e.weight), e.weight.requires_grad, list(e.state_dict()))\ns = nn.Embedding(4, 2, scale_grad_by_freq=True)\ns(torch.tensor([1, 1, 2])).sum().backward()\nprint(s.weight.grad)\nprint(list(e.parameters()))\n',
    "kl_cos": 'import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\nx = torch.randn(3, 4, requires_grad=True)\ny = torch.randn(3, 4, requires_grad=True)\np = F.log_softmax(x, 1)\nq = F.softmax(y, 1)\nfor red in ("batchmean", "sum", "none", "mean"):\n    k = F.kl_div(p, q, reduction=red)\n    print(k, k.grad_fn, k.grad_fn.next_functions)\n    g = torch.autograd.grad(k.sum(), (x, y), retain_graph=True)\n    print(g)\nk = F.kl_div(p, F.log_softmax(y, 1), reduction="batchmean", log_target=True)\nprint(k, k.item(), torch.autograd.grad(k, (x, y)))\nk = F.kl_div(p, q.detach(), reduction="none")\nprint(k.grad_fn, k.grad_fn.next_functions)\nprint(F.kl_div(torch.tensor(-1.0), torch.tensor(0.5), reduction=\'batchmean\'))\nprint(F.kl_div(p, torch.zeros(3, 4), reduction=\'sum\'))\nc = F.cosine_similarity(x, y)\nprint(c, c.grad_fn, c.grad_fn.next_functions[0][0].next_functions)\nprint(torch.autograd.grad(c.sum(), (x, y)))\nprint(F.cosine_similarity(x, y, dim=0), F.cosine_similarity(x, y[0]), F.cosine_similarity(x[0], y[1], dim=0).item())\nprint(F.cosine_similarity(torch.zeros(3), torch.ones(3), dim=0))\nprint(F.cosine_similarity(torch.arange(3), torch.ones(3), dim=0))\nfor args in ((x, torch.randn(2, 4)), (x, y, 2), (torch.ones(3, dtype=torch.long), torch.ones(3, dtype=torch.long), 0)):\n    try:\n        print(F.cosine_similarity(*args))\n    except Exception as e:\n        print(type(e).__name__, e)\nfor kw in ({"reduction": "foo"}, {"reduction": "batchmean"}):\n    try:\n        print(F.kl_div(x, torch.randn(2, 4), **kw))\n    except Exception as e:\n        print(type(e).__name__, e)\nprint(F.kl_div(p, q, size_average=False))\n',
    "robust": 'import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\nx = torch.randn(5, 7, requires_grad=True)\ny = torch.randn(5, 7, requires_grad=True)\nfor beta in (1.0, 0.5, 2.0):\n    for red in ("mean", "sum", "none"):\n        l = F.smooth_l1_loss(x * 1.5, y, beta=beta, reduction=red)\n        print(red, beta, l.sum().item(), l.grad_fn)\n        gx, gy = torch.autograd.grad(l.sum(), (x, y), create_graph=True)\n        print(gx.grad_fn, gx.sum().item(), gy.sum().item(), (gx * gx).sum().item())\n        h = F.huber_loss(x * 1.5, y, delta=beta, reduction=red)\n        print(h.sum().item(), h.grad_fn)\n        gx, gy = torch.autograd.grad(h.sum(), (x, y), create_graph=True)\n        print(gx.grad_fn, gx.sum().item(), gy.sum().item())\n        g2 = torch.autograd.grad((gx * gx).sum() + gy.pow(3).sum(), (x, y))\n        print(g2[0].sum().item(), g2[1].sum().item())\nprint(F.smooth_l1_loss(x, y, beta=0.0))\nprint(F.smooth_l1_loss(x, y[0]))\nbig = torch.randn(100, requires_grad=True)\nl = F.smooth_l1_loss(big, torch.zeros(100), beta=0.3)\nl.backward()\nprint(l.item(), big.grad[90:].tolist())\nbig.grad = None\nl = F.huber_loss(big, torch.zeros(100), delta=0.3)\nl.backward()\nprint(l.item(), big.grad[90:].tolist(), big.grad.sum().item())\nfor kw in ({"reduction": "foo"}, {"beta": -1.0}):\n    try:\n        F.smooth_l1_loss(x, y, **kw)\n    except Exception as e:\n        print(type(e).__name__, e)\ntry:\n    F.huber_loss(x, y, delta=0.0)\nexcept Exception as e:\n    print(type(e).__name__, e)\ntry:\n    F.huber_loss(torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long))\nexcept Exception as e:\n    print(type(e).__name__, e)\ntry:\n    F.smooth_l1_loss(x, torch.randn(2, 7))\nexcept Exception as e:\n    print(type(e).__name__, e)\n',
    "robust_kernels": "import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\nfor n in (3, 8, 15, 16, 17, 31, 32, 33, 40, 47, 64, 70, 100):\n    for dt in (torch.float32, torch.float64):\n        big = torch.randn(n, dtype=dt, requires_grad=True)\n        l = F.smooth_l1_loss(big, torch.zeros(n, dtype=dt), beta=0.3)\n        l.backward()\n        print(n, l.item(), big.grad.tolist())\n        big.grad = None\n        l = F.huber_loss(big * 1.3, torch.zeros(n, dtype=dt), delta=0.3)\n        l.backward()\n        print(n, l.item(), big.grad.tolist())\n        big.grad = None\n        l = F.smooth_l1_loss(big, torch.zeros(n, dtype=dt), beta=0.3, reduction='none')\n        l.backward(torch.rand(n, dtype=dt))\n        print(n, big.grad.tolist())\n",
    "modules": 'import torch\nimport torch.nn as nn\nprint(nn.SmoothL1Loss(), nn.HuberLoss(delta=2.0), nn.KLDivLoss(log_target=True), nn.CosineSimilarity(dim=0))\nprint(nn.SmoothL1Loss(beta=0.5).beta, nn.HuberLoss(delta=2).delta, nn.KLDivLoss(log_target=True).log_target)\nprint(nn.CosineSimilarity().dim, nn.CosineSimilarity().eps)\ntorch.manual_seed(3)\na = torch.randn(4, 6, requires_grad=True)\nb = torch.randn(4, 6)\nfor m in (nn.SmoothL1Loss(beta=0.3), nn.HuberLoss(reduction="sum", delta=0.4), nn.KLDivLoss(reduction="batchmean")):\n    out = m(a.log_softmax(1), b.softmax(1))\n    out.backward()\n    print(out, out.item(), a.grad)\n    a.grad = None\nc = nn.CosineSimilarity(dim=1, eps=1e-3)(a, b)\nc.sum().backward()\nprint(c, a.grad)\nw = torch.randn(40, 33)\nprint(w.norm().item(), w.norm(dim=1).tolist(), torch.linalg.vector_norm(w[0]).item())\n',
}


@pytest.fixture(scope="module")
def reference():
    return run_under_torch(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_and_errs_as_torch(name, reference):
    assert_prints_as_torch(name, PROGRAMS[name], reference[name], may_fail=True)


# --- gradients against central finite differences (float64) --------------------------------------

def _t(values, requires_grad=False):
    return T.tensor(np.asarray(values).tolist(), dtype=T.float64, requires_grad=requires_grad)


def _numeric(f, x: np.ndarray, eps=1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


CASES = {
    "smooth_l1": lambda a, b: F.smooth_l1_loss(a, b, beta=0.7),
    "smooth_l1_sum": lambda a, b: F.smooth_l1_loss(a, b, beta=1.3, reduction="sum"),
    "huber": lambda a, b: F.huber_loss(a, b, delta=0.6),
    "huber_none": lambda a, b: F.huber_loss(a, b, delta=0.6, reduction="none").pow(2).sum(),
    "kl_div": lambda a, b: F.kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean"),
    "kl_div_log": lambda a, b: F.kl_div(a.log_softmax(1), b.log_softmax(1), reduction="sum",
                                        log_target=True),
    "cosine": lambda a, b: F.cosine_similarity(a, b).pow(2).sum(),
    # (no padding_idx: its row's gradient is 0 by design, which the live programs check)
    "embedding": lambda a, b: (F.embedding(T.tensor([[0, 2], [2, 1]]), a)
                               * b[:2, :2].reshape(2, 1, 2)).sum(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(name):
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))
    if name == "embedding":
        x = rng.uniform(-2, 2, (3, 2))
    f = CASES[name]

    def value(xa, ya):
        return f(_t(xa), _t(ya)).item()

    a = _t(x, True)
    b = _t(y, True)
    f(a, b).backward()
    assert np.allclose(a.grad.numpy(), _numeric(lambda v: value(v, y), x), atol=1e-6)
    assert np.allclose(b.grad.numpy(), _numeric(lambda v: value(x, v), y), atol=1e-6)


def test_second_order_gradients_match_finite_differences():
    """create_graph through the backward ops (SmoothL1LossBackwardBackward0 and the others)."""
    rng = np.random.default_rng(8)
    x, y = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))
    for loss in (lambda a, b: F.smooth_l1_loss(a, b, beta=0.7),
                 lambda a, b: F.huber_loss(a, b, delta=0.6, reduction="sum")):
        def first(xa):
            a = _t(xa, True)
            (g,) = T.autograd.grad(loss(a, _t(y)) * 3.0, a,
                                   create_graph=True)
            return g
        a = _t(x, True)
        (g,) = T.autograd.grad(loss(a, _t(y)) * 3.0, a, create_graph=True)
        (g * g).sum().backward()
        numeric = _numeric(lambda v: (first(v) ** 2).sum().item(), x)
        assert np.allclose(a.grad.numpy(), numeric, atol=1e-5)


def test_clip_grad_norm_scales_to_max_norm():
    p = T.tensor([3.0, 4.0], requires_grad=True)
    (p * p).sum().backward()
    total = nn.utils.clip_grad_norm_([p], 1.0)
    assert total.item() == pytest.approx(10.0)
    assert np.linalg.norm(p.grad.numpy()) == pytest.approx(1.0, rel=1e-5)
