"""Convolution and pooling against live PyTorch (skipped without it), and against float64
central differences: values over shapes, stride, padding, dilation and groups; grad_fn names
and next_functions; gradients of input, weight and bias, first and second order; modules'
printing and default initialisation; torch's errors."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from autodiff.engine.api import functional as AF
from autodiff.engine.api import nn as ann
from autodiff.engine.api import torch as at
from autodiff.engine.autograd.numeric_check import check_gradients, check_second_order
from autodiff.interpreter import run_source


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _pair(torch, *arrays, dtype="float32", grad=True):
    """The same arrays as autodiff tensors and torch tensors (leaves requiring grad)."""
    ours = [at.tensor(a.tolist(), dtype=getattr(at, dtype), requires_grad=grad) for a in arrays]
    theirs = [torch.tensor(a.tolist(), dtype=getattr(torch, dtype), requires_grad=grad)
              for a in arrays]
    return ours, theirs


def _np(t):
    return np.array(t.detach().tolist())


CONV_CASES = [
    # input shape, weight shape, bias, stride, padding, dilation, groups
    ((1, 1, 32, 32), (6, 1, 5, 5), True, 1, 0, 1, 1),
    ((2, 3, 7, 9), (4, 3, 3, 3), True, 2, 1, 1, 1),
    ((2, 4, 8, 7), (6, 2, 3, 2), False, (1, 2), (2, 1), (2, 1), 2),
    ((1, 4, 6, 6), (4, 1, 3, 3), True, 1, "same", 2, 4),
    ((1, 2, 6, 6), (3, 2, 4, 4), True, 1, "same", 1, 1),
    ((1, 2, 6, 5), (3, 2, 2, 2), True, 3, "valid", 1, 1),
    ((3, 5, 5), (2, 3, 3, 3), True, 1, 1, 1, 1),  # unbatched
]


@pytest.mark.parametrize("case", CONV_CASES, ids=range(len(CONV_CASES)))
def test_conv2d_values_gradients_and_graph_match_torch(torch, case):
    xs, ws, has_bias, stride, padding, dilation, groups = case
    rng = np.random.default_rng(len(xs) + sum(ws))
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws)]
    if has_bias:
        arrays.append(rng.standard_normal(ws[0]))
    ours, theirs = _pair(torch, *arrays)
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    a = AF.conv2d(*ours, **kw) if has_bias else AF.conv2d(*ours, **kw)
    t = torch.nn.functional.conv2d(*theirs, **kw)
    assert tuple(a.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(a), _np(t), rtol=1e-5, atol=1e-5)
    assert repr(a.grad_fn).split()[0] == repr(t.grad_fn).split()[0]
    assert [n is None for n, _ in a.grad_fn.next_functions] == \
        [n is None for n, _ in t.grad_fn.next_functions]
    g = rng.standard_normal(tuple(t.shape))
    a.backward(at.tensor(g.tolist()))
    t.backward(torch.tensor(g.tolist(), dtype=torch.float32))
    for o, th in zip(ours, theirs):
        # each gradient is a float32 sum of many products added in another order than
        # torch's: its error is relative to the size of the terms, not of the sum
        expected = _np(th.grad)
        np.testing.assert_allclose(_np(o.grad), expected, rtol=1e-5,
                                   atol=1e-6 * max(1.0, np.abs(expected).max()))


def test_conv_grad_fn_names_under_create_graph_match_torch(torch):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3)),
              rng.standard_normal(3)]
    ours, theirs = _pair(torch, *arrays, dtype="float64")
    a = at.autograd.grad(AF.conv2d(*ours).sum(), ours, create_graph=True)
    t = torch.autograd.grad(torch.nn.functional.conv2d(*theirs).sum(), theirs,
                            create_graph=True)
    for x, y in zip(a, t):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-12)
    for x, y in zip(a[:2], t[:2]):
        assert x.grad_fn.name() == y.grad_fn.name() == "ConvolutionBackwardBackward0"
        assert [n is None for n, _ in x.grad_fn.next_functions] == \
            [n is None for n, _ in y.grad_fn.next_functions]
    # a second derivative through them, with stride, padding, dilation and groups
    kw = dict(stride=(1, 2), padding=1, dilation=(2, 1), groups=2)
    arrays = [rng.standard_normal((2, 4, 6, 5)), rng.standard_normal((4, 2, 2, 2))]
    ours, theirs = _pair(torch, *arrays, dtype="float64")
    results = []
    for lib, F, leaves in ((at, AF, ours), (torch, torch.nn.functional, theirs)):
        out = F.conv2d(*leaves, **kw)
        g = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).tolist(),
                       dtype=lib.float64)
        gx, gw = lib.autograd.grad(out, leaves, g, create_graph=True)
        results.append([_np(h) for h in lib.autograd.grad((gx * gx).sum() + (gw ** 3).sum(),
                                                          leaves)])
    for x, y in zip(*results):
        np.testing.assert_allclose(x, y, rtol=1e-10)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(padding=2, dilation=3),
                                dict(groups=2, padding="same")])
def test_conv_gradients_against_central_differences(kw):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 2, 7, 6)), rng.standard_normal((4, 1 if kw.get("groups")
                                                                      else 2, 3, 2)),
              rng.standard_normal(4)]

    def fn(x, w, b):
        return AF.conv2d(x, w, b, **kw)

    assert check_gradients(fn, arrays).ok(rtol=1e-6, atol=1e-7)
    assert check_second_order(fn, arrays, eps=1e-5).ok(rtol=1e-5, atol=1e-6)


def test_conv1d_matches_torch(torch):
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((2, 4, 11)), rng.standard_normal((6, 2, 3)),
              rng.standard_normal(6)]
    ours, theirs = _pair(torch, *arrays)
    kw = dict(stride=2, padding=1, dilation=2, groups=2)
    a, t = AF.conv1d(*ours, **kw), torch.nn.functional.conv1d(*theirs, **kw)
    np.testing.assert_allclose(_np(a), _np(t), rtol=1e-5, atol=1e-6)
    assert a.grad_fn.name() == t.grad_fn.name()
    a.sum().backward()
    t.sum().backward()
    for o, th in zip(ours, theirs):
        np.testing.assert_allclose(_np(o.grad), _np(th.grad), rtol=1e-5, atol=1e-5)


POOL_CASES = [
    ("max_pool2d", (1, 6, 28, 28), dict(kernel_size=(2, 2))),
    ("max_pool2d", (2, 3, 7, 8), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", (2, 2, 9, 9), dict(kernel_size=(2, 3), stride=(2, 1), dilation=2,
                                      ceil_mode=True)),
    ("max_pool2d", (3, 5, 5), dict(kernel_size=2, ceil_mode=True)),
    ("avg_pool2d", (1, 6, 28, 28), dict(kernel_size=2)),
    ("avg_pool2d", (2, 3, 7, 8), dict(kernel_size=3, stride=2, padding=1)),
    ("avg_pool2d", (2, 3, 7, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                      count_include_pad=False)),
    ("avg_pool2d", (3, 5, 6), dict(kernel_size=(2, 3), divisor_override=4)),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=range(len(POOL_CASES)))
def test_pooling_matches_torch(torch, case):
    name, shape, kw = case
    rng = np.random.default_rng(5)
    # rounded values, so windows hold ties: the first maximum wins, as in torch
    ours, theirs = _pair(torch, np.round(rng.standard_normal(shape), 1))
    a = getattr(AF, name)(ours[0], **kw)
    t = getattr(torch.nn.functional, name)(theirs[0], **kw)
    np.testing.assert_allclose(_np(a), _np(t), rtol=1e-6)
    assert a.grad_fn.name() == t.grad_fn.name()
    g = rng.standard_normal(tuple(t.shape))
    a.backward(at.tensor(g.tolist()))
    t.backward(torch.tensor(g.tolist(), dtype=torch.float32))
    np.testing.assert_allclose(_np(ours[0].grad), _np(theirs[0].grad), rtol=1e-5, atol=1e-6)
    if name == "max_pool2d":
        _, ai = AF.max_pool2d(ours[0], **kw, return_indices=True)
        _, ti = torch.nn.functional.max_pool2d(theirs[0], **kw, return_indices=True)
        assert ai.tolist() == ti.tolist()


def test_pooling_double_backward_matches_torch(torch):
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((2, 2, 6, 6))]
    for name in ("max_pool2d", "avg_pool2d"):
        ours, theirs = _pair(torch, *arrays, dtype="float64")
        results = []
        for lib, F, (x,) in ((at, AF, ours), (torch, torch.nn.functional, theirs)):
            out = getattr(F, name)(x * x, 3, 2, 1)
            (g,) = lib.autograd.grad((out ** 2).sum(), (x,), create_graph=True)
            results.append((g.grad_fn.name(), _np(lib.autograd.grad((g ** 2).sum(), (x,))[0])))
        assert results[0][0] == results[1][0]
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10)


def test_adaptive_avg_pool_to_one_is_a_mean(torch):
    ours, theirs = _pair(torch, np.arange(24.0).reshape(1, 2, 3, 4))
    a = AF.adaptive_avg_pool2d(ours[0], 1)
    t = torch.nn.functional.adaptive_avg_pool2d(theirs[0], 1)
    assert _np(a).tolist() == _np(t).tolist()
    assert a.grad_fn.name() == t.grad_fn.name()


# --- modules ----------------------------------------------------------------------------------

MODULES = [
    "Conv2d(1, 6, 5)", "Conv2d(3, 8, (3, 5), stride=2, padding=1, dilation=2, bias=False)",
    "Conv2d(4, 6, 3, padding='same', groups=2)", "Conv1d(2, 4, 3, stride=2)",
    "MaxPool2d(2)", "MaxPool2d((2, 2))", "MaxPool2d(3, 1, 1, ceil_mode=True)", "AvgPool2d(2)",
    "AvgPool2d(3, stride=1, padding=1)", "AdaptiveAvgPool2d((1, 1))",
]


@pytest.mark.parametrize("text", MODULES)
def test_module_prints_and_initialises_as_torch(torch, text):
    at.manual_seed(3)
    torch.manual_seed(3)
    ours = eval("nn." + text, {"nn": ann})
    theirs = eval("nn." + text, {"nn": torch.nn})
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert _np(p).tolist() == _np(q).tolist()  # the same draws, bit for bit


# --- errors -----------------------------------------------------------------------------------

ERRORS = [
    "F.conv2d(torch.randn(1, 3, 32, 32), torch.randn(6, 1, 5, 5))",
    "F.conv2d(torch.randn(3, 32, 32), torch.randn(6, 1, 5, 5))",
    "F.conv2d(torch.randn(32, 32), torch.randn(6, 1, 5, 5))",
    "F.conv2d(torch.randn(1, 1, 3, 32), torch.randn(6, 1, 5, 5))",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), stride=0)",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), padding=-1)",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), dilation=0)",
    "F.conv2d(torch.randn(1, 4, 8, 8), torch.randn(6, 2, 3, 3), groups=4)",
    "F.conv2d(torch.randn(1, 4, 8, 8), torch.randn(6, 2, 3, 3), groups=3)",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), torch.randn(5))",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), padding='same', stride=2)",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), padding='foo')",
    "F.conv2d(torch.randn(1, 1, 8, 8).double(), torch.randn(6, 1, 5, 5))",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), stride=(1, 2, 3))",
    "F.conv1d(torch.randn(1, 2, 8), torch.randn(2, 1, 3))",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5))",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5), stride=(2, 3))",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1))",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 1, 5, 5))",
    "F.conv1d(torch.randn(1, 1, 8), torch.randn(6, 1, 5, 5))",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), groups=0)",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5).double())",
    "F.conv2d(torch.randn(1, 1, 8, 8), torch.randn(6, 1, 5, 5), torch.randn(6).double())",
    "nn.Conv2d(1, 6, 5)(torch.randn(1, 3, 32, 32))",
    "nn.Conv2d(3, 6, 5, groups=2)",
    "nn.Conv2d(4, 6, 5, groups=4)",
    "nn.Conv2d(4, 6, 5, padding='same', stride=2)",
    "F.max_pool2d(torch.randn(5, 5), 2)",
    "F.max_pool2d(torch.randn(1, 1, 5, 5), 6)",
    "F.max_pool2d(torch.randn(1, 1, 5, 5), 3, padding=2)",
    "F.max_pool2d(torch.randn(1, 1, 5, 5), 2, stride=0)",
    "F.max_pool2d(torch.randn(1, 1, 5, 5), (2, 2, 2))",
    "F.avg_pool2d(torch.randn(1, 1, 5, 5), 6)",
    "F.avg_pool2d(torch.randn(5, 5), 2)",
]


def _outcome(lib, text):
    names = {"torch": lib, "F": lib.nn.functional, "nn": lib.nn}
    try:
        eval(text, names)
    except Exception as exc:  # the class and message are what is compared
        return f"{type(exc).__name__}: {exc}"
    return "no error"


@pytest.mark.parametrize("text", ERRORS)
def test_errors_are_torchs(torch, text):
    assert _outcome(at, text) == _outcome(torch, text)


# --- a whole program -------------------------------------------------------------------------

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(SEED)
net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, padding=1),
                    nn.AvgPool2d(2), nn.Flatten(), nn.Linear(8 * 3 * 3, 5))
print(net)
x = torch.randn(2, 1, 14, 14)
out = net(x)
print(out)
loss = F.mse_loss(out, torch.randn(2, 5))
loss.backward()
print(loss, net[0].bias.grad, net[3].weight.grad[0, 0])
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_program_prints_what_torch_prints(torch, seed):
    text = PROGRAM.replace("SEED", str(seed))
    out = io.StringIO()
    result = run_source(text, out=out)
    assert result.error is None, result.error
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        exec(compile(text, "<program>", "exec"), {})
    assert out.getvalue() == expected.getvalue()
