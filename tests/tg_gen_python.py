"""Program kinds about the language around the tensors: statements, builtins, creation.

``python``: a few snippets, each with random constants and shapes, that together use every
statement, expression form and builtin the spec lists (if/elif/else, while, for over
range/lists/tuples/enumerate/zip/tensors, break/continue/pass, def with defaults, keywords
and recursion, assert, augmented and attribute assignment, tuple unpacking, f-strings with
format specs, print's sep/end, chained comparisons, is/in, math, comments, blank lines and
continuation lines), mixed with tensors that require grad.

``creation``: every creation function and dtype of the spec, tensor attributes and
conversions, dtype promotion and the printing modes (integer, scientific, summarised,
wrapped lines); arange/linspace printed with tolist() so every bit shows.
"""

from __future__ import annotations

import numpy as np
from tg_builder import Builder
from tg_known_bugs import KNOWN_BUGS
from tg_values import _fmt, _lit


def _quarters(b: Builder, n: int, lo=-2.0, hi=2.0) -> list[float]:
    return [b.r.randint(int(lo * 4), int(hi * 4)) / 4 for _ in range(n)]


def _tensor(b: Builder, name: str, shape, rg=True) -> np.ndarray:
    """A tensor of distinct quarters (so max/min have no ties)."""
    value = np.array(b.numbers(int(np.prod(shape)))).reshape(shape)
    b.emit(f"{name} = {b.literal(_lit(value), rg)}")
    return value


# --- snippets: each writes a few lines using the tensor `x` (exact values, requires grad) ---

def _loop_range(b: Builder) -> None:
    n, k = b.r.randint(3, 7), b.r.randint(1, 4)
    rng = b.r.choice([f"range({n})", f"range(1, {n})", f"range({n}, 0, -2)", f"range(0, {n}, 2)"])
    b.emit("total = 0")
    b.emit(f"for i in {rng}:")
    b.emit("    if i % 3 == 0:")
    b.emit("        continue")
    b.emit(f"    elif i > {k + 2}:")
    b.emit("        break")
    b.emit("    else:")
    b.emit("        pass")
    b.emit("    total += i")
    b.emit("print(total)")


def _loop_while(b: Builder) -> None:
    b.emit("k = 0")
    b.emit("acc = x * 1")
    b.emit(f"while k < {b.r.randint(1, 3)}:")
    b.emit(f"    acc = acc * {b.r.choice(['0.5', '2', '-1'])} + x")
    b.emit("    k += 1")
    b.emit("print(k, acc, acc.grad_fn)")


def _def_recursive(b: Builder) -> None:
    b.emit("def power(t, n=2):")
    b.emit("    if n == 0:")
    b.emit("        return torch.ones_like(t)")
    b.emit("    return t * power(t, n - 1)")
    n = b.r.randint(1, 3)
    b.emit("y = " + b.r.choice([f"power(x, {n})", f"power(x, n={n})", "power(x)",
                                f"power(t=x, n={n})"]))
    b.emit("print(y, y.grad_fn)")
    b.emit("y.sum().backward()")
    b.emit("print(x.grad)")
    b.emit(b.r.choice(["x.grad = None", "x.grad.zero_()"]))


def _lists_and_builtins(b: Builder) -> None:
    vals = [b.r.choice([1.5, -2, 0.25, 3, -0.5, 4]) for _ in range(b.r.randint(2, 4))]
    b.emit(f"vals = {vals}")
    b.emit(f"vals.append({b.r.choice([2, -1.25])})")
    b.emit("last = vals.pop()")
    b.emit("print(last, vals, len(vals), sum(vals), min(vals), max(vals), vals[0], vals[-1], "
           "vals[1:], vals[::2])")
    b.emit(f"print(abs({b.r.choice([-2.5, -3, 0.5])}), round({b.r.choice([2.675, 1.5, 2.5, -0.5])}), "
           f"round({b.r.choice([2.675, 3.14159, -1.005])}, 2), int({b.r.choice([-2.7, 3.9, 5])}), "
           f"float({b.r.choice([3, -1, True])}), bool({b.r.choice(['[]', '0', '2.5', '()'])}), "
           f"str({b.r.choice([1.5, 2, None, True])}))")
    b.emit("print(list((1, 2)), tuple(vals), list(range(3)), isinstance(1.5, float), "
           "isinstance(vals, list), isinstance(x, tuple), max(2, 3.5), min(-1, 4))")
    b.emit("print(len(x), abs(x), float(x.sum()), int(x.sum()), bool(x.sum() > 0), "
           "round(x.sum().item(), 2), str(x[0]), max(x.tolist()))")


def _enumerate_zip(b: Builder) -> None:
    names = b.r.choice([["a", "b", "c"], ["w", "b"]])
    b.emit(f"names = {names}")
    b.emit("for i, name in enumerate(names):")
    b.emit("    print(i, name, end=' ')")
    b.emit("print()")
    b.emit(f"for name, c in zip(names, ({', '.join(_fmt(c) for c in _quarters(b, len(names)))})):")
    b.emit("    print(name, c * 2, sep='=')")
    b.emit("for c in (1, 2.5):")
    b.emit("    print(c)")
    b.emit("for t in [x, x * 2]:")
    b.emit("    print(t.grad_fn)")
    b.emit("for row in torch.eye(2):")
    b.emit("    print(row)")


def _fstrings(b: Builder) -> None:
    v = b.r.choice([3.14159, -2.5, 0.1, 1234.5678, 1e-05])
    n = b.r.randint(-20, 120)
    b.emit(f"v = {v!r}")
    b.emit(f"n = {n}")
    b.emit("print(f\"v={v:.3f} n={n:d} e={v:.2e} w={n:5d} x={x} s={x.sum():.4f} "
           "i={x.sum().item():.2f} shape={x.shape} {n + 1}\")")
    b.emit("print(f'{v}', f'{n:>4}|{v:8.2f}|', f'{x.dtype}', f'{x.requires_grad}')")
    b.emit("print('a', 1, 2.5, None, True, sep=', ', end=' |\\n')")
    b.emit("print('no newline', end='')")
    b.emit("print()")


def _comparisons(b: Builder) -> None:
    a, c = _fmt(b.r.choice([1.5, 2, -1])), _fmt(b.r.choice([2, 0.5, 3]))
    b.emit(f"a, c = {a}, {c}")
    b.emit("a, c = c, a")
    b.emit("vals = [a, 2, 3]")
    b.emit("print(a < c <= 3, a == 1.5 != c, a is None, a is not None, c in vals, c not in vals)")
    b.emit("print(not a, a and c, a or c, 0 or None, a if a > c else c, -a, +c, 7 // 2, -7 // 2, "
           "7 % 3, -7 % 3, 7.5 // 2, 2 ** 10, 2 ** -1, 1e-3 * 4, 3 / 4)")
    b.emit("print(x > 0, (x > 0) & (x < 1), x == x, x.grad is None, x.grad_fn is None)")


def _math(b: Builder) -> None:
    c = b.r.choice([0.5, 2.0, 1.25])
    b.emit(f"c = {c}")
    b.emit("print(math.pi, math.e, math.sqrt(c), math.exp(c), math.log(c), math.sin(c), "
           "math.cos(c))")
    b.emit("y = x * math.pi + math.sqrt(2)")
    b.emit("print(y.grad_fn, math.sin(x.sum().item()))")


def _augmented(b: Builder) -> None:
    b.emit("n = 3")
    b.emit("n += 1")
    b.emit("n -= 2")
    b.emit("n *= 3")
    b.emit("n /= 4")
    b.emit("n **= 2")
    b.emit("print(n)")
    b.emit("t = x.detach().clone()")
    for op in b.r.choice([["+=", "*="], ["-=", "/="], ["**=", "+="], ["*=", "**="]]):
        b.emit(f"t {op} {b.r.choice(['2', '0.5', '-1'])}" if op != "**=" else "t **= 2")
    b.emit(f"t.{b.r.choice(['div_', 'mul_', 'add_', 'sub_'])}({b.r.choice(['2', '-0.5'])})")
    b.emit("print(t, t.requires_grad, x)")
    b.emit("m = torch.eye(2)")
    b.emit("w = torch.tensor([[1.0, 0.5], [-0.25, 2.0]], requires_grad=True)")
    b.emit("m @= w")
    b.emit("print(m, m.grad_fn)")


def _attributes(b: Builder) -> None:
    b.emit(f"z = torch.tensor({_lit(np.array(_quarters(b, 3)))})")
    b.emit("z.requires_grad = True")
    b.emit("print(z.requires_grad, z.is_leaf)")
    b.emit("(z * z).sum().backward()")
    b.emit("print(z.grad)")
    b.emit("z.grad = None")
    b.emit("print(z.grad)")
    b.emit("h, w = x.shape if x.dim() == 2 else (len(x), 1)")
    b.emit("values, index = x.flatten().max(dim=0)")
    b.emit("print(h, w, values, index)")


def _assertions(b: Builder) -> None:
    b.emit("assert x.requires_grad")
    b.emit(f"assert len(x.shape) == {b.r.choice(['x.dim()', 'x.ndim'])}, 'dims'")
    b.emit("assert x.grad is None or x.grad.shape == x.shape")
    b.emit("print('asserts passed')")


def _continuation(b: Builder) -> None:
    b.emit("q = torch.tensor([[1.0, 2.0],")
    b.emit("                  [3.0, 4.0]],  # a comment inside brackets")
    b.emit("                 requires_grad=True)")
    b.emit("r = (q * 2 +")
    b.emit("     q.sum(dim=0,")
    b.emit("           keepdim=True))")
    b.emit("print(r, torch.sum(r, dim=1,")
    b.emit("                   keepdim=False))")


def _generator(b: Builder) -> None:
    """A generator function of tensors, consumed lazily by a loop, sum(), list() or next();
    sometimes it yields inside a grad-mode block, which stays on while it is suspended."""
    n = b.r.randint(1, 3)
    factor = b.r.choice(["2", "-0.5", "k + 1"])
    if b.chance(4):  # torch's grad-mode decorators run each step of a generator in their mode
        b.emit(b.r.choice(["@torch.no_grad()", "@torch.enable_grad()", "@torch.inference_mode()"]))
    b.emit("def parts(t, n):")
    b.emit("    k = 0")
    b.emit("    while k < n:")
    if b.chance(3):
        b.emit("        with torch.no_grad():")
        b.emit(f"            yield t * {factor}")
    else:
        b.emit(f"        yield t * {factor}")
    b.emit("        k += 1")
    b.emit(b.r.choice(["    yield from [t.sum(), t.exp()]", "    return", "    yield t",
                       "    print(torch.is_grad_enabled())"]))
    consumer = b.r.choice(["loop", "sum", "list", "next"])
    if consumer == "loop":
        b.emit("acc = x * 0")
        b.emit(f"for part in parts(x, {n}):")
        b.emit("    print(part.requires_grad, torch.is_grad_enabled())")
        b.emit("    acc = acc + part")
    elif consumer == "sum":
        b.emit(f"acc = sum(parts(x, {n}))")
    elif consumer == "list":
        b.emit(f"acc = list(parts(x, {n}))[-1]")
    else:
        b.emit(f"it = parts(x, {n})")
        b.emit("acc = next(it) + next(it, x)")
        b.emit("print(torch.is_grad_enabled())")
    b.emit("print(acc, acc.grad_fn)")
    b.emit("if acc.requires_grad:")
    b.emit("    acc.sum().backward()")
    b.emit("    print(x.grad)")
    b.emit("    x.grad = None")


SNIPPETS = [_loop_range, _loop_while, _def_recursive, _lists_and_builtins, _enumerate_zip,
            _fstrings, _comparisons, _math, _augmented, _attributes, _assertions, _continuation,
            _generator]


def gen_python(r) -> str:
    b = Builder(r, "float32", exact=True)
    head = r.choice(["import torch\n", "", "import torch\nimport torch.nn as nn\n"])
    shape = r.choice([(3,), (2, 2), (2, 3), (4,)])
    _tensor(b, "x", shape)
    chosen = [r.choice(SNIPPETS) for _ in range(r.randint(3, 5))]
    for k, snippet in enumerate(chosen):
        if b.chance(2):
            b.emit("")
        if b.chance(2):
            b.emit(f"# part {k + 1}")
        snippet(b)
    text = "\n".join(b.lines) + "\n"
    if "math." in text:
        head += "import math\n"
    return head + text


# --- creation, dtypes, attributes, printing -----------------------------------------------

DTYPES = ["torch.float", "torch.float32", "torch.float64", "torch.double", "torch.int64",
          "torch.long", "torch.int32", "torch.bool"]


def _creation_lines(b: Builder) -> list[str]:
    r = b.r
    n, m = r.randint(1, 4), r.randint(1, 4)
    lo, step = r.randint(-3, 2), r.choice([0.1, 0.25, 0.3, 1, 2, 0.7])
    hi = lo + r.randint(1, 6)
    end = hi if hi > 0 or b.chance(6) and "C11_arange_checks" not in KNOWN_BUGS else hi + 4
    # (arange(end) with end <= 0 is an error)
    steps = r.randint(1, 30)
    a, z = r.choice([0, -1, 0.5, -2.5]), r.choice([1, 2 * 3.141592653589793, 10, 3.3, -1])
    full_value = r.choice(["7", "1.5", "True", "-0.25"])
    lin = r.choice([f"torch.linspace({_fmt(a)}, {_fmt(z)}, {steps})",
                    f"torch.linspace({_fmt(a)}, {_fmt(z)}, steps={steps})",
                    f"torch.linspace(0, 2 * math.pi, {steps})"])
    lin_line = f"print({lin}.tolist())"
    def dt() -> str:
        return r.choice(DTYPES)

    return [
        f"print(torch.tensor({_lit(np.array(_quarters(b, n * m)).reshape(n, m))}, dtype={dt()}))",
        f"print(torch.tensor([{r.randint(-9, 9)}, {r.randint(-9, 9)}]), torch.tensor([True, False]), "
        f"torch.tensor({r.choice(['2', '2.5', 'True', '[[1, 2], [3, 4]]', '[]'])}))",
        f"print(torch.ones({n}, {m}), torch.zeros(({n}, {m}), dtype={dt()}), "
        f"torch.ones({n}, dtype={dt()}))",
        f"o = torch.ones({n}, requires_grad=True)",
        "print(o, torch.zeros_like(o), torch.ones_like(o, dtype=torch.float64), o.is_leaf)",
        f"print(torch.full(({n}, {m}), {full_value}), torch.full(({m},), {full_value}, dtype={dt()}))",
        f"print(torch.eye({n}), torch.eye({n}, {m}), torch.eye({n}, dtype={dt()}))",
        f"print(torch.arange({end}), torch.arange({lo}, {hi}), torch.arange({lo}, {hi}, {step}))",
        f"print(torch.arange({lo}, {hi}, {step}).tolist(), torch.arange({_fmt(float(lo))}, {hi}).dtype)",
        lin_line,
        f"print({lin})",
        f"torch.manual_seed({r.randint(0, 1000)})",
        f"u = torch.rand({n}, {m})",
        f"g = torch.randn({m}, requires_grad=True)",
        "print(u.shape, u.dtype, u.requires_grad, g.shape, g.requires_grad, g.is_leaf, "
        "u.min() >= 0, u.max() < 1)",
        "e = torch.empty_like(u)",
        "print(e.shape, e.dtype, torch.empty_like(g).requires_grad)",
    ]


def _attribute_lines(b: Builder) -> list[str]:
    r = b.r
    shape = r.choice([(2, 3), (3,), (1, 2, 2), ()])
    value = np.array(_quarters(b, int(np.prod(shape)))).reshape(shape)
    size_arg = r.randint(-len(shape), len(shape) - 1) if shape else None
    return [
        f"a = torch.tensor({_lit(value)}, requires_grad=True)",
        "b = a * 2",
        "b.retain_grad()",
        f"print(a.shape, a.size(), {f'a.size({size_arg}), ' if shape else ''}a.dim(), a.ndim, "
        "a.numel(), a.dtype)",
        "print(a.tolist(), b.data, b.detach(), b.clone(), b.clone().grad_fn, b.float().dtype, "
        "b.double(), b.long(), b.is_leaf)",
        "print(a.sum().item(), a.T if a.dim() == 2 else a.t() if a.dim() < 2 else a.shape)",
        "b.sum().backward()",
        "print(a.grad, b.grad, a.grad_fn, b.grad_fn)",
        "c = b.detach()",
        "c.requires_grad_()",
        "print(c.requires_grad, c.is_leaf, b.requires_grad)",
        "d = b * 1",
        "d.detach_()",
        "print(d.requires_grad, d.grad_fn, d.is_leaf)",
    ]


def _promotion_lines(b: Builder) -> list[str]:
    r = b.r
    i = [r.randint(-5, 5) for _ in range(3)]
    j = [r.choice([-3, -2, -1, 1, 2, 3]) for _ in range(3)]
    return [
        f"i = torch.tensor({i})",
        f"j = torch.tensor({j}, dtype=torch.int32)",
        "f = torch.tensor([0.5, -1.0, 2.0])",
        "dd = torch.tensor([1.5, 2.0, -0.5], dtype=torch.float64)",
        "print(i + 1, i * 1.5, i / 2, i // 2, i % 3, i + j, (i + j).dtype, i / j, i * True)",
        "print(f + i, f * dd, (f * dd).dtype, i.float(), dd.long(), i > 0, (i > 0).sum(), "
        "(i > 0).dtype, torch.tensor(True) + 1, i.sum(), i.max(), i.prod())",
    ]


def _printing_lines(b: Builder) -> list[str]:
    r = b.r
    big = r.choice([1001, 1200, 2000])
    rows = r.choice([2, 4, 5])
    scale = r.choice(["1e-5", "1e5", "1e-9", "123.456", "1e10"])
    return [
        f"print(torch.arange({big}.))",
        f"print(torch.arange({r.randint(10, 40)}) * {scale})",
        f"print(torch.tensor([1.0, {scale}, -2.5]), torch.tensor([1e-3, 1.0]), torch.tensor([100000.0, 1.0]))",
        f"print(torch.arange({rows * r.randint(5, 15)}.).reshape({rows}, -1) / 3)",
        "print(torch.tensor([[1, -2], [30, 4]]), torch.tensor([0.0, -0.0, 1.0]), torch.zeros(2, 0))",
        "print(torch.tensor([1.0, -2.5, 0.0]) / 0)",
    ]


def gen_creation(r) -> str:
    b = Builder(r, "float32", exact=True)
    parts = [_creation_lines, _attribute_lines, _promotion_lines, _printing_lines]
    lines: list[str] = []
    for part in [p for p in parts if b.chance(2)] or [r.choice(parts)]:
        lines += part(b)
    text = "\n".join(lines) + "\n"
    head = "import torch\n" if b.chance(2) else ""
    if "math." in text:
        head += "import math\n"
    return head + text
