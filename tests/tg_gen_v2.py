"""Program kind ``v2``: the language's second surface, each snippet with random constants.

lambdas (defaults, closures, as keys of sorted/map/filter, as hooks), list, dict and set
comprehensions and generator expressions over tensors, ``class Net(nn.Module)`` with
``__init__`` and ``forward``, decorators on a def (``@torch.no_grad()``, ``@torch.no_grad``,
``@torch.enable_grad()``, ``@torch.inference_mode()`` and a program's own),
``with torch.inference_mode():``, a ``torch.autograd.Function`` of the program's own, and
``nn`` layers, losses and ``torch.optim`` steps.  Random weights come after
``torch.manual_seed`` (autodiff draws PyTorch's numbers), so every program is a function of
its seed under both.  Float values go through the ``show`` helper (#VAL lines, compared with
a tolerance); names, shapes, flags and grad_fn nodes are printed as text.
"""

from __future__ import annotations

import numpy as np
from tg_builder import SHOW_HELPER, Builder
from tg_values import _fmt, _lit


def _values(b: Builder, shape) -> str:
    return _lit(np.array(b.numbers(int(np.prod(shape)))).reshape(shape))


def _x(b: Builder) -> tuple:
    """The snippet's input: a leaf that requires grad, of a random small shape."""
    shape = b.r.choice([(3,), (4,), (2, 3), (2, 2)])
    b.emit(f"x = torch.tensor({_values(b, shape)}, requires_grad=True)")
    return shape


def _lambdas(b: Builder) -> None:
    _x(b)
    k = _fmt(b.r.choice([2, 0.5, -1.5, 3]))
    b.emit(f"scale = {k}")
    b.emit(b.r.choice([f"f = lambda t, k={k}: t * k + 1", "f = lambda t: t * scale - t.sin()",
                       "f = lambda t, k=scale: (t * k).tanh()"]))
    b.emit("g = lambda t: (t ** 2).sum()")
    b.emit("y = f(x)")
    b.emit("print(y.grad_fn, y.requires_grad)")
    b.emit("show('y', y)")
    b.emit(b.r.choice(["g(y).backward()", "torch.autograd.backward(g(y))"]))
    b.emit("show('x.grad', x.grad)")
    b.emit("vals = x.detach().flatten().tolist()")
    b.emit("print(sorted(vals, key=lambda v: -abs(v)), list(map(lambda v: v * 2, vals)), "
           "list(filter(lambda v: v > 0, vals)))")
    b.emit("make = lambda c: (lambda t: t * c)")
    b.emit(f"h = make({_fmt(b.r.choice([2, -0.5, 4]))})")
    b.emit("z = h(x).sum()")
    b.emit("print(z.grad_fn, z.grad_fn.next_functions[0][0])")
    if b.chance(2):
        b.emit("handle = x.register_hook(lambda grad: grad * 2)")
        b.emit("x.grad = None")
        b.emit("z.backward()")
        b.emit("show('x.grad', x.grad)")
        b.emit("handle.remove()")


def _comprehensions(b: Builder) -> None:
    shape = _x(b)
    n = shape[0]
    b.emit(f"rows = [x[i] * {_fmt(b.r.choice([2, -1, 0.5]))} for i in range({n})]")
    b.emit("print([r.grad_fn for r in rows])")
    b.emit("stacked = torch.stack([r * i for i, r in enumerate(rows) if i % 2 == 0])")
    b.emit("print(stacked.shape, stacked.grad_fn)")
    b.emit("parts = {name: op(x) for name, op in [('sum', torch.sum), ('mean', torch.mean), "
           "('max', torch.max)]}")
    b.emit("print(sorted(parts.keys()), {k: v.grad_fn for k, v in parts.items()})")
    b.emit("show('parts', torch.stack(list(parts.values())))")
    b.emit("sizes = {t.dim() for t in rows}")
    b.emit("total = sum(r.sum() for r in rows)")
    b.emit("print(sizes, total.grad_fn)")
    b.emit("show('total', total)")
    b.emit(b.r.choice(["total.backward()", "(total + stacked.sum()).backward()"]))
    b.emit("show('x.grad', x.grad)")
    b.emit("print([[j * k for j in range(k)] for k in range(3)], "
           "[v for v in x.detach().flatten().tolist() if v > 0])")


def _module(b: Builder) -> None:
    n_in, hidden, n_out = b.r.randint(2, 4), b.r.randint(2, 5), b.r.randint(1, 3)
    act = b.r.choice(["torch.relu", "torch.tanh", "torch.sigmoid", "F.relu"])
    b.emit(f"torch.manual_seed({b.r.randint(0, 9999)})")
    b.emit("class Net(nn.Module):")
    b.emit(f"    def __init__(self, n_in, n_out, hidden={hidden}):")
    b.emit("        super().__init__()")
    b.emit("        self.fc1 = nn.Linear(n_in, hidden)")
    b.emit("        self.fc2 = nn.Linear(hidden, n_out)")
    b.emit("    def forward(self, x):")
    b.emit(f"        return self.fc2({act}(self.fc1(x)))")
    b.emit(f"net = Net({n_in}, {n_out})")
    b.emit("print(net)")
    b.emit("print([(name, p.shape, p.requires_grad) for name, p in net.named_parameters()])")
    rows = b.r.randint(1, 4)
    b.emit(f"inp = torch.randn({rows}, {n_in})")
    b.emit("out = net(inp)")
    b.emit("print(out.shape, out.grad_fn, out.grad_fn.next_functions)")
    b.emit("show('out', out)")
    b.emit("loss = (out ** 2).mean()")
    b.emit("loss.backward()")
    b.emit("show('loss', loss)")
    b.emit("for name, p in net.named_parameters():")
    b.emit("    show(name, p.grad)")
    if b.chance(2):
        b.emit("net.zero_grad()")
        b.emit("print([p.grad for p in net.parameters()])")


def _decorators(b: Builder) -> None:
    _x(b)
    deco = b.r.choice(["@torch.no_grad()", "@torch.no_grad", "@torch.inference_mode()"])
    b.emit(deco)
    b.emit("def frozen(t):")
    b.emit(f"    return t * {_fmt(b.r.choice([2, 0.5, -3]))}")
    b.emit("y = frozen(x)")
    b.emit("print(y.requires_grad, y.grad_fn, y.is_leaf, torch.is_grad_enabled())")
    b.emit("show('y', y)")
    b.emit("@torch.enable_grad()")
    b.emit("def tracked(t):")
    b.emit("    return t.exp() * 2")
    b.emit("with torch.no_grad():")
    b.emit("    z = tracked(x)")
    b.emit("    w = x * 2")
    b.emit("print(z.requires_grad, z.grad_fn, w.requires_grad, torch.is_grad_enabled())")
    b.emit("def twice(fn):")
    b.emit("    def wrapper(t):")
    b.emit("        return fn(fn(t))")
    b.emit("    return wrapper")
    b.emit("@twice")
    b.emit("def step(t):")
    b.emit(f"    return t * {_fmt(b.r.choice([2, 0.5, -1]))} + 1")
    b.emit("s = step(x)")
    b.emit("print(s.grad_fn, s.grad_fn.next_functions)")
    b.emit("(s.sum() + z.sum()).backward()")
    b.emit("show('x.grad', x.grad)")


def _inference_mode(b: Builder) -> None:
    _x(b)
    b.emit("with torch.inference_mode():")
    b.emit("    y = x * 2 + 1")
    b.emit("    print(torch.is_grad_enabled(), y.requires_grad, y.grad_fn)")
    if b.chance(2):  # grad mode on again inside inference mode: still nothing records
        b.emit("    with " + b.r.choice(["torch.enable_grad()", "torch.set_grad_enabled(True)"])
               + ":")
        b.emit("        w = x * 3")
        b.emit("        print(torch.is_grad_enabled(), w.requires_grad, w.grad_fn)")
    if b.chance(2):  # inference_mode(False) leaves it, and turns grad mode on
        b.emit("    with torch.inference_mode(False):")
        b.emit("        v = x * 4")
        b.emit("        print(torch.is_grad_enabled(), torch.is_inference_mode_enabled(), "
               "v.grad_fn)")
    b.emit("    print(torch.is_inference_mode_enabled())")
    if b.chance(3):
        b.emit("with torch.no_grad():")
        b.emit("    with torch.inference_mode(False):")
        b.emit("        print(torch.is_grad_enabled(), (x * 5).requires_grad)")
    b.emit("print(torch.is_grad_enabled(), y.requires_grad, y.is_leaf)")
    b.emit("show('y', y)")
    # y is an inference tensor: outside the mode torch refuses some uses of it
    b.emit("print(y.is_inference(), y[0].is_inference(), y.detach().is_inference(), "
           "(y * 2).is_inference(), x.is_inference())")
    use = b.r.choice(["x * y", "y / x", "x + y", "torch.cat([x, y])", "y.add_(1)", "y.zero_()",
                      "y.requires_grad_()", "y[0:1].mul_(2)", "y.clone().requires_grad_()",
                      "torch.where(y > 0, x, y)"])
    b.emit("try:")
    b.emit(f"    u = {use}")
    b.emit("    print(u.is_inference(), u.requires_grad, u.grad_fn)")
    b.emit("except RuntimeError as e:")
    b.emit("    print('RuntimeError:', e)")
    b.emit("show('y', y)")
    b.emit("z = (x * 3).sum()")
    b.emit("print(z.grad_fn)")
    b.emit("z.backward()")
    b.emit("show('x.grad', x.grad)")


def _function(b: Builder) -> None:
    _x(b)
    kind = b.r.choice(["square", "scaled", "clamp"])
    if kind == "square":
        b.emit("class Square(torch.autograd.Function):")
        b.emit("    @staticmethod")
        b.emit("    def forward(ctx, t):")
        b.emit("        ctx.save_for_backward(t)")
        b.emit("        return t * t")
        b.emit("    @staticmethod")
        b.emit("    def backward(ctx, grad):")
        b.emit("        t, = ctx.saved_tensors")
        b.emit("        return 2 * t * grad")
        b.emit("y = Square.apply(x)")
    elif kind == "scaled":
        k = _fmt(b.r.choice([2, -0.5, 3]))
        b.emit("class Scaled(torch.autograd.Function):")
        b.emit("    @staticmethod")
        b.emit("    def forward(ctx, t, k):")
        b.emit("        ctx.k = k")
        b.emit("        return t * k")
        b.emit("    @staticmethod")
        b.emit("    def backward(ctx, grad):")
        b.emit("        print(ctx.needs_input_grad)")
        b.emit("        return grad * ctx.k, None")
        b.emit(f"y = Scaled.apply(x, {k})")
    else:
        b.emit("class Clamp01(torch.autograd.Function):")
        b.emit("    @staticmethod")
        b.emit("    def forward(ctx, t):")
        b.emit("        ctx.save_for_backward(t)")
        b.emit("        return t.clamp(0, 1)")
        b.emit("    @staticmethod")
        b.emit("    def backward(ctx, grad):")
        b.emit("        t, = ctx.saved_tensors")
        b.emit("        return grad * ((t > 0) & (t < 1)).float()")
        b.emit("y = Clamp01.apply(x)")
    b.emit("print(y.requires_grad, y.is_leaf, y.grad_fn, y.grad_fn.next_functions)")
    b.emit("show('y', y)")
    b.emit(b.r.choice(["(y * y).sum().backward()", "y.sum().backward()",
                       "y.backward(torch.ones_like(y))"]))
    b.emit("show('x.grad', x.grad)")


def _optim(b: Builder) -> None:
    n_in, n_out = b.r.randint(1, 4), b.r.randint(1, 3)
    b.emit(f"torch.manual_seed({b.r.randint(0, 9999)})")
    layers = [f"nn.Linear({n_in}, {n_out})"]
    if b.chance(2):
        hidden = b.r.randint(2, 4)
        layers = [f"nn.Linear({n_in}, {hidden})", b.r.choice(["nn.ReLU()", "nn.Tanh()",
                                                            "nn.Sigmoid()"]),
                  f"nn.Linear({hidden}, {n_out})"]
    b.emit(f"model = nn.Sequential({', '.join(layers)})")
    opt = b.r.choice([
        f"torch.optim.SGD(model.parameters(), lr={_fmt(b.r.choice([0.1, 0.05, 0.5]))})",
        f"torch.optim.SGD(model.parameters(), lr=0.1, momentum={_fmt(b.r.choice([0.9, 0.5]))})",
        f"torch.optim.Adam(model.parameters(), lr={_fmt(b.r.choice([0.01, 0.1]))})",
        "torch.optim.RMSprop(model.parameters(), lr=0.01)"])
    b.emit(f"opt = {opt}")
    rows = b.r.randint(2, 5)
    # (Adam and RMSprop scale a step by 1/|g|: a gradient that is 0 but for rounding, as
    # L1Loss's signs can sum to, would move by a whole step either way)
    loss = b.r.choice(["nn.MSELoss()", "nn.L1Loss()"]) if "SGD" in opt else "nn.MSELoss()"
    b.emit(f"inp = torch.randn({rows}, {n_in})")
    b.emit(f"target = torch.randn({rows}, {n_out})")
    b.emit(f"loss_fn = {loss}")
    b.emit(f"for epoch in range({b.r.randint(1, 4)}):")
    b.emit("    opt.zero_grad()")
    b.emit("    loss = loss_fn(model(inp), target)")
    b.emit("    loss.backward()")
    b.emit("    opt.step()")
    b.emit("    show('loss', loss)")
    b.emit("print(loss.grad_fn, [p.shape for p in model.parameters()])")
    b.emit("for name, p in model.named_parameters():")
    b.emit("    show(name, p)")


SNIPPETS = [_lambdas, _comprehensions, _module, _decorators, _inference_mode, _function, _optim]


def gen_v2(r) -> str:
    b = Builder(r, "float32", exact=True)
    for snippet in [r.choice(SNIPPETS) for _ in range(r.randint(1, 3))]:
        snippet(b)
    text = "\n".join(b.lines) + "\n"
    head = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    return head + SHOW_HELPER + text
