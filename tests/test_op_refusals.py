"""Ops' own refusals against live torch, in torch's order and words: gather, scatter,
scatter_add, masked_fill (+ in place: the index's and src's dtype, numbers of dims, sizes,
indices out of range, the mask's dtype, the value's dims, the parser's listing), indexing
with a float tensor, select on a 0-d tensor, bool operands of `-`, `%`, `//` and their
functions (+ in place), bitwise_not of a float, abs/floor/ceil/trunc/round of a bool and
frac of a non-float, relu and argmax/argmin of a bool, softmax's kernels, nll_loss/cross_entropy's
shapes and dtypes, dropout of an integer tensor, embedding's weight, einsum's operands; and
the edge cases they still compute (a 0-d tensor, an empty index, a 0-d mask)."""

from __future__ import annotations

import io

import pytest

from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses, run_many_with_torch, torch_available

needs_torch = pytest.mark.skipif(not torch_available(), reason="torch is not installed")

PRELUDE = ("import torch\nimport torch.nn.functional as F\n"
           "T = torch.tensor([[0.5, -2.0, 3.0], [1.5, 2.0, -0.5]])\n"
           "I = torch.tensor([[0, 2], [1, 1]])\n"
           "U = torch.tensor([[2.0, 0.5, -1.5], [1.0, -3.0, 2.5]])\n"
           "V = torch.tensor([0.5, -2.0, 3.0])\n"
           "M = torch.tensor([True, False, True])\n")

CALLS = [
    "T.gather(1, I.float())", "T.gather(1, I.int())", "T.gather(1, torch.ones(3, 3).long())",
    "T.gather(1, torch.tensor([[5]]))", "T.gather(1, torch.tensor([[-1]]))", "T.gather(5, I)",
    "torch.gather(T, 1, torch.tensor(1))", "T.gather(0, torch.tensor([[1, 0, 1]]))",
    "torch.tensor(3.0).gather(0, torch.tensor(0))", "V.gather(0, torch.tensor([[0]]))",
    "T.scatter(1, I.int(), U)", "T.scatter(1, torch.ones(3, 3).long(), U)",
    "T.scatter(1, I, torch.ones(2, 1))", "T.scatter(1, torch.tensor([], dtype=torch.float), U)",
    "T.scatter(1, I.float(), 2.0)", "T.scatter(1, I, 2.0)",
    "torch.tensor(1.0).scatter(0, torch.tensor(0), torch.tensor(5.0))",
    "T.scatter_add(1, I, U.double())", "T.scatter(1, torch.tensor([[5]]), U)",
    "T.scatter_add(1, torch.tensor([[-1, 0]]), U)", "T.scatter(1, I, V)",
    "T.scatter(1, I, torch.tensor(2))", "T.scatter(1, I, torch.tensor(2.5))",
    "torch.scatter_add(T, 1, torch.tensor(1), U)", "T.clone().scatter_(0, torch.tensor([[1, 0, 1]]), U)",
    "V.masked_fill(M.int(), 1.0)", "V.masked_fill(M.double(), torch.tensor(2.0))",
    "torch.masked_fill(V, 1, 0.5)", "V.masked_fill([True, False, True], 0.5)",
    "V.masked_fill(M, None)", "V.masked_fill(M, [1.0])", "V.masked_fill(M, torch.tensor([1.0, 2.0]))",
    "V.masked_fill(M.int(), torch.tensor([1.0, 2.0]))", "V.masked_fill(M[:2], 1.0)",
    "V.masked_fill(torch.tensor(True), torch.tensor(3))", "torch.masked_fill(V, mask=M, value=2)",
    "V.clone().masked_fill_(M[:2], 1.0)", "V.clone().masked_fill_(M[:2], torch.tensor([1.0]))",
    "V.clone().masked_fill_(M.int(), 'a')", "V.clone().masked_fill_(torch.ones(2, 3).bool(), 1.0)",
    "torch.ones(3, requires_grad=True).masked_fill_(M.int(), 1.0)",
    "torch.ones(3).expand(2, 3).masked_fill_(M.int(), 1.0)", "V.clone().masked_fill_(M, False)",
    # indexing and select
    "torch.select(torch.tensor(2.5), 0, 1)", "torch.tensor(2).select(1, 0)", "V.select(0, -4)",
    "V[torch.tensor(1.0)]", "T[0, torch.tensor(1.0)]", "T[torch.tensor(1.0), 0, 0]",
    "T[torch.tensor([[True]]), torch.tensor(1.0)]", "T[..., torch.tensor(1.0)]",
    "torch.tensor(2.5)[torch.tensor(0.0)]", "T[I, torch.tensor([0.5, 1.5])]",
    # bool operands of subtraction and rounded division
    "M - M", "M - True", "True - M", "M - 1", "1.5 - M", "V - M", "torch.sub(M, M, alpha=2)",
    "M.clone().sub_(I[0])", "torch.subtract(M, True)", "M - torch.tensor(True)", "-M",
    "M % M", "M // True", "True % M", "torch.fmod(M, M)", "torch.floor_divide(M, 1)",
    "torch.div(M, M, rounding_mode='trunc')", "M.clone().remainder_(I[0])",
    "M.clone().floor_divide_(torch.tensor([3, 0, 2]))", "I[0] // torch.tensor([0, 1])",
    "M.clone().div_(torch.tensor([3, 0, 2]), rounding_mode='floor')",
    # bitwise_not, softmax's kernels
    "torch.bitwise_not(V)", "V.double().bitwise_not()", "~V", "~M", "V & V",
    "torch.softmax(I, 1)", "torch.log_softmax(I, 0)", "torch.softmax(torch.tensor(3), 0)",
    "torch.log_softmax(I, 1, dtype=torch.float32)", "T.softmax(1, dtype=torch.int64)",
    "torch.softmax(I, 4)",
    # nll_loss, cross_entropy, dropout, embedding, einsum
    "F.nll_loss(torch.tensor(2.5), I[0])", "F.nll_loss(V, I[0])", "F.nll_loss(V, I[0, :1])",
    "F.nll_loss(V, torch.tensor([[1]]))", "F.nll_loss(T, torch.tensor([0, 1, 2]))",
    "F.nll_loss(T, torch.tensor(1))", "F.nll_loss(T.bool(), I[0])", "F.nll_loss(T, I[0].int())",
    "F.nll_loss(T.long(), I[0].float())", "F.nll_loss(torch.ones(2, 3, 4), I[0])",
    "F.cross_entropy(torch.tensor(2.5), I[0])", "F.cross_entropy(T.long(), I[0])",
    "F.cross_entropy(V, torch.tensor(1))", "F.cross_entropy(T, torch.tensor([0, 3]))",
    "F.dropout(I)", "F.dropout(M)", "F.dropout(I, p=1.0)", "F.dropout(I, training=False)",
    "F.embedding(I[0], torch.tensor(2.5), padding_idx=0)", "F.embedding(I[0], V, padding_idx=1)",
    "F.embedding(I[0].float(), torch.tensor(2.5))", "F.embedding(I[0].float(), T)",
    "torch.einsum('i,i->', V, 2)", "torch.einsum('i->', [0.5, 1.0])",
    "torch.einsum('i,i->', [V, None])", "torch.einsum('i->', ())", "torch.einsum('i->')",
    # unary kernels without a bool (or, frac, integer) version
    "torch.abs(M)", "abs(M)", "M.clone().absolute_()", "M.floor()", "torch.ceil_(M.clone())",
    "M.trunc()", "torch.round(M)", "I.frac()", "torch.frac(M)", "I.int().frac_()", "I.floor()",
    "torch.relu(M)", "F.relu(M)", "M.clone().relu_()", "torch.relu(I)", "torch.argmax(M)",
    "M.argmin(0)", "torch.argmax(M, 5)", "I.argmax(1)",
]


@needs_torch
def test_index_and_mask_checks_are_torchs():
    sources = [PRELUDE + f"try:\n    print({call})\nexcept Exception as e:\n"
               "    print(type(e).__name__, e)\n" for call in CALLS]
    for call, source, want in zip(CALLS, sources, run_many_with_torch(sources)):
        out = io.StringIO()
        result = run_source(source, "c.tg", out=out)
        assert result.error is None, (call, result.error)
        assert normalize_addresses(out.getvalue()) == normalize_addresses(want.stdout), call


@needs_torch
def test_masked_fill_gradients_are_torchs():
    """A 0-d mask and a tensor value through a double backward, and masked_fill_'s node."""
    source = ("import torch\n"
              "for M in [torch.tensor(True), torch.tensor([True, False, True])]:\n"
              "    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
              "    v = torch.tensor(0.5, requires_grad=True)\n"
              "    y = (x * x).masked_fill(M, v) * x\n"
              "    g, gv = torch.autograd.grad(y.sum(), (x, v), create_graph=True)\n"
              "    print(g, gv, torch.autograd.grad((g * g).sum() + gv, (x, v)))\n"
              "    z = x * 2\n"
              "    z.masked_fill_(M, 1.5)\n"
              "    print(z, z.grad_fn)\n"
              "    z.sum().backward()\n"
              "    print(x.grad)\n")
    want, = run_many_with_torch([source])
    out = io.StringIO()
    result = run_source(source, "g.tg", out=out)
    assert result.error is None
    assert normalize_addresses(out.getvalue()) == normalize_addresses(want.stdout)
