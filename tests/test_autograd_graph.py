"""grad_fn nodes as tutorials read them: `_saved_*` attributes (torch's names per node, from
engine/graph/saved_names.py), `metadata`, `name()`, `next_functions`, `register_hook` and
`register_prehook`, and torch.autograd.graph.Node: each program prints under autodiff exactly
what it prints under real PyTorch (skipped without torch)."""

from __future__ import annotations

import io

import pytest

from autodiff.interpreter import run_source
from torch_programs import assert_prints_as_torch, run_under_torch

_HEAD = "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n" \
        "y = torch.tensor([3.0, 4.0], requires_grad=True)\n"


def _each(lines: str) -> str:
    """Each print line in its own try, so that every line is compared even after an error."""
    out = []
    for line in lines.strip().splitlines():
        if line.startswith("print("):
            out.append(f"try:\n    {line}\nexcept Exception as e:\n    print(type(e).__name__, e)")
        else:
            out.append(line)
    return _HEAD + "\n".join(out) + "\n"


PROGRAMS = {
    "saved_values": _each("""
z = x * y
n = z.grad_fn
print(n._saved_self is x, n._saved_other)
w = x * torch.ones(2)
print(w.grad_fn._saved_self, w.grad_fn._saved_other)
print((x * 3).grad_fn._saved_other, (x * 3.5).grad_fn._saved_other, (2 * x).grad_fn._saved_self)
print((x / 2).grad_fn._saved_other, (x / 2.0).grad_fn._saved_other, x.mul(True).grad_fn._saved_other)
e = x.exp()
print(e.grad_fn._saved_result, e.grad_fn._saved_result is e)
p = x ** 2
print(p.grad_fn._saved_exponent, p.grad_fn._saved_self)
s = x.sum(0, keepdim=True)
print(s.grad_fn._saved_dim, s.grad_fn._saved_keepdim, s.grad_fn._saved_self_sym_sizes)
m = x.mean()
print(m.grad_fn._saved_self_sym_numel, m.grad_fn._saved_self_sym_sizes)
a = x + y
print(a.grad_fn._saved_alpha, (x - 2 * y).grad_fn._saved_alpha, x.add(y, alpha=3).grad_fn._saved_alpha)
v = x.view(2, 1)
print(v.grad_fn._saved_self_sym_sizes)
d = x / y
print(d.grad_fn._saved_self, d.grad_fn._saved_other)
print(torch.tanh(x).grad_fn._saved_result, x.relu().grad_fn._saved_result)
c = x.clamp(min=0.5)
print(c.grad_fn._saved_min, c.grad_fn._saved_max, c.grad_fn._saved_self)
q = x.pow(y)
print(q.grad_fn._saved_self, q.grad_fn._saved_exponent, q.grad_fn._saved_result)
mm = torch.ones(2, 2, requires_grad=True) @ torch.ones(2, 3)
print(mm.grad_fn._saved_self, mm.grad_fn._saved_mat2)
mx = torch.ones(2, 3, requires_grad=True).max(dim=1)
print(mx.values.grad_fn._saved_dim, mx.values.grad_fn._saved_keepdim, mx.values.grad_fn._saved_indices)
print(x.sin().grad_fn._saved_self, x.cos().grad_fn._saved_self, x.sigmoid().grad_fn._saved_result)
"""),
    "saved_absent_and_freed": _each("""
z = x * y
a = x + y
print(hasattr(a.grad_fn, '_saved_self'), hasattr(z.grad_fn, '_saved_self'))
print(hasattr(z.grad_fn, '_saved_result'), hasattr(z.grad_fn, '_saved_alpha'))
print(a.grad_fn._saved_self)
print(getattr(a.grad_fn, '_saved_other', 'none'))
print(z.grad_fn._saved_result)
print(z.grad_fn.next_functions[0][0]._saved_self)
z.sum().backward()
print(z.grad_fn._saved_self)
print(z.grad_fn._saved_other)
p = (x ** 3).sum(0)
p.backward()
print(p.grad_fn._saved_dim, p.grad_fn._saved_self_sym_sizes)
"""),
    "node_hooks": _HEAD + """
w = x * 3
z = w.sum()
def post(gi, go):
    print("post", gi, go)
def pre(go):
    print("pre", go)
    return (go[0] * 2,)
h1 = w.grad_fn.register_hook(post)
h2 = w.grad_fn.register_prehook(pre)
w.register_hook(lambda g: print("tensor hook", g))
print(w.grad_fn.name(), w.grad_fn.metadata, z.grad_fn.name())
w.grad_fn.metadata["k"] = 1
print(w.grad_fn.metadata, w.grad_fn.metadata is w.grad_fn.metadata)
print(type(h2).__name__)
z.backward(retain_graph=True)
print(x.grad)
h1.remove()
h2.remove()
w.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 5, None))
z.backward(retain_graph=True)
print(x.grad)
m = x * y
m.grad_fn.register_prehook(lambda go: None)
m.grad_fn.register_hook(lambda gi, go: print(len(gi), gi[1]))
m.sum().backward()
print(y.grad)
def wrong(gi, go):
    return (gi[0],)
u = x * y
u.grad_fn.register_hook(wrong)
try:
    u.sum().backward()
except RuntimeError as e:
    print(e)
from torch.autograd.graph import Node
print(Node, isinstance(w.grad_fn, Node), isinstance(x, Node))
print(isinstance(z.grad_fn.next_functions[0][0].next_functions[0][0], Node))
print(z.grad_fn.next_functions, z.grad_fn.next_functions[0][0].next_functions)
try:
    Node()
except TypeError as e:
    print(e)
""",
}


@pytest.fixture(scope="module")
def reference():
    return run_under_torch(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_as_torch(name, reference):
    assert_prints_as_torch(name, PROGRAMS[name], reference[name])


def test_saved_names_table_is_torchs():
    """The committed table is what tests/make_saved_names.py reads off torch now."""
    pytest.importorskip("torch")
    import make_saved_names
    from autodiff.engine.graph.saved_names import SAVED

    assert make_saved_names.saved_names() == SAVED


def test_a_node_without_a_table_entry_says_not_supported():
    source = ("import torch\nx = torch.ones(2, requires_grad=True)\n"
              "print(torch.nn.functional.leaky_relu(x).grad_fn._saved_self)\n")
    result = run_source(source, "t.tg", out=io.StringIO(), err=io.StringIO())
    assert result.error.error_class == "NotImplementedError"
    assert "LeakyReluBackward0._saved_self is not supported by autodiff" in result.error.message


def test_saved_names_of_accumulate_grad_are_absent():
    source = ("import torch\nx = torch.ones(2, requires_grad=True)\n"
              "n = (x * 2).grad_fn.next_functions[0][0]\nprint(hasattr(n, '_saved_self'))\n"
              "n._saved_self\n")
    out = io.StringIO()
    result = run_source(source, "t.tg", out=out, err=io.StringIO())
    assert out.getvalue() == "False\n"
    assert result.error.message == "'AccumulateGrad' object has no attribute '_saved_self'"
