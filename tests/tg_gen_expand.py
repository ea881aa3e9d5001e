"""Program kind ``expandwrite``: in-place writes into a view whose elements share memory.

An expand (``expand``, ``expand_as``, ``broadcast_to``, ``unsqueeze(0).expand``) repeats
its base's elements without copying them. torch lets ``fill_`` with a number, ``zero_``
and index_put_ (a mask or an index tensor) write there, refuses every computed write
(``add_``, ``copy_``, ``t[:] = v``, ``out=``) before it computes anything, and lets a write
into one row (distinct elements) through. Through a base that requires grad the write is
recorded on the base (CopySlices), and the backward of a refused copy fails in torch too.
Each write is wrapped in try/except, so one program shows several outcomes; the base, the
view, their grad_fn and the gradients after backward are printed.
"""

from __future__ import annotations

import numpy as np
from tg_builder import SHOW_HELPER, Builder
from tg_values import _fmt, _lit

# base shape -> shapes an expand of it may take
EXPANSIONS = {(3,): [(2, 3), (4, 3), (2, 2, 3)], (1, 3): [(2, 3), (3, 3), (2, 1, 3)],
              (2, 1): [(2, 3), (2, 2), (3, 2, 4)], (1,): [(4,), (2, 3)]}


def _view_expression(b: Builder, base: str, shape: tuple) -> str:
    dims = ", ".join(map(str, shape))
    forms = [f"{base}.expand({dims})", f"{base}.expand_as(torch.zeros({dims}))",
             f"{base}.broadcast_to(({dims},))" if len(shape) > 1 else f"{base}.expand({dims})",
             f"torch.broadcast_to({base}, ({dims},))"]
    return b.r.choice(forms)


def _writes(b: Builder, shape: tuple) -> list[str]:
    """Statements writing into `v` (of `shape`): each allowed, refused, or a row at a time."""
    c = _fmt(b.r.choice([0.0, 1.5, -2.0, 0.25]))
    rows = shape[0]
    same = _lit(np.array(b.numbers(int(np.prod(shape)))).reshape(shape))
    last = _lit(np.array(b.numbers(shape[-1])))
    choices = [
        f"v.fill_({c})", "v.zero_()", f"v.add_({c})", f"v.mul_(torch.tensor({last}))",
        f"v.sub_({c}, alpha=2)", f"v.div_({_fmt(b.r.choice([2.0, -4.0]))})", "v.clamp_(-1, 1)",
        "v.sin_()", "v.relu_()", f"v.copy_(torch.tensor({same}))",
        f"v.fill_(torch.tensor({c}))", f"v[{b.r.randint(0, rows - 1)}] = {c}",
        f"v[:] = {c}", f"v[..., 0] = {c}", f"v[v > {c}] = {c}",
        f"v[torch.tensor([0])] = {c}", f"torch.add(v, 1, out=v)", f"v += {c}",
        f"v *= torch.tensor({last})", f"v.pow_(2)", f"v.neg_()", f"v[0] = torch.tensor({last})",
    ]
    if len(shape) > 1:
        choices += [f"v[0, 0] = {c}", f"v[:, 0] = {c}", f"v[0, :] = torch.tensor({last})"]
    return [b.r.choice(choices) for _ in range(b.r.randint(1, 3))]


def gen_expand_write(r) -> str:
    b = Builder(r, r.choice(["float32", "float64"]), exact=True)
    base_shape = r.choice(list(EXPANSIONS))
    shape = r.choice(EXPANSIONS[base_shape])
    values = _lit(np.array(b.numbers(int(np.prod(base_shape)))).reshape(base_shape))
    dtype = "" if b.dtype == "float32" else ", dtype=torch.float64"
    form = r.randint(0, 3)  # plain; a result of a leaf; a leaf under no_grad; the leaf itself
    needs_grad = form != 0
    b.emit(f"x = torch.tensor({values}{dtype}, requires_grad={needs_grad})")
    base = "x"
    if form == 1:
        b.emit(r.choice(["base = x * 1", "base = x + 0", "base = x.clone()", "base = x.exp()"]))
        base = "base"
    b.emit(f"v = {_view_expression(b, base, shape)}")
    if form == 2:
        b.emit(r.choice(["with torch.no_grad():", "with torch.set_grad_enabled(False):"]))
        b.indent += 1
    for write in _writes(b, shape):
        b.emit("try:")
        b.emit(f"    {write}")
        b.emit("    print('written', v.grad_fn)")
        b.emit("except RuntimeError as e:")
        b.emit("    print('refused:', e)")
    if form == 2:
        b.indent -= 1
    b.emit(f"show('{base}', {base})")
    b.emit(f"print({base}.grad_fn, v.grad_fn, v.requires_grad, v.is_leaf)")
    if needs_grad:
        w = _lit(np.array(b.numbers(int(np.prod(base_shape)))).reshape(base_shape))
        b.emit("try:")
        b.emit(f"    ({base} * torch.tensor({w}{dtype})).sum().backward()")
        b.emit("    show('x.grad', x.grad)")
        b.emit("except RuntimeError as e:")
        b.emit("    print('backward refused:', e)")
    return b.source(SHOW_HELPER)
