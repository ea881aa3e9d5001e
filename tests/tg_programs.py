"""Random well-typed .tg programs for differential testing against PyTorch.

    python tests/tg_programs.py SEED [KIND]   # print the program a seed generates

Every generator draws through a tiny interface, ``r.choice(seq)`` and
``r.randint(lo, hi)``, so one builder serves two sources of randomness:
``random.Random(seed)`` (``program_for_seed``: a program is a pure function of
an int seed, which is what CI runs and what a failure report names) and a
Hypothesis ``draw`` (``programs()``: a strategy that Hypothesis can shrink).

While it writes a program the builder also computes every value in float64
NumPy (the "shadow").  Torch is the oracle, so the shadow only has to be close:
it steers ops away from their domain edges (log of a negative, division by ~0),
ties (max/min, maximum/minimum), kinks (abs/relu/clamp at the break) and huge
magnitudes, so results are well conditioned and comparable.

Output conventions shared with test_differential.py:
  ``#VAL name dtype list`` (via the program's own ``show`` helper) is compared
  numerically; every other line is compared byte for byte.
Program kinds: ``float`` (random values, op chains, backward; values via #VAL),
``exact`` (small dyadic values so float32 is exact: tensors printed directly),
``higher`` (torch.autograd.grad with create_graph, orders 2 and 3), ``inplace``
(SGD steps, in-place updates of non-leaves, CopySlices, version-counter errors)
and ``error`` (programs torch rejects: the error line must match).
"""

from __future__ import annotations

import math
import random
import sys

import numpy as np

from tg_builder import SHOW_HELPER, Builder
from tg_error_programs import ERRORS, templated_error
from tg_gen_graphs import SOFTMAX_TOKENS, gen_gradmode, gen_graph
from tg_gen_expand import gen_expand_write
from tg_gen_inplace import gen_iterate, gen_negzero, gen_setitem
from tg_gen_python import gen_creation, gen_python
from tg_gen_v2 import gen_v2
from tg_known_bugs import KNOWN_BUGS
from tg_values import Var, _lit

KINDS = ("float", "exact", "higher", "inplace", "error", "graph", "gradmode", "setitem",
         "iterate", "negzero", "python", "creation", "v2", "expandwrite")
_KIND_WEIGHTS = ("float",) * 8 + ("exact",) * 5 + ("higher",) * 3 + ("inplace",) * 3 + \
    ("error",) * 5 + ("graph",) * 10 + ("gradmode",) * 4 + ("setitem",) * 6 + ("iterate",) * 3 + \
    ("negzero",) * 3 + ("python",) * 3 + ("creation",) * 2 + ("v2",) * 4 + ("expandwrite",) * 2


class HypothesisDraw:
    """Adapts Hypothesis's ``draw`` to the ``choice``/``randint`` interface."""

    def __init__(self, draw):
        from hypothesis import strategies as st  # noqa: PLC0415 - only needed with Hypothesis
        self._draw, self._st = draw, st

    def choice(self, seq):
        return self._draw(self._st.sampled_from(list(seq)))

    def randint(self, lo: int, hi: int) -> int:
        return self._draw(self._st.integers(lo, hi))


# --- program kinds -------------------------------------------------------------------------------

def _float_dtype(r) -> str:
    return r.choice(["float32", "float32", "float64"])


def _show_meta(b: Builder, vars_: list[Var]) -> None:
    for v in vars_:
        b.emit(f"print({v.name}.shape, {v.name}.dtype, {v.name}.requires_grad, {v.name}.is_leaf, "
               f"{v.name}.grad_fn)")


def _backward(b: Builder, out: Var, retain_some: list[Var]) -> None:
    """out.backward in one of its forms (maybe twice, with retain_graph)."""
    # (aliased .grad needs two 0-d leaves fed into one stack/cat: see C16 in tg_known_bugs)
    twice = b.chance(6) and not ("C16_aliased_grad_accumulation" in KNOWN_BUGS and
                                 any(v.leaf and v.rg and v.ndim == 0 for v in b.vars) and
                                 any({"stack", "cat"} & v.history for v in b.vars))
    retain = ", retain_graph=True" if twice else ""
    used = [v.name for v in b.vars if v.leaf and v.rg and v.name in out.deps]
    if used and b.chance(4):
        _backward_with_inputs(b, out, used)
        return
    if out.ndim == 0 and b.chance(2):
        call = f"{out.name}.backward({retain[2:]})"
    else:
        form = b.r.randint(0, 3)
        if form == 0:
            call = f"{out.name}.sum().backward({retain[2:]})"
        elif form == 1 and (not b.exact or out.value.size in (1, 2, 4, 8, 16)):
            call = f"{out.name}.mean().backward({retain[2:]})"
        elif form <= 2:
            call = f"{out.name}.backward(torch.ones_like({out.name}){retain})"
        else:
            grad, _ = b.const_like(out.shape, -1.0, 1.0)
            call = f"{out.name}.backward(gradient={grad}{retain})"
    for v in retain_some:
        b.emit(f"{v.name}.retain_grad()")
    handle = _hook(b, out) if b.chance(4) else None
    b.emit(call)
    if handle and (twice or b.chance(2)):
        b.emit(f"{handle}.remove()")  # the second backward runs without it
    if twice:
        b.emit(call.replace(", retain_graph=True", "").replace("(retain_graph=True)", "()"))


def _hook(b: Builder, out: Var) -> str | None:
    """Tensor.register_hook on a tensor of out's graph (a leaf or not): the hook prints the
    gradient arriving there, and maybe replaces it (doubled) or returns None.  The handle's
    name, or None when nothing fits."""
    fits = [v for v in b.vars if v.rg and (v is out or v.name in out.deps)]
    if not fits:
        return None
    v = b.r.choice(fits)
    k = len([line for line in b.lines if line.startswith("def hook")])
    b.emit(f"def hook{k}(grad):")
    b.emit(f"    print('hook on {v.name}:', grad.shape, grad.dtype)")
    b.emit(f"    print(grad)" if b.exact else f"    show('hook_{v.name}', grad)")
    form = b.r.randint(0, 2)
    if form == 1:
        b.emit("    return grad * 2")
    elif form == 2:
        b.emit("    return None")
    b.emit(f"h{k} = {v.name}.register_hook(hook{k})")
    return f"h{k}"


def _backward_with_inputs(b: Builder, out: Var, used: list[str]) -> None:
    """backward(inputs=...) or torch.autograd.backward(tensors, grad_tensors, inputs=...): only
    the listed tensors receive a .grad."""
    chosen = [name for name in used if b.chance(2)] or used[:1]
    inputs = b.r.choice([f"[{', '.join(chosen)}]", f"({', '.join(chosen)},)"] +
                        ([chosen[0]] if len(chosen) == 1 else []))
    n = out.name
    scalar = n if out.ndim == 0 else f"{n}.sum()"
    form = b.r.randint(0, 3)
    if form == 0:
        b.emit(f"{scalar}.backward(inputs={inputs})")
    elif form == 1:
        b.emit(f"torch.autograd.backward({scalar}, inputs={inputs})")
    elif form == 2:
        b.emit(f"torch.autograd.backward([{n}], [torch.ones_like({n})], inputs={inputs})")
    else:
        grad, _ = b.const_like(out.shape, -1.0, 1.0)
        b.emit(f"torch.autograd.backward({n}, grad_tensors={grad}, inputs={inputs})")


def gen_float(r) -> str:
    b = Builder(r, _float_dtype(r))
    for _ in range(r.randint(1, 2)):
        b.leaf(b.shape(), rg=not b.chance(5))
    made = b.chain(r.randint(2, 6))
    _show_meta(b, made)
    for v in made:
        b.emit(f"show('{v.name}', {v.name})")
    grads = [v for v in made if v.rg]
    if grads:
        out = grads[-1]
        retained = [v for v in grads[:-1] if b.chance(3)]
        _backward(b, out, retained)
        for v in b.vars:
            if v.leaf and v.dtype == b.dtype:
                b.emit(f"show('{v.name}.grad', {v.name}.grad)")
        for v in retained:
            b.emit(f"show('{v.name}.grad', {v.name}.grad)")
    return b.source(SHOW_HELPER)


def gen_exact(r) -> str:
    b = Builder(r, r.choice(["float32", "float32", "float64"]), exact=True)
    if b.chance(4):
        return _gen_promotion(b)
    for _ in range(r.randint(1, 2)):
        b.leaf(b.shape(max_numel=12), rg=not b.chance(5))
    made = b.chain(r.randint(2, 5))
    for v in made:
        b.emit(f"print({v.name})")
    grads = [v for v in made if v.rg]
    if grads:
        out = grads[-1]
        _backward(b, out, [])
        for v in b.vars:
            if v.leaf:
                b.emit(f"print({v.name}.grad)")
    return b.source()


def _gen_promotion(b: Builder) -> str:
    """dtype promotion and integer/bool results, printed exactly."""
    r = b.r
    shape = b.shape(2, 6)
    ints = np.array([r.randint(-5, 5) for _ in range(math.prod(shape))]).reshape(shape)
    nonzero = np.array([r.choice([-3, -2, -1, 1, 2, 3]) for _ in range(ints.size)]).reshape(shape)
    b.emit(f"i = torch.tensor({_lit(ints)})")
    b.emit(f"j = torch.tensor({_lit(nonzero)})")
    b.emit(f"f = {b.literal(_lit(ints * 0.5))}")
    b.emit(f"d = torch.tensor({_lit(ints * 0.25)}, dtype=torch.float64)")
    b.emit("z = torch.tensor(1.5, dtype=torch.float64)")
    exprs = ["i + 1", "i * 2", "i + 1.5", "i / j", "i * j", "i // j", "i % j", "i - j",
             "i > 0", "(i > 0).sum()", "i == j", "f + i", "f * d", "f + z", "i + z", "i.sum()",
             "i.float()", "f.long()", "d.float()", "i.double() / 4", "i.max()", "j.min()",
             "(i > j) & (j > 0)", "i.shape", "i.dtype", "(i + 1.5).dtype", "(f + z).dtype",
             "torch.where(i > 0, i, j)", "i.flatten()", "i.prod()",
             "torch.maximum(i, j)", "(f > 0).float().mean()", "i.to(torch.float64)",
             "torch.full((2, 3), 7)", "torch.arange(5) * 0.5", "torch.zeros(2, dtype=torch.int64)",
             "torch.ones(3).long() + i.flatten()[:1]", "(i.abs() ** 2)", "-i", "i.numel()",
             "torch.eye(2) * 3", "torch.linspace(0, 1, steps=5)"]
    exprs.append("f.sum(0)")
    for _ in range(r.randint(4, 9)):
        b.emit(f"print({r.choice(exprs)})")
    return b.source()


def gen_higher(r) -> str:
    # float64 only: 2nd/3rd derivatives amplify float32 last-bit differences so much that two
    # torch runs (different memory alignment, so different reduction order) disagree past 1e-5.
    b = Builder(r, "float64")
    b.higher = True
    x = b.leaf(b.shape(2, 6), lo=0.3, hi=1.5)
    for _ in range(r.randint(0, 1)):
        b.leaf(b.shape(2, 6), rg=True)
    made = b.chain(r.randint(1, 3))
    outs = [v for v in made if x.name in v.deps and np.abs(v.value).max(initial=0) < 3 and
            not ("R2_log_softmax_second_derivative" in KNOWN_BUGS and SOFTMAX_TOKENS & v.history)]
    if not outs:
        return gen_float(r)
    out = outs[-1]
    leaves = [v for v in b.vars if v.name in out.deps]  # x first: it was made first
    names = ", ".join(v.name for v in leaves)
    cube = f"{out.name} * {out.name} * {out.name}"  # cubic, so orders 2 and 3 exist
    form = r.randint(0, 2)
    if form == 0:
        b.emit(f"out = ({cube}).sum()")
        b.emit(f"g1 = torch.autograd.grad(out, [{names}], create_graph=True)")
    elif form == 1:
        b.emit(f"cube = {cube}")
        b.emit(f"g1 = torch.autograd.grad(cube, [{names}], grad_outputs=torch.ones_like(cube), "
               "create_graph=True)")
    else:
        b.emit(f"({cube}).sum().backward(create_graph=True)")
        b.emit(f"g1 = [{', '.join(v.name + '.grad' for v in leaves)}]")
        b.emit(f"print({x.name}.grad.grad_fn)")
    for k, v in enumerate(leaves):
        b.emit(f"show('d1_{v.name}', g1[{k}])")
        b.emit(f"print(g1[{k}].requires_grad)")
    # Uneven weights: plain sums of e.g. softmax derivatives vanish analytically, leaving only
    # float32 rounding noise to compare.
    weights = [b.literal(_lit(np.array(b.numbers(x.value.size, 0.5, 1.5)).reshape(x.shape)))
               for _ in range(2)]
    b.emit(f"s = (g1[0] * {weights[0]}).sum()" + "".join(f" + (g1[{k}] * g1[{k}]).sum()"
                                                         for k in range(1, len(leaves))))
    b.emit(f"g2 = torch.autograd.grad(s, [{names}], create_graph=True, allow_unused=True)")
    for k, v in enumerate(leaves):
        b.emit(f"show('d2_{v.name}', g2[{k}])")
    if r.randint(0, 1):
        b.emit(f"g3 = torch.autograd.grad((g2[0] * {weights[1]}).sum(), {x.name}, "
               "allow_unused=True)")
        b.emit(f"show('d3_{x.name}', g3[0])")
    return b.source(SHOW_HELPER)


def gen_inplace(r) -> str:
    return r.choice([_gen_sgd, _gen_nonleaf_inplace])(r)


def _gen_sgd(r) -> str:
    b = Builder(r, _float_dtype(r))
    n, k, m = r.randint(2, 5), r.randint(1, 3), r.randint(1, 2)
    xs, _ = b.const_like((n, k), -1, 1)
    ys, _ = b.const_like((n, m), -1, 1)
    b.emit(f"X = {xs}")
    b.emit(f"Y = {ys}")
    w = b.leaf((k, m), lo=-0.5, hi=0.5)
    bias = b.leaf((m,), lo=-0.5, hi=0.5) if r.randint(0, 1) else None
    params = [w] + ([bias] if bias else [])
    lr = r.choice([0.1, 0.05, 0.2])
    b.emit(f"for step in range({r.randint(1, 4)}):")
    pred = f"X @ {w.name}" + (f" + {bias.name}" if bias else "")
    loss = r.choice([f"F.mse_loss({pred}, Y)", f"(({pred} - Y) ** 2).mean()",
                     f"(({pred} - Y) ** 2).sum() / {n}"])
    body = [f"loss = {loss}", "loss.backward()", "show('loss', loss)", "with torch.no_grad():"]
    for p in params:
        body.append("    " + r.choice([f"{p.name} -= {lr} * {p.name}.grad",
                                       f"{p.name}.sub_({lr} * {p.name}.grad)",
                                       f"{p.name}.add_({p.name}.grad * -{lr})"]))
    for p in params:
        body.append(r.choice([f"{p.name}.grad.zero_()", f"{p.name}.grad = None"]))
    b.lines.extend("    " + line for line in body)
    for p in params:
        b.emit(f"show('{p.name}', {p.name})")
        b.emit(f"print({p.name}.requires_grad, {p.name}.is_leaf, {p.name}.grad_fn)")
    b.lines.insert(0, "import torch.nn.functional as F")
    return b.source(SHOW_HELPER)


def _is_view(v: Var) -> bool:
    return v.tag in ("op_shape", "op_index") or "view" in v.history


def _inplace_ok(v: Var) -> bool:
    return not ("B26_view_inplace" in KNOWN_BUGS and _is_view(v) or
                "D1_zero_dim_base_view_write" in KNOWN_BUGS and _is_view(v) and v.value.size == 1)


def _gen_nonleaf_inplace(r) -> str:
    b = Builder(r, _float_dtype(r))
    x = b.leaf(b.shape(2, 12), lo=0.2, hi=1.5, plain="B28_leaf_messages" in KNOWN_BUGS)
    made = b.chain(r.randint(1, 3))
    targets = [v for v in made if v.rg and v.ndim >= 1 and _inplace_ok(v)] or [x]
    y = r.choice(targets)
    ops = [0, 1, 2, 3, 4, 5, 6]
    if "B28_leaf_messages" in KNOWN_BUGS and y is x:
        ops.remove(3)
    op = r.choice(ops)
    n = y.name
    if op == 0:
        b.emit(r.choice([f"{n}.add_(1.5)", f"{n} += 1.5", f"{n}.sub_(0.5)", f"{n} -= 0.5"]))
    elif op == 1:
        b.emit(r.choice([f"{n}.mul_(2)", f"{n} *= 2", f"{n}.div_(4)", f"{n} /= 4"]))
    elif op == 2 and y.ndim >= 1:
        i = r.randint(0, y.shape[0] - 1)
        val = r.choice(["0.5", f"{x.name}.sum()" if x.ndim else x.name, "torch.tensor(2.0)"])
        if val == f"{x.name}.sum()" and y.ndim > 1:
            val = "0.25"
        b.emit(f"{n}[{i}] = {val}")
    elif op == 3 and not (y.ndim == 0 and "C15_zero_dim_mask_write" in KNOWN_BUGS):
        b.emit(f"{n}[{n} > 1.0] = 0.0")
    elif op == 4:
        b.emit(f"{n}.zero_()" if r.randint(0, 1) else f"{n}.fill_(3.0)")
    elif op == 5:
        b.emit(f"{x.name}.add_(1.0)")  # a leaf that requires grad: torch refuses
    elif op == 6 and not ("B13_detach_view_inplace" in KNOWN_BUGS and _is_view(y)):
        b.emit(f"d = {n}.detach()")
        b.emit("d.mul_(0.5)")
    else:
        b.emit(f"{n}.add_(0.25)")
    b.emit(f"print({n}.grad_fn, {n}.requires_grad, {n}.is_leaf)")
    b.emit(f"show('{n}', {n})")
    b.emit(f"z = ({n} * {n}).sum()")
    b.emit("z.backward()")
    b.emit(f"show('x.grad', {x.name}.grad)")
    return b.source(SHOW_HELPER)


def gen_error(r) -> str:
    if r.randint(0, 2):
        return templated_error(r, KNOWN_BUGS) + "\n"
    usable = [e for e in ERRORS if not (e.startswith("#") and e[1:e.index("\n")] in KNOWN_BUGS)]
    return "import torch.nn.functional as F\n" + r.choice(usable) + "\n"


GENERATORS = {"float": gen_float, "exact": gen_exact, "higher": gen_higher,
              "inplace": gen_inplace, "error": gen_error, "graph": gen_graph,
              "gradmode": gen_gradmode, "setitem": gen_setitem, "iterate": gen_iterate,
              "negzero": gen_negzero, "python": gen_python, "creation": gen_creation,
              "v2": gen_v2, "expandwrite": gen_expand_write}


def program_for_seed(seed: int, kind: str | None = None) -> tuple[str, str]:
    """(kind, program text): a pure function of the seed."""
    r = random.Random(seed)
    kind = kind or r.choice(_KIND_WEIGHTS)
    return kind, GENERATORS[kind](r)


def programs(kind: str | None = None):
    """A Hypothesis strategy for program texts (of one kind, or any)."""
    from hypothesis import strategies as st  # noqa: PLC0415

    @st.composite
    def strategy(draw):
        r = HypothesisDraw(draw)
        return GENERATORS[kind or r.choice(KINDS)](r)

    return strategy()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.splitlines()[2])
    kind, text = program_for_seed(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
    print(f"# kind: {kind}")
    print(text, end="")


__all__ = ["KINDS", "KNOWN_BUGS", "program_for_seed", "programs", "HypothesisDraw"]
