"""Program kinds about changing tensors: writes through every kind of index, iteration over
tensors, and values that come out as -0.

``setitem``: ``t[KEY] = value`` and ``t[KEY] += value`` for each index kind (int, slices that
cover the whole dim or part of it, ``...``, ``:, j``, ``i, j``, bool masks, lists, index
tensors, ``None``), on a leaf that requires grad under no_grad, on a non-leaf in grad mode
and on a plain tensor that receives a value requiring grad; then backward, with the
gradients and grad_fn names printed.

``iterate``: ``for v in x`` (also with enumerate, zip, nested, ``list(x)``) over tensors that
require grad, each row used in a graph, ``v.grad_fn`` printed.

``negzero``: exact values with zeros and ties, ops whose results can be -0. (products with
zeros, negation, minimum/maximum ties, max/min ties, prod, relu, ``zero_``/``fill_`` on
results), first and second derivatives printed in full.
"""

from __future__ import annotations

import numpy as np
from tg_builder import SHOW_HELPER, Builder
from tg_gen_graphs import (GRAPH_HELPER, create_graph_gradients, graph_hidden, print_node,
                           show_value)
from tg_known_bugs import KNOWN_BUGS
from tg_values import Var, _fmt, _lit

INDEX_KINDS = ("int", "slice_zero", "slice_from", "slice_all", "slice_range", "slice_step", "ellipsis",
               "ellipsis_int", "col", "int_int", "int_slice", "mask", "list", "tensor_list", "none",
               "bool", "mixed")
# drawn twice as often: "bool" splits into two coverage rows (a literal, a 0-d mask), each of
# which must reach 20 programs per 10,000 in every write scenario
_DRAWN_KINDS = INDEX_KINDS + ("bool",)
# Ops whose backward does not read their own result, so a later write into it is allowed.
WRITABLE_TOKENS = ("+", "-", "*", "neg", "sum", "mean", "matmul", "cat", "stack", "clamp",
                   "maximum", "minimum", "where", "square")


def _covers_whole_dim(lo, hi, size) -> bool:
    return lo in (None, 0) and (hi is None or hi >= size)


def index_key(b: Builder, target: Var, kind: str):
    """(index text, NumPy key) of one kind for `target`, or None when it does not apply."""
    x, n = target.value, target.name
    size = x.shape[0]
    i = b.r.randint(-size, size - 1)
    if kind == "int":
        return f"{i}", i
    if kind in ("slice_zero", "slice_from", "slice_all", "slice_range"):
        lo = 0 if kind in ("slice_all", "slice_zero") else b.r.randint(0, size - 1)
        hi = None if kind != "slice_range" else b.r.randint(lo + 1, size + 1)
        text = ":" if kind == "slice_all" else f"{lo}:" + ("" if hi is None else f"{hi}")
        return text, slice(lo, hi)
    if kind == "slice_step":
        lo = b.r.randint(0, size - 1)
        return b.r.choice([f"{lo}::2", f"{lo}:{size}:2"]), slice(lo, size, 2)
    if kind == "ellipsis":
        return "...", Ellipsis
    if kind == "ellipsis_int":
        j = b.r.randint(-x.shape[-1], x.shape[-1] - 1)
        return f"..., {j}", (Ellipsis, j)
    if kind == "none":
        return "None", None
    if kind == "bool":  # a dim of size 1 added, written whole (True) or not at all
        if b.chance(2):
            return b.r.choice(["True", "False"]), b.r.choice([np.True_, np.False_])
        c = round(float(np.sum(x)) + b.r.choice([-0.5, 0.5]), 3)
        return f"{n}.sum() > {_fmt(c)}", (np.bool_(np.sum(x) > c),)
    if kind == "mask":
        values = np.unique(x)
        if values.size < 2:
            return None
        c = float(values[b.r.randint(0, values.size - 2)]) + 0.125
        op = b.r.choice([">", "<"])
        return f"{n} {op} {_fmt(c)}", (x > c) if op == ">" else (x < c)
    if kind in ("list", "tensor_list"):
        picks = sorted({b.r.randint(0, size - 1) for _ in range(b.r.randint(1, 3))})
        return (str(picks) if kind == "list" else f"torch.tensor({picks})"), (picks,)
    if target.ndim < 2:
        return None
    j = b.r.randint(-x.shape[1], x.shape[1] - 1)
    if kind == "col":
        return f":, {j}", (slice(None), j)
    if kind == "mixed":  # basic items with a list: torch writes through a view, then index_put_
        picks = sorted({b.r.randint(0, x.shape[1] - 1) for _ in range(b.r.randint(1, 2))})
        lo, lo1 = b.r.randint(0, size - 1), b.r.randint(0, x.shape[1] - 1)
        return b.r.choice([(f"{i}, {picks}", (i, picks)), (f"{lo}:, {picks}", (slice(lo, None), picks)),
                           (f"[{i}], {lo1}:", ([i], slice(lo1, None)))])
    if kind == "int_int":
        return f"{i}, {j}", (i, j)
    lo = b.r.randint(0, x.shape[1] - 1)
    return f"{i}, {lo}:", (i, slice(lo, None))


def _written_value(b: Builder, slot: tuple, grad_leaves: list[Var],
                   needs_grad: bool) -> tuple[str, object]:
    """A value to write into a slot of shape `slot`: (text, shadow value)."""
    form = 5 if needs_grad else b.r.randint(0, 5)
    if form == 0:
        c = b.r.choice([0, 1, -2, 3])
        return str(c), float(c)
    if form == 1:
        c = b.r.choice([0.0, -0.0, 0.5, -1.5, 2.25])
        return ("-0.0" if c == 0 and b.chance(2) else _fmt(c)), c
    if form == 2:
        c = b.r.choice([0.0, 1.5, -0.75])
        return b.literal(_fmt(c)), c
    if form == 3 and slot:
        text, value = b.const_like(slot)
        return text, value
    if form == 4 and slot:
        text, value = b.const_like(slot[-1:] if b.chance(2) else (1,) * len(slot))
        return text, value
    u = b.leaf(slot, lo=-1.0, hi=1.0)
    grad_leaves.append(u)
    k = b.r.choice([2, -1, 0.5])
    return b.r.choice([(u.name, u.value), (f"{u.name} * {_fmt(k)}", u.value * k)])


def _write(b: Builder, target: Var, grad_leaves: list[Var], needs_grad: bool = False) -> bool:
    """One write through an index into `target` (its shadow value updated); False if none fits."""
    for _ in range(2):  # a kind the target's dims do not allow (int_int on 1-d) draws again
        kind = b.r.choice(_DRAWN_KINDS)
        key = index_key(b, target, kind)
        if key is not None:
            break
    else:
        return False
    text, np_key = key
    value = target.value.copy()
    slot = value[np_key].shape
    if 0 in slot:  # `t[False] = v` writes nothing: a number will do
        if needs_grad:
            return False
        val_text, val = "1.5", 1.5
    else:
        val_text, val = _written_value(b, slot, grad_leaves, needs_grad)
    op = "=" if needs_grad else b.r.choice(["=", "=", "=", "+=", "*="])
    if "B26_view_inplace" in KNOWN_BUGS and target.rg and not b.no_grad:
        op = "="  # `t[k] += v` changes the view t[k] in place, then writes it back
    if op == "=":
        value[np_key] = val
    elif op == "+=":
        value[np_key] = value[np_key] + val
    else:
        value[np_key] = value[np_key] * val
    b.emit(f"{target.name}[{text}] {op} {val_text}")
    target.value = value
    target.history = target.history | {"setitem"}
    if grad_leaves and val_text.startswith(grad_leaves[-1].name) and not b.no_grad:
        target.rg = True  # a value that requires grad, written in grad mode
    return True


def _after_write(b: Builder, target: Var, grad_leaves: list[Var]) -> None:
    print_node(b, target)
    b.emit(f"print({target.name}.requires_grad, {target.name}.is_leaf)")
    show_value(b, target.name)
    if b.chance(4):
        return
    w, _ = b.const_like(target.shape, -1.0, 1.0)
    b.emit(b.r.choice([f"({target.name} * {w}).sum().backward()",
                       f"{target.name}.backward({w})",
                       f"({target.name} * {target.name}).sum().backward()"]))
    for v in grad_leaves:
        if "R1_overwritten_grad_sign" in KNOWN_BUGS:  # no sign on the overwritten zeros
            show_value(b, f"{v.name}.grad if {v.name}.grad is None else {v.name}.grad + 0.0")
        else:
            show_value(b, f"{v.name}.grad")


def gen_setitem(r) -> str:
    b = Builder(r, r.choice(["float32", "float64"]), exact=True)
    b.edges = True
    for _ in range(r.randint(2, 3)):
        if {"C8_freed_saved_indices", "C8b_copyslices_freed"} & KNOWN_BUGS or not b.chance(4):
            # no section reaches into an earlier one's graph, freed by its backward (but in
            # some programs: the second backward through it must fail as torch's does)
            b.vars = []
        _setitem_section(b, r.randint(0, 2))
    return b.source(SHOW_HELPER + GRAPH_HELPER)


def _setitem_section(b: Builder, target_form: int) -> None:
    """Writes into one target (0: a leaf under no_grad, 1: a non-leaf in grad mode, 2: a plain
    tensor given a value that requires grad), then backward."""
    r = b.r
    x = b.leaf(r.choice([(r.randint(2, 4),), (r.randint(1, 3), r.randint(2, 3)),
                         (r.randint(1, 2), r.randint(1, 3), r.randint(2, 3))]), plain=True)
    grad_leaves = [x]
    if target_form == 0:
        b.emit(r.choice(["with torch.no_grad():", "with torch.set_grad_enabled(False):"]))
        b.indent += 1
        target = x
        b.no_grad = True
    elif target_form == 1:
        target = None
        for _ in range(4):
            b.want = r.choice(WRITABLE_TOKENS)
            target = b.step()
            if target is not None and target.rg and target.ndim >= 1 and \
                    target.tag not in ("op_shape", "op_index") and \
                    not ("B26_view_inplace" in KNOWN_BUGS and "view" in target.history):
                break
            target = None
        b.want = None
        if target is None:
            target = b.accept(f"{x.name} * 2", x.value * 2, [x])
        grad_leaves += [v for v in b.vars if v.leaf and v.rg and v not in grad_leaves
                        and v.name in target.deps]
    else:
        shape = x.shape
        fill = r.choice([f"torch.zeros({', '.join(map(str, shape))})",
                         f"torch.ones({', '.join(map(str, shape))})",
                         f"torch.full({shape}, 0.5)", "literal", "literal", "literal", "literal"])
        if fill == "literal":
            fill, value = b.const_like(shape)
        else:
            value = {"z": 0.0, "o": 1.0, "f": 0.5}[fill[6]] * np.ones(shape)
            if b.dtype == "float64":
                fill = fill[:-1] + ", dtype=torch.float64)"
        b.emit(f"t = {fill}")
        target = Var("t", value, b.dtype, False, True)
    for _ in range(20):  # a first write (of a value requiring grad, into a plain tensor)
        if _write(b, target, grad_leaves, needs_grad=target_form == 2):
            break
    for _ in range(r.randint(0, 2)):
        _write(b, target, grad_leaves)
    if target_form == 0:
        b.indent -= 1
        b.no_grad = False
    _after_write(b, target, grad_leaves)


# --- iteration over tensors ---------------------------------------------------------------

def gen_iterate(r) -> str:
    b = Builder(r, r.choice(["float32", "float64"]), exact=r.randint(0, 2) > 0)
    x = b.leaf((r.randint(1, 4),) + tuple(r.randint(1, 3) for _ in range(r.randint(0, 2))),
               rg=not b.chance(5))
    src = x
    if b.chance(2):
        src = b.step() or x
        if src.ndim == 0:
            src = x
    n, k = src.name, b.r.choice([2, -1, 0.5, 3])
    form = r.randint(0, 4)
    body: list[str] = []
    if form == 0:
        b.emit(f"for v in {n}:")
    elif form == 1:
        b.emit(f"for i, v in enumerate({n}):")
        body.append("print(i, v.shape)")
    elif form == 2:
        weights = [b.r.choice([1, -2, 0.5, 3]) for _ in range(src.shape[0])]
        other = b.r.choice([str(weights), f"torch.tensor({[float(w) for w in weights]})"])
        b.emit(f"for v, w in zip({n}, {other}):")
        body.append("v = v * w")
    elif form == 3 and src.ndim >= 2:
        b.emit(f"for row in {n}:")
        b.emit("    for v in row:")
        b.indent += 1
    else:
        b.emit(f"rows = {b.r.choice(['list', 'tuple'])}({n})")
        b.emit("print(len(rows))")
        b.emit("for v in rows:")
    b.indent += 1
    for line in body:
        b.emit(line)
    b.emit(b.r.choice(["print(v.grad_fn)", "print(v.requires_grad, v.is_leaf)"] +
                      ([] if graph_hidden(src) else ["graph(v.grad_fn)"])))
    b.emit(b.r.choice([f"outs.append(v * {_fmt(k)})", "outs.append((v * v).sum())"]))
    if b.chance(3):
        b.emit("if v.sum() > 1:")
        b.emit("    " + b.r.choice(["continue", "pass"]))
    b.indent = 0
    b.lines.insert(next(i for i, line in enumerate(b.lines) if line.startswith(("for ", "rows ="))),
                   "outs = []")
    b.emit("total = " + b.r.choice(["sum(outs)", "torch.stack(outs).sum()"]))
    b.emit("print(total.grad_fn)")
    if x.rg:
        b.emit("total.sum().backward()")
        show_value(b, f"{x.name}.grad")
    return b.source(SHOW_HELPER + GRAPH_HELPER)


# --- values that can come out as -0. -------------------------------------------------------

NEGZERO_TOKENS = ("*", "neg", "minimum", "maximum", "max", "min", "minimum", "min", "prod", "relu", "abs",
                  "unsqueeze", "sum", "matmul", "-", "where", "clamp")


def gen_negzero(r) -> str:
    b = Builder(r, r.choice(["float32", "float64"]), exact=True)
    b.edges = True
    b.palette = [0.0, -0.0, 0.5, -1.0, 2.0] if b.chance(2) else []
    leaves = []
    for _ in range(r.randint(1, 2)):
        shape = b.shape(2, 6) or (2,)
        value = np.array([r.choice([0.0, -0.0, 0.5, -1.0, 0.0, 2.0]) for _ in range(int(np.prod(shape)))])
        v = Var(b.fresh(), value.reshape(shape), b.dtype, True, True)
        b.emit(f"{v.name} = {b.literal(_lit(v.value), rg=True)}")
        b.vars.append(v)
        leaves.append(v)
    made = []
    for _ in range(r.randint(1, 3)):
        b.want = r.choice(NEGZERO_TOKENS)
        var = b.step()
        b.want = None
        if var is not None:
            made.append(var)
    for v in made:
        b.emit(f"print({v.name})")
    y = next((v for v in reversed(made) if v.rg), None)
    if y is None:
        return b.source()
    if y.ndim and b.chance(2) and y.tag not in ("op_shape", "op_index"):
        y2 = b.accept(f"{y.name} * 1", y.value, [y])
        b.emit(b.r.choice([f"{y2.name}.zero_()", f"{y2.name}.zero_()", f"{y2.name}.fill_(0)",
                           f"{y2.name}.fill_(-0.0)", f"{y2.name}.mul_(0)", f"{y2.name}.mul_(-1)",
                           f"{y2.name}.div_(-4)", f"{y2.name}.sub_(0.0)"]))
        b.emit(f"print({y2.name}, {y2.name}.grad_fn)")
        y = b.accept(f"{y2.name} + {y.name}", y.value, [y2, y]) or y
    b.emit(f"print(-{y.name}, {y.name} * 0, 0 * -{y.name})")
    if b.chance(2):
        used = [v for v in leaves if v.name in y.deps] or leaves[:1]
        create_graph_gradients(b, y, used)
        return b.source(GRAPH_HELPER)
    w, _ = b.const_like(y.shape, -1.0, 1.0)
    b.emit(f"{y.name}.backward({w})" if y.ndim else f"({y.name} * {w}).backward()")
    for v in leaves:
        b.emit(f"print({v.name}.grad)")
    return b.source()
