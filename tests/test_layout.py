"""Memory layouts as torch chooses them (engine/numerics/layout.py, ops_shape.view_strides): the strides
of views and of elementwise results, which decide whether a later view() works, what
reshape() records, and how a matrix product's backward is built.

Fixed cases below are facts measured under torch 2.13; the random ones compare live
against torch where it is installed.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from autodiff.engine.numerics.layout import elementwise_layout, iteration_order
from autodiff.engine.ops.shape import _unsqueezed, view_strides
from autodiff.interpreter.reference import torch_available

needs_torch = pytest.mark.skipif(not torch_available(), reason="torch is not installed")


def _strided(shape, strides, dtype=np.float32):
    """An array of `shape` with these element strides (over a buffer big enough)."""
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    buffer = np.arange(max(span, 1), dtype=dtype)
    item = buffer.itemsize
    return np.lib.stride_tricks.as_strided(buffer, shape, tuple(s * item for s in strides))


def _elements(strides, item=4):
    return tuple(s // item for s in strides)


def test_a_view_of_a_transposed_batch_gets_torchs_strides_on_size_1_dims():
    # torch: torch.zeros(1, 1, 4).mT.reshape(4, 1).stride() == (1, 4); NumPy's own is (1, 1)
    x = _strided((1, 4, 1), (4, 1, 4))
    assert view_strides(x, (4, 1)) == (1, 4)
    assert _elements(np.reshape(x, (4, 1)).strides) != (1, 4)  # (why this exists)
    assert view_strides(_strided((2, 3), (1, 2)), (6,)) is None  # no view: reshape copies


def test_unsqueeze_puts_torchs_stride_on_the_new_dim():
    # torch: a (2, 1) tensor with strides (1, 2) unsqueezed at 2 has strides (1, 2, 1)
    assert _elements(_unsqueezed(_strided((2, 1), (1, 2)), 2).strides) == (1, 2, 1)
    # torch.arange(6.).reshape(2, 3).unsqueeze(1).stride() == (3, 3, 1)
    assert _elements(_unsqueezed(np.arange(6.0, dtype=np.float32).reshape(2, 3), 1)
                     .strides) == (3, 3, 1)


def test_an_elementwise_result_follows_its_first_inputs_layout():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3).T  # (3, 2), column by column
    b = np.ones((3, 2), np.float32)
    assert not elementwise_layout(a + b, (a, b)).flags.c_contiguous  # torch: a.t() + b
    assert elementwise_layout(b + a, (b, a)).flags.c_contiguous  # torch: b + a.t()
    laid = elementwise_layout(a * 2.0, (a, 2.0))
    assert _elements(laid.strides) == (1, 3) and np.array_equal(laid, a * 2.0)


def test_iteration_order_puts_smaller_strides_first_and_reduced_dims_before_kept_ones():
    assert iteration_order((2, 3), [(3, 1)]) == [1, 0]
    assert iteration_order((2, 3), [(1, 2)]) == [0, 1]
    # a reduction's output (first operand) has 0 on its reduced dim, which goes first
    assert iteration_order((2, 3), [(1, 0), (3, 1)], reduction=True) == [1, 0]


def _random_layout(torch, r, shape):
    perm = list(range(len(shape)))
    r.shuffle(perm)
    t = torch.randn([shape[p] for p in perm]).permute([perm.index(i) for i in range(len(shape))])
    if r.random() < 0.2 and shape and shape[-1] > 1:
        t = torch.randn(list(shape[:-1]) + [2 * shape[-1]])[..., ::2]
    return t


def _as_array(t):
    """The tensor's own memory as an array with the tensor's strides, size-1 dims included."""
    x = t.numpy()
    return np.lib.stride_tricks.as_strided(x, x.shape, tuple(s * x.itemsize for s in t.stride()))


@needs_torch
def test_view_and_unsqueeze_strides_equal_torchs():
    import torch

    r = random.Random(3)
    checked = 0
    for _ in range(3000):
        shape = [r.choice([1, 1, 2, 3]) for _ in range(r.randint(0, 4))]
        t = _random_layout(torch, r, shape)
        x = _as_array(t)
        n, new = t.numel(), []
        while n > 1 or (r.random() < 0.4 and len(new) < 5):
            f = r.choice([d for d in range(1, n + 1) if n % d == 0])
            new.append(f)
            n //= f
        try:
            want = tuple(t.view(new).stride())
        except RuntimeError:
            want = None
        assert view_strides(x, tuple(new)) == want, (tuple(t.shape), t.stride(), new)
        d = r.randint(0, len(shape))
        assert _elements(_unsqueezed(x, d).strides) == tuple(t.unsqueeze(d).stride())
        checked += 1
    assert checked == 3000


@needs_torch
def test_elementwise_results_are_laid_out_as_torchs():
    """The order of the dims longer than 1 (which decides contiguity and views) is torch's
    for any mix of layouts, broadcasts and numbers."""
    import torch

    r = random.Random(7)
    for _ in range(3000):
        shape = [r.choice([1, 2, 3, 4]) for _ in range(r.randint(2, 4))]
        a = _random_layout(torch, r, shape)
        if r.random() < 0.5:
            b = _random_layout(torch, r, shape)
        elif r.random() < 0.5:
            b = _random_layout(torch, r, [1 if r.random() < 0.4 else n for n in shape][1:])
        else:
            b = 2.5
        if r.random() < 0.5 and not isinstance(b, float):
            a, b = b, a
        want = a + b
        x, y = _as_array(a), (b if isinstance(b, float) else _as_array(b))
        got = elementwise_layout(x + y, (x, y))
        longer = [i for i, n in enumerate(want.shape) if n != 1]
        assert [_elements(got.strides)[i] for i in longer] == \
            [want.stride()[i] for i in longer], (shape, a.stride(), getattr(b, "stride", None))
        assert np.array_equal(got, want.numpy())


@needs_torch
def test_binary_ops_results_view_or_refuse_as_torchs():
    """`op(a, b).view(-1)` works exactly where torch's does, for operands of any two dim
    orders (torch lays the result out as its first operand)."""
    import torch

    from autodiff.engine.api import torch as ours

    r = random.Random(2)
    ops = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "gt", "eq", "bitwise_and"]
    for _ in range(150):
        shape = [r.choice([2, 3, 4]) for _ in range(r.randint(2, 3))]
        operands = []
        for _ in range(2):
            perm = list(range(len(shape)))
            r.shuffle(perm)
            values = np.round(np.random.default_rng(r.randrange(99)).random(
                [shape[p] for p in perm]) + 0.5, 2).tolist()
            back = [perm.index(i) for i in range(len(perm))]
            operands.append((torch.tensor(values).permute(back), ours.tensor(values).permute(back)))
        for name in ops:
            pairs = [(t > 1, o > 1) if name == "bitwise_and" else (t, o) for t, o in operands]
            want = getattr(torch, name)(pairs[0][0], pairs[1][0])
            got = getattr(ours, name)(pairs[0][1], pairs[1][1])
            assert _views(want) == _views(got), (name, shape)


def _views(t) -> bool:
    try:
        t.view(-1)
    except RuntimeError:
        return False
    return True


GRADIENT_LAYOUTS = [
    "(a.t() * 2).sum().backward()",
    "(a.t() @ torch.ones(2, 3)).sum().backward()",
    "(torch.ones(4, 3) @ a.t()).sum().backward()",
    "(a.permute(1, 0).exp()).sum().backward()",
    "(a.t()[1:] * 3).sum().backward()",
    "(a.t() * 2).sum().backward()\n(a * 1).sum().backward()",
    "a.grad = None\n(a.t() + a.t()).sum().backward()",
    # a non-leaf's retained gradient is a contiguous copy, whatever the layouts
    "y = a.t() * 2\ny.retain_grad()\n(y.t() * 3).sum().backward()\nprint(y.grad.view(-1))",
    "y = a * 2\ny.retain_grad()\n(y.t() * 3).sum().backward()\nprint(y.grad.view(-1))",
    # a transposed leaf keeps its own layout; a strided one gets a contiguous .grad
    "a = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).t().requires_grad_()\n"
    "(a * 2).sum().backward()\nprint(a.grad.t().reshape(-1), a.grad.t().view(-1))",
    "a = torch.arange(12.0).reshape(2, 6)[:, ::2].requires_grad_()\n"
    "(a * 2).sum().backward()",
]


@needs_torch
def test_a_leafs_first_gradient_is_laid_out_as_the_leaf():
    """torch's AccumulateGrad gives a dense leaf's .grad the leaf's own strides, whatever
    layout the gradient arrived in: `a.grad.view(-1)` works on a row-major leaf's gradient
    that came back transposed (and fails on a transposed leaf's, as in torch)."""
    import io

    from autodiff.interpreter import run_source
    from autodiff.interpreter.reference import run_many_with_torch

    prelude = "import torch\na = torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], " \
              "requires_grad=True)\n"
    sources = [prelude + body + "\nprint(a.grad.view(-1))\n" for body in GRADIENT_LAYOUTS]
    for body, source, want in zip(GRADIENT_LAYOUTS, sources, run_many_with_torch(sources)):
        out = io.StringIO()
        result = run_source(source, "g.tg", out=out)
        error = None if result.error is None else \
            f"{result.error.error_class}: {result.error.message}".splitlines()[0]
        assert (out.getvalue(), error) == (want.stdout, want.error), body
