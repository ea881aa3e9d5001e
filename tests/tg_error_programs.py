"""Programs that PyTorch stops with an error: autodiff must stop with the same `Class: message`.

Used by tg_programs.gen_error.  A program whose first line is `#NAME` exercises known bug
NAME (see tg_known_bugs.KNOWN_BUGS) and is skipped while that bug is listed there.
"""

import numpy as np

ERRORS = [  # a leading '#NAME' line names a known bug: skipped while NAME is in KNOWN_BUGS
    "a = torch.ones(2, 3)\nb = torch.ones(4, 3)\nprint(a + b)",
    "a = torch.ones(2, 3)\nb = torch.ones(3, 2)\nprint(a * b)",
    "a = torch.ones(2, 3)\nb = torch.ones(4, 5)\nprint(torch.mm(a, b))",
    "a = torch.ones(2, 3)\nb = torch.ones(4)\nprint(a @ b)",
    "a = torch.ones(2, 3)\nb = torch.ones(2)\nprint(torch.mv(a, b))",
    "a = torch.ones(3)\nb = torch.ones(4)\nprint(torch.dot(a, b))",
    "a = torch.ones(2, 3, requires_grad=True)\nb = a * 2\nb.backward()",
    "a = torch.ones(3, requires_grad=True)\nb = (a * a).sum()\nb.backward()\nb.backward()",
    "a = torch.ones(3, requires_grad=True)\na.add_(1)",
    "a = torch.ones(3, requires_grad=True)\na[0] = 2.0",
    "a = torch.tensor([1, 2, 3], requires_grad=True)",
    "a = torch.tensor([1, 2, 3])\na.requires_grad_()",
    "a = torch.ones(2, 3)\nprint(a.reshape(4, 2))",
    "a = torch.ones(2, 3)\nprint(a.view(5, -1))",
    "a = torch.ones(2, 3)\nprint(a[2])",
    "#B9\na = torch.ones(2, 3)\nprint(a[0, 3])",
    "#B18\na = torch.ones(2, 3)\nb = torch.ones(2, 4)\nprint(torch.cat([a, b]))",
    "#B18\na = torch.ones(2, 3)\nb = torch.ones(2, 4)\nprint(torch.stack([a, b]))",
    "a = torch.ones(3)\nb = (a * 2).sum()\nb.backward()",
    "a = torch.ones(2, 3)\nprint(a.transpose(0, 2))",
    "a = torch.ones(2, 3)\nprint(a.sum(dim=2))",
    "a = torch.ones(2, 3)\nprint(a.unsqueeze(3))",
    "a = torch.ones(2, 3)\nprint(a.squeeze(2))",
    "#B19\na = torch.ones(2, 3)\nprint(a.expand(2, 4))",
    "#B17\na = torch.ones(2, 3)\nprint(a.permute(0, 0))",
    "#B20\na = torch.ones(2, 3)\nprint(a.t().view(-1))",
    "a = torch.ones(2, 3)\nprint(a.item())",
    "a = torch.ones(2, 3)\nprint(F.cross_entropy(a, torch.tensor([0, 5])))",
    "a = torch.ones(2, 3)\nprint(F.mse_loss(a, torch.ones(2, 3), reduction='avg'))",
    "x = torch.ones(3, requires_grad=True)\ny = torch.ones(3, requires_grad=True)\nprint(torch.autograd.grad((x * 2).sum(), [x, y]))",
    "x = torch.ones(3)\nprint(torch.autograd.grad((x * 2).sum(), x))",
    "#B21\nx = torch.ones(3, requires_grad=True)\ny = x.exp()\ny.add_(1)\ny.sum().backward()",
    "#B21\nx = torch.ones(3, requires_grad=True)\ny = x.sigmoid()\ny.mul_(2)\ny.sum().backward()",
    "#B34\nx = torch.ones(3, requires_grad=True)\ny = x * 2\nz = y * y\ny.add_(1)\nz.sum().backward()",
    "#R4_copyslices_version_message\nx = torch.ones(3, requires_grad=True)\ny = x * 2\nz = y * y\ny[0] = 5.0\nz.sum().backward()",
    "#B22\nx = torch.ones(3, requires_grad=True)\ny = x.tanh()\nd = y.detach()\nd.zero_()\ny.sum().backward()",
    "#B23\na = torch.ones(2, 3)\nprint(a[::-1])",
    "a = torch.ones(2, 3)\nprint(a[[0, 2]])",
    "a = torch.ones(2, 3)\nprint(a[torch.tensor([True, False, True])])",
    "a = torch.ones(2, 3)\nprint(a.max(dim=2))",
    "#B16\na = torch.ones(2, 2)\nb = torch.ones(2, 2, dtype=torch.float64)\nprint(torch.mm(a, b))",
    "a = torch.ones(3)\nb = torch.ones(3, dtype=torch.float64)\nprint(torch.dot(a, b))",
    "a = torch.ones(2, 3)\nprint(torch.softmax(a, dim=3))",
    "a = torch.ones(2, 3, requires_grad=True)\nb = a.sum()\nb.backward(torch.ones(2))",
    "a = torch.ones(2, 3, requires_grad=True)\nb = a * 2\nb.backward(torch.ones(3, 2))",
    "a = torch.arange(6)\nprint(a.mean())",
    "#B24\na = torch.arange(6)\nprint(a.exp(), a.sqrt())\nprint(a.norm())",
    "#B25\na = torch.ones(2, 3)\nprint(torch.ones(2, 3) @ torch.ones(2, 2, 3))",
    "a = torch.ones(3)\nprint(a.clamp())",
    "x = torch.ones(3, requires_grad=True)\ny = x ** 2\nprint(y.grad)\nprint(x.grad)",
    "x = torch.ones(2, 2, requires_grad=True)\ny = (x * x).sum()\ng, = torch.autograd.grad(y, x)\nprint(g)\ng2, = torch.autograd.grad(g.sum(), x)",
]


# --- templates: each class of wrong usage, with random shapes, values and a valid prelude ---
# A template returns the program's lines, or None when its class is steered away from
# (a name in KNOWN_BUGS) or the drawn case does not apply; gen_error then draws another.

def _shape(r, ndim_lo=1, ndim_hi=2):
    return tuple(r.randint(2, 4) for _ in range(r.randint(ndim_lo, ndim_hi)))


def _ones(shape, extra=""):
    return f"torch.ones({', '.join(map(str, shape))}{extra})"


def _leaf_inplace(r):
    op = r.choice(["x.add_(1)", "x.sub_(0.5)", "x.mul_(2)", "x.div_(2)", "x.zero_()",
                   "x.fill_(3)", "x[0] = 2.0", "x += 1", "x -= 1", "x *= 2", "x /= 2",
                   "x **= 2", "x[x > 0] = 0.5", "x[:] = 1"])
    return [f"x = {_ones(_shape(r), ', requires_grad=True')}", "print(x.is_leaf)", op]


def _int_requires_grad(r, bugs):
    ints = [r.randint(-3, 3) for _ in range(r.randint(1, 3))]
    forms = [f"x = torch.tensor({ints}, requires_grad=True)",
             f"x = torch.tensor({ints}).requires_grad_()",
             f"x = torch.ones(2, dtype=torch.{r.choice(['int64', 'long', 'int32'])}, requires_grad=True)",
             "x = torch.arange(3).requires_grad_()"]
    if "C11_requires_grad_flags" not in bugs:
        forms.append(f"x = torch.tensor({ints})\nx.requires_grad = True")
    return [r.choice(forms)]


def _saved_then_changed(r, bugs):
    make = r.choice(["y = x.exp()", "y = x.sigmoid()", "y = x.tanh()", "y = x.sqrt()",
                     "y = x.relu()", "y = x ** 2", "y = x * w", "a = x * 2\ny = a * a",
                     "y = x.pow(3)", "y = x / w"])
    changes = [".add_(1)", ".mul_(2)", ".zero_()", ".fill_(0.5)", " += 1", ".copy_(x0 * 3)"]
    if "R4_copyslices_version_message" not in bugs:
        changes += ["[0] = 1.0", "[1:] = w0[1:]", "[[0, 2]] = 0.5"]
    change = r.choice(changes)
    lines = ["x0 = torch.tensor([0.5, 1.5, 2.0], requires_grad=True)", "x = x0 * 1",
             "w0 = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)", "w = w0 * 1", make]
    # the result, or an input the op saved (some ops save neither: then no error)
    target = "a" if make.startswith("a =") else r.choice(["y", "x"] + (["w"] if "w" in make else []))
    lines.append(f"{target}{change}")
    lines.append(r.choice(["y.sum().backward()", "print(torch.autograd.grad(y.sum(), x0))"]))
    return lines


def _backward_twice(r, bugs):
    makes = ["y = (x * x).sum()", "y = x.exp().sum()", "y = (x @ x)", "y = x.sigmoid().mean()"]
    if "C8_freed_saved_indices" not in bugs:
        makes += ["y = x[[0, 2]].sum()", "y = x[x > 0].sum()", "y = x[torch.tensor([1])].sum()",
                  "y = torch.where(x > 0, x, x * 2).sum()"]
    make = r.choice(makes)
    second = r.choice(["y.backward()", "print(torch.autograd.grad(y, x))"])
    first = r.choice(["y.backward()", "g = torch.autograd.grad(y, x)\nprint(g)"])
    return ["x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)", make, first, second]


def _not_scalar(r):
    shape = _shape(r)
    return [f"x = {_ones(shape, ', requires_grad=True')}", "y = x * 2",
            r.choice(["y.backward()", "print(torch.autograd.grad(y, x))", "(y + 1).backward()"])]


def _no_grad_output(r):
    return r.choice([
        ["x = torch.ones(3)", "(x * 2).sum().backward()"],
        ["x = torch.ones(3, requires_grad=True)", "with torch.no_grad():", "    y = (x * 2).sum()",
         "y.backward()"],
        ["x = torch.ones(3, requires_grad=True)", "y = (x * 2).detach().sum()", "y.backward()"],
        ["x = torch.ones(3, requires_grad=True)", "y = (x * 2).sum()",
         "print(torch.autograd.grad(y, x, create_graph=True)[0].grad_fn)",
         "print(torch.autograd.grad(torch.autograd.grad((x * 2).sum(), x)[0].sum(), x))"],
    ])


def _grad_of_unused(r):
    n = r.randint(2, 4)
    return r.choice([
        [f"x = torch.ones({n}, requires_grad=True)", f"z = torch.ones({n})",
         "print(torch.autograd.grad((x * z).sum(), [x, z]))"],
        [f"x = torch.ones({n}, requires_grad=True)", "u = torch.ones(2, requires_grad=True)",
         f"print(torch.autograd.grad((x * {r.randint(2, 5)}).sum(), [x, u]))"],
        [f"x = torch.ones({n}, requires_grad=True)", "u = torch.ones(2, requires_grad=True)",
         "y = (x * x).sum()", "g = torch.autograd.grad(y, x, create_graph=True)",
         "print(torch.autograd.grad(g[0].sum(), u))"],
    ])


def _shape_mismatch(r, bugs):
    a, b = _shape(r), _shape(r)
    n, k, m = r.randint(2, 4), r.randint(2, 4), r.randint(2, 4)
    cases = [
        f"print({_ones((n, k))} + {_ones((n + 1, k))})",
        f"print({_ones((n, k))} * {_ones((k + 1,))})",
        f"print(torch.mm({_ones((n, k))}, {_ones((k + 1, m))}))",
        f"print(torch.mv({_ones((n, k))}, {_ones((k + 1,))}))",
        f"print(torch.dot({_ones((k,))}, {_ones((k + 1,))}))",
        f"print({_ones((n, k))} @ {_ones((k + 1,))})",
        f"print({_ones((k,))} @ {_ones((k + 1, m))})",
        f"print(torch.cat([{_ones((n, k))}, {_ones((n, k + 1))}]))",
        f"print(torch.stack([{_ones((n, k))}, {_ones((n, k + 1))}]))",
        f"print(torch.cat([{_ones((n, k))}, {_ones((k,))}]))",
        f"print({_ones(a)}.view({int(np.prod(a)) + 1}))",
        f"print({_ones(a)}.reshape(-1, {int(np.prod(a)) + 1}))",
        f"print({_ones((n, k))}.expand({n}, {k + 1}))",
        f"print({_ones(a)}.transpose(0, {len(a)}))",
        f"print({_ones(a)}.sum(dim={len(a)}))",
        f"print({_ones(a)}.max(dim={-len(a) - 1}))",
        f"print({_ones(a)}.unsqueeze({len(a) + 2}))",
        f"print({_ones(a)}.squeeze({len(a)}))",
        f"print({_ones(a)}[{a[0]}])",
        f"print({_ones((n, k))}[0, {k}])",
        f"print(torch.softmax({_ones(a)}, dim={len(a)}))",
        f"print({_ones((n, k))}.t().view(-1))",
        f"print({_ones(b)}.permute({', '.join('0' * len(b))}))",
        f"x = {_ones((n, k), ', requires_grad=True')}\ny = x * 2\ny.backward({_ones((k, n))})",
    ]
    if "C1_matmul_fold_errors" not in bugs:
        cases += [f"print({_ones((2, n, k))} @ {_ones((k + 1, m))})",
                  f"print({_ones((2, n, k))} @ {_ones((k + 1,))})"]
    if "C11_error_messages" not in bugs:
        cases += ["print(torch.ones(3).reshape(-1, -1))", f"x = torch.zeros({n})\nx[0] = torch.ones(2)",
                  f"x = torch.zeros({n})\nx[[0, {n}]] = 1.0"]
    return [r.choice(cases)]


def _to_python_scalar(r):
    n = r.randint(2, 4)
    cases = [f"print(torch.ones({n}).item())", f"print(torch.ones({n}, requires_grad=True).item())",
             f"import math\nprint(math.{r.choice(['sin', 'exp', 'sqrt'])}(torch.ones({n})))"]
    cases += [f"print({fn}(torch.ones({n})))" for fn in ("float", "int", "bool")]
    return [r.choice(cases)]


def _attribute_errors(r, bugs):
    cases = ["x = torch.ones(2)\nprint(x.foo)", "x = torch.ones(2)\nx.bar()"]
    cases += ["print(torch.onse(2))", "import torch.nn as nn\nprint(nn.Linearr)",
              "import torch.nn.functional as F\nprint(F.relux(torch.ones(2)))",
              "import math\nprint(math.tau2)", "x = torch.ones(2, requires_grad=True)\n"
              "print(torch.autograd.grad((x * x).sum(), x, retain=True))"]
    if "I11_8_error_texts" not in bugs:
        cases.append("print('text' + torch.ones(2))")
    if "C11_error_messages" not in bugs:
        cases += ["print(torch.zeros(2, 3).max(dim=0).foo)",
                  "x = torch.ones(2, requires_grad=True)\nprint((x * 2).grad_fn.foo)",
                  "x = torch.ones(2)\nprint(x[0.5])"]
    if "C11_bad_keywords" not in bugs:
        cases += ["print(torch.sum(torch.ones(2, 3), dims=1))", "print(torch.ones(2, 3).sum(dimm=1))",
                  "print(torch.ones(2, 3).softmax(dimm=1))"]
    return [r.choice(cases)]


def _grad_flags(r, bugs):
    cases = ["x = torch.ones(2)\nx.retain_grad()",
             "x = torch.ones(2, requires_grad=True)\ny = x * 2\nprint(y.grad_fn.next_functions[3])",
             "for v in torch.tensor(1.5):\n    print(v)", "print(len(torch.tensor(1.0)))",
             "print(torch.tensor([[1, 2], [3]]))", "print(torch.arange(6).mean())",
             "import torch.nn.functional as F\nprint(F.cross_entropy(torch.ones(2, 3), torch.tensor([0, 5])))",
             "import torch.nn.functional as F\n"
             "print(F.mse_loss(torch.ones(2), torch.ones(2), reduction='avg'))"]
    if "C11_requires_grad_flags" not in bugs:
        cases += ["x = torch.ones(2, requires_grad=True)\nx.grad = torch.ones(3)",
                  "x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.requires_grad = False"]
    if "C11_dtype_checks" not in bugs:
        cases += ["print(torch.ones(2, 3, dtype=torch.float64) @ torch.ones(3))",
                  "x = torch.zeros(2, dtype=torch.float64)\nx[[0]] = torch.ones(1)",
                  "import torch.nn.functional as F\n"
                  "print(F.cross_entropy(torch.ones(2, 3), torch.tensor([0.5, 1.0])))"]
    if "C11_arange_checks" not in bugs:
        cases.append(f"print(torch.arange({r.randint(-3, 0)}))")
    return [r.choice(cases)]


def _assertions_and_unpacking(r):
    return [r.choice([
        "assert 1 > 2", f"assert {r.randint(0, 1)} > 2, 'one is not greater'",
        f"x = torch.ones({r.randint(2, 3)})\nassert x.sum() > 5, f'sum is {{x.sum()}}'",
        "x = torch.ones(2, requires_grad=True)\nassert x.grad is not None, 'no grad yet'",
        "a, b = [1, 2, 3]", "a, b, c = (1, 2)", "a, b = torch.ones(3)",
    ])]


def _python_errors(r):
    return [r.choice([
        "print(undefined_name)", f"print({r.randint(1, 9)} / 0)", f"print({r.randint(1, 9)}.5 / 0)",
        f"print({r.randint(1, 9)} // 0)", f"print({r.randint(1, 9)} % 0)",
        f"print([1, 2][{r.randint(2, 5)}])", "print((1, 2)[-3])",
        "print(int('x'))", "vals = []\nvals.pop()",
        "def f(a, b):\n    return a + b\nprint(f(1))", "def f(a, b):\n    return a + b\nprint(f(1, 2, 3))",
        "def f(a, b=2):\n    return a + b\nprint(f(1, c=3))", "n = 3\nn()", "print(len(5))",
        "print('a' * 'b')", "print(1 + None)",
        "print(max([]))",
    ])]


TEMPLATES = [_leaf_inplace, _int_requires_grad, _saved_then_changed, _backward_twice,
             _not_scalar, _no_grad_output, _grad_of_unused, _shape_mismatch, _to_python_scalar,
             _attribute_errors, _grad_flags, _assertions_and_unpacking, _python_errors]


def templated_error(r, bugs) -> str:
    """One program of a random wrong-usage class, after a short valid prelude."""
    template = r.choice(TEMPLATES)
    params = template.__code__.co_varnames[:template.__code__.co_argcount]
    lines = template(r, bugs) if "bugs" in params else template(r)
    prelude = r.choice([[], ["print(torch.ones(2) * 2)"], ["t = torch.tensor([1.5, -2.0])",
                                                         "print(t.sum(), t.requires_grad)"]])
    return "\n".join(prelude + lines)
