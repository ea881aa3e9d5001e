"""Tests for autodiff.engine.core.printing.

The first block runs everywhere (expected strings were produced by torch 2.13.0 CPU and
pasted here).  The second block compares live against torch when it is installed.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from autodiff.engine.core.printing import (
    format_dtype,
    format_grad_fn,
    format_return_type,
    format_size,
    format_spec,
    format_tensor,
)

f32, f64, i64, i32, b = np.float32, np.float64, np.int64, np.int32, np.bool_
nan, inf = math.nan, math.inf

# ---------------------------------------------------------------- without torch
# (array, kwargs, expected str(t)) -- expected strings produced by torch 2.13.0
FIXED_CASES = [
    (np.array([1.0, 2.0], f32), {}, "tensor([1., 2.])"),
    (np.array(9.0, f32), {"grad_fn_name": "AddBackward0"}, "tensor(9., grad_fn=<AddBackward0>)"),
    (np.array([1.0, 2.0], f32), {"requires_grad": True}, "tensor([1., 2.], requires_grad=True)"),
    (np.array([1, 2], i32), {}, "tensor([1, 2], dtype=torch.int32)"),
    (np.array([51.2, 512.0, 0.0512], f32), {}, "tensor([5.1200e+01, 5.1200e+02, 5.1200e-02])"),
    (np.array([10.0, nan, 1.0], f32), {}, "tensor([10., nan,  1.])"),
    (np.array([1.0, inf], f32), {}, "tensor([1., inf])"),
    (np.array(-0.0, f32), {}, "tensor(-0.)"),
    (np.array([True, False]), {}, "tensor([ True, False])"),
    (np.zeros((2, 0), f32), {}, "tensor([], size=(2, 0))"),
    (np.zeros((0,), i64), {}, "tensor([], dtype=torch.int64)"),
    (np.array([1.5, -2.25], f32), {}, "tensor([ 1.5000, -2.2500])"),
    (np.array([1e8], f32), {}, "tensor([100000000.])"),
    (np.array([1e8 + 8], f32), {}, "tensor([1.0000e+08])"),
    (np.array([0.1, 0.2], f64), {"requires_grad": True},
     "tensor([0.1000, 0.2000], dtype=torch.float64, requires_grad=True)"),
    (np.arange(2000.0, dtype=f32), {},
     "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
     "        1.9990e+03])"),
    (np.arange(30.0, dtype=f32).reshape(2, 3, 5), {},
     "tensor([[[ 0.,  1.,  2.,  3.,  4.],\n"
     "         [ 5.,  6.,  7.,  8.,  9.],\n"
     "         [10., 11., 12., 13., 14.]],\n"
     "\n"
     "        [[15., 16., 17., 18., 19.],\n"
     "         [20., 21., 22., 23., 24.],\n"
     "         [25., 26., 27., 28., 29.]]])"),
    (np.arange(1100, dtype=i64).reshape(11, 100), {},
     "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n"
     "        [ 100,  101,  102,  ...,  197,  198,  199],\n"
     "        [ 200,  201,  202,  ...,  297,  298,  299],\n"
     "        ...,\n"
     "        [ 800,  801,  802,  ...,  897,  898,  899],\n"
     "        [ 900,  901,  902,  ...,  997,  998,  999],\n"
     "        [1000, 1001, 1002,  ..., 1097, 1098, 1099]])"),
    (np.arange(14.0, dtype=f32) * 1e5, {"grad_fn_name": "MulBackward0"},
     "tensor([      0.,  100000.,  200000.,  300000.,  400000.,  500000.,  600000.,\n"
     "         700000.,  800000.,  900000., 1000000., 1100000., 1200000., 1300000.],\n"
     "       grad_fn=<MulBackward0>)"),
]


@pytest.mark.parametrize("arr, kwargs, expected", FIXED_CASES)
def test_fixed_strings(arr, kwargs, expected):
    assert format_tensor(arr, **kwargs) == expected


def test_small_helpers():
    assert format_dtype(np.dtype(np.float32)) == "torch.float32"
    assert format_dtype(np.dtype(np.int64)) == "torch.int64"
    assert format_dtype(np.dtype(np.bool_)) == "torch.bool"
    assert format_size((2, 3)) == "torch.Size([2, 3])"
    assert format_size(()) == "torch.Size([])"
    assert format_grad_fn("MulBackward0", 0x7FF3A4143F40) == "<MulBackward0 object at 0x7ff3a4143f40>"
    assert (
        format_return_type("max", "tensor([2., 5.])", "tensor([2, 2])")
        == "torch.return_types.max(\nvalues=tensor([2., 5.]),\nindices=tensor([2, 2]))"
    )


def test_format_spec_fixed():
    assert format_spec(np.array(0.1, f32), "") == "0.10000000149011612"
    assert format_spec(np.array(1.5, f32), ".4f") == "1.5000"
    assert format_spec(np.array(3, i64), ">4") == "   3"
    assert format_spec(np.array(True), "") == "True"
    assert format_spec(np.array([1.5], f32), "") == "tensor([1.5000])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format_spec(np.array([1.5], f32), ".4f")
    with pytest.raises(ValueError, match="Unknown format code 'd' for object of type 'float'"):
        format_spec(np.array(1.5, f32), "d")


# ---------------------------------------------------------------- live against torch
def _torch():
    return pytest.importorskip("torch")


def _torch_str(arr: np.ndarray, mode: str = "plain") -> str:
    torch = _torch()
    t = torch.from_numpy(np.array(arr, copy=True))  # (ascontiguousarray would make 0-d 1-d)
    if mode == "requires_grad":
        t.requires_grad_()
    elif mode == "grad_fn":
        t = t.requires_grad_().clone()  # values unchanged, grad_fn=<CloneBackward0>
    return str(t)


def _ours(arr: np.ndarray, mode: str = "plain") -> str:
    if mode == "requires_grad":
        return format_tensor(arr, requires_grad=True)
    if mode == "grad_fn":
        return format_tensor(arr, grad_fn_name="CloneBackward0")
    return format_tensor(arr)


def _live_cases():
    rng = np.random.default_rng(0)
    a = np.arange
    cases = [
        np.array([1.0, 2.0], f32), np.array(9.0, f32), np.array([0.0, nan], f32),
        np.array([-0.0], f32), np.array([nan], f32), np.array([inf, -inf], f32),
        np.array([1e-5, 1.0], f32), np.array([1e9, 1.0], f32), np.array([123456789.0], f32),
        np.array([1e20, -3.0], f32), np.array([0.1, 0.2], f64), np.array(3, i32),
        np.array(5, i64), np.array(True), np.array([True, False, True]),
        np.array([-1e-4, 1e-4], f32), np.array([9.99995, 1.0], f32), np.array([0.5, 999.5], f32),
        np.array([0.00012, 0.5], f32), np.array([1.0, 1000.0], f32), np.array([1.0, 1001.0], f32),
        np.array([0.1, 100.0], f32), np.array([0.1, 100.1], f32), np.array([-inf, nan, 2.5], f32),
        np.array([1e-40, 1.0], f32), np.array([3.4e38, -3.4e38], f32), np.array(1e-45, f32),
        np.array([nan, 1e5, 1e6], f32), np.array([-0.0, 0.0, -5.0], f32),
        np.zeros((2, 0), f32), np.zeros((0,), f32), np.zeros((0,), i64), np.zeros((0, 3), b),
        np.zeros((2, 0, 3), f64), np.zeros((0,), i32),
        a(2000.0, dtype=f32), a(1001.0, dtype=f32), a(1000.0, dtype=f32), a(1001, dtype=i64),
        a(30.0, dtype=f32).reshape(2, 3, 5), a(3000.0, dtype=f32).reshape(10, 300),
        (a(3000.0, dtype=f32).reshape(10, 3, 100) / 7).astype(f32),
        a(2 * 3 * 4 * 5 * 7, dtype=i32).reshape(2, 3, 4, 5, 7),
        rng.standard_normal((5, 40)).astype(f32), rng.standard_normal((3, 4, 5, 6, 7)).astype(f32),
        rng.standard_normal((7, 8, 9)) > 0, rng.standard_normal(2000), rng.standard_normal((40, 40)),
        (rng.standard_normal((8, 200)) * 1e6).astype(f32), a(50, dtype=i64) * 1000 - 7,
        a(14.0, dtype=f32) * 1e5, a(13.0, dtype=f32) * 1e5, a(15, dtype=i64) * 10**12,
        -a(20.0, dtype=f32) / 3, a(1, 7, dtype=f32).reshape(6, 1, 1),
        rng.standard_normal((1, 1, 2000)).astype(f32), np.full((1001, 1), -2.5, f32),
    ]
    # rows long enough to push suffixes onto a new line, one character at a time
    for n in range(8, 16):
        cases.append((a(n, dtype=f32) * 1.5).astype(f32))
        cases.append(a(n, dtype=f64) * 11111)
    return cases


@pytest.mark.parametrize("mode", ["plain", "requires_grad", "grad_fn"])
def test_live_hand_picked(mode):
    _torch()
    for arr in _live_cases():
        if mode != "plain" and arr.dtype.kind != "f":
            continue
        assert _ours(arr, mode) == _torch_str(arr, mode), (arr.dtype, arr.shape)


def test_live_format_spec():
    torch = _torch()
    arrays = [np.array(1.5, f32), np.array(0.1, f32), np.array(3, i64), np.array(True),
              np.array([1.5], f32), np.array([[2]], i32), np.array([1.0, 2.0], f32),
              np.zeros((0,), f32)]
    for arr in arrays:
        for spec in ["", ".4f", "d", ">10", "s", ".2e", "g"]:
            t = torch.from_numpy(arr.copy())
            try:
                expected = ("ok", format(t, spec))
            except Exception as exc:  # noqa: BLE001 - mirror whatever torch raises
                expected = (type(exc), str(exc))
            try:
                got = ("ok", format_spec(arr, spec))
            except Exception as exc:  # noqa: BLE001
                got = (type(exc), str(exc))
            assert got == expected, (arr, spec)


@pytest.mark.parametrize("arr, kwargs, expected", FIXED_CASES)
def test_fixed_strings_are_torchs(arr, kwargs, expected):
    torch = _torch()
    t = torch.from_numpy(arr.copy())
    if kwargs.get("requires_grad"):
        t.requires_grad_()
    if "grad_fn_name" in kwargs:
        # "* 1" gives MulBackward0, "+ 0" AddBackward0; neither changes the values
        t = t.requires_grad_() * 1 if kwargs["grad_fn_name"] == "MulBackward0" else t.requires_grad_() + 0
    assert str(t) == expected


def test_live_small_helpers():
    torch = _torch()
    for dt in (f32, f64, i64, i32, b):
        assert format_dtype(np.dtype(dt)) == str(torch.from_numpy(np.zeros(1, dt)).dtype)
    for shape in [(), (0,), (2, 3), (1, 2, 3, 4)]:
        assert format_size(shape) == str(torch.zeros(shape).shape)
    x = torch.arange(60.0).reshape(3, 4, 5).requires_grad_() * 2
    for kind, fn in [("max", torch.max), ("min", torch.min)]:
        r = fn(x, dim=1)
        assert format_return_type(kind, str(r.values), str(r.indices)) == str(r)
        assert str(r) == repr(r)
    g = x.grad_fn
    assert format_grad_fn(type(g).__name__, id(g)) == repr(g)


# --- hypothesis: random dtype / shape / value mixes
# PRINTING_EXAMPLES=5000 pytest tests/test_printing.py -k hypothesis  for a deeper search
try:
    from hypothesis import given, settings, strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError:  # keep the torch-free tests above runnable without hypothesis
    st = None

_EXAMPLES = int(os.environ.get("PRINTING_EXAMPLES", "300"))

_SPECIALS = [nan, inf, -inf, -0.0, 0.0]


def _draw_array(draw):
    """Seeded NumPy data with a drawn recipe: fast even for >1000 elements."""
    dtype = draw(st.sampled_from([f32, f32, f32, f64, i64, i32, b]))
    kind = draw(st.sampled_from(["small", "small", "small", "empty", "scalar", "large"]))
    if kind == "scalar":
        shape = ()
    elif kind == "empty":
        shape = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
        if all(shape):
            shape = shape[:-1] + (0,)
    elif kind == "small":
        shape = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=4)))
    else:  # > 1000 elements: summarized, with some dims short enough not to be cut
        ndim = draw(st.integers(1, 5))
        shape = tuple(draw(st.lists(st.integers(1, 40), min_size=ndim, max_size=ndim)))
        if math.prod(shape) <= 1000:
            i = draw(st.integers(0, ndim - 1))
            rest = math.prod(shape) // shape[i]
            shape = shape[:i] + (1000 // rest + draw(st.integers(1, 30)),) + shape[i + 1:]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = math.prod(shape)
    if dtype == b:
        return rng.random(n).reshape(shape) < draw(st.floats(0, 1))
    span = 300 if dtype == f64 and draw(st.booleans()) else 12
    lo = draw(st.integers(-span, span))
    hi = lo + draw(st.integers(0, 14))
    with np.errstate(over="ignore"):
        mags = 10.0 ** rng.uniform(lo, hi, n)
    vals = mags * np.where(rng.random(n) < draw(st.floats(0, 1)), -1.0, 1.0)
    if dtype in (i64, i32) or draw(st.booleans()):
        vals = np.round(vals)
    if dtype in (i64, i32):
        limit = 2**62 if dtype == i64 else 2**31 - 1
        return np.clip(vals, -limit, limit).astype(dtype).reshape(shape)
    p_special = draw(st.sampled_from([0.0, 0.0, 0.05, 0.3]))
    special = rng.random(n) < p_special
    vals[special] = rng.choice(_SPECIALS, int(special.sum()))
    with np.errstate(over="ignore"):
        return vals.astype(dtype).reshape(shape)


def _draw_raw_array(draw):
    """Small arrays of arbitrary values (subnormals, extremes), shrinkable element-wise."""
    dtype = draw(st.sampled_from([f32, f64, i64, i32, b]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=12))
    if dtype == b:
        elements = st.booleans()
    elif dtype in (f32, f64):
        elements = st.floats(width=32 if dtype == f32 else 64)
    else:
        elements = st.integers(int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    return draw(hnp.arrays(dtype, shape, elements=elements))


def _check(arr, mode):
    _torch()
    if arr.dtype.kind != "f":
        mode = "plain"
    assert _ours(arr, mode) == _torch_str(arr, mode)


if st is not None:
    _modes = st.sampled_from(["plain", "plain", "requires_grad", "grad_fn"])
    _settings = settings(max_examples=_EXAMPLES, deadline=None, database=None)

    @_settings
    @given(arr=st.composite(_draw_array)(), mode=_modes)
    def test_live_hypothesis(arr, mode):
        _check(arr, mode)

    @_settings
    @given(arr=st.composite(_draw_raw_array)(), mode=_modes)
    def test_live_hypothesis_raw_values(arr, mode):
        _check(arr, mode)
