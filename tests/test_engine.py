"""Engine tests: gradients against float64 central differences, autograd semantics."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autodiff.engine.api import functional as F
from autodiff.engine.api import torch
from autodiff.engine.autograd.numeric_check import check_gradients, check_second_order
from autodiff.engine.ops.registry import all_ops

# --- gradient checks: every registry entry's own check -------------------------------------------

ENTRIES = all_ops()


def _tolerances(check):
    return {"eps": check.eps, "rtol": check.rtol, "atol": check.atol}


def _assert_checked(checker, op, seed: int) -> None:
    """Run the entry's check through `checker` (first or second order) against float64
    central differences, within the entry's tolerances."""
    check = op.check
    rng = np.random.default_rng(seed)
    if not op.differentiable:  # torch's NotImplemented node: the backward must fail as torch's
        leaves = [torch.tensor(d.draw(rng).tolist(), dtype=torch.float64, requires_grad=True)
                  for d in check.domains]
        with pytest.raises((RuntimeError, NotImplementedError),
                           match=r"^(derivative for aten::\w+ is not implemented"
                                 r"|the derivative for '[\w ]+' is not implemented\.)$"):
            check.call(*leaves).sum().backward()
        return
    report = checker(check.call, [domain.draw(rng) for domain in check.domains], eps=check.eps)
    assert report.ok(rtol=check.rtol, atol=check.atol), (
        report.max_abs_error, report.analytic, report.numeric)


@pytest.mark.parametrize("op", ENTRIES, ids=lambda op: op.name)
def test_gradient_matches_central_differences(op):
    _assert_checked(check_gradients, op, seed=1)


@pytest.mark.parametrize("op", ENTRIES, ids=lambda op: op.name)
def test_second_order_matches_central_differences(op):
    if not op.differentiable:
        return _assert_checked(check_second_order, op, seed=2)
    check = op.check
    rng = np.random.default_rng(2)
    if not op.second_order:  # refused by name, never a silently wrong second derivative
        with pytest.raises(NotImplementedError, match=r"is not supported by autodiff$"):
            check_second_order(check.call, [domain.draw(rng) for domain in check.domains],
                               eps=max(check.eps, 1e-5))
        return
    report = check_second_order(check.call, [domain.draw(rng) for domain in check.domains],
                                eps=max(check.eps, 1e-5))
    assert report.ok(rtol=max(check.rtol, 1e-5), atol=max(check.atol, 1e-6)), (
        report.max_abs_error, report.analytic, report.numeric)


def test_every_entry_is_complete():
    """A registry entry names itself as torch does, says what its rule is, and can be checked."""
    for op in ENTRIES:
        assert op.name and op.name[0].isupper(), op
        assert op.explain, f"{op.name}: no explain text"
        assert op.check is not None and op.check.domains is not None, f"{op.name}: no check"
        assert op.variadic or len(op.formulas) == len(op.vjps), f"{op.name}: one formula per input"


def test_each_node_name_is_one_entry():
    """One entry per torch node (a transposed convolution is the convolution's node): two
    entries of one name would be two rules and two explain texts for what prints the same."""
    names = [op.name for op in ENTRIES]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def _node_names(tensors) -> set:
    names, stack, seen = set(), [t.grad_fn for t in tensors if t is not None], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__ if not hasattr(node, "op") else node.op.name)
        stack.extend(child for child, _ in node.next_functions)
    return names


@pytest.mark.parametrize("op", ENTRIES, ids=lambda op: op.name)
def test_each_check_exercises_its_entry(op):
    """The check builds the op itself, or (for an op made inside backward) its first or
    second derivative does: otherwise the check would test something else."""
    rng = np.random.default_rng(0)
    leaves = [torch.tensor(d.draw(rng).tolist(), dtype=torch.float64, requires_grad=True)
              for d in op.check.domains]
    out = op.check.call(*leaves)
    seen = _node_names([out])
    if op.name not in seen:
        first = torch.autograd.grad(out.sum(), leaves, create_graph=True, allow_unused=True)
        seen |= _node_names(first)
        if op.name not in seen:
            total = sum((g * g).sum() for g in first if g is not None and g.requires_grad)
            second = torch.autograd.grad(total, leaves, create_graph=True, allow_unused=True)
            seen |= _node_names(second)
    assert op.name in seen


def test_every_grad_fn_name_has_one_entry():
    names = [op.name for op in ENTRIES]
    repeated = {n for n in names if names.count(n) > 1}
    assert not repeated


# matmul's other batched forms: 1-D and broadcast operands
MATMUL_FORMS = [((3,), (2, 3, 4)), ((2, 4, 3), (3,)), ((2, 1, 2, 3), (4, 3, 2)), ((3, 2, 3), (3, 2)),
                ((2, 3), (2, 3, 2)), ((1, 3), (2, 3, 2))]


@pytest.mark.parametrize("shapes", MATMUL_FORMS, ids=str)
def test_batched_matmul_forms(shapes):
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    assert check_gradients(lambda a, b: a @ b, arrays).ok()
    assert check_second_order(lambda a, b: a @ b, arrays).ok()


def _any(shape):
    return lambda rng: rng.uniform(-2.0, 2.0, shape)


def _away_from_zero(shape):
    return lambda rng: rng.choice([-1, 1], shape) * rng.uniform(0.3, 2.0, shape)


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


ZEROS = [np.array([[1.5, 0.0, -2.0], [0.5, 3.0, 0.0]]),  # one zero per row
         np.array([[0.0, 0.0, -2.0], [0.5, 3.0, 1.25]]),  # two in a row
         np.array([[-1.0, 2.0, 0.0], [0.0, 0.0, 0.0]])]  # a row of zeros


@pytest.mark.parametrize("values", ZEROS, ids=["one", "two", "row"])
@pytest.mark.parametrize("reduce", [lambda a: a.prod(), lambda a: a.prod(1),
                                    lambda a: a.prod(0, keepdim=True), lambda a: a.t().prod(),
                                    lambda a: a.cumprod(1), lambda a: a.cumprod(0)],
                         ids=["prod", "prod(1)", "prod(0, keepdim)", "t().prod", "cumprod(1)",
                              "cumprod(0)"])
def test_third_order_where_an_element_is_zero(values, reduce):
    """prod's and cumprod's rules where an input is zero (torch's running-product formulas)
    against central differences up to the third derivative, where the rules meet
    inputs without zeros as well."""
    from autodiff.engine.api import autograd

    assert check_gradients(reduce, [values]).ok()

    def first(a):
        g, = autograd.grad((reduce(a) ** 2).sum(), a, create_graph=True)
        return g

    def second(a):
        gg, = autograd.grad((first(a) ** 2).sum(), a, create_graph=True)
        return gg
    assert check_second_order(first, [values]).ok()
    assert check_second_order(second, [values]).ok()


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
