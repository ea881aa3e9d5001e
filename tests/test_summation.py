"""Float sums in torch's order (engine/numerics/summation.py) and the float32 math rounded from
float64 (ops_math.in_double).

Two kinds of check: against a reference written here one float at a time from the order
torch's SumKernel documents in its code (runs everywhere, so NumPy's own reduction order
can never decide a result), and live against torch where it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from autodiff.engine.numerics import summation
from autodiff.engine.api import torch as T

F32, F64 = np.float32, np.float64
LANES = {F32: 8, F64: 4}


# --- the reference: one addition at a time -------------------------------------------------------

def _multi_row_sum(rows: list, zero):
    """torch's multi_row_sum over a list of equally long lists, column by column."""
    size = len(rows)
    width = len(rows[0]) if rows else 4
    power = max(4, (max(size, 1) - 1).bit_length() // 4)
    step = 1 << power
    acc = [[zero] * width for _ in range(4)]
    i = 0
    while i + step <= size:
        for _ in range(step):
            acc[0] = [a + b for a, b in zip(acc[0], rows[i])]
            i += 1
        for j in range(1, 4):
            acc[j] = [a + b for a, b in zip(acc[j], acc[j - 1])]
            acc[j - 1] = [zero] * width
            if i & ((step - 1) << (j * power)):
                break
    while i < size:
        acc[0] = [a + b for a, b in zip(acc[0], rows[i])]
        i += 1
    for j in range(1, 4):
        acc[0] = [a + b for a, b in zip(acc[0], acc[j])]
    return acc[0]


def _row_sum(items: list, zero):
    groups = len(items) // 4
    partial = _multi_row_sum([items[4 * g:4 * g + 4] for g in range(groups)], zero)
    for item in items[4 * groups:]:
        partial[0] = partial[0] + item
    for k in range(1, 4):
        partial[0] = partial[0] + partial[k]
    return partial[0]


def reference_total(x: np.ndarray):
    """vectorized_inner_sum over one contiguous row, in NumPy scalars of x's dtype."""
    kind = x.dtype.type
    values = [kind(v) for v in x.ravel()]
    zero, lanes = kind(0), LANES[kind]
    if len(values) < lanes:
        return zero + _row_sum(values, zero)
    whole = len(values) // lanes * lanes
    vectors = [np.array(values[i:i + lanes], dtype=kind) for i in range(0, whole, lanes)]
    acc = _row_sum(vectors, np.zeros(lanes, kind))
    result = zero
    for v in values[whole:] + list(acc):
        result = result + v
    return zero + result


def reference_columns(m: np.ndarray):
    """vectorized_outer_sum / scalar_outer_sum: a C-contiguous matrix summed down its columns."""
    kind = m.dtype.type
    zero, lanes = kind(0), LANES[kind]
    rows, columns = m.shape
    block = 4 * lanes if columns >= lanes else 4
    cut = columns - columns % block
    out = []
    for j in range(columns):
        column = [kind(v) for v in m[:, j]]
        if j < cut:  # a column of a block: one running sum down it, kept as a cascade
            out.append(_multi_row_sum([[v] for v in column], zero)[0])
        else:
            out.append(_row_sum(column, zero))
    return np.array([zero + v for v in out], dtype=kind)


def _same(a, b) -> bool:
    if np.shape(a) != np.shape(b):
        return False
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))  # (bits: -0. is not 0.)
    return a.dtype == b.dtype and \
        np.array_equal(a.view(np.uint8), b.view(np.uint8))


SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 63, 64, 65, 100, 127, 128, 129,
         255, 256, 257, 511, 512, 513, 1000, 4097]


@pytest.mark.parametrize("kind", [F32, F64])
def test_a_whole_sum_adds_in_torchs_order(kind):
    rng = np.random.default_rng(11)
    for n in SIZES:
        for _ in range(3):
            x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 8)).astype(kind)
            assert _same(summation.total(x), reference_total(x)), n
            # (NumPy's pairwise order gives another float for most of these)


@pytest.mark.parametrize("kind", [F32, F64])
def test_a_column_sum_adds_in_torchs_order(kind):
    rng = np.random.default_rng(12)
    for rows in (1, 2, 3, 5, 15, 16, 17, 32, 33, 64, 100, 255, 300):
        for columns in (1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 32, 33, 40, 64, 96):
            m = (rng.standard_normal((rows, columns)) * 10.0 ** rng.integers(-3, 8)).astype(kind)
            # (torch drops a size-1 dim: one column is summed as a whole)
            expected = (np.array([reference_total(m)]) if columns == 1
                        else reference_columns(m))
            assert _same(summation.along(m, (0,), False), expected), (rows, columns)
            kept = summation.along(m, (0,), True)
            assert kept.shape == (1, columns) and _same(kept[0], expected)


def test_a_sum_of_negative_zeros_is_positive_zero_as_torchs():
    for shape in ((3,), (8,), (32,), (40,), (8, 1), (32, 1), (40, 1), (5, 7), (33, 9), (5, 32),
                  (20, 32), (40, 16), (33, 64)):
        x = np.full(shape, -0.0, dtype=F32)
        assert not np.signbit(summation.total(x))
        assert not np.signbit(summation.along(x, (0,), False)).any()


def test_the_engines_sums_means_and_broadcast_gradients_use_that_order():
    rng = np.random.default_rng(13)
    values = (rng.standard_normal(37) * 3).astype(F32)
    x = T.tensor(values.tolist(), requires_grad=True)
    assert _same(x.sum().array, reference_total(values))
    assert _same(x.mean().array, reference_total(values) / F32(37))
    b = T.tensor(0.5, requires_grad=True)
    (b * x).sum().backward()  # b's gradient sums x over its broadcast
    assert _same(b.grad.array, reference_total(values))
    m = (rng.standard_normal((50, 12)) * 3).astype(F32)
    bias = T.zeros(12, requires_grad=True)
    (T.tensor(m.tolist()) + bias).backward(T.ones(50, 12))
    assert _same(bias.grad.array, reference_columns(np.ones((50, 12), F32)))
    assert _same(T.tensor(m.tolist()).sum(0).array, reference_columns(m))


# --- live against torch ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def test_sums_over_any_dims_of_any_layout_equal_torchs(torch):
    rng = np.random.default_rng(14)
    checked = 0
    for _ in range(600):
        shape = tuple(int(rng.choice([1, 2, 3, 5, 8, 9, 16, 17, 33, 64])) for _ in range(
            int(rng.integers(1, 5))))
        if np.prod(shape) > 20000:
            continue
        kind = F32 if rng.random() < 0.7 else F64
        base = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 6)).astype(kind)
        x, t = base, torch.from_numpy(base.copy())
        layout = rng.integers(0, 3)
        if layout == 1 and x.ndim > 1:  # a permuted view
            order = [int(i) for i in rng.permutation(x.ndim)]
            x, t = x.transpose(order), t.permute(*order)
        elif layout == 2:  # every other element along one dim
            cut = [slice(None)] * x.ndim
            cut[int(rng.integers(0, x.ndim))] = slice(None, None, 2)
            x, t = x[tuple(cut)], t[tuple(cut)]
        if rng.random() < 0.4:
            assert _same(summation.total(x), t.sum().numpy()), (shape, layout)
        else:
            axes = tuple(sorted(int(a) for a in rng.choice(
                x.ndim, int(rng.integers(1, x.ndim + 1)), replace=False)))
            keep = bool(rng.random() < 0.5)
            assert _same(summation.along(x, axes, keep), t.sum(dim=axes, keepdim=keep).numpy()), \
                (shape, layout, axes)
        checked += 1
    assert checked > 400


def test_losses_reduce_as_torchs(torch):
    rng = np.random.default_rng(15)
    for n in (1, 3, 10, 17, 64, 100, 300):
        a = (rng.standard_normal((n, 3)) * 2).astype(F32)
        b = (rng.standard_normal((n, 3)) * 2).astype(F32)
        cols = rng.integers(0, 3, n)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        ours_a, ours_b = T.tensor(a.tolist()), T.tensor(b.tolist())
        F, TF = T.nn.functional, torch.nn.functional
        assert _same(F.mse_loss(ours_a, ours_b).array, TF.mse_loss(ta, tb).numpy())
        assert _same(F.l1_loss(ours_a, ours_b).array, TF.l1_loss(ta, tb).numpy())
        logp = TF.log_softmax(ta, 1)
        assert _same(F.nll_loss(T.tensor(logp.numpy().tolist()), T.tensor(cols.tolist())).array,
                     TF.nll_loss(logp, torch.from_numpy(cols)).numpy()), n


def test_float32_math_is_mostly_torchs_last_place(torch):
    """exp, tanh and the others: torch's float32 kernels round (nearly) correctly; the share
    of elements off in the last place stays far under NumPy's float32 loops' (exp: 40 %)."""
    rng = np.random.default_rng(16)
    x = (rng.standard_normal(20000) * 3).astype(F32)
    positive = np.abs(x) + F32(0.01)
    cases = {"exp": (x, 0.03), "tanh": (x, 0.01), "log1p": (positive, 0.02),
             "expm1": (x, 0.01), "cosh": (x / 4, 0.01), "log10": (positive, 0.01),
             "sin": (x, 0.08), "cos": (x, 0.08)}
    for name, (values, share) in cases.items():
        ours = getattr(T, name)(T.tensor(values.tolist())).array
        theirs = getattr(torch, name)(torch.from_numpy(values)).numpy()
        assert np.mean(ours != theirs) <= share, name


def test_softmax_is_mostly_torchs_last_place(torch):
    rng = np.random.default_rng(17)
    off = total = 0
    for n in (2, 5, 10, 17, 33, 100):
        for dim in (0, 1):
            x = (rng.standard_normal((6, n)) * 2).astype(F32)
            for ours, theirs in ((T.softmax, torch.softmax), (T.log_softmax, torch.log_softmax)):
                a = ours(T.tensor(x.tolist()), dim).array
                off += int(np.sum(a != theirs(torch.from_numpy(x), dim).numpy()))
                total += a.size
    assert off / total < 0.2  # (NumPy's exp and pairwise sums: over 50 %)
