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

KINDS = ("float", "exact", "higher", "inplace", "error")
_KIND_WEIGHTS = ("float",) * 8 + ("exact",) * 5 + ("higher",) * 3 + ("inplace",) * 3 + ("error",) * 2

# Features steered away from while the engine has a known bug; each name is a bug number
# in /tmp/autodiff-bugs/differential.md.  Remove a name once the lead has fixed that bug.
KNOWN_BUGS: set[str] = {
    "B4b_matmul_2d_3d",       # 2-D @ 3-D grad_fn name in some shapes
    "B29_matmul_neg_zero",    # sign of zero in batched/broadcast matmul products (B29c)
    "B26_view_inplace",       # in-place change of a view of a tensor requiring grad refused
    "B28_leaf_messages",      # reshape(...).requires_grad_() is a view in torch
    "B32_reshape_alias",      # reshape of non-contiguous: ReshapeAliasBackward0 / UnsafeViewBackward0
    "B35_nograd_view_grad",   # a no_grad view of a leaf gets a .grad of its own
    "B37_batched_strides",    # batched matmul of a non-contiguous operand: grad_fn name
    "B38_prod_third",         # third derivative of prod is wrong
}
# Fixed by the lead and re-enabled: B1-B12, B14-B25, B27, B28a, B30, B31, B33, B34, B36.
# (B13, AsStridedBackward0 after an in-place change through detach() of a view, is not generated.)
# Torch behaviour deliberately not tested: abs's second derivative is a tensor whose
# tolist() raises "unallocated storage" in torch 2.13.

SHOW_HELPER = (
    "def show(name, t):\n"
    "    if t is None:\n"
    "        print(\"#VAL\", name, None)\n"
    "    else:\n"
    "        print(\"#VAL\", name, t.dtype, t.tolist())\n"
)


class HypothesisDraw:
    """Adapts Hypothesis's ``draw`` to the ``choice``/``randint`` interface."""

    def __init__(self, draw):
        from hypothesis import strategies as st  # noqa: PLC0415 - only needed with Hypothesis
        self._draw, self._st = draw, st

    def choice(self, seq):
        return self._draw(self._st.sampled_from(list(seq)))

    def randint(self, lo: int, hi: int) -> int:
        return self._draw(self._st.integers(lo, hi))


def _fmt(x) -> str:
    """A Python literal for a shadow number (ints stay ints, floats keep full precision)."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    return repr(int(x)) + "." if x == int(x) and abs(x) < 1e15 else repr(x)


def _lit(a: np.ndarray) -> str:
    return _fmt(a.item()) if a.ndim == 0 else "[" + ", ".join(_lit(s) for s in a) + "]"


def _args(shape) -> str:
    return ", ".join(str(n) for n in shape)


def _tup(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class Var:
    __slots__ = ("name", "value", "dtype", "rg", "leaf", "contig", "tag", "deps")

    def __init__(self, name, value, dtype, rg, leaf, contig=True, tag="leaf", deps=None):
        self.name, self.value, self.dtype = name, np.asarray(value), dtype
        self.rg, self.leaf, self.contig, self.tag = rg, leaf, contig, tag
        self.deps = frozenset([name]) if deps is None else deps  # the leaves it is computed from

    @property
    def shape(self) -> tuple:
        return self.value.shape

    @property
    def ndim(self) -> int:
        return self.value.ndim


def _gap(values: np.ndarray) -> float:
    """Smallest distance between two of the values (inf for fewer than two)."""
    flat = np.sort(values.ravel())
    return float(np.min(np.diff(flat))) if flat.size > 1 else math.inf


def _max_gap_along(v: np.ndarray, dim: int) -> float:
    """Smallest distance between the top two of each slice along dim (for max and min)."""
    if v.shape[dim] < 2:
        return math.inf
    s = np.sort(v, axis=dim)
    top = np.take(s, [-1], axis=dim) - np.take(s, [-2], axis=dim)
    bottom = np.take(s, [1], axis=dim) - np.take(s, [0], axis=dim)
    return float(min(top.min(), bottom.min()))


def _softmax(v, d):
    e = np.exp(v - v.max(axis=d, keepdims=True))
    return e / e.sum(axis=d, keepdims=True)


class Builder:
    """Writes one program line by line while tracking each variable's shadow value."""

    def __init__(self, r, dtype: str = "float32", exact: bool = False):
        self.r, self.dtype, self.exact = r, dtype, exact
        self.lines: list[str] = []
        self.vars: list[Var] = []
        self.count = 0
        self.no_grad = False
        self.higher = False  # a higher-order program: ops must be twice differentiable
        self.tag = "leaf"  # what made the next accepted variable (the op method, refined)

    # --- basics -------------------------------------------------------------------------
    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def emit(self, line: str) -> None:
        self.lines.append(("    " if self.no_grad else "") + line)

    def chance(self, k: int) -> bool:
        """True with probability 1/k."""
        return self.r.randint(1, k) == 1

    def dtype_kw(self, always: bool = False) -> str:
        if self.dtype == "float64":
            return ", dtype=torch.float64"
        return ", dtype=torch.float32" if always or self.chance(6) else ""

    def shape(self, max_ndim: int = 3, max_numel: int = 24) -> tuple:
        while True:
            shape = tuple(self.r.randint(1, 4) for _ in range(self.r.randint(0, max_ndim)))
            if math.prod(shape) <= max_numel:
                return shape

    def numbers(self, n: int, lo: float = -2.0, hi: float = 2.0, distinct: bool = True,
                nonzero: float = 0.0) -> list[float]:
        """n grid values in [lo, hi]: quarters when exact, hundredths otherwise."""
        step = 0.25 if self.exact else 0.01
        k_lo, k_hi = math.ceil(lo / step), math.floor(hi / step)
        out: list[float] = []
        for _ in range(50 * n + 50):
            if len(out) == n:
                break
            x = round(self.r.randint(k_lo, k_hi) * step, 2)
            if abs(x) < nonzero or (distinct and x in out and k_hi - k_lo >= 2 * n):
                continue
            out.append(x)
        while len(out) < n:
            out.append(lo)
        return out

    def literal(self, lit: str, rg: bool = False) -> str:
        """torch.tensor(lit) in this program's dtype, maybe requiring grad."""
        if self.dtype == "float64" and self.chance(4):
            return f"torch.tensor({lit}).double()" + (".requires_grad_()" if rg else "")
        form = self.r.randint(0, 1) if rg else 0
        if form:
            return f"torch.tensor({lit}{self.dtype_kw()}).requires_grad_()"
        return f"torch.tensor({lit}{self.dtype_kw()}{', requires_grad=True' if rg else ''})"

    def leaf(self, shape, rg=True, lo=-2.0, hi=2.0, nonzero=0.0, name=None, plain=False) -> Var:
        """A new leaf made by one of several creation forms."""
        n = math.prod(shape)
        name = name or self.fresh()
        if self.exact and "B29_matmul_neg_zero" in KNOWN_BUGS:
            nonzero = max(nonzero, 0.25)
        value = np.array(self.numbers(n, lo, hi, nonzero=nonzero), dtype=np.float64).reshape(shape)
        plain = plain or "B28_leaf_messages" in KNOWN_BUGS  # reshape(...).requires_grad_() is a view
        if self.chance(3) and n > 1 and len(shape) > 1 and not plain:
            text = self.literal(_lit(value.ravel())) + f".reshape({_args(shape)})"
            if rg:
                text += ".requires_grad_()"
        else:
            text = self.literal(_lit(value), rg)
        self.emit(f"{name} = {text}")
        var = Var(name, value, self.dtype, rg, True, deps=frozenset([name] if rg else []))
        self.vars.append(var)
        return var

    def const_like(self, shape, lo=-2.0, hi=2.0, nonzero=0.0) -> tuple[str, np.ndarray]:
        """An inline tensor literal (no grad) and its value."""
        value = np.array(self.numbers(math.prod(shape), lo, hi, nonzero=nonzero)).reshape(shape)
        return self.literal(_lit(value)), value

    # --- accepting a result -------------------------------------------------------------
    def ok_value(self, value) -> bool:
        value = np.asarray(value, dtype=np.float64)
        if not np.all(np.isfinite(value)):
            return False
        if self.exact:  # dyadic with at most 12 fractional bits, small enough to stay exact
            scaled = value * 4096
            return bool(np.all(scaled == np.round(scaled)) and np.abs(value).sum() < 1024)
        return bool(np.abs(value).max(initial=0.0) <= 60.0)

    def accept(self, text: str, value, inputs, contig=None, dtype=None) -> Var | None:
        value = np.asarray(value, dtype=np.float64)
        if not self.ok_value(value):
            return None
        rg = not self.no_grad and any(v.rg for v in inputs)
        if contig is None:  # elementwise results follow their inputs' layout in torch
            contig = all(v.contig for v in inputs)
        deps = frozenset().union(*(v.deps for v in inputs if v.rg)) if rg else frozenset()
        var = Var(self.fresh(), value, dtype or self.dtype, rg, not rg, contig, self.tag, deps)
        self.emit(f"{var.name} = {text}")
        self.vars.append(var)
        return var

    def pick(self, pred=lambda v: True) -> Var | None:
        cands = [v for v in self.vars if v.dtype == self.dtype and pred(v)]
        if not cands:
            return None
        recent = cands[-3:]
        return self.r.choice(recent if self.chance(2) else cands)

    def partner_shape(self, shape) -> tuple:
        """A shape that broadcasts with `shape` (fewer dims, ones, or an extra leading dim)."""
        shape = tuple(shape)
        form = self.r.randint(0, 3)
        if form == 0:
            return shape
        if form == 1 and shape:
            return shape[self.r.randint(0, len(shape)):]
        if form == 2 and len(shape) < 3 and math.prod(shape) <= 8:
            return (self.r.randint(2, 3),) + tuple(1 if self.chance(2) else n for n in shape)
        return tuple(1 if self.chance(2) else n for n in shape)

    # --- ops -----------------------------------------------------------------------------
    def op_binary(self) -> Var | None:
        a = self.pick()
        if a is None:
            return None
        sym = self.r.choice(["+", "-", "*", "/"] + ([] if self.exact else ["**", "+", "*"]))
        kind = self.r.randint(0, 3)  # 0, 1: tensor with tensor; 2: tensor op scalar; 3: scalar op tensor
        if self.exact and sym == "/":
            kind = 2
        if kind <= 1:
            if kind == 1 and (b := self.pick(lambda v: v is not a)) is not None and \
                    _broadcasts(a.shape, b.shape):
                pass
            else:
                lo, hi = (0.25, 2.0) if sym in "/**" and not self.exact else (-2.0, 2.0)
                b = self.leaf(self.partner_shape(a.shape), rg=not self.chance(3), lo=lo, hi=hi,
                              nonzero=0.25)
            if self.chance(2):
                a, b = b, a
            if sym == "/" and np.abs(b.value).min(initial=1) < 0.25:
                return None
            if sym == "**" and (a.value.min(initial=1) < 0.2 or np.abs(b.value).max(initial=0) > 3):
                return None
            value = _apply(sym, a.value, b.value)
            self.tag = "tensor**tensor" if sym == "**" else "binary"
            name = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow"}[sym]
            text = self.r.choice([f"{a.name} {sym} {b.name}", f"torch.{name}({a.name}, {b.name})",
                                  f"{a.name}.{name}({b.name})"])
            return self.accept(text, value, [a, b])
        if self.exact:
            c = self.r.choice([2.0, 0.5, 4.0, 0.25, -1.0]) if sym == "/" else \
                self.r.choice([1, 2, -1, 0.5, 3, 1.5, -0.25])
        elif sym == "**":
            c = self.r.choice([2, 3, 0.5, 1.5, -1, -2, 2.0, 2.5] if kind == 2 else [2, 0.5, 1.5, 3.0])
        else:
            c = self.r.choice([1, 2, -1, 0.5, 3, 1.5, -0.25, 0.1, 2.5])
        if kind == 2:
            x = a.value
            if sym == "**" and not float(c).is_integer() and x.min(initial=1) < 0.2:
                return None
            if sym == "**" and c < 0 and np.abs(x).min(initial=1) < 0.3:
                return None
            value = _apply(sym, x, c)
            return self.accept(f"{a.name} {sym} {_fmt(c)}", value, [a])
        if sym == "/" and np.abs(a.value).min(initial=1) < 0.3:
            return None
        if sym == "**" and np.abs(a.value).max(initial=0) > 4:
            return None
        self.tag = "scalar**tensor" if sym == "**" else "binary"
        return self.accept(f"{_fmt(c)} {sym} {a.name}", _apply(sym, c, a.value), [a])

    def op_unary(self) -> Var | None:
        a = self.pick()
        if a is None:
            return None
        x = a.value
        n = a.name
        if self.exact:
            choices = ["neg", "abs", "relu", "square"]
        else:
            choices = ["exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "sigmoid", "relu", "neg"]
        if self.higher:  # torch's second derivative of abs is a tensor tolist() rejects
            choices = [c for c in choices if c != "abs"]
        op = self.r.choice(choices)
        kink = np.abs(x).min(initial=1)
        if op == "exp" and x.max(initial=0) > 3.5:
            return None
        if op in ("log", "sqrt") and x.min(initial=1) < 0.1:
            return None
        if op in ("abs", "relu") and kink < 0.05:
            return None
        if op in ("tanh", "sigmoid") and np.abs(x).max(initial=0) > (2 if op == "tanh" else 3):
            return None  # saturated: 1 - tanh(x)**2 would be float32 rounding noise
        forms = {
            "exp": ([f"torch.exp({n})", f"{n}.exp()"], np.exp),
            "log": ([f"torch.log({n})", f"{n}.log()"], np.log),
            "sqrt": ([f"torch.sqrt({n})", f"{n}.sqrt()"], np.sqrt),
            "abs": ([f"torch.abs({n})", f"{n}.abs()", f"abs({n})"], np.abs),
            "sin": ([f"torch.sin({n})", f"{n}.sin()"], np.sin),
            "cos": ([f"torch.cos({n})", f"{n}.cos()"], np.cos),
            "tanh": ([f"torch.tanh({n})", f"{n}.tanh()", f"F.tanh({n})"], np.tanh),
            "sigmoid": ([f"torch.sigmoid({n})", f"{n}.sigmoid()", f"F.sigmoid({n})"],
                        lambda v: 1 / (1 + np.exp(-v))),
            "relu": ([f"torch.relu({n})", f"{n}.relu()", f"F.relu({n})"],
                     lambda v: np.maximum(v, 0)),
            "neg": ([f"-{n}", f"torch.neg({n})", f"{n}.neg()"], np.negative),
            "square": ([f"{n} * {n}", f"{n} ** 2"], np.square),
        }
        texts, fn = forms[op]
        self.tag = op
        return self.accept(self.r.choice(texts), fn(x), [a], contig=a.contig)

    def op_reduce(self) -> Var | None:
        a = self.pick(lambda v: v.ndim >= 1)
        if a is None:
            return None
        x, n = a.value, a.name
        ops = ["sum", "mean", "max", "min"] + ([] if self.exact else ["prod", "norm"])
        if self.higher and "B38_prod_third" in KNOWN_BUGS:
            ops.remove("prod")
        op = self.r.choice(ops)
        if self.exact and op == "mean" and math.prod(x.shape) not in (1, 2, 4, 8, 16):
            op = "sum"
        if self.chance(3):  # whole tensor
            if op in ("max", "min") and _gap(x) < 2e-3:
                return None
            if op == "norm" and np.sqrt((x * x).sum()) < 0.1:
                return None
            if op == "prod" and (x.size > 8 or np.abs(x).min() < 0.1):
                return None
            value = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                     "prod": np.prod, "norm": lambda v: np.sqrt((v * v).sum())}[op](x)
            text = self.r.choice([f"{n}.{op}()", f"torch.{op}({n})"])
            return self.accept(text, value, [a])
        d = self.r.randint(-a.ndim, a.ndim - 1)
        keep = self.chance(2)
        kw = ", keepdim=True" if keep else ""
        dim_text = self.r.choice([f"dim={d}", str(d)])
        if op in ("max", "min"):
            if _max_gap_along(x, d) < 2e-3:
                return None
            value = (np.max if op == "max" else np.min)(x, axis=d, keepdims=keep)
            idx = (np.argmax if op == "max" else np.argmin)(x, axis=d)
            if keep:
                idx = np.expand_dims(idx, d)
            call = self.r.choice([f"{n}.{op}({dim_text}{kw})", f"torch.{op}({n}, {dim_text}{kw})"])
            form = self.r.randint(0, 2)
            if form == 0:
                var = self.accept(f"{call}.values", value, [a])
                if var is not None and self.chance(2):
                    self.emit(f"print({call}.indices)")
                return var
            if form == 1:
                return self.accept(f"{call}[0]", value, [a])
            vals, inds = self.fresh(), self.fresh()
            self.emit(f"{vals}, {inds} = {call}")
            self.emit(f"print({inds}, {inds}.dtype)")
            return self.accept(vals, value, [a])
        if op == "norm":
            value = np.sqrt((x * x).sum(axis=d, keepdims=keep))
            if value.min(initial=1) < 0.1:
                return None
        elif op == "prod":
            if x.shape[d] > 4 or np.abs(x).min() < 0.1:
                return None
            value = np.prod(x, axis=d, keepdims=keep)
        else:
            value = (np.sum if op == "sum" else np.mean)(x, axis=d, keepdims=keep)
            if op == "sum" and a.ndim >= 2 and self.chance(3):
                dims = (0, a.ndim - 1)
                value = np.sum(x, axis=dims, keepdims=keep)
                return self.accept(f"{n}.sum(dim={dims}{kw})", value, [a])
        if op == "norm":
            dim_text = f"dim={d}"
        return self.accept(self.r.choice([f"{n}.{op}({dim_text}{kw})",
                                          f"torch.{op}({n}, {dim_text}{kw})"]), value, [a])

    def op_matmul(self) -> Var | None:
        a = self.pick(lambda v: 1 <= v.ndim <= 3)
        if a is None:
            return None
        n, x = a.name, a.value
        if self.exact and "B29_matmul_neg_zero" in KNOWN_BUGS and not np.all(x):
            return None
        m = self.r.randint(1, 3)
        lo, hi = (-1.0, 1.0)
        rg = not self.chance(3)
        if a.ndim == 1:
            k = x.shape[0]
            form = self.r.randint(0, 4)
            if form == 0:
                b = self.leaf((k,), rg, lo, hi)
                text = self.r.choice([f"torch.dot({n}, {b.name})", f"{n} @ {b.name}",
                                      f"{n}.dot({b.name})", f"torch.matmul({b.name}, {n})"])
            elif form == 1:
                b = self.leaf((k, m), rg, lo, hi)
                text = self.r.choice([f"{n} @ {b.name}", f"torch.matmul({n}, {b.name})"])
            elif form == 2:
                b = self.leaf((m, k), rg, lo, hi)
                text = self.r.choice([f"torch.mv({b.name}, {n})", f"{b.name} @ {n}",
                                      f"{b.name}.mv({n})"])
                return self.accept(text, b.value @ x, [a, b], contig=True)
            elif form == 3:
                b = self.leaf((2, k, m), rg, lo, hi)
                text = f"{n} @ {b.name}"
            else:
                b = self.leaf((m,), rg, lo, hi)
                text = f"torch.outer({n}, {b.name})"
                return self.accept(text, np.outer(x, b.value), [a, b], contig=True)
            return self.accept(text, np.matmul(x, b.value), [a, b], contig=True)
        k = x.shape[-1]
        form = self.r.randint(0, 3)
        if "B37_batched_strides" in KNOWN_BUGS and not a.contig and (a.ndim == 3 or form == 3):
            return None
        if form == 0:
            b = self.leaf((k, m), rg, lo, hi)
            text = self.r.choice([f"{n} @ {b.name}", f"torch.matmul({n}, {b.name})"] +
                                 ([f"torch.mm({n}, {b.name})", f"{n}.mm({b.name})"]
                                  if a.ndim == 2 else []))
        elif form == 1:
            b = self.leaf((k,), rg, lo, hi)
            text = self.r.choice([f"{n} @ {b.name}"] + ([f"torch.mv({n}, {b.name})"]
                                                         if a.ndim == 2 else []))
        elif form == 2:
            if a.ndim == 3 and "B4b_matmul_2d_3d" in KNOWN_BUGS:
                return None
            b = self.leaf((m, x.shape[-2]), rg, lo, hi)
            value = np.matmul(b.value, x)
            return self.accept(f"{b.name} @ {n}", value, [a, b], contig=True)
        else:
            if a.ndim == 2 and "B4b_matmul_2d_3d" in KNOWN_BUGS:
                return None
            batch = x.shape[0] if a.ndim == 3 else 2
            b = self.leaf((batch, k, m), rg, lo, hi)
            text = self.r.choice([f"{n} @ {b.name}", f"torch.matmul({n}, {b.name})"])
        return self.accept(text, np.matmul(x, b.value), [a, b], contig=True)

    def op_shape(self) -> Var | None:
        a = self.pick()
        if a is None:
            return None
        n, x = a.name, a.value
        op = self.r.choice(["reshape", "view", "flatten", "unsqueeze", "squeeze", "t",
                            "transpose", "permute", "expand", "cat", "stack"])
        if op in ("reshape", "view", "flatten") and not a.contig and "B32_reshape_alias" in KNOWN_BUGS:
            return None
        if op in ("reshape", "view"):
            if op == "view" and not a.contig:
                op = "reshape"
            shape = _factor(self.r, x.size)
            shown = list(shape)
            if shown and self.chance(3):
                shown[self.r.randint(0, len(shown) - 1)] = -1
            args = self.r.choice([_args(shown), _tup(shown)]) if shown else "()"
            text = f"{n}.{op}({args})" if op == "view" or self.chance(2) else \
                f"torch.reshape({n}, {_tup(shown)})"
            return self.accept(text, x.reshape(shape), [a], contig=a.contig)
        if op == "flatten":
            if a.ndim >= 2 and self.chance(2):
                return self.accept(f"{n}.flatten(1)", x.reshape(x.shape[0], -1), [a],
                                   contig=a.contig)
            return self.accept(self.r.choice([f"{n}.flatten()", f"torch.flatten({n})"]),
                               x.reshape(-1), [a], contig=a.contig)
        if op == "unsqueeze":
            d = self.r.randint(-a.ndim - 1, a.ndim)
            return self.accept(self.r.choice([f"{n}.unsqueeze({d})", f"torch.unsqueeze({n}, {d})"]),
                               np.expand_dims(x, d), [a], contig=a.contig)
        if op == "squeeze":
            if a.ndim == 0:
                return None
            if self.chance(2):
                return self.accept(f"{n}.squeeze()", np.squeeze(x), [a], contig=a.contig)
            d = self.r.randint(-a.ndim, a.ndim - 1)
            value = np.squeeze(x, d) if x.shape[d] == 1 else x
            return self.accept(self.r.choice([f"{n}.squeeze({d})", f"torch.squeeze({n}, {d})"]),
                               value, [a], contig=a.contig)
        if op == "t":
            if a.ndim > 2:
                return None
            forms = [f"{n}.t()", f"torch.t({n})"] + ([f"{n}.T"] if a.ndim == 2 else [])
            return self.accept(self.r.choice(forms), x.T, [a], contig=a.ndim < 2)
        if op == "transpose":
            if a.ndim < 2:
                return None
            d0, d1 = self.r.randint(-a.ndim, a.ndim - 1), self.r.randint(0, a.ndim - 1)
            text = self.r.choice([f"{n}.transpose({d0}, {d1})", f"torch.transpose({n}, {d0}, {d1})"])
            return self.accept(text, np.swapaxes(x, d0, d1), [a], contig=False)
        if op == "permute":
            if a.ndim < 2:
                return None
            perm = list(range(a.ndim))
            for i in range(len(perm) - 1, 0, -1):
                j = self.r.randint(0, i)
                perm[i], perm[j] = perm[j], perm[i]
            text = self.r.choice([f"{n}.permute({_args(perm)})", f"{n}.permute({_tup(perm)})",
                                  f"torch.permute({n}, {_tup(perm)})"])
            return self.accept(text, np.transpose(x, perm), [a], contig=False)
        if op == "expand":
            if a.ndim > 2 or a.ndim == 0:
                return None
            target = [self.r.randint(2, 3) if s == 1 else (-1 if self.chance(2) else s)
                      for s in x.shape]
            if self.chance(2):
                target = [2] + target
            shape = tuple(t if t != -1 else s for t, s in
                          zip(target, (1,) * (len(target) - a.ndim) + x.shape))
            return self.accept(f"{n}.expand({_args(target)})", np.broadcast_to(x, shape), [a],
                               contig=False)
        if a.ndim == 0 and op == "cat":
            return None
        d = self.r.randint(0, a.ndim - 1 if op == "cat" else a.ndim)
        shape = list(x.shape)
        if op == "cat":
            shape[d] = self.r.randint(1, 2)
        b = a if self.chance(4) else self.leaf(tuple(shape), rg=not self.chance(3))
        fn = {"cat": np.concatenate, "stack": np.stack}[op]
        dim = self.r.choice([f", dim={d}", f", {d}", ""] if d == 0 else [f", dim={d}", f", {d}"])
        parts = self.r.choice(["[{}, {}]", "({}, {})"]).format(n, b.name)
        return self.accept(f"torch.{op}({parts}{dim})", fn([x, b.value], axis=d), [a, b])

    def op_index(self) -> Var | None:
        a = self.pick(lambda v: v.ndim >= 1)
        if a is None:
            return None
        n, x = a.name, a.value
        size = x.shape[0]
        form = self.r.randint(0, 7)
        i = self.r.randint(-size, size - 1)
        if form == 0:
            key, text = i, f"{i}"
        elif form == 1:
            lo = self.r.randint(0, size - 1)
            hi = self.r.randint(lo + 1, size + 1)
            step = self.r.choice([1, 1, 2])
            key = slice(lo, hi, step)
            text = f"{lo}:{hi}" + (f":{step}" if step != 1 else "")
        elif form == 2 and a.ndim >= 2:
            j = self.r.randint(-x.shape[1], x.shape[1] - 1)
            key, text = (slice(None), j), f":, {j}"
        elif form == 3:
            j = self.r.randint(-x.shape[-1], x.shape[-1] - 1)
            key, text = (Ellipsis, j), f"..., {j}"
        elif form == 4:
            key, text = self.r.choice([((None,), "None"), ((slice(None), None), ":, None"),
                                       ((i, None), f"{i}, None")])
        elif form == 5:
            idx = [self.r.randint(-size, size - 1) for _ in range(self.r.randint(1, 3))]
            key = (idx,)
            text = self.r.choice([str(idx), f"torch.tensor({idx})"])
        elif form == 6 and a.ndim >= 2:
            j = self.r.randint(0, x.shape[1] - 1)
            key, text = (i, slice(j, None)), f"{i}, {j}:"
        else:
            values = np.sort(x.ravel())
            if values.size < 2:
                return None
            k = self.r.randint(0, values.size - 2)
            if values[k + 1] - values[k] < 0.02:
                return None
            c = round((values[k] + values[k + 1]) / 2, 3)
            op = self.r.choice([">", "<"])
            mask = x > c if op == ">" else x < c
            return self.accept(f"{n}[{n} {op} {_fmt(c)}]", x[mask], [a])
        value = x[key]
        return self.accept(f"{n}[{text}]", value, [a], contig=False)

    def op_select(self) -> Var | None:
        """clamp, maximum/minimum, where: ops with a kink, kept away from it."""
        a = self.pick()
        if a is None:
            return None
        n, x = a.name, a.value
        op = self.r.choice(["clamp", "maximum", "where"])
        if op == "clamp":
            values = np.sort(np.unique(x.ravel()))
            cuts = [(values[k] + values[k + 1]) / 2 for k in range(values.size - 1)
                    if values[k + 1] - values[k] > 0.05]
            if not cuts:
                return None
            lo, hi = self.r.choice(cuts), self.r.choice(cuts)
            lo, hi = min(lo, hi), max(lo, hi)
            lo, hi = round(lo, 3), round(hi, 3)
            form = self.r.randint(0, 3)
            if form == 0:
                return self.accept(f"{n}.clamp(min={_fmt(lo)})", np.maximum(x, lo), [a])
            if form == 1:
                return self.accept(f"torch.clamp({n}, max={_fmt(hi)})", np.minimum(x, hi), [a])
            return self.accept(self.r.choice([f"{n}.clamp({_fmt(lo)}, {_fmt(hi)})",
                                              f"torch.clamp({n}, min={_fmt(lo)}, max={_fmt(hi)})"]),
                               np.clip(x, lo, hi), [a])
        b = self.leaf(self.partner_shape(x.shape), rg=not self.chance(3))
        if op == "maximum":
            if np.abs(x - b.value).min(initial=1) < 0.02:
                return None
            fn = self.r.choice(["maximum", "minimum"])
            value = (np.maximum if fn == "maximum" else np.minimum)(x, b.value)
            return self.accept(self.r.choice([f"torch.{fn}({n}, {b.name})", f"{n}.{fn}({b.name})"]),
                               value, [a, b])
        c = self.r.choice([0.0, 0.5, -0.5])
        if np.abs(x - c).min(initial=1) < 0.005:
            return None
        cond = x > c
        value = np.where(cond, x, b.value)
        return self.accept(f"torch.where({n} > {_fmt(c)}, {n}, {b.name})", value, [a, b])

    def op_nn(self) -> Var | None:
        a = self.pick(lambda v: v.ndim >= 1)
        if a is None:
            return None
        n, x = a.name, a.value
        op = self.r.choice(["softmax", "log_softmax", "mse", "ce"])
        d = self.r.randint(-a.ndim, a.ndim - 1)
        if op == "softmax":
            text = self.r.choice([f"torch.softmax({n}, dim={d})", f"F.softmax({n}, dim={d})",
                                  f"{n}.softmax({d})"])
            return self.accept(text, _softmax(x, d), [a])
        if op == "log_softmax":
            text = self.r.choice([f"F.log_softmax({n}, dim={d})", f"{n}.log_softmax({d})",
                                  f"torch.log_softmax({n}, {d})"])
            return self.accept(text, np.log(_softmax(x, d)), [a])
        reduction = self.r.choice(["mean", "sum", "none", None])
        kw = f", reduction='{reduction}'" if reduction else ""
        if op == "mse":
            target, tv = self.const_like(x.shape)
            diff = (x - tv) ** 2
            value = diff if reduction == "none" else diff.sum() if reduction == "sum" else diff.mean()
            return self.accept(f"F.mse_loss({n}, {target}{kw})", value, [a])
        if a.ndim > 2:
            return None
        classes = x.shape[-1]
        labels = [self.r.randint(0, classes - 1) for _ in range(x.shape[0] if a.ndim == 2 else 1)]
        logp = np.log(_softmax(x, -1))
        if a.ndim == 2:
            losses = -logp[np.arange(len(labels)), labels]
            target = f"torch.tensor({labels})"
        else:
            losses = -logp[labels[0]]
            target = f"torch.tensor({labels[0]})"
        value = losses if reduction == "none" else losses.sum() if reduction == "sum" else \
            losses.mean()
        return self.accept(f"F.cross_entropy({n}, {target}{kw})", value, [a])

    OPS_FLOAT = ("op_binary",) * 4 + ("op_unary",) * 3 + ("op_reduce",) * 2 + \
        ("op_matmul",) * 2 + ("op_shape",) * 3 + ("op_index",) * 2 + ("op_select", "op_nn")
    OPS_EXACT = ("op_binary",) * 4 + ("op_unary",) * 2 + ("op_reduce",) * 2 + \
        ("op_matmul",) * 2 + ("op_shape",) * 3 + ("op_index",) * 2 + ("op_select",)

    def step(self) -> Var | None:
        ops = self.OPS_EXACT if self.exact else self.OPS_FLOAT
        if self.no_grad and "B35_nograd_view_grad" in KNOWN_BUGS:
            ops = ("op_binary", "op_unary", "op_reduce")
        for _ in range(12):
            before = len(self.lines), len(self.vars), self.count
            method = self.r.choice(ops)
            self.tag = method
            var = getattr(self, method)()
            if var is not None:
                return var
            del self.lines[before[0]:]  # drop partner leaves made for a rejected op
            del self.vars[before[1]:]
            self.count = before[2]
        return None

    def chain(self, steps: int) -> list[Var]:
        made = []
        for _ in range(steps):
            if not self.exact and self.chance(12) and not self.no_grad:
                self.emit("with torch.no_grad():")
                self.no_grad = True
                var = self.step()
                self.no_grad = False
                if var is None:
                    self.lines.pop()
                    continue
            else:
                var = self.step()
            if var is not None:
                made.append(var)
        return made

    def source(self, header: str = "") -> str:
        head = "import torch\n" if self.chance(2) else ""
        if any("F." in line for line in self.lines):
            head += "import torch.nn.functional as F\n"
        return head + header + "\n".join(self.lines) + "\n"


def _broadcasts(s1, s2) -> bool:
    return all(a == b or a == 1 or b == 1 for a, b in zip(reversed(s1), reversed(s2)))


def _apply(sym, a, b):
    with np.errstate(all="ignore"):
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide,
                "**": np.power}[sym](np.asarray(a, dtype=np.float64), b)


def _factor(r, n: int) -> tuple:
    """A random shape with n elements and 0 to 3 dims (0 dims only when n == 1)."""
    dims = r.randint(0 if n == 1 else 1, 3)
    shape = []
    rest = n
    for _ in range(dims - 1):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = r.choice(divisors)
        shape.append(d)
        rest //= d
    if dims:
        shape.append(rest)
    return tuple(shape)


# --- program kinds -------------------------------------------------------------------------------

def _float_dtype(r) -> str:
    return r.choice(["float32", "float32", "float64"])


def _show_meta(b: Builder, vars_: list[Var]) -> None:
    for v in vars_:
        b.emit(f"print({v.name}.shape, {v.name}.dtype, {v.name}.requires_grad, {v.name}.is_leaf, "
               f"{v.name}.grad_fn)")


def _backward(b: Builder, out: Var, retain_some: list[Var]) -> None:
    """out.backward in one of its forms (maybe twice, with retain_graph)."""
    twice = b.chance(6)
    retain = ", retain_graph=True" if twice else ""
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
    b.emit(call)
    if twice:
        b.emit(call.replace(", retain_graph=True", "").replace("(retain_graph=True)", "()"))


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
            if v.leaf and "B29_matmul_neg_zero" in KNOWN_BUGS:
                b.emit(f"print({v.name}.grad if {v.name}.grad is None else {v.name}.grad + 0.0)")
            elif v.leaf:
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
    outs = [v for v in made if x.name in v.deps and np.abs(v.value).max(initial=0) < 3]
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


# Ops whose backward reads their own output (torch then refuses an in-place change of it).
def _inplace_ok(v: Var) -> bool:
    return not ("B26_view_inplace" in KNOWN_BUGS and v.tag in ("op_shape", "op_index"))


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
    elif op == 3:
        b.emit(f"{n}[{n} > 1.0] = 0.0")
    elif op == 4:
        b.emit(f"{n}.zero_()" if r.randint(0, 1) else f"{n}.fill_(3.0)")
    elif op == 5:
        b.emit(f"{x.name}.add_(1.0)")  # a leaf that requires grad: torch refuses
    elif op == 6:
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
    from tg_error_programs import ERRORS  # noqa: PLC0415 - tests/ is on sys.path
    usable = [e for e in ERRORS if not (e.startswith("#B") and e[1:e.index("\n")] in KNOWN_BUGS)]
    return "import torch.nn.functional as F\n" + r.choice(usable) + "\n"


GENERATORS = {"float": gen_float, "exact": gen_exact, "higher": gen_higher,
              "inplace": gen_inplace, "error": gen_error}


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
