"""Engine tests: gradients against float64 central differences, autograd semantics."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autodiff.engine import ops
from autodiff.engine.api import functional as F
from autodiff.engine.api import torch
from autodiff.engine.gradcheck import check_gradients, check_second_order

# --- gradient checks, one entry per op row ------------------------------------------------

def _positive(shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def _any(shape):
    return lambda rng: rng.uniform(-2.0, 2.0, shape)


def _away_from_zero(shape):
    return lambda rng: rng.choice([-1, 1], shape) * rng.uniform(0.3, 2.0, shape)


# op row -> (function of leaves, input generators). Shapes broadcast where the op does.
CHECKS = {
    ops.ADD: (lambda a, b: a + b, [_any((2, 3)), _any((3,))]),
    ops.SUB: (lambda a, b: a - b, [_any((2, 1)), _any((2, 3))]),
    ops.RSUB: (lambda a: 2 - a, [_any((3,))]),
    ops.MUL: (lambda a, b: a * b, [_any((2, 3)), _any((1, 3))]),
    ops.DIV: (lambda a, b: a / b, [_any((2, 3)), _away_from_zero((3,))]),
    ops.RECIPROCAL: (lambda a: 1 / a, [_away_from_zero((4,))]),
    ops.NEG: (lambda a: -a, [_any((2, 2))]),
    ops.POW_SCALAR: (lambda a: a ** 3, [_any((3,))]),
    ops.POW_TENSOR: (lambda a, b: a ** b, [_positive((3,)), _any((3,))]),
    ops.POW_BASE: (lambda a: 2 ** a, [_any((3,))]),
    ops.EXP: (lambda a: a.exp(), [_any((3,))]),
    ops.LOG: (lambda a: a.log(), [_positive((3,))]),
    ops.SQRT: (lambda a: a.sqrt(), [_positive((3,))]),
    ops.SIN: (lambda a: a.sin(), [_any((3,))]),
    ops.COS: (lambda a: a.cos(), [_any((3,))]),
    ops.TANH: (lambda a: a.tanh(), [_any((3,))]),
    ops.SIGMOID: (lambda a: a.sigmoid(), [_any((3,))]),
    ops.ABS: (lambda a: a.abs(), [_away_from_zero((3,))]),
    ops.RELU: (lambda a: a.relu(), [_away_from_zero((3,))]),
    ops.WHERE: (lambda a, b: torch.where(a > 0, a, b), [_away_from_zero((4,)), _any((4,))]),
    ops.SUM_ALL: (lambda a: a.sum(), [_any((2, 3))]),
    ops.SUM_DIM: (lambda a: a.sum(dim=1), [_any((2, 3))]),
    ops.MEAN_ALL: (lambda a: a.mean(), [_any((2, 3))]),
    ops.MEAN_DIM: (lambda a: a.mean(0, keepdim=True), [_any((2, 3))]),
    ops.NORM: (lambda a: a.norm(), [_any((2, 3))]),
    ops.DOT: (lambda a, b: torch.dot(a, b), [_any((3,)), _any((3,))]),
    ops.MV: (lambda m, v: torch.mv(m, v), [_any((2, 3)), _any((3,))]),
    ops.MM: (lambda a, b: a @ b, [_any((2, 3)), _any((3, 4))]),
    ops.SQUEEZE_MATMUL: (lambda a, b: a @ b, [_any((3,)), _any((3, 2))]),
    ops.BMM: (lambda a, b: a @ b, [_any((2, 2, 3)), _any((3, 2))]),
    ops.VIEW: (lambda a: a.reshape(3, 2) * 1.5, [_any((2, 3))]),
    ops.EXPAND: (lambda a: a.expand(2, 3), [_any((1, 3))]),
    ops.PERMUTE: (lambda a: a.T, [_any((2, 3))]),
    ops.TRANSPOSE: (lambda a: a.transpose(0, 1), [_any((2, 3))]),
    ops.T_OP: (lambda a: a.t(), [_any((2, 3))]),
    ops.UNSQUEEZE: (lambda a: a.unsqueeze(1), [_any((2, 3))]),
    ops.SQUEEZE_ALL: (lambda a: a.squeeze(), [_any((2, 1, 3))]),
    ops.SQUEEZE_DIM: (lambda a: a.squeeze(1), [_any((2, 1, 3))]),
    ops.SELECT: (lambda a: a[1], [_any((2, 3))]),
    ops.SLICE: (lambda a: a[:, 1:], [_any((2, 3))]),
    ops.ALIAS: (lambda a: a[...], [_any((2, 3))]),
    ops.UNSQUEEZE_INDEX: (lambda a: a[None], [_any((2, 3))]),
    ops.INDEX: (lambda a: a[[0, 0, 1]], [_any((2, 3))]),
    ops.CLONE: (lambda a: a.clone(), [_any((2, 3))]),
    # a float32 round trip: only good to float32 precision
    ops.TO_COPY: (lambda a: a.float(), [_any((2, 3))], {"eps": 1e-3, "rtol": 1e-3, "atol": 1e-4}),
    ops.FILL: (lambda a: (a * 1).fill_(2.0) + a, [_any((3,))]),
    ops.ZERO: (lambda a: (a * 1).zero_() + a, [_any((3,))]),
    ops.FILL_TENSOR: (lambda a, v: (a * 1).fill_(v) * a, [_any((3,)), _any(())]),
    ops.COPY_INTO: (lambda a, b: _assign_all(a, b) * a, [_any((2, 3)), _any((3,))]),
    ops.UNBIND: (lambda a: _weighted_rows(a), [_any((3, 2))]),
    ops.MAX_ALL: (lambda a: a.max(), [_any((2, 3))]),
    ops.MIN_ALL: (lambda a: a.min(), [_any((2, 3))]),
    ops.MAX_DIM: (lambda a: a.max(dim=1).values, [_any((2, 3))]),
    ops.MIN_DIM: (lambda a: a.min(0, keepdim=True)[0], [_any((2, 3))]),
    ops.MAXIMUM: (lambda a, b: torch.maximum(a, b), [_any((2, 3)), _any((3,))]),
    ops.MINIMUM: (lambda a, b: torch.minimum(a, b), [_any((2, 3)), _any((3,))]),
    ops.CLAMP: (lambda a: a.clamp(-0.5, 0.5), [_any((4,))]),
    ops.PROD_ALL: (lambda a: a.prod(), [_any((2, 3))]),
    ops.PROD_DIM: (lambda a: a.prod(1), [_any((2, 3))]),
    ops.CAT: (lambda a, b: torch.cat([a, b], dim=1), [_any((2, 3)), _any((2, 2))]),
    ops.STACK: (lambda a, b: torch.stack([a, b]), [_any((2, 3)), _any((2, 3))]),
    ops.SOFTMAX: (lambda a: a.softmax(1), [_any((2, 3))]),
    ops.LOG_SOFTMAX: (lambda a: a.log_softmax(1), [_any((2, 3))]),
    ops.MSE: (lambda a, b: F.mse_loss(a, b), [_any((2, 3)), _any((2, 3))]),
    ops.NLL: (lambda a: F.cross_entropy(a, torch.tensor([0, 2])), [_any((2, 3))]),
    ops.COPY_SLICES: (lambda a, b: _assign_row(a, b), [_any((3, 2)), _any((2,))]),
    ops.INDEX_PUT_INPLACE: (lambda a, b: _assign_row(a, b, [0, 2]), [_any((3, 2)), _any((2,))]),
    ops.COPY: (lambda a: ops.copy_for_grad(a), [_any((3,))]),
    ops.SIGN: (lambda a: a.sign() * a, [_away_from_zero((3,))]),
    ops.SGN: (lambda a: ops.sgn(a) * a, [_away_from_zero((3,))]),
    ops.BMM_ROW: (lambda a, b: a @ b, [_any((1, 3)), _any((2, 3, 2))]),
    ops.BMM_ROWS: (lambda a, b: a @ b, [_any((2, 3)), _any((2, 3, 2))]),
}

# matmul's other batched forms share the BMM row: 1-D and broadcast operands
MATMUL_FORMS = [((3,), (2, 3, 4)), ((2, 4, 3), (3,)), ((2, 1, 2, 3), (4, 3, 2)), ((3, 2, 3), (3, 2))]


@pytest.mark.parametrize("shapes", MATMUL_FORMS, ids=str)
def test_batched_matmul_forms(shapes):
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    assert check_gradients(lambda a, b: a @ b, arrays).ok()
    assert check_second_order(lambda a, b: a @ b, arrays).ok()


def _assign_all(a, b):
    y = a * 1
    y[:] = b
    return y


def _weighted_rows(a):
    """Iteration goes through unbind; one row left out checks its zero gradient."""
    first, second, _ = a
    return first * 2 + second.exp()


def _assign_row(a, b, rows=1):
    y = a * 1
    y[rows] = b
    return y

# rows that only appear inside a backward pass: checked through second-order checks
BACKWARD_ONLY = {ops.PROD_OTHERS, ops.SCATTER, ops.GATHER, ops.TANH_BACKWARD,
                 ops.SIGMOID_BACKWARD, ops.THRESHOLD_BACKWARD, ops.SELECT_BACKWARD,
                 ops.SLICE_BACKWARD, ops.UNSQUEEZE_BACKWARD, ops.INDEX_PUT}


@pytest.mark.parametrize("index", [1, (slice(None), slice(1, None)), [0, 0, 1], None],
                         ids=["select", "slice", "index", "unsqueeze"])
def test_third_order_through_indexing(index):
    from autodiff.engine.api import autograd

    def second(a):
        g, = autograd.grad((a[index] ** 3).sum(), a, create_graph=True)
        return g
    rng = np.random.default_rng(5)
    assert check_second_order(second, [_any((2, 3))(rng)]).ok()


@pytest.mark.parametrize("fn", [lambda a: a.tanh(), lambda a: a.sigmoid(), lambda a: a.relu() * a],
                         ids=["tanh", "sigmoid", "relu"])
def test_third_order_through_backward_rows(fn):
    """The *BackwardBackward rows are differentiated again when the second derivative is."""
    from autodiff.engine.api import autograd
    rng = np.random.default_rng(4)

    def second(a):
        g, = autograd.grad(fn(a).sum(), a, create_graph=True)
        return g
    assert check_second_order(second, [_away_from_zero((3,))(rng)]).ok()


@pytest.mark.parametrize("kind", ["max", "min"])
def test_third_order_through_max_min_along_a_dim(kind):
    """The third derivative runs GatherBackward's rule on plain arrays (found by the
    differential tests: it used to expect a Tensor)."""
    from autodiff.engine.api import autograd
    rng = np.random.default_rng(6)

    def second(a):
        values = getattr(a, kind)(dim=1, keepdim=True).values
        g, = autograd.grad((values ** 3).sum(), a, create_graph=True)
        gg, = autograd.grad((g * g).sum(), a, create_graph=True)
        return gg
    assert check_second_order(second, [_any((2, 3))(rng)]).ok()


def _assert_checked(checker, op, seed: int, eps: float, rtol: float, atol: float) -> None:
    """Run `checker` on the op's CHECKS entry; the entry's own tolerances win."""
    fn, makers, *tolerance = CHECKS[op]
    tolerance = tolerance[0] if tolerance else {}
    rng = np.random.default_rng(seed)
    report = checker(fn, [make(rng) for make in makers], eps=tolerance.get("eps", eps))
    assert report.ok(rtol=tolerance.get("rtol", rtol), atol=tolerance.get("atol", atol)), (
        report.max_abs_error, report.analytic, report.numeric)


@pytest.mark.parametrize("op", list(CHECKS), ids=lambda op: op.name)
def test_second_order_matches_central_differences(op):
    _assert_checked(check_second_order, op, seed=2, eps=1e-5, rtol=1e-5, atol=1e-6)


def _op_rows():
    return [v for v in vars(ops).values() if isinstance(v, ops.Op)]


def test_every_op_row_has_a_gradient_check():
    rows_with_vjp = [op for op in _op_rows() if op not in BACKWARD_ONLY]
    missing = [op.name for op in rows_with_vjp if op not in CHECKS]
    assert missing == []


@pytest.mark.parametrize("op", list(CHECKS), ids=lambda op: op.name)
def test_gradient_matches_central_differences(op):
    _assert_checked(check_gradients, op, seed=1, eps=1e-6, rtol=1e-6, atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_broadcast_binary_gradients(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3))
    a_shape, b_shape = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2,
                                                                    base_shape=shape)).input_shapes
    op = data.draw(st.sampled_from(["+", "-", "*", "/"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    a = rng.uniform(-2, 2, a_shape)
    b = rng.choice([-1, 1], b_shape) * rng.uniform(0.5, 2, b_shape)
    fn = {"+": lambda x, y: x + y, "-": lambda x, y: x - y,
          "*": lambda x, y: x * y, "/": lambda x, y: x / y}[op]
    assert check_gradients(fn, [a, b]).ok()


# --- autograd semantics ----------------------------------------------------------------------

def test_seed_scalar_derivative():
    x = torch.tensor(2, dtype=torch.float, requires_grad=True)
    y = 2 * x ** 2 + torch.tensor(1)
    y.backward()
    assert y.item() == 9.0 and x.grad.item() == 8.0
    assert y.grad_fn.name() == "AddBackward0"


def test_second_backward_fails_only_when_something_was_saved():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    z = (x + 1).sum()  # nothing saved: torch lets this run twice
    z.backward()
    z.backward()
    assert x.grad.tolist() == [4.0, 6.0]


def test_retain_graph_accumulates():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_non_scalar_backward_needs_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    (x * 2).backward(torch.tensor([0.1, 1.0]))
    assert np.allclose(x.grad.array, [0.2, 2.0])


def test_no_grad_detach_and_requires_grad_flags():
    a = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert not (a * 2).requires_grad
    assert (a * 2).requires_grad
    assert not a.detach().requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        torch.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        torch.tensor([1, 2], requires_grad=True)


def test_retain_grad_on_non_leaf():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]


def test_leaf_in_place_error_and_sgd_pattern():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w += 1
    (w * w).sum().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad.zero_()
    assert np.allclose(w.array, [0.8, 1.6]) and w.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("method", ["add_", "sub_", "mul_", "div_"])
@pytest.mark.parametrize("other", ["same", "scalar", "row", "double", "int_base"])
def test_in_place_under_no_grad_matches_the_recorded_path(method, other):
    """`a op= b` under no_grad writes into a's storage (ops.inplace_method's direct path);
    it must leave what the general path (grad mode on, nothing requiring grad) leaves."""
    def make():
        base = torch.arange(12, dtype=torch.float32 if other != "int_base" else torch.int64)
        a = base.reshape(3, 4)
        b = {"same": torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5 + 1,
             "scalar": 0.3, "row": torch.tensor([1.0, 2.0, 4.0, 8.0]),
             "double": torch.ones(3, 4, dtype=torch.float64) * 1.5,
             "int_base": torch.ones(3, 4) * 2}[other]
        return base, a, b

    outcomes = []
    for mode in (torch.no_grad, torch.enable_grad):
        base, a, b = make()
        with mode():
            try:
                result = getattr(a, method)(b)
            except RuntimeError as exc:
                outcomes.append(("error", str(exc)))
                continue
        assert result is a
        outcomes.append((a.array.dtype, a.array.tobytes(), base.array.tobytes(), a._version))
    assert outcomes[0] == outcomes[1]
    if other == "int_base":  # torch: result type Float can't be cast to the desired output type Long
        assert outcomes[0][0] == "error" and "can't be cast to the desired output type Long" in outcomes[0][1]
    else:
        assert outcomes[0][3] == 1  # one version bump, seen through the view's base too


def test_in_place_writes_a_wider_float_result_into_a_float32_tensor():
    a = torch.ones(3)
    a += torch.ones(3, dtype=torch.float64) * 1.5  # torch allows it and keeps float32
    assert a.dtype == torch.float32 and a.tolist() == [2.5, 2.5, 2.5]

def test_modified_saved_tensor_is_reported():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 1
    c = b * b
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\], which is output 0 of Mul, "
                                           r"is at version 1; expected version 0 instead"):
        c.sum().backward()


def test_next_functions_shape_of_graph():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    (first, _), (second, _) = y.grad_fn.next_functions
    assert first.name() == "torch::autograd::AccumulateGrad" and first.variable is a
    assert second is None
    assert (2 - a).grad_fn.name() == "RsubBackward1" and len((2 - a).grad_fn.next_functions) == 1
    assert (1 / a).grad_fn.next_functions[0][0].name() == "ReciprocalBackward0"


def test_long_chain_backward_is_iterative():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


# --- type promotion ------------------------------------------------------------------------------

PROMOTION = [  # (expression, expected dtype), as torch 2.13 gives them
    (lambda: torch.tensor([1, 2]) * 1.5, "torch.float32"),
    (lambda: torch.tensor([1, 2]) / 2, "torch.float32"),
    (lambda: torch.tensor([1, 2]) / torch.tensor([2, 2]), "torch.float32"),
    (lambda: torch.tensor([1.0]) * torch.tensor(2.0, dtype=torch.float64), "torch.float32"),
    (lambda: torch.tensor([1]) * torch.tensor(2.0, dtype=torch.float64), "torch.float64"),
    (lambda: torch.tensor([1], dtype=torch.int32) + torch.tensor(3), "torch.int32"),
    (lambda: torch.tensor([True]) + 1, "torch.int64"),
    (lambda: torch.tensor([1], dtype=torch.int32) * 2.5, "torch.float32"),
    (lambda: torch.tensor(2) + torch.tensor(1.5, dtype=torch.float64), "torch.float64"),
    (lambda: torch.tensor([1.0], dtype=torch.float64) + 1.0, "torch.float64"),
]


@pytest.mark.parametrize("make,expected", PROMOTION)
def test_promotion(make, expected):
    assert repr(make().dtype) == expected


@pytest.mark.parametrize("args, kwargs, expected", [
    ((10,), {"dtype": torch.float32}, [float(i) for i in range(10)]),
    ((2, 11, 3), {"dtype": torch.float64}, [2.0, 5.0, 8.0]),
    ((5, -7, -2), {}, [5, 3, 1, -1, -3, -5]),
    ((-4, 4), {"dtype": torch.float32}, [-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0]),
    # past 2**24 float32 cannot hold every whole number: torch rounds start + i * step
    ((2 ** 25 - 3, 2 ** 25 + 3), {"dtype": torch.float32},
     [33554428.0, 33554430.0, 33554432.0, 33554432.0, 33554432.0, 33554432.0]),
    ((0, 1, 0.25), {}, [0.0, 0.25, 0.5, 0.75]),
])
def test_arange_values_are_torchs(args, kwargs, expected):
    """Values printed by torch 2.13 for the same calls (whole numbers take NumPy's direct path)."""
    assert torch.arange(*args, **kwargs).tolist() == expected
