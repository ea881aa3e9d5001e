"""The program builder: writes a program line by line while tracking shadow values."""

from __future__ import annotations

import math

import numpy as np
from tg_known_bugs import KNOWN_BUGS
from tg_ops_math import MathOps
from tg_ops_shape import ShapeOps
from tg_values import Var, _args, _lit

SHOW_HELPER = (
    "def show(name, t):\n"
    "    if t is None:\n"
    "        print(\"#VAL\", name, None)\n"
    "    else:\n"
    "        print(\"#VAL\", name, t.dtype, t.tolist())\n"
)


# The op each builder method can be made to write (Builder.want): every differentiable op
# of the spec, named by the token the method chooses it by.
FOCUS_OPS = {
    **{op: "op_binary" for op in ("+", "-", "*", "/", "**")},
    **{op: "op_unary" for op in ("exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "sigmoid",
                                 "relu", "neg", "square")},
    **{op + form: "op_reduce" for op in ("sum", "mean", "max", "min", "prod", "norm")
       for form in ("", "(dim)", "(dim, keepdim)")},
    **{op: "op_select" for op in ("clamp", "maximum", "minimum", "where")},
    **{op: "op_nn" for op in ("softmax", "log_softmax", "mse", "ce")},
    **{op: "op_matmul" for op in ("matmul", "mm", "mv", "dot", "outer", "matmul3d")},
    **{op: "op_shape" for op in ("reshape", "view", "flatten", "unsqueeze", "squeeze", "t", "T",
                                 "transpose", "permute", "expand", "cat", "stack", "roll",
                                 "pad")},
    **{f"index:{form}": "op_index" for form in ("int", "range", "from", "step", "col",
                                                 "ellipsis", "none", "list", "tensor",
                                                 "int_slice", "mask", "mixed", "bool")},
}


class Builder(MathOps, ShapeOps):
    """Writes one program line by line while tracking each variable's shadow value."""

    def __init__(self, r, dtype: str = "float32", exact: bool = False):
        self.r, self.dtype, self.exact = r, dtype, exact
        self.lines: list[str] = []
        self.vars: list[Var] = []
        self.count = 0
        self.no_grad = False  # grad mode is off where the next line goes
        self.indent = 0  # blocks the next line is nested in
        self.want: str | None = None  # an op the next step must make (see FOCUS_OPS)
        self.tokens: list[str] = []  # what choose() chose for the op being written
        self.edges = False  # ties and zeros allowed where they are exact (dyadic values only)
        self.palette: list[float] = []  # the only values new leaves take, when not empty
        self.higher = False  # a higher-order program: ops must be twice differentiable
        self.tag = "leaf"  # what made the next accepted variable (the op method, refined)

    # --- basics -------------------------------------------------------------------------
    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def choose(self, options):
        """One of the options: the wanted op when it is one of them, else a random one."""
        token = self.want if self.want is not None and self.want in options else \
            self.r.choice(options)
        self.tokens.append(token)
        return token

    def chance(self, k: int) -> bool:
        """True with probability 1/k."""
        return self.r.randint(1, k) == 1

    def dtype_kw(self, always: bool = False) -> str:
        if self.dtype == "float64":
            return self.r.choice([", dtype=torch.float64", ", dtype=torch.float64",
                                  ", dtype=torch.double"])
        if always or self.chance(6):
            return self.r.choice([", dtype=torch.float32", ", dtype=torch.float"])
        return ""

    def shape(self, max_ndim: int = 3, max_numel: int = 24) -> tuple:
        while True:
            shape = tuple(self.r.randint(1, 4) for _ in range(self.r.randint(0, max_ndim)))
            if math.prod(shape) <= max_numel:
                return shape

    def numbers(self, n: int, lo: float = -2.0, hi: float = 2.0, distinct: bool = True,
                nonzero: float = 0.0) -> list[float]:
        """n grid values in [lo, hi]: quarters when exact, hundredths otherwise (or values of
        the palette, when the program wants ties and zeros)."""
        if self.palette:
            return [self.r.choice(self.palette) for _ in range(n)]
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
        var.history = frozenset(self.tokens).union(*(v.history for v in inputs))
        self.tokens.clear()
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


    OPS_FLOAT = ("op_binary",) * 4 + ("op_unary",) * 3 + ("op_reduce",) * 2 + \
        ("op_matmul",) * 2 + ("op_shape",) * 3 + ("op_index",) * 2 + ("op_select", "op_nn")
    OPS_EXACT = ("op_binary",) * 4 + ("op_unary",) * 2 + ("op_reduce",) * 2 + \
        ("op_matmul",) * 2 + ("op_shape",) * 3 + ("op_index",) * 2 + ("op_select",)

    def step(self) -> Var | None:
        ops = self.OPS_EXACT if self.exact else self.OPS_FLOAT
        if self.no_grad and {"B35_nograd_view_grad", "B35b_nograd_view_of_view_leaf"} & KNOWN_BUGS:
            ops = ("op_binary", "op_unary", "op_reduce")
        for _ in range(12):
            before = len(self.lines), len(self.vars), self.count
            method = FOCUS_OPS[self.want] if self.want else self.r.choice(ops)
            self.tokens.clear()
            self.tag = method
            var = getattr(self, method)()
            if var is not None and (self.want is None or self.want in var.history):
                self.want = None
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
                self.no_grad, self.indent = True, self.indent + 1
                var = self.step()
                self.no_grad, self.indent = False, self.indent - 1
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
