"""roll, meshgrid, F.pad, masked_select, unique / unique_consecutive and diff against live
PyTorch: values, dtypes, printed text, grad_fn chains, gradients (also with create_graph)
and the errors of bad arguments; and their registry entries against finite differences."""

from __future__ import annotations

import io

import numpy as np
import pytest

from autodiff.engine.autograd.numeric_check import check_gradients
from autodiff.engine.ops.arrange import family
from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses, run_many_with_torch, torch_available

HEADER = "import torch\nimport torch.nn.functional as F\n"

# prints a result, its dtype and the grad_fn chain down its first inputs
SHOW = """
def show(r):
    print(r, r.dtype, r.shape)
    f = r.grad_fn
    while f is not None:
        print(f.name(), [n is None for n, _ in f.next_functions])
        f = f.next_functions[0][0] if len(f.next_functions) > 0 else None
"""

GRADS = """
gs = torch.autograd.grad((r * r * w).sum(), [x], create_graph=True)
print(gs[0], gs[0].grad_fn)
gg = torch.autograd.grad((gs[0] * gs[0]).sum(), [x])
print(gg[0])
"""


def _leaf(shape, dtype="torch.float64", grad=True):
    n = int(np.prod(shape))
    return (f"x = (torch.arange({n}, dtype={dtype}) * 0.7 - 1.3).reshape({list(shape)!r})"
            + (".requires_grad_()\n" if grad else "\n"))


def _differentiable(shape, expression):
    return (HEADER + SHOW + _leaf(shape) + f"r = {expression}\nshow(r)\n"
            + "w = torch.linspace(0.5, 2.0, r.numel(), dtype=torch.float64).reshape(r.shape)\n"
            + GRADS)


def _attempts(*expressions, shape=(2, 3), dtype="torch.float32"):
    """Each expression tried in turn, printing its result or its error."""
    lines = [HEADER, _leaf(shape, dtype, grad=False)]
    for expression in expressions:
        lines.append(f"try:\n    print({expression})\nexcept Exception as e:\n"
                     "    print(type(e).__name__, e)\n")
    return "".join(lines)


ROLLS = [((5,), "torch.roll(x, 2)"), ((2, 3), "x.roll(1)"), ((2, 3), "torch.roll(x, -4, 1)"),
         ((2, 3, 2), "x.roll((1, -1), (0, 2))"), ((3, 4), "torch.roll(x, shifts=(2, 1), dims=(1, 1))"),
         ((2, 3), "x.roll([1], [-1])"), ((), "torch.roll(x, 3)")]
GRIDS = [((3,), "torch.meshgrid(x, x[:2], indexing='ij')[{i}]"),
         ((3,), "torch.meshgrid([x, x[1:]], indexing='xy')[{i}]"),
         ((4,), "torch.meshgrid(x[:2], x, x[1:], indexing='xy')[{i}]"),
         ((4,), "torch.meshgrid((x, x[0]), indexing='ij')[{i}]")]
PADS = [((2, 3), "F.pad(x, (1, 2))"), ((2, 3), "F.pad(x, [1, 0, 2, 1], value=2.5)"),
        ((2, 4), "F.pad(x, (-1, 2, 1, -1))"), ((2, 3), "torch.nn.functional.pad(x, (0, 0))"),
        ((2, 2, 3), "F.pad(x, (1, 1, 0, 2, 1, 0), 'constant', -1.0)"),
        ((2, 4), "F.pad(x, (2, 3), mode='reflect')"), ((2, 3, 4), "F.pad(x, (1, 2, 2, 1), 'reflect')"),
        ((1, 2, 3, 4), "F.pad(x, (1, 1, 0, 2), mode='reflect')"),
        ((1, 2, 2, 3), "F.pad(x, (1, 2, 1, 1, 1, 0), mode='reflect')"),
        ((2, 4), "F.pad(x, (-1, 2), mode='reflect')"),
        ((2, 3), "F.pad(x, (3, 1), mode='replicate')"),
        ((2, 2, 3), "F.pad(x, (2, 0, 1, 3), mode='replicate')"),
        ((1, 1, 2, 2, 3), "F.pad(x, (1, 2, 1, 1, 2, 0), mode='replicate')"),
        ((2, 5), "F.pad(x, (-1, -2), mode='replicate', value=0)")]
SELECTS = [((2, 3), "torch.masked_select(x, x > 0)"),
           ((2, 3), "x.masked_select(torch.tensor([True, False, True]))"),
           ((3,), "x.masked_select(torch.tensor([[True, False, True], [False, True, True]]))"),
           ((2, 1), "torch.masked_select(x, torch.tensor([[False, True, True]]))"),
           ((2, 3), "x.masked_select(torch.zeros(2, 3, dtype=torch.bool))")]
DIFFS = [((5,), "torch.diff(x)"), ((2, 4), "x.diff(n=2)"), ((3, 3), "torch.diff(x, dim=0)"),
         ((2, 3), "torch.diff(x, 3)"),
         ((2, 3), "torch.diff(x, prepend=torch.ones(2, 1, dtype=torch.float64))"),
         ((2, 3), "x.diff(n=2, dim=0, prepend=x[:1] * 2, append=torch.zeros(2, 3, dtype=torch.float64))"),
         ((4,), "torch.diff(x, n=0)")]

GRADIENT_PROGRAMS = (
    [_differentiable(s, e) for s, e in ROLLS + PADS + SELECTS + DIFFS]
    + [_differentiable(s, e.format(i=i)) for s, e in GRIDS for i in range(2)])

VALUE_PROGRAMS = [
    _attempts("torch.roll(torch.tensor([1, 2, 3]), 1)", "torch.roll(x > 2, (1, 1), (0, 1))",
              "torch.roll(x.int(), 1, 0).dtype"),
    HEADER + "a = torch.tensor([1, 2, 3])\nb = torch.tensor([4, 5])\n"
    "X, Y = torch.meshgrid(a, b, indexing='xy')\nprint(X, Y, X.dtype)\n"
    "print(torch.meshgrid(a))\nprint(torch.meshgrid(torch.tensor(2.0), torch.tensor([1.0, 2.0]), "
    "indexing='ij'))\n",
    _attempts("F.pad(x.long(), (1, 1), value=2.7)", "F.pad(x > 2, (1, 0), value=1)",
              "F.pad(x.int(), (1, 1), mode='reflect').dtype", "F.pad(x, (1, 1, 1, 1)).shape"),
    _attempts("torch.masked_select(x.long(), x > 1)", "(x > 1).masked_select(x < 4)"),
    _attempts("torch.unique(torch.tensor([3, 1, 2, 3, 1, 1]))",
              "torch.unique(x.reshape(-1).flip(0) // 2)",
              "torch.unique(torch.tensor([[2, 1], [2, 5]]), return_inverse=True)",
              "torch.unique(torch.tensor([3., 1., 3.]), return_counts=True)",
              "torch.unique(torch.tensor([3., 1., 3.]), sorted=True, return_inverse=True, "
              "return_counts=True)",
              "torch.unique(torch.tensor([True, False, True]))",
              "torch.unique(torch.tensor(5))",
              "torch.unique(torch.tensor([], dtype=torch.long), return_counts=True)",
              "torch.tensor([1., float('nan'), 1.]).unique()",
              "torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1]))",
              "torch.tensor([[1, 1], [2, 2]]).unique_consecutive(return_inverse=True, "
              "return_counts=True)",
              "torch.unique_consecutive(torch.tensor([2., 2., 1.]), return_counts=True)"),
    _attempts("torch.diff(torch.tensor([True, False, False, True]))",
              "torch.diff(torch.tensor([1, 5, 2]))",
              "torch.diff(torch.tensor([1, 5, 2]), prepend=torch.tensor([0.5]))",
              "torch.diff(torch.tensor([[1, 5, 2]]), n=2, dim=1).dtype"),
    HEADER + "x = torch.tensor([3., 1., 3.], requires_grad=True)\n"
    "u, i, c = x.unique(return_inverse=True, return_counts=True)\n"
    "print(u, i.requires_grad, c.requires_grad, u.grad_fn.name())\n"
    "v = torch.unique_consecutive(x)\nprint(v)\n"
    "try:\n    u.sum().backward()\nexcept NotImplementedError as e:\n    print(e)\n"
    "try:\n    v.sum().backward()\nexcept NotImplementedError as e:\n    print(e)\n",
]

ERROR_PROGRAMS = [
    _attempts("torch.roll(x, (1, 2))", "torch.roll(x, (1, 2), (0,))", "torch.roll(x, 1, 5)",
              "torch.roll(x, (), ())", "torch.roll(x, 1.5)", "x.roll((1, 2.0), (0, 1))",
              "torch.roll(x, shifts=(1, 2))"),
    _attempts("torch.meshgrid()", "torch.meshgrid(x[0], x[0].long(), indexing='ij')",
              "torch.meshgrid(x[0], x[0], indexing='yx')", "torch.meshgrid(x[0], [1], indexing='ij')",
              "torch.meshgrid(x[0], 1, indexing='ij')"),
    _attempts("F.pad(x, (1,))", "F.pad(x, (1, 1, 1, 1, 1, 1))", "F.pad(x, (3, 3), mode='reflect')",
              "F.pad(x[0], (1, 1), mode='reflect')", "F.pad(x, (1, 1, 1, 1), mode='reflect')",
              "F.pad(x, (1, 1), mode='foo')", "F.pad(x, (1, 1), mode='replicate', value=2)",
              "F.pad(x, (1.5, 1))", "F.pad(x, 1)", "F.pad(x, (-2, -2))", "F.pad(x, (-4, 1))",
              "F.pad(x, (-3, -1))", "F.pad(torch.tensor(1.0), (1, 1))",
              "F.pad(torch.ones(1, 1, 2), (0, 2), mode='reflect')",
              "F.pad(torch.ones(2, 0, 2), (1, 1), mode='reflect')",
              "F.pad(torch.ones(1, 2, 3), (1, 1, 2, 2), mode='reflect')",
              "F.pad(torch.ones(1, 1, 2, 3), (1, 1, 1, 1, 1, 1), mode='reflect')",
              "F.pad(torch.ones(2, 2, 2, 2), (1, 1), mode='replicate')"),
    _attempts("torch.masked_select(x, torch.tensor([1, 0, 1]))",
              "torch.masked_select(x, torch.tensor([True, False]))", "torch.masked_select(x, 3)"),
    _attempts("torch.diff(x, n=-1)", "torch.diff(x, prepend=torch.zeros(3))",
              "torch.diff(x, prepend=torch.zeros(3, 1))",
              "torch.diff(x, dim=0, append=torch.zeros(2, 1))", "torch.diff(x, n=1.5)",
              "torch.diff(x, prepend=1.0)", "torch.diff(x, dim=2)", "torch.diff(torch.tensor(1.0))"),
]


def _ours(program: str) -> tuple[str, str | None]:
    out = io.StringIO()
    result = run_source(program, "arrange.tg", out=out, err=io.StringIO())
    error = result.error and f"{result.error.error_class}: {result.error.message}"
    return normalize_addresses(out.getvalue()), error


@pytest.mark.skipif(not torch_available(), reason="torch is not installed")
@pytest.mark.parametrize("kind", ["gradients", "values", "errors"])
def test_matches_torch(kind):
    programs = {"gradients": GRADIENT_PROGRAMS, "values": VALUE_PROGRAMS,
                "errors": ERROR_PROGRAMS}[kind]
    references = run_many_with_torch(programs)
    for program, reference in zip(programs, references):
        stdout, error = _ours(program)
        assert reference.error is None, (program, reference.error)
        assert (stdout, error) == (reference.stdout, reference.error), program


@pytest.mark.parametrize("entry", family.ops, ids=lambda entry: entry.name)
def test_entry_matches_central_differences(entry):
    """Each entry's own check against float64 central differences (the non-differentiable
    unique entries fail their backward as torch's does)."""
    rng = np.random.default_rng(7)
    leaves = [domain.draw(rng) for domain in entry.check.domains]
    if not entry.differentiable:
        with pytest.raises(NotImplementedError, match="is not implemented"):
            check_gradients(entry.check.call, leaves, eps=entry.check.eps)
        return
    report = check_gradients(entry.check.call, leaves, eps=entry.check.eps)
    assert report.ok(rtol=entry.check.rtol, atol=entry.check.atol), report.max_abs_error


def test_meshgrid_warns_without_indexing():
    err = io.StringIO()
    run_source(HEADER + "a = torch.tensor([1.0, 2.0])\ng = torch.meshgrid(a, a)\n", "m.tg",
               out=io.StringIO(), err=err)
    assert "UserWarning: torch.meshgrid: in an upcoming release, it will be required to pass " \
           "the indexing argument." in err.getvalue()


def test_meshgrids_warning_is_given_once_a_run_as_torchs_once_a_process():
    source = ("import torch\n"
              "a = torch.meshgrid(torch.arange(2), torch.arange(3))\n"
              "b = torch.meshgrid(torch.arange(2), torch.arange(3))\n")
    for _ in range(2):  # (and again in the next run)
        err = io.StringIO()
        result = run_source(source, "grid.tg", out=io.StringIO(), err=err)
        assert result.error is None
        assert err.getvalue().count("in an upcoming release, it will be required") == 1
