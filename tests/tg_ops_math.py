"""The builder's arithmetic ops: binary and unary math, reductions, kinked selections, nn."""

from __future__ import annotations

import math

import numpy as np
from tg_known_bugs import KNOWN_BUGS, SIGNED_ZERO_VECTOR
from tg_values import Var, _apply, _broadcasts, _fmt, _gap, _max_gap_along, _softmax


def _powers_of_two(v) -> bool:
    """Whether every nonzero value is +-2**k (so torch's result / input division is exact)."""
    v = np.abs(np.asarray(v))[np.asarray(v) != 0]
    return bool(np.all(np.log2(v) == np.round(np.log2(v))))


def _negative_zero(v) -> np.ndarray:
    return (np.asarray(v) == 0) & np.signbit(v)


class MathOps:
    """Mixed into Builder: each op picks an operand, writes one line, or returns None."""

    def op_binary(self) -> Var | None:
        a = self.pick()
        if a is None:
            return None
        sym = self.choose(["+", "-", "*", "/"] + ([] if self.exact else ["**", "+", "*"]))
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
        op = self.choose(choices)
        kink = np.abs(x).min(initial=1)
        if op == "exp" and x.max(initial=0) > 3.5:
            return None
        if op in ("log", "sqrt") and x.min(initial=1) < 0.1:
            return None
        if op in ("abs", "relu") and kink < 0.05 and not self.edges:
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
        ops = ["sum", "mean", "max", "min", "prod"] + ([] if self.exact else ["norm"])
        if self.higher and "B38_prod_third" in KNOWN_BUGS:
            ops.remove("prod")
        token = self.choose([op + form for op in ops for form in ("", "(dim)", "(dim, keepdim)")])
        op, form = token.partition("(")[::2]
        if self.exact and op == "mean" and math.prod(x.shape) not in (1, 2, 4, 8, 16):
            if self.want:
                return None
            op = "sum"
        if not form:  # whole tensor
            if op in ("max", "min") and _gap(x) < 2e-3 and not self.edges:
                return None  # ties split the gradient evenly: exact only with dyadic values
            if op in ("max", "min") and "C13_signed_zero_ties" in KNOWN_BUGS and \
                    x.size >= SIGNED_ZERO_VECTOR and _negative_zero(x).any() and \
                    (x == 0).sum() > _negative_zero(x).sum():
                return None
            if op == "norm" and np.sqrt((x * x).sum()) < 0.1:
                return None
            if op == "prod" and (x.size > 8 or np.abs(x).min() < 0.1 and not self.edges):
                return None
            if op == "prod" and "C12_prod_zeros_sign" in KNOWN_BUGS and np.sum(x == 0) > 1:
                return None
            if op == "prod" and self.exact and "C14_prod_rounding" in KNOWN_BUGS and \
                    not _powers_of_two(x):
                return None
            value = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                     "prod": np.prod, "norm": lambda v: np.sqrt((v * v).sum())}[op](x)
            text = self.r.choice([f"{n}.{op}()", f"torch.{op}({n})"])
            return self.accept(text, value, [a])
        d = self.r.randint(-a.ndim, a.ndim - 1)
        keep = "keepdim" in form
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
                    self.emit(f"print({call}{'' if self.exact and self.chance(2) else '.indices'})")
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
            if x.shape[d] > 4 or np.abs(x).min() < 0.1 and not self.edges:
                return None
            if "C12_prod_zeros_sign" in KNOWN_BUGS and np.max(np.sum(x == 0, axis=d)) > 1:
                return None
            if self.exact and "C14_prod_rounding" in KNOWN_BUGS and not _powers_of_two(x):
                return None
            value = np.prod(x, axis=d, keepdims=keep)
        else:
            value = (np.sum if op == "sum" else np.mean)(x, axis=d, keepdims=keep)
            if op == "sum" and a.ndim >= 2 and self.chance(3) and not self.want:
                dims = (0, a.ndim - 1)
                value = np.sum(x, axis=dims, keepdims=keep)
                return self.accept(f"{n}.sum(dim={dims}{kw})", value, [a])
        if op == "norm":
            dim_text = f"dim={d}"
        return self.accept(self.r.choice([f"{n}.{op}({dim_text}{kw})",
                                          f"torch.{op}({n}, {dim_text}{kw})"]), value, [a])

    def op_select(self) -> Var | None:
        """clamp, maximum/minimum, where: ops with a kink, kept away from it."""
        a = self.pick()
        if a is None:
            return None
        n, x = a.name, a.value
        op = self.choose(["clamp", "maximum", "minimum", "where"])
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
        if op in ("maximum", "minimum"):
            if np.abs(x - b.value).min(initial=1) < 0.02 and not self.edges:
                return None  # a tie splits the gradient in half: exact only with dyadic values
            if "C13_signed_zero_ties" in KNOWN_BUGS and \
                    np.broadcast(x, b.value).size >= SIGNED_ZERO_VECTOR and np.any(
                    (x == 0) & (b.value == 0) & (_negative_zero(x) != _negative_zero(b.value))):
                return None
            value = (np.maximum if op == "maximum" else np.minimum)(x, b.value)
            return self.accept(self.r.choice([f"torch.{op}({n}, {b.name})", f"{n}.{op}({b.name})"]),
                               value, [a, b])
        c = self.r.choice([0.0, 0.5, -0.5])
        if np.abs(x - c).min(initial=1) < 0.005:
            return None
        cond = x > c
        value = np.where(cond, x, b.value)
        forms = [f"torch.where({n} > {_fmt(c)}, {n}, {b.name})"]
        if "C4_where_method" not in KNOWN_BUGS:
            forms.append(f"{n}.where({n} > {_fmt(c)}, {b.name})")
        return self.accept(self.r.choice(forms), value, [a, b])

    def op_nn(self) -> Var | None:
        a = self.pick(lambda v: v.ndim >= 1)
        if a is None:
            return None
        n, x = a.name, a.value
        op = self.choose(["softmax", "log_softmax", "mse", "ce"])
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
