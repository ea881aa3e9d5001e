"""Program kinds about the autograd graph itself: one op at a time, and grad modes.

``graph``: every differentiable op of the spec in turn (Builder.want), its ``grad_fn`` and
``next_functions`` printed, then gradients built with ``create_graph=True`` printed WITH
their grad_fn and the whole graph under them, then a second derivative.  Under
create_graph the backward formulas become graph nodes, so the printed names show whether
each backward rule is built from the ops PyTorch's derivative formulas use.

``gradmode``: ``no_grad``, ``enable_grad`` and ``set_grad_enabled`` as ``with`` blocks
(nested, with a variable flag, inside a ``def``) and ``set_grad_enabled`` called as a
plain statement; ``requires_grad`` and ``is_grad_enabled()`` read inside and after.
"""

from __future__ import annotations

import numpy as np
from tg_builder import FOCUS_OPS, SHOW_HELPER, Builder
from tg_known_bugs import KNOWN_BUGS
from tg_values import Var, _lit

# Prints the graph under a grad_fn: each node's name, its output number and its number of
# inputs (a leaf's shape instead), depth-first and a few levels deep.
GRAPH_HELPER = (
    "def graph(fn, depth=0, k=0):\n"
    "    if fn is None:\n"
    "        print('  ' * depth + 'None', k)\n"
    "    elif fn.name() == 'torch::autograd::AccumulateGrad':\n"
    "        print('  ' * depth + fn.name(), k, fn.variable.shape)\n"
    "    else:\n"
    "        print('  ' * depth + fn.name(), k, len(fn.next_functions))\n"
    "        if depth < 4:\n"
    "            for nxt, idx in fn.next_functions:\n"
    "                graph(nxt, depth + 1, idx)\n"
)

FOCUS_TOKENS = sorted(FOCUS_OPS)
# Ops whose results stay dyadic on dyadic inputs, so their values can be printed directly.
EXACT_TOKENS = {"+", "-", "*", "neg", "abs", "relu", "square", "clamp",
                *(t for t in FOCUS_OPS if t.startswith(("sum", "mean", "max", "min", "prod"))), "maximum", "minimum", "where", "matmul", "mm", "mv", "dot",
                "outer", "matmul3d", "reshape", "view", "flatten", "unsqueeze", "squeeze", "t",
                "T", "transpose", "permute", "expand", "cat",
                "stack", "roll", "pad", *(t for t in FOCUS_OPS if t.startswith("index:"))}
POSITIVE_TOKENS = {"log", "sqrt", "**"}
SOFTMAX_TOKENS = {"log_softmax", "ce"}  # the ops of R2_log_softmax_second_derivative  # defined (and differentiable) only above zero


def focus_builder(r, tokens: list[str]) -> Builder:
    exact = all(t in EXACT_TOKENS for t in tokens) and r.randint(0, 2) > 0
    # float64 unless exact: second derivatives turn float32's last bits into visible errors
    b = Builder(r, r.choice(["float32", "float64"]) if exact else "float64", exact=exact)
    b.edges = exact and b.chance(2)
    return b


def _focus_leaves(b: Builder, tokens: list[str]) -> list[Var]:
    lo = 0.3 if POSITIVE_TOKENS.intersection(tokens) else -2.0
    return [b.leaf(b.shape(3, 12), lo=lo, hi=1.5 if lo > 0 else 2.0)
            for _ in range(b.r.randint(1, 2))]


def _made_by(b: Builder, token: str) -> Var | None:
    """The next step made to write `token` (None when no operand suits it)."""
    b.want = token
    var = b.step()
    b.want = None
    return var


def show_value(b: Builder, text: str, label: str | None = None) -> None:
    """The value of a tensor expression: printed in full when exact, else as a #VAL line."""
    if b.exact:
        b.emit(f"print({text})")
    else:
        b.emit(f"show('{label or text}', {text})")


# Known bugs that show in the graph under a tensor: (flag, op tokens in its history).
GRAPH_BUGS = [("C2_nll_next_functions", {"ce"}), ("C5_setitem_value_view", {"setitem"}),
              ("C5b_setitem_view_same_shape", {"setitem"}),
              ("C6_batched_matmul_graph", {"batched"}), ("C6b_bmm_batch_one", {"batch1"}),
              ("C9_outer_view", {"outer"})]


# ops whose second derivative is zero almost everywhere, built by masks and sgn (I11_2e)
SIGN_TOKENS = {"abs", "relu", "clamp", "maximum", "minimum", "max", "min"}
# products whose backward formulas depend on strides torch has and NumPy may not (I11_2d)
MATMUL_TOKENS = {"mm", "matmul", "matmul3d", "batched", "batch1"}


def graph_hidden(var: Var) -> bool:
    """Whether a known bug would show in the graph under `var` (then only grad_fn is printed)."""
    return any(flag in KNOWN_BUGS and tokens & var.history for flag, tokens in GRAPH_BUGS)


def print_node(b: Builder, var: Var) -> None:
    """grad_fn, next_functions and the graph under one tensor."""
    text = var.name
    form = 3 if graph_hidden(var) else b.r.randint(0, 2)
    if form == 0:
        b.emit(f"print({text}.grad_fn)")
        b.emit(f"graph({text}.grad_fn)")
    elif form == 1:
        b.emit(f"if {text}.grad_fn is not None:")
        b.emit(f"    print({text}.grad_fn, {text}.grad_fn.next_functions)")
        b.emit(f"    print({text}.grad_fn.name(), len({text}.grad_fn.next_functions))")
    elif form == 2:
        b.emit(f"graph({text}.grad_fn)")
    else:
        b.emit(f"print({text}.grad_fn)")


def _differentiated(b: Builder, y: Var, leaves: list[Var]) -> tuple[str, str]:
    """(a line computing `out` from y, the grad_outputs keyword or '') for a first gradient
    that still depends on the inputs, so its backward formula shows as graph nodes."""
    n = y.name
    form = b.r.randint(0, 4)
    if form == 0:
        return f"out = ({n} * {n}).sum()", ""
    if form == 1 and not b.exact:
        return f"out = ({n} ** 3).sum()", ""
    if form == 2:
        weights = b.literal(_lit(np.array(b.numbers(max(y.value.size, 1), 0.5, 1.5))
                                 .reshape(y.shape)))
        return f"out = ({n} * {n} * {weights}).sum()", ""
    if form == 3:  # a grad_outputs that requires grad: the gradient is linear in it
        zero_sign = b.exact and "B29_matmul_neg_zero" in KNOWN_BUGS and "batched" in y.history
        v = b.leaf(y.shape, lo=-1.0, hi=1.0, name="v", nonzero=0.25 if zero_sign else 0.0)
        leaves.append(v)
        return f"out = {n}", ", grad_outputs=v"
    return f"out = {n}.exp().sum()" if not b.exact else f"out = ({n} * {n}).sum()", ""


def create_graph_gradients(b: Builder, y: Var, leaves: list[Var]) -> None:
    """First gradients with create_graph=True, printed with their grad_fn, then a second."""
    line, grad_outputs = _differentiated(b, y, leaves)
    b.emit(line)
    names = ", ".join(v.name for v in leaves)
    if b.chance(3) and not grad_outputs:
        b.emit("out.backward(create_graph=True)")
        b.emit(f"g = [{', '.join(v.name + '.grad' for v in leaves)}]")
    else:
        inputs = b.r.choice([f"[{names}]", f"({names},)"] + ([names] if len(leaves) == 1 else []))
        b.emit(f"g = torch.autograd.grad(out, {inputs}{grad_outputs}, create_graph=True, "
               "allow_unused=True)")
    names_hidden = "I11_2_create_graph_names" in KNOWN_BUGS or (  # values only, no grad_fn
        "I11_2c_prod_zero_graph" in KNOWN_BUGS and any(t.startswith("prod") for t in y.history)
    ) or ("I11_2d_matmul_layout_graph" in KNOWN_BUGS and MATMUL_TOKENS & y.history)
    for k, v in enumerate(leaves):
        show_value(b, f"g[{k}]" + (f" if g[{k}] is None else g[{k}].detach()" if names_hidden
                                   else ""), f"g{k}")
        if names_hidden:  # also whether it is a new node (requires_grad, is_leaf)
            continue
        b.emit(f"if g[{k}] is not None:")
        b.emit(f"    print(g[{k}].requires_grad, g[{k}].is_leaf, g[{k}].grad_fn)")
        b.emit(f"    graph(g[{k}].grad_fn)")
    # (any op of the program: a leaf's .grad may hold an earlier section's gradient too)
    if "R2_log_softmax_second_derivative" in KNOWN_BUGS and \
            any(SOFTMAX_TOKENS & v.history for v in b.vars):
        return
    b.emit("if g[0] is not None and g[0].requires_grad:")
    weights = b.literal(_lit(np.array(b.numbers(max(leaves[0].value.size, 1), 0.5, 1.5))
                             .reshape(leaves[0].shape)))
    b.emit(f"    s = (g[0] * {weights}).sum()")
    # a third derivative of prod is needed to make the second with create_graph
    second = b.chance(2) and not ({"B38_prod_third", "B38b_prod_zero_second"} & KNOWN_BUGS and
                                  any(t.startswith("prod") for t in y.history))
    # abs's second derivative is a zero tensor torch makes without storage (tolist() fails,
    # and it prints as float64 whatever the dtype)
    # (any op of the program, as above)
    values_hidden = any("abs" in v.history for v in b.vars)
    b.emit(f"    h = torch.autograd.grad(s, [{names}], allow_unused=True"
           f"{', create_graph=True' if second else ''})")
    b.indent += 1
    for k, _ in enumerate(leaves):
        if values_hidden:
            if names_hidden:  # whether it is None is one of the differences too
                continue
            b.emit(f"print(h[{k}] is None)")
        elif names_hidden or (  # a zero second derivative: torch may give None, no sign, no graph
                "I11_2e_zero_second_derivative_sign" in KNOWN_BUGS and
                any(SIGN_TOKENS & v.history for v in b.vars)):
            show_value(b, f"torch.zeros_like({leaves[k].name}) if h[{k}] is None else "
                          f"h[{k}].detach() + 0.0", f"h{k}")
            continue
        else:
            show_value(b, f"h[{k}]", f"h{k}")
        if second:
            b.emit(f"print(h[{k}] is None or h[{k}].requires_grad)")
    b.indent -= 1


def gen_graph(r) -> str:
    # (the binary ops that broadcast twice as often: the coverage table names each of them)
    sections = [[r.choice(FOCUS_TOKENS + ["/", "-", "maximum", "minimum"])
                 for _ in range(r.randint(1, 3))] for _ in range(r.randint(2, 3))]
    b = focus_builder(r, [t for tokens in sections for t in tokens])
    for tokens in sections:
        if {"C8_freed_saved_indices", "C8b_copyslices_freed"} & KNOWN_BUGS or not b.chance(4):
            # no section reaches into an earlier one's graph, freed by its backward (but in
            # some programs: the second backward through it must fail as torch's does)
            b.vars = []
        _graph_section(b, tokens)
    return b.source(SHOW_HELPER + GRAPH_HELPER)


def _graph_section(b: Builder, tokens: list[str]) -> None:
    """Fresh leaves, the ops (each value and node printed), then create_graph gradients."""
    leaves = _focus_leaves(b, tokens)
    y = None
    for token in tokens:
        made = _made_by(b, token)
        if made is not None and made.rg:
            y = made
            show_value(b, y.name)
            print_node(b, y)
    if y is None:
        y = b.accept(f"{leaves[0].name} * 2", leaves[0].value * 2, [leaves[0]])
        print_node(b, y)
    used = [v for v in b.vars if v.leaf and v.rg and v.name in y.deps]
    create_graph_gradients(b, y, used or leaves[:1])


# --- grad modes ----------------------------------------------------------------------------

# (context text, grad mode inside: True on, False off, None = the variable `flag`)
CONTEXTS = [("torch.no_grad()", False), ("torch.enable_grad()", True),
            ("torch.set_grad_enabled(False)", False), ("torch.set_grad_enabled(True)", True),
            ("torch.set_grad_enabled(flag)", None), ("torch.set_grad_enabled(not flag)", None)]


def _with_block(b: Builder, flag: bool, depth: int) -> list[Var]:
    text, mode = b.r.choice(CONTEXTS)
    if mode is None:
        mode = flag if text.endswith("(flag)") else not flag
    outer = b.no_grad
    b.emit(f"with {text}:")
    b.no_grad, b.indent = not mode, b.indent + 1
    made = [v for v in (b.step() for _ in range(b.r.randint(1, 2))) if v is not None]
    if depth < 2 and b.chance(2):
        made += _with_block(b, flag, depth + 1)
    if b.chance(2) or not made:
        b.emit("print(torch.is_grad_enabled())")
    b.no_grad, b.indent = outer, b.indent - 1
    return made


def _grad_mode_function(b: Builder, flag: bool) -> Var | None:
    """A def whose body runs under a context and returns from inside it."""
    x = b.pick(lambda v: v.rg)
    if x is None:
        return None
    text, mode = b.r.choice(CONTEXTS)
    if mode is None:
        mode = flag if text.endswith("(flag)") else not flag
    k = b.r.choice([2, 3, -1, 0.5])
    b.emit("def scaled(t, k=2):")
    b.emit(f"    with {text}:")
    b.emit("        return t * k")
    call = b.r.choice([f"scaled({x.name}, {k})", f"scaled({x.name}, k={k})"]) if k != 2 else \
        f"scaled({x.name})"
    outer = b.no_grad
    b.no_grad = not mode  # every context sets the mode, whatever it was outside
    var = b.accept(call, x.value * k, [x])
    b.no_grad = outer
    if var is not None:
        b.emit(f"print({var.name}.requires_grad, {var.name}.grad_fn, torch.is_grad_enabled())")
    return var


def gen_gradmode(r) -> str:
    b = Builder(r, r.choice(["float32", "float64"]), exact=r.randint(0, 1) == 0)
    flag = b.chance(2)
    b.emit(f"flag = {flag}" if b.chance(2) else f"flag = {'not ' if not flag else ''}"
           f"torch.is_grad_enabled()")
    b.leaf(b.shape(2, 8))
    if b.chance(2):
        b.leaf(b.shape(2, 8), rg=b.chance(2))
    made: list[Var] = []
    switched_off = False
    for _ in range(r.randint(2, 4)):
        block = r.randint(0, 5)
        if block == 0:
            made += [v for v in (b.step(),) if v is not None]
        elif block == 1:
            made += [v for v in (_grad_mode_function(b, flag),) if v is not None]
        elif block == 2 and not switched_off:
            b.emit("torch.set_grad_enabled(False)")
            b.no_grad = switched_off = True
            made += [v for v in (b.step(),) if v is not None]
            b.emit("print(torch.is_grad_enabled())")
            if b.chance(2):
                b.emit("torch.set_grad_enabled(True)")
                b.no_grad = switched_off = False
        else:
            inside = _with_block(b, flag, 0)
            made += inside
            b.emit("print(torch.is_grad_enabled())")
            for v in inside[-2:]:
                b.emit(f"print({v.name}.requires_grad, {v.name}.is_leaf, {v.name}.grad_fn)")
    for v in made:
        show_value(b, v.name)
    outs = [v for v in made if v.rg]
    if outs:
        out = outs[-1]
        if b.no_grad and b.chance(2):  # backward works with grad mode off: no new op is made
            b.emit(f"{out.name}.backward(torch.ones_like({out.name}))")
        else:
            if b.no_grad:
                b.emit("torch.set_grad_enabled(True)")
            b.emit(f"{out.name}.sum().backward()" if out.ndim else f"{out.name}.backward()")
        for v in b.vars:
            if v.leaf and v.rg:
                show_value(b, f"{v.name}.grad")
    b.emit("print(torch.is_grad_enabled())")
    return b.source(SHOW_HELPER)
