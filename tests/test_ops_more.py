"""Transposed convolutions, repeat_interleave and index_copy/index_add/index_fill against live
PyTorch (skipped without it), and against float64 central differences (run without it):
values over sampled shapes and options, grad_fn names, first and second order gradients,
modules' printing and initialisation, printed program output and torch's errors."""

from __future__ import annotations

import contextlib
import io
import itertools
import re

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


def _pair(torch, *arrays, dtype="float32"):
    """The same arrays as autodiff and torch leaves requiring grad."""
    ours = [at.tensor(a.tolist(), dtype=getattr(at, dtype), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a.tolist(), dtype=getattr(torch, dtype), requires_grad=True)
              for a in arrays]
    return ours, theirs


def _np(t):
    return np.array(t.detach().tolist())


def _node(t) -> str:
    return re.sub(" object at 0x[0-9a-f]+", "", repr(t.grad_fn))


def _close_grads(ours, theirs, rtol=1e-5):
    for o, t in zip(ours, theirs):
        if t.grad is None:
            assert o.grad is None
            continue
        expected = _np(t.grad)
        # float32 sums of many products added in another order than torch's
        np.testing.assert_allclose(_np(o.grad), expected, rtol=rtol,
                                   atol=1e-6 * max(1.0, np.abs(expected).max()))


# --- conv_transpose1d / conv_transpose2d --------------------------------------------------------

def _conv_t_cases():
    """(input shape, weight shape, bias, options) sampled over stride, padding,
    output_padding, groups and dilation, batched and unbatched, 1-d and 2-d."""
    rng = np.random.default_rng(11)
    cases = []
    for n, groups, stride, dilation, bias, batched in itertools.product(
            (1, 2), (1, 2), (1, 2, 3), (1, 2), (True, False), (True, False)):
        if rng.random() < 0.5:
            continue
        kernel = tuple(int(k) for k in rng.integers(1, 4, n))
        sizes = tuple(int(s) for s in rng.integers(2, 6, n))
        pad = tuple(int(rng.integers(0, (dilation * (k - 1)) // 2 + 1)) for k in kernel)
        extra = tuple(int(rng.integers(0, max(stride, dilation))) for _ in range(n))
        cin, cout = groups * int(rng.integers(1, 3)), groups * int(rng.integers(1, 3))
        xs = ((2,) if batched else ()) + (cin,) + sizes
        ws = (cin, cout // groups) + kernel
        opts = dict(stride=stride, padding=pad if n == 2 else pad[0],
                    output_padding=extra if n == 2 else list(extra), groups=groups,
                    dilation=dilation)
        cases.append((n, xs, ws, bias, opts))
    return cases


CONV_T_CASES = _conv_t_cases()


def test_conv_t_cases_are_many():
    assert len(CONV_T_CASES) > 15


@pytest.mark.parametrize("case", CONV_T_CASES, ids=range(len(CONV_T_CASES)))
def test_conv_transpose_values_gradients_and_graph_match_torch(torch, case):
    n, xs, ws, has_bias, opts = case
    rng = np.random.default_rng(sum(xs) + sum(ws))
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws)]
    if has_bias:
        arrays.append(rng.standard_normal(ws[1] * opts["groups"]))
    ours, theirs = _pair(torch, *arrays)
    name = f"conv_transpose{n}d"
    args = lambda leaves: tuple(leaves) + (() if has_bias else (None,))  # noqa: E731
    a = getattr(AF, name)(*args(ours), **opts)
    t = getattr(torch.nn.functional, name)(*args(theirs), **opts)
    assert tuple(a.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(a), _np(t), rtol=1e-5, atol=1e-5)
    assert _node(a) == _node(t)
    assert a.grad_fn.name() == t.grad_fn.name()
    assert [f is None for f, _ in a.grad_fn.next_functions] == \
        [f is None for f, _ in t.grad_fn.next_functions]
    # torch.conv_transposeNd is the same function
    b = getattr(at, name)(*args(ours), **opts)
    assert _np(b).tolist() == _np(a).tolist()
    g = rng.standard_normal(tuple(t.shape))
    a.backward(at.tensor(g.tolist()))
    t.backward(torch.tensor(g.tolist(), dtype=torch.float32))
    _close_grads(ours, theirs)


@pytest.mark.parametrize("n", [1, 2])
def test_conv_transpose_second_order_matches_torch(torch, n):
    rng = np.random.default_rng(n)
    shape = (2, 4) + (5,) * n
    arrays = [rng.standard_normal(shape), rng.standard_normal((4, 1) + (2,) * n),
              rng.standard_normal(2)]
    opts = dict(stride=2, padding=1, output_padding=1, groups=2, dilation=1)
    ours, theirs = _pair(torch, *arrays, dtype="float64")
    results = []
    for lib, F, leaves in ((at, AF, ours), (torch, torch.nn.functional, theirs)):
        out = getattr(F, f"conv_transpose{n}d")(*leaves, **opts)
        g = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).tolist(),
                       dtype=lib.float64)
        grads = lib.autograd.grad(out, leaves, g, create_graph=True)
        names = [h.grad_fn.name() if h.grad_fn is not None else None for h in grads]
        second = lib.autograd.grad((grads[0] ** 2).sum() + (grads[1] ** 3).sum(), leaves[:2])
        results.append((names, [_np(h) for h in grads], [_np(h) for h in second]))
    assert results[0][0] == results[1][0]
    for x, y in zip(results[0][1] + results[0][2], results[1][1] + results[1][2]):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(dilation=2, padding=2), dict(groups=2, stride=(2, 1),
                                                                  output_padding=(1, 0))])
def test_conv_transpose_gradients_against_central_differences(kw):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((2, 2, 4, 3)),
              rng.standard_normal((2, 3 if kw.get("groups") is None else 1, 3, 2)),
              rng.standard_normal(3 if kw.get("groups") is None else 2)]

    def fn(x, w, b):
        return AF.conv_transpose2d(x, w, b, **kw)

    assert check_gradients(fn, arrays).ok(rtol=1e-6, atol=1e-7)
    assert check_second_order(fn, arrays, eps=1e-5).ok(rtol=1e-5, atol=1e-6)


def test_conv_transpose1d_against_central_differences():
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((2, 2, 5)), rng.standard_normal((2, 3, 3))]

    def fn(x, w):
        return AF.conv_transpose1d(x, w, stride=3, padding=1, output_padding=2)

    assert check_gradients(fn, arrays).ok(rtol=1e-6, atol=1e-7)
    assert check_second_order(fn, arrays, eps=1e-5).ok(rtol=1e-5, atol=1e-6)


CONV_T_MODULES = [
    "ConvTranspose2d(1, 6, 5)",
    "ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, output_padding=1, groups=2)",
    "ConvTranspose2d(3, 2, 3, stride=(2, 3), dilation=2, output_padding=(1, 2), bias=False)",
    "ConvTranspose1d(2, 4, 3, stride=2)", "ConvTranspose1d(4, 2, 1, groups=2, bias=False)",
]


@pytest.mark.parametrize("text", CONV_T_MODULES)
def test_conv_transpose_module_prints_initialises_and_runs_as_torch(torch, text):
    at.manual_seed(4)
    torch.manual_seed(4)
    ours = eval("nn." + text, {"nn": ann})
    theirs = eval("nn." + text, {"nn": torch.nn})
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert tuple(p.shape) == tuple(q.shape)
        assert _np(p).tolist() == _np(q).tolist()  # the same draws, bit for bit
    for name in ("in_channels", "out_channels", "kernel_size", "stride", "padding",
                 "output_padding", "dilation", "groups", "transposed", "padding_mode"):
        assert getattr(ours, name) == getattr(theirs, name), name
    shape = (2, theirs.in_channels) + (4,) * len(theirs.kernel_size)
    x = np.random.default_rng(0).standard_normal(shape)
    (ox,), (tx,) = _pair(torch, x)
    a, t = ours(ox), theirs(tx)
    np.testing.assert_allclose(_np(a), _np(t), rtol=1e-5, atol=1e-5)
    a.sum().backward()
    t.sum().backward()
    _close_grads([ox] + list(ours.parameters()), [tx] + list(theirs.parameters()))


@pytest.mark.parametrize("output_size", [[9, 9], [10, 9], [2, 3, 10, 10], (9, 10)])
def test_conv_transpose_output_size_matches_torch(torch, output_size):
    at.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = ann.ConvTranspose2d(3, 2, 3, stride=2, padding=1), \
        torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 5))
    (ox,), (tx,) = _pair(torch, x)
    a, t = ours(ox, output_size), theirs(tx, output_size)
    assert tuple(a.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(a), _np(t), rtol=1e-5, atol=1e-5)


# --- repeat_interleave -------------------------------------------------------------------------

REPEAT_CASES = [
    # shape, repeats (an int or a list for a tensor), dim, output_size
    ((3,), 2, None, None), ((2, 3), 2, None, None), ((2, 3), 3, 0, None), ((2, 3), 2, 1, 6),
    ((2, 3), 1, -1, None), ((2, 3, 2), 0, 1, None), ((), 3, None, None), ((2, 3), [1, 2], 0, None),
    ((2, 3), [0, 2, 1], 1, 3), ((2, 3), [2, 0, 1], -1, None), ((2, 3), [2], 1, None),
    ((4,), [1, 0, 2, 1], None, 4), ((2, 2), [1, 1, 2, 0], None, None), ((1, 3), [3], 0, None),
    ((2, 3), 2, -2, 4),
]


@pytest.mark.parametrize("case", REPEAT_CASES, ids=range(len(REPEAT_CASES)))
def test_repeat_interleave_matches_torch(torch, case):
    shape, repeats, dim, output_size = case
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    ours, theirs = _pair(torch, x)
    kwargs = {} if output_size is None else {"output_size": output_size}
    o_rep = at.tensor(repeats) if isinstance(repeats, list) else repeats
    t_rep = torch.tensor(repeats) if isinstance(repeats, list) else repeats
    for how in ("function", "method"):
        ol, tl = _pair(torch, x)
        if how == "function":
            a = at.repeat_interleave(ol[0], o_rep, dim, **kwargs)
            t = torch.repeat_interleave(tl[0], t_rep, dim, **kwargs)
        else:
            a = ol[0].repeat_interleave(o_rep, dim=dim, **kwargs)
            t = tl[0].repeat_interleave(t_rep, dim=dim, **kwargs)
        assert tuple(a.shape) == tuple(t.shape)
        assert _np(a).tolist() == _np(t).tolist()
        assert _node(a) == _node(t)
        # (built by each library: an empty shape does not survive tolist)
        (a * (at.arange(float(t.numel())).reshape(tuple(t.shape)) - 1.5)).sum().backward()
        (t * (torch.arange(float(t.numel())).reshape(tuple(t.shape)) - 1.5)).sum().backward()
        assert _np(ol[0].grad).tolist() == _np(tl[0].grad).tolist()
    del ours, theirs


def test_repeat_interleave_of_repeats_alone_matches_torch(torch):
    for repeats, kwargs in (([1, 0, 3], {}), ([2, 2], {"output_size": 4}), ([], {}), ([4], {})):
        a = at.repeat_interleave(at.tensor(repeats, dtype=at.int64), **kwargs)
        t = torch.repeat_interleave(torch.tensor(repeats, dtype=torch.int64), **kwargs)
        assert a.tolist() == t.tolist()
        assert str(a.dtype) == str(t.dtype)


def test_repeat_interleave_second_order_matches_torch(torch):
    x = np.random.default_rng(2).standard_normal((2, 3))
    results = []
    for lib in (at, torch):
        leaf = lib.tensor(x.tolist(), dtype=lib.float64, requires_grad=True)
        for repeats in (2, lib.tensor([1, 0, 2])):
            out = leaf.repeat_interleave(repeats, dim=1)
            (g,) = lib.autograd.grad((out ** 3).sum(), (leaf,), create_graph=True)
            (h,) = lib.autograd.grad((g * g).sum(), (leaf,))
            results.append((g.grad_fn.name(), _np(g), _np(h)))
    for ours, theirs in zip(results[:2], results[2:]):
        assert ours[0] == theirs[0]
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


def test_repeat_interleave_against_central_differences():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 2))
    weights = at.tensor(rng.standard_normal((3, 4)).tolist(), dtype=at.float64)
    for fn in (lambda a: a.repeat_interleave(2, dim=1) ** 2 * weights,
               lambda a: at.repeat_interleave(a, at.tensor([3, 1]), 1) ** 3 * weights):
        assert check_gradients(fn, [x]).ok()
        assert check_second_order(fn, [x], eps=1e-5).ok(rtol=1e-5, atol=1e-6)


# --- index_copy / index_add / index_fill --------------------------------------------------------

INDEX_CASES = [
    # op, self shape, dim, index (a list, or an int for a 0-d index), source shape or value,
    # keyword arguments
    ("index_copy", (4, 3), 0, [2, 0], (2, 3), {}),
    ("index_copy", (4, 3), 1, [2], (4, 1), {}),
    ("index_copy", (2, 3, 4), -1, [3, 1, 0], (2, 3, 3), {}),
    ("index_copy", (4, 3), -2, 1, (1, 3), {}),
    ("index_copy", (5,), 0, [4, 1], (2,), {}),
    ("index_add", (4, 3), 0, [2, 0, 2], (3, 3), {}),
    ("index_add", (4, 3), 1, [1, 1], (4, 2), {"alpha": 2.5}),
    ("index_add", (2, 3, 4), -1, [0, 3], (2, 3, 2), {"alpha": -1}),
    ("index_add", (2, 3, 4), 1, 2, (2, 1, 4), {}),
    ("index_add", (5,), 0, [0, 0, 4], (3,), {"alpha": 0.5}),
    ("index_fill", (4, 3), 0, [2, 0], 1.5, {}),
    ("index_fill", (4, 3), -1, [2, 2], -3, {}),
    ("index_fill", (2, 3, 4), 2, [0, 3], "tensor", {}),
    ("index_fill", (2, 3, 4), 2, [0, -1], 2.0, {}),
    ("index_fill", (2, 3, 4), 0, -2, -1.0, {}),
    ("index_fill", (2, 3, 4), 1, 1, "tensor", {}),
    ("index_fill", (5,), 0, [1, 3], "tensor", {}),
    ("index_fill", (5,), -1, [], 2.0, {}),
]


def _index_args(lib, case, rng):
    name, shape, dim, index, other, kwargs = case
    idx = lib.tensor(index, dtype=lib.int64)
    if isinstance(other, tuple):
        value = lib.tensor(rng.standard_normal(other).tolist(), dtype=lib.float64,
                           requires_grad=True)
    elif other == "tensor":
        value = lib.tensor(0.75, dtype=lib.float64, requires_grad=True)
    else:
        value = other
    return dim, idx, value


@pytest.mark.parametrize("case", INDEX_CASES, ids=range(len(INDEX_CASES)))
def test_index_ops_match_torch(torch, case):
    name, shape, dim, index, other, kwargs = case
    results = []
    for lib in (at, torch):
        rng = np.random.default_rng(len(shape) + len(name))
        x = lib.tensor(rng.standard_normal(shape).tolist(), dtype=lib.float64,
                       requires_grad=True)
        d, idx, value = _index_args(lib, case, rng)
        outs = [getattr(lib, name)(x, d, idx, value, **kwargs),
                getattr(x, name)(d, idx, value, **kwargs)]
        copy = x.detach().clone()
        same = getattr(copy, name + "_")(d, idx, value.detach() if hasattr(value, "detach")
                                         else value, **kwargs)
        inplace = x * 1
        inplace_out = getattr(inplace, name + "_")(d, idx, value, **kwargs)
        assert same is copy and inplace_out is inplace
        leaves = [x] + ([value] if hasattr(value, "requires_grad") else [])
        weights = lib.tensor(np.linspace(-2, 2, outs[0].numel()).reshape(
            tuple(outs[0].shape)).tolist(), dtype=lib.float64)
        grads = lib.autograd.grad((outs[0] * weights).sum() + (inplace ** 2).sum(), leaves,
                                  create_graph=True)
        second = [None if g.grad_fn is None else g.grad_fn.name() for g in grads]
        results.append(([_np(o) for o in outs] + [_np(copy), _np(inplace)],
                        [_node(o) for o in outs] + [_node(inplace)],
                        [_np(g) for g in grads], second))
    ours, theirs = results
    for a, t in zip(ours[0], theirs[0]):
        assert a.tolist() == t.tolist()
    assert ours[1] == theirs[1]
    for a, t in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, t, rtol=1e-12, atol=1e-12)
    assert ours[3] == theirs[3]


def test_index_add_with_int32_index_and_integer_self_matches_torch(torch):
    for lib in (at, torch):
        x = lib.zeros(3, 2, dtype=lib.int64)
        out = x.index_add(0, lib.tensor([2, 2], dtype=lib.int32), lib.ones(2, 2, dtype=lib.int64),
                          alpha=3)
        if lib is at:
            ours = out.tolist()
        else:
            assert ours == out.tolist()


def test_index_ops_against_central_differences():
    rng = np.random.default_rng(9)
    x, s = rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
    v = rng.standard_normal(())
    idx = at.tensor([3, 1])
    w = at.tensor(rng.standard_normal((4, 3)).tolist(), dtype=at.float64)
    for fn, arrays in (
            (lambda a, b: a.index_copy(0, idx, b) ** 2 * w, [x, s]),
            (lambda a, b: at.index_add(a, 0, at.tensor([1, 1]), b, alpha=-2) ** 3 * w, [x, s]),
            (lambda a, b: a.index_fill(1, at.tensor([2, 0]), b) ** 2 * w, [x, v]),
            (lambda a: (a * 1).index_fill_(-1, at.tensor([1]), 3.0) ** 2 * w, [x])):
        assert check_gradients(fn, arrays).ok()
        assert check_second_order(fn, arrays, eps=1e-5).ok(rtol=1e-5, atol=1e-6)


# --- torch's errors ------------------------------------------------------------------------------

ERRORS = [
    "F.conv_transpose2d(torch.randn(1, 3, 4, 4), torch.randn(2, 2, 3, 3))",
    "F.conv_transpose2d(torch.randn(3, 4), torch.randn(3, 2, 3, 3))",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), stride=0)",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), padding=-1)",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), output_padding=-1)",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), output_padding=1)",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), stride=2, "
    "output_padding=2)",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), dilation=0)",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), groups=0)",
    "F.conv_transpose2d(torch.randn(1, 3, 4, 4), torch.randn(3, 2, 3, 3), groups=2)",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), torch.randn(3))",
    "F.conv_transpose2d(torch.randn(1, 2, 1, 1), torch.randn(2, 2, 3, 3), padding=2)",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3).double())",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3))",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), stride=(1, 2, 3))",
    "F.conv_transpose2d(torch.randn(1, 2, 4, 4), torch.randn(2, 2, 3, 3), groups=1.5)",
    "F.conv_transpose1d(torch.randn(1, 2, 4), torch.randn(3, 2, 3))",
    "F.conv_transpose1d(torch.randn(2, 4), torch.randn(2, 2, 3, 3))",
    "F.conv_transpose1d(torch.randn(1, 2, 4), torch.randn(2, 2, 3), stride=2, output_padding=3)",
    "nn.ConvTranspose2d(3, 2, 3, groups=2)", "nn.ConvTranspose2d(2, 3, 3, groups=2)",
    "nn.ConvTranspose2d(2, 2, 3, groups=0)",
    "nn.ConvTranspose2d(2, 2, 3, padding_mode='reflect')",
    "nn.ConvTranspose2d(2, 2, 3)(torch.randn(1, 3, 4, 4))",
    "nn.ConvTranspose2d(2, 2, 3, stride=2)(torch.randn(1, 2, 4, 4), [12, 12])",
    "nn.ConvTranspose2d(2, 2, 3, stride=2)(torch.randn(1, 2, 4, 4), [9])",
    "nn.ConvTranspose1d(2, 2, 3, stride=2)(torch.randn(1, 2, 4), [8, 9])",
    "nn.ConvTranspose1d(2, 2, 3, stride=2)(torch.randn(1, 2, 4), [12])",
    "torch.repeat_interleave(torch.ones(2, 3), -1)",
    "torch.repeat_interleave(torch.ones(2, 3), torch.tensor([1, -1]), 0)",
    "torch.repeat_interleave(torch.ones(2, 3), torch.tensor([1, 2]), 1)",
    "torch.repeat_interleave(torch.ones(2, 3), torch.tensor([[1, 2]]), 0)",
    "torch.repeat_interleave(torch.ones(2, 3), torch.tensor([1.0, 2.0]), 0)",
    "torch.repeat_interleave(torch.ones(2, 3), 2, 2)",
    "torch.repeat_interleave(torch.ones(2, 3), 2, 0, output_size=3)",
    "torch.repeat_interleave(torch.ones(2, 3), torch.tensor([1, 2]), 0, output_size=4)",
    "torch.repeat_interleave(torch.tensor([[1, 2]]))",
    "torch.repeat_interleave(torch.tensor([1.0, 2.0]))",
    "torch.ones(2, 3).repeat_interleave(2.5)",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 1]), torch.ones(3, 3))",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 1]), torch.ones(2, 2))",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 1]), torch.ones(2, 3, 1))",
    "torch.ones(4, 3).index_copy(0, torch.tensor([[0, 1]]), torch.ones(2, 3))",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 1], dtype=torch.int32), torch.ones(2, 3))",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 4]), torch.ones(2, 3))",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 1]), torch.ones(2, 3).double())",
    "torch.ones(4, 3).index_copy(2, torch.tensor([0, 1]), torch.ones(2, 3))",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, 1]), torch.ones(3, 3))",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, 1]), torch.ones(2, 2))",
    "torch.ones(4, 3).index_add(0, torch.tensor([[0, 1]]), torch.ones(2, 3))",
    "torch.ones(4, 3).index_add(0, torch.tensor([0.0, 1.0]), torch.ones(2, 3))",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, 5]), torch.ones(2, 3))",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, 1]), torch.ones(2, 3).double())",
    "torch.ones(4, 3).index_add(-3, torch.tensor([0, 1]), torch.ones(2, 3))",
    "torch.ones(4, 3).index_fill(0, torch.tensor([0, 4]), 1.0)",
    "torch.ones(4, 3).index_fill(0, torch.tensor([0, -5]), 1.0)",
    "torch.ones(4, 3).index_fill(0, torch.tensor([[0, 1]]), 1.0)",
    "torch.ones(4, 3).index_fill(0, torch.tensor([0, 1], dtype=torch.int32), 1.0)",
    "torch.ones(4, 3).index_fill(0, torch.tensor([0, 1]), torch.ones(2))",
    "torch.ones(4, 3).index_fill(0, torch.tensor([0, 1]), 'a')",
    "torch.ones(4, 3).index_fill(0, [0, 1], 1.0)",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, 1]), [1.0, 2.0])",
    "torch.ones(4, 3, requires_grad=True).index_fill_(0, torch.tensor([0]), 1.0)",
]


_TRY = """import torch
import torch.nn as nn
import torch.nn.functional as F
try:
    {}
except Exception as e:
    print(type(e).__name__ + ': ' + str(e))
"""


@pytest.mark.parametrize("text", ERRORS)
def test_errors_are_torchs(torch, text):
    """Each call in a program: autodiff prints the class and words torch prints."""
    program = _TRY.format(text)
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        exec(compile(program, "<program>", "exec"), {})
    assert expected.getvalue(), "torch raised nothing"
    out = io.StringIO()
    result = run_source(program, out=out)
    assert result.error is None, result.error
    assert out.getvalue() == expected.getvalue()


# --- whole programs: printed bytes ----------------------------------------------------------------

PROGRAMS = {
    "conv_transpose": """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
up = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
print(up, nn.ConvTranspose1d(4, 2, 2, groups=2, bias=False))
x = torch.randn(1, 2, 3, 3, requires_grad=True)
y = up(x)
print(y.shape, y.grad_fn)
print(y[0, 0])
y.pow(2).mean().backward()
print(x.grad, up.bias.grad)
print(up(x, output_size=[5, 5]).shape)
z = F.conv_transpose1d(torch.randn(1, 2, 4), torch.randn(2, 1, 3), stride=2)
print(z, torch.conv_transpose2d(torch.ones(1, 1, 2, 2), torch.ones(1, 1, 2, 2)))
""",
    "repeat_and_index": """import torch
torch.manual_seed(1)
a = torch.randn(2, 3, requires_grad=True)
r = a.repeat_interleave(2, dim=0)
print(r, torch.repeat_interleave(a, torch.tensor([1, 0, 2]), dim=1))
print(torch.repeat_interleave(torch.tensor([2, 1])), a.repeat_interleave(2))
b = torch.zeros(4, 3).index_add(0, torch.tensor([1, 3, 1]), torch.ones(3, 3), alpha=2)
print(b)
c = a.index_fill(1, torch.tensor([0, 2]), -1.0)
d = torch.zeros(3, 3).index_copy(0, torch.tensor([2, 0]), a)
print(c, d)
(r.sum() + c.sum() + (d * d).sum()).backward()
print(a.grad)
e = torch.arange(6.0).view(2, 3)
e.index_fill_(0, torch.tensor(1), 9)
e.index_add_(1, torch.tensor([0]), torch.ones(2, 1))
print(e)
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_print_what_torch_prints(torch, name):
    text = PROGRAMS[name]
    out = io.StringIO()
    result = run_source(text, out=out)
    assert result.error is None, result.error
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        exec(compile(text, "<program>", "exec"), {})
    address = re.compile(r"0x[0-9a-f]+")
    assert address.sub("0x", out.getvalue()) == address.sub("0x", expected.getvalue())


def test_trace_gradient_is_index_fills_node_as_in_torch(torch):
    """trace's gradient is written by index_fill_ with a 0-d tensor: the same entry as
    index_fill's, down to the third order."""
    x = np.random.default_rng(3).standard_normal((3, 4))
    results = []
    for lib in (at, torch):
        leaf = lib.tensor(x.tolist(), dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((leaf * leaf).trace() ** 2, (leaf,), create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), (leaf,), create_graph=True)
        (k,) = lib.autograd.grad((h ** 3).sum(), (leaf,))
        chain, node = [], g.grad_fn
        while node is not None:
            chain.append(node.name())
            node = next((f for f, _ in node.next_functions if f is not None), None)
        results.append((chain, _np(g), _np(h), _np(k)))
    assert results[0][0] == results[1][0]
    assert "IndexFillBackward1" in results[0][0]
    for a, t in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(a, t, rtol=1e-12)


# index_add's and index_copy's checks in torch's order, on scalars and at the bounds
ORDER_ERRORS = [
    "torch.ones(3).index_copy(0, torch.tensor([0, 1], dtype=torch.int32), torch.tensor(2.))",
    "torch.ones(3).index_copy(0, torch.tensor([0, 1], dtype=torch.int32), torch.ones(2, 2))",
    "torch.ones(3).index_copy(0, torch.tensor([0, 1], dtype=torch.int32), torch.ones(2).double())",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 1]), torch.ones(2, 2).double())",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 1, 2]), torch.ones(2, 2))",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 9, 1]), torch.ones(2, 3))",
    "torch.ones(4, 3).index_copy(0, torch.tensor([0, 2]), torch.tensor(2))",
    "torch.ones(()).index_copy(0, torch.tensor([0, 2]), torch.tensor([2.0, 0.5]))",
    "torch.ones(3).index_copy(0, torch.tensor([-1]), torch.ones(1))",
    "torch.ones(()).index_add(0, torch.tensor([0, 2]), torch.tensor([2.0, 0.5]))",
    "torch.ones(1).index_add(0, torch.tensor([0, 2]), torch.tensor([2.0, 0.5]))",
    "torch.ones(3).index_add(0, torch.tensor([0, 2]), torch.tensor(2.5))",
    "torch.ones(3).index_add(0, torch.tensor([0, 2]), torch.tensor(2))",
    "torch.ones(3).index_add(0, torch.tensor([1]), torch.tensor(2.5))",
    "torch.ones(3).index_add(-1, torch.tensor([0, 5]), torch.ones(2))",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, -1]), torch.ones(2, 3))",
    "torch.ones(3, 4).index_add(1, torch.tensor([0, 7]), torch.ones(3, 2))",
    "torch.ones(2, 4, 3).index_add(1, torch.tensor([0, 5]), torch.ones(2, 2, 3))",
    "torch.ones(2, 4, 3).index_add(2, torch.tensor([0, 5]), torch.ones(2, 4, 2))",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, 7], dtype=torch.int32), torch.ones(2, 3))",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, 7]), torch.ones(2, 3), alpha=2)",
    "torch.ones(4, 3).index_add(0, torch.tensor([0, 9]), torch.ones(2, 2))",
    "torch.ones(4, 3).index_add(1, torch.tensor([0]), torch.tensor(2.))",
    "torch.ones(4, 3).index_add(1, torch.tensor([0, 1]), torch.ones(3))",
    "torch.ones(()).index_add(0, torch.tensor([1]), torch.ones(()))",
]


@pytest.mark.parametrize("text", ORDER_ERRORS)
def test_index_check_order_is_torchs(torch, text):
    test_errors_are_torchs(torch, text)


def test_index_add_to_empty_checks_no_index_as_torch(torch):
    for lib in (at, torch):
        out = lib.ones(0, 3).index_add(0, lib.tensor([0, 7]), lib.ones(2, 3))
        assert tuple(out.shape) == (0, 3)
