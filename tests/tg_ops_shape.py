"""The builder's structural ops: matrix products, shape changes and indexing."""

from __future__ import annotations

import numpy as np
from tg_known_bugs import KNOWN_BUGS
from tg_values import Var, _args, _factor, _fmt, _tup


class ShapeOps:
    """Mixed into Builder: each op picks an operand, writes one line, or returns None."""

    def op_matmul(self) -> Var | None:
        a = self.pick(lambda v: 1 <= v.ndim <= 3)
        if a is None:
            return None
        n, x = a.name, a.value
        # a batched or folded product whose exact values hold zeros (their sign, see below)
        zero_sign = self.exact and "B29_matmul_neg_zero" in KNOWN_BUGS
        m = self.r.randint(1, 3)
        lo, hi = (-1.0, 1.0)
        rg = not self.chance(3)
        if a.ndim == 1:
            k = x.shape[0]
            form = self.choose(["dot", "matmul", "mv", "matmul3d", "outer"])
            if form == "dot":
                b = self.leaf((k,), rg, lo, hi)
                text = self.r.choice([f"torch.dot({n}, {b.name})", f"{n}.dot({b.name})"] +
                                     ([] if self.want else [f"{n} @ {b.name}",
                                                            f"torch.matmul({b.name}, {n})"]))
            elif form == "matmul":
                b = self.leaf((k, m), rg, lo, hi)
                text = self.r.choice([f"{n} @ {b.name}", f"torch.matmul({n}, {b.name})",
                                      f"{n}.matmul({b.name})"])
                self.tokens.append("view")  # torch squeezes a 1-row product: a view
            elif form == "mv":
                b = self.leaf((m, k), rg, lo, hi)
                text = self.r.choice([f"torch.mv({b.name}, {n})", f"{b.name}.mv({n})"] +
                                     ([] if self.want else [f"{b.name} @ {n}"]))
                return self.accept(text, b.value @ x, [a, b], contig=True)
            elif form == "matmul3d":
                if zero_sign and not np.all(x):
                    return None
                b = self.leaf((2, k, m), rg, lo, hi, nonzero=0.25 if zero_sign else 0.0)
                text = f"{n} @ {b.name}"
                self.tokens += ["batched", "view"]
            else:
                b = self.leaf((m,), rg, lo, hi)
                text = self.r.choice([f"torch.outer({n}, {b.name})", f"{n}.outer({b.name})"])
                return self.accept(text, np.outer(x, b.value), [a, b], contig=True)
            return self.accept(text, np.matmul(x, b.value), [a, b], contig=True)
        k = x.shape[-1]
        form = self.choose(["mm", "mv", "matmul", "matmul3d"])
        if zero_sign and a.ndim == 3 and not np.all(x):
            return None
        if form in ("dot", "outer") or form in ("mm", "mv") and a.ndim != 2 and self.want == form:
            return None
        if "B37_batched_strides" in KNOWN_BUGS and not a.contig and (a.ndim == 3 or form == "matmul3d"):
            return None
        nonzero = 0.25 if zero_sign and a.ndim == 3 else 0.0
        if form == "mm":
            b = self.leaf((k, m), rg, lo, hi, nonzero=nonzero)
            text = self.r.choice(([] if self.want == "mm" else
                                  [f"{n} @ {b.name}", f"torch.matmul({n}, {b.name})",
                                   f"{n}.matmul({b.name})"]) +
                                 ([f"torch.mm({n}, {b.name})", f"{n}.mm({b.name})"]
                                  if a.ndim == 2 else []))
        elif form == "mv":
            b = self.leaf((k,), rg, lo, hi, nonzero=nonzero)
            text = self.r.choice(([] if self.want == "mv" else [f"{n} @ {b.name}"]) +
                                 ([f"torch.mv({n}, {b.name})", f"{n}.mv({b.name})"]
                                  if a.ndim == 2 else []))
        elif form == "matmul":
            if a.ndim == 3 and "B4b_matmul_2d_3d" in KNOWN_BUGS:
                return None
            zero_sign = zero_sign and a.ndim == 3
            if zero_sign and not np.all(x):
                return None
            b = self.leaf((m, x.shape[-2]), rg, lo, hi, nonzero=0.25 if zero_sign else 0.0)
            value = np.matmul(b.value, x)
            if a.ndim == 3:
                self.tokens += ["batched", "view"]  # torch transposes a folded product: a view
            return self.accept(f"{b.name} @ {n}", value, [a, b], contig=True)
        else:
            if a.ndim == 2 and "B4b_matmul_2d_3d" in KNOWN_BUGS:
                return None
            batch = x.shape[0] if a.ndim == 3 else 2
            if zero_sign and not np.all(x):
                return None
            b = self.leaf((batch, k, m), rg, lo, hi, nonzero=0.25 if zero_sign else 0.0)
            text = self.r.choice([f"{n} @ {b.name}", f"torch.matmul({n}, {b.name})"])
        if a.ndim == 3 or b.ndim == 3:
            self.tokens.append("batched")  # torch folds or batches it: other nodes under it
        if a.ndim == 2 and b.ndim == 3:
            self.tokens.append("view")  # torch transposes a folded product: a view
        if a.ndim == 3 and b.ndim == 3 and x.shape[0] == 1:
            self.tokens.append("batch1")  # torch still runs bmm on a batch of one
        return self.accept(text, np.matmul(x, b.value), [a, b], contig=True)

    def op_shape(self) -> Var | None:
        a = self.pick()
        if a is None:
            return None
        n, x = a.name, a.value
        op = self.choose(["reshape", "view", "flatten", "unsqueeze", "squeeze", "t", "T",
                            "transpose", "permute", "expand", "cat", "stack", "roll", "pad"])
        if op in ("roll", "pad"):
            return self._arrange(op, a)
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
        if op == "T" and a.ndim != 2:
            return None
        if op in ("t", "T"):
            if a.ndim > 2:
                return None
            forms = [f"{n}.t()", f"torch.t({n})"] if op == "t" else [f"{n}.T"]
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

    def _arrange(self, op, a) -> Var | None:
        """roll (flattened or along dims) and a constant F.pad (a negative pad crops)."""
        n, x = a.name, a.value
        if op == "roll":
            shift = self.r.randint(-4, 4)
            if a.ndim == 0 or self.chance(3):
                text = self.r.choice([f"{n}.roll({shift})", f"torch.roll({n}, {shift})"])
                return self.accept(text, np.roll(x, shift), [a], contig=True)
            d = self.r.randint(-a.ndim, a.ndim - 1)
            text = self.r.choice([f"torch.roll({n}, {shift}, {d})",
                                  f"{n}.roll(({shift},), dims=({d},))",
                                  f"torch.roll({n}, shifts={shift}, dims={d})"])
            return self.accept(text, np.roll(x, shift, d), [a], contig=True)
        if a.ndim == 0:
            return None
        pads = []
        value = x
        for k in range(self.r.randint(1, min(a.ndim, 2))):
            d = a.ndim - 1 - k
            before, after = self.r.randint(-1, 2), self.r.randint(0, 2)
            if before < 0 and x.shape[d] < 2:
                before = 0
            pads += [before, after]
            value = np.take(value, range(-before if before < 0 else 0, value.shape[d]), axis=d)
            widths = [(0, 0)] * a.ndim
            widths[d] = (max(before, 0), after)
            value = np.pad(value, widths, constant_values=0.0)
        fill = self.r.choice([0, 0, 0.5, -1.0])
        if fill:
            value = np.where(self._pad_mask(x.shape, pads), value, fill)
        text = f"torch.nn.functional.pad({n}, {_tup(pads)}" + \
            (f", value={fill})" if fill else ")")
        return self.accept(text, value, [a], contig=True)

    @staticmethod
    def _pad_mask(shape, pads):
        """Where a constant pad's result holds the input's elements (not the fill)."""
        mask = np.ones(shape, bool)
        for k in range(len(pads) // 2):
            d = len(shape) - 1 - k
            before, after = pads[2 * k], pads[2 * k + 1]
            mask = np.take(mask, range(-before if before < 0 else 0, mask.shape[d]), axis=d)
            widths = [(0, 0)] * len(shape)
            widths[d] = (max(before, 0), after)
            mask = np.pad(mask, widths, constant_values=False)
        return mask

    def op_index(self) -> Var | None:
        a = self.pick(lambda v: v.ndim >= 1)
        if a is None:
            return None
        n, x = a.name, a.value
        size = x.shape[0]
        form = self.choose(["index:int", "index:range", "index:from", "index:step", "index:col",
                            "index:ellipsis", "index:none", "index:list", "index:tensor", "index:int_slice",
                            "index:mask", "index:mixed", "index:bool"])
        if form in ("index:col", "index:int_slice", "index:mixed") and (a.ndim < 2 or
                                                                        0 in x.shape):
            form = "index:mask"
        i = self.r.randint(-size, size - 1)
        if form == "index:int":
            key, text = i, f"{i}"
        elif form in ("index:range", "index:from", "index:step"):
            lo = self.r.randint(1 if form == "index:from" and size > 1 else 0, size - 1)
            hi = None if form == "index:from" else self.r.randint(lo + 1, size + 1)
            step = 2 if form == "index:step" else 1
            key = slice(lo, hi, step)
            text = f"{lo}:{'' if hi is None else hi}" + (f":{step}" if step != 1 else "")
        elif form == "index:col":
            j = self.r.randint(-x.shape[1], x.shape[1] - 1)
            key, text = (slice(None), j), f":, {j}"
        elif form == "index:ellipsis":
            j = self.r.randint(-x.shape[-1], x.shape[-1] - 1)
            key, text = (Ellipsis, j), f"..., {j}"
        elif form == "index:none":
            key, text = self.r.choice([((None,), "None"), ((None,), "None"),
                                       ((slice(None), None), ":, None"), ((i, None), f"{i}, None")])
        elif form in ("index:list", "index:tensor"):
            idx = [self.r.randint(-size, size - 1) for _ in range(self.r.randint(1, 3))]
            key = (idx,)
            text = str(idx) if form == "index:list" else f"torch.tensor({idx})"
        elif form == "index:int_slice":
            j = self.r.randint(0, x.shape[1] - 1)
            key, text = (i, slice(j, None)), f"{i}, {j}:"
        elif form == "index:mixed":  # basic items with a list (torch: a view, then index)
            picks = [self.r.randint(-x.shape[1], x.shape[1] - 1)
                     for _ in range(self.r.randint(1, 2))]
            lo, lo1 = self.r.randint(0, size - 1), self.r.randint(0, x.shape[1] - 1)
            key, text = self.r.choice([((i, picks), f"{i}, {picks}"),
                                       ((slice(lo, None), picks), f"{lo}:, {picks}"),
                                       (([i], slice(lo1, None)), f"[{i}], {lo1}:")])
        elif form == "index:bool":  # a dim of size 1, taken whole or not at all
            if self.chance(2):
                key, text = (np.True_,), "True"
            else:
                # (true: an empty result would end the chain of ops)
                d = self.r.choice([-0.5, 0.5])
                c = round(float(np.sum(x)) + d, 3)
                key, text = (np.True_,), f"{n}.sum() {'>' if d < 0 else '<'} {_fmt(c)}"
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
