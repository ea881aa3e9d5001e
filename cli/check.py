"""`autodiff check`: each leaf's gradient versus float64 central differences.

The program is re-run with every float tensor it creates widened to float64.
The analytic side is what its last backward call delivered to each leaf (on the
float64 run); the numeric side perturbs one leaf element by ±eps, re-runs the
whole program and differences the value backward was last called on (dotted
with its seed gradient, so `backward(v)` checks vᵀJ). A leaf the program changes
in place between backward calls (an SGD step) is perturbed just after the
previous backward call instead of at creation, so the check measures the last
graph, not the training trajectory.
"""

from __future__ import annotations

import io
import math
import sys
import time
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from autodiff.engine.autograd.numeric_check import GradientReport
from autodiff.engine.graph.nodes import version_of, watched_grad_fn
from autodiff.engine.tensors.inspection import value_array
from autodiff.engine.tensors.tensor import Tensor

from autodiff.text.display import text_width
from autodiff.text.i18n import N_, _

from .names import dtype_text
from .limits import RunLimits, applied
from .outcome import EXIT_FAILED, EXIT_OK, ToolError, UsageError, guarded
from .source import LoadedSource, display_name, load_source
from .trace import trace_source

RTOL, ATOL = 1e-5, 1e-6  # float64 central differences with eps=1e-6 are good to ~1e-9
MAX_ELEMENTS = 256  # per leaf; larger leaves are checked on an even sample of elements
MAX_TOTAL = 1024  # over all leaves (each element re-runs the program twice): many leaves share it
TIME_BUDGET = 10.0  # seconds of re-runs the sample aims at, from the time of one run


def check_eps(eps: float) -> None:
    if not (math.isfinite(eps) and 0 < eps < 1):
        raise UsageError(_("--eps: expected a step above 0 and below 1, such as 1e-6, got "
                           "{eps}").format(eps=eps))


@dataclass(eq=False)  # holds arrays (in report): compared by identity, like the trace records
class LeafCheck:
    name: str
    index: int  # creation index: the leaf is found again in re-runs by this
    shape: tuple
    report: GradientReport
    checked: int  # elements perturbed
    eps: float
    skipped: int  # elements at a kink or where no derivative exists
    rtol: float
    atol: float
    # every checked element: (index, autograd value, numerical value, verdict), verdict one
    # of "ok", "FAIL", "kink" (a one-sided slope), "inf" (no finite derivative to compare)
    elements: list = None
    nan: int = 0  # elements whose autograd gradient is NaN: never ok

    @property
    def ok(self) -> bool:
        return self.nan == 0 and self.report.ok(rtol=self.rtol, atol=self.atol)


@dataclass(eq=False)
class CheckResult:
    leaves: list[LeafCheck]
    target: str | None  # the name of what backward was last called on
    float32_gap: float | None  # max relative gap between the program's float32 and float64 grads
    widened: bool  # False: checked in the program's own dtypes
    leaves_total: int = 0  # leaves the program made; more than len(leaves) when sampled

    @property
    def ok(self) -> bool:
        return all(leaf.ok for leaf in self.leaves)


def _set(t: Tensor, array: np.ndarray) -> None:
    t.array = array[()] if array.ndim == 0 else array


def _widen(t: Tensor) -> None:
    if np.asarray(value_array(t)).dtype == np.float32:
        _set(t, np.array(value_array(t), dtype=np.float64))


def check_source(source: LoadedSource, *, eps: float = 1e-6,
                 err: TextIO | None = None) -> CheckResult:
    """The check; the program's warnings go to `err` once (the re-runs' are dropped)."""
    # each created float tensor's first values (only those can be checked leaves): a leaf
    # updated through `.data` (no version bump, as in torch) is still one the last backward
    # saw changed
    initial: dict[int, np.ndarray] = {}

    def remember(k: int, t: Tensor) -> None:
        if np.asarray(value_array(t)).dtype.kind == "f":
            initial.setdefault(k, np.array(value_array(t)))

    first = trace_source(source, err=err, on_create=remember)
    first.raise_error()
    if not first.calls:
        raise UsageError(_("the program never calls backward(): nothing to check"))
    names = first.tensor_names()
    leaves = [(k, t) for k, t in enumerate(first.created)
              if t.requires_grad and watched_grad_fn(t) is None and np.asarray(value_array(t)).dtype.kind == "f"]
    if not leaves:  # a check that varied nothing has not passed
        raise UsageError(_("the program makes no leaf tensor that requires grad and that "
                           "autodiff check can vary: nothing to check"))
    n_calls = len(first.calls)
    target = names.get(id(first.calls[-1].tensor))

    widen = True
    started = time.perf_counter()
    wide = trace_source(source, err=io.StringIO(), on_create=lambda k, t: _widen(t),
                        watch_bindings=False)
    one_run = time.perf_counter() - started
    # each checked element re-runs the program twice: the sample fits MAX_TOTAL and the time
    budget = max(1, min(MAX_TOTAL, int(TIME_BUDGET / (2 * max(one_run, 1e-4)))))
    leaves_total = len(leaves)
    if leaves_total > budget:  # an even sample of leaves, one element each
        leaves = [leaves[i] for i in np.unique(np.linspace(0, leaves_total - 1, budget).astype(int))]
    quota = max(1, min(MAX_ELEMENTS, budget // max(len(leaves), 1)))
    if wide.error is not None or len(wide.calls) != n_calls:
        # widening changed what the program does (e.g. `.double()` became a no-op): check
        # in the program's own dtypes, with a step and tolerance float32 can bear
        widen, wide = False, first
    if not widen and any(np.asarray(value_array(t)).dtype == np.float32 for _, t in leaves):
        eps, rtol, atol = max(eps, 1e-3), 1e-2, 1e-3
    else:
        rtol, atol = RTOL, ATOL
    last = wide.calls[-1]
    weights = np.asarray(last.seed, dtype=np.float64)
    base = float(np.sum(np.asarray(last.value, dtype=np.float64) * weights))

    def objective(k: int, idx: tuple, delta: float, late: bool) -> float:
        made: list[Tensor] = []
        # a late nudge lands after the second-to-last backward; a leaf made after that
        # call is nudged where it is made
        past = [not late]

        def created(i: int, t: Tensor) -> None:
            if widen:
                _widen(t)
            if i == k and past[0]:
                _nudge(t, idx, delta)
            made.append(t)

        def after(n: int) -> None:
            if late and n == n_calls - 1:
                past[0] = True
                if k < len(made):
                    _nudge(made[k], idx, delta)

        run = trace_source(source, err=io.StringIO(), on_create=created, after_backward=after,
                           watch_bindings=False)
        if run.error is not None or len(run.calls) != n_calls:
            raise ToolError(_("re-running with a perturbed leaf changed the run: {what}").format(
                what=run.error.headline() if run.error else _("different backward calls")))
        return float(np.sum(np.asarray(run.calls[-1].value, dtype=np.float64) * weights))

    results = []
    gaps = []
    for k, t in leaves:
        wide_leaf = wide.created[k]
        got = last.delivered.get(id(wide_leaf))
        analytic = np.zeros(np.shape(value_array(wide_leaf))) if got is None else \
            np.asarray(got[1], dtype=np.float64)
        late = n_calls > 1 and (version_of(t) > 0 or k not in initial
                                or not np.array_equal(initial[k], value_array(t), equal_nan=True))
        numeric = np.zeros_like(analytic)
        flat = np.unique(np.linspace(0, analytic.size - 1, min(analytic.size, quota)).astype(int))
        cells = [tuple(int(i) for i in np.unravel_index(f, analytic.shape)) for f in flat]
        mask = np.zeros(analytic.shape, dtype=bool)
        skipped = nan = 0
        elements = []
        for idx in cells:
            up = objective(k, idx, eps, late)
            down = objective(k, idx, -eps, late)
            numeric[idx] = (up - down) / (2 * eps)
            a = analytic[idx]
            if np.isnan(a):
                nan += 1  # a NaN gradient is a failure whatever the differences say
                elements.append((idx, a, numeric[idx], "FAIL"))
                continue
            if not (np.isfinite(a) and np.isfinite(numeric[idx])):
                skipped += 1  # no derivative there (sqrt at 0): nothing to compare
                elements.append((idx, a, numeric[idx], "inf"))
                continue
            if not np.isclose(a, numeric[idx], rtol=rtol, atol=atol):
                right, left = (up - base) / eps, (base - down) / eps
                low, high = min(left, right), max(left, right)
                if high - low > 10 * (atol + rtol * abs(high)) and \
                        low - atol - rtol * abs(low) <= a <= high + atol + rtol * abs(high):
                    skipped += 1  # a kink (relu at 0): the rule picked a one-sided slope
                    elements.append((idx, a, numeric[idx], "kink"))
                    continue
            mask[idx] = True
            elements.append((idx, a, numeric[idx],
                             "ok" if np.isclose(a, numeric[idx], rtol=rtol, atol=atol)
                             else "FAIL"))
        a, n = analytic[mask], numeric[mask]
        abs_err = float(np.max(np.abs(a - n))) if a.size else 0.0
        rel_err = float(np.max(np.abs(a - n) / np.maximum(np.abs(n), 1e-12))) if a.size else 0.0
        report = GradientReport([a], [n], abs_err, rel_err)
        results.append(LeafCheck(names.get(id(t), _("leaf #{k}").format(k=k)), k, tuple(np.shape(value_array(t))),
                                 report, len(cells), eps, skipped, rtol, atol, elements, nan))
        own = first.calls[-1].delivered.get(id(t))
        if widen and np.asarray(value_array(t)).dtype == np.float32 and own is not None:
            with np.errstate(invalid="ignore"):  # inf - inf where the derivative is infinite
                diff = np.abs(np.asarray(own[1], dtype=np.float64) - analytic)
            finite = np.isfinite(diff)
            rel = diff[finite] / np.maximum(np.abs(analytic[finite]), 1e-12)
            gaps.append(float(np.max(rel)) if rel.size else 0.0)
    return CheckResult(results, target, max(gaps) if gaps else None, widen, leaves_total)


def _nudge(t: Tensor, idx: tuple, delta: float) -> None:
    array = np.array(value_array(t), copy=True)  # keeps the dtype: widening is _widen's job
    array[idx] += delta
    _set(t, array)


ROWS_PER_LEAF = 12  # a larger leaf shows its largest differences, and a count of the rest
_COLUMNS = (N_("element"), N_("autograd"), N_("numerical"), N_("difference"), "")


def _pad(text: str, width: int, *, left: bool) -> str:
    """`text` padded to `width` terminal columns (a Chinese heading takes two a character)."""
    fill = " " * max(width - text_width(text), 0)
    return text + fill if left else fill + text


def _number(x) -> str:
    return "nan" if np.isnan(x) else f"{x:.8g}"


def _rows(leaf: LeafCheck) -> tuple[list[tuple], int]:
    """The elements to show (the largest differences first chosen, then in index order)
    and how many are left out."""
    elements = leaf.elements or []
    if len(elements) <= ROWS_PER_LEAF:
        return elements, 0

    def badness(e):
        idx, a, n, verdict = e
        gap = abs(a - n) if np.isfinite(a) and np.isfinite(n) else np.inf
        return (verdict != "FAIL", -gap)

    chosen = sorted(sorted(elements, key=badness)[:ROWS_PER_LEAF], key=lambda e: e[0])
    return chosen, len(elements) - len(chosen)


def _cells(leaf: LeafCheck, element) -> tuple[str, ...]:
    idx, a, n, verdict = element
    where = leaf.name + ("[" + ", ".join(str(i) for i in idx) + "]" if idx else "")
    gap = f"{abs(a - n):.1e}" if np.isfinite(a) and np.isfinite(n) else "-"
    word = {"kink": _("skipped (kink)"), "inf": _("skipped (no finite derivative)")}.get(
        verdict, verdict)
    return where, _number(a), _number(n), gap, word


def render_check(result: CheckResult, out: TextIO, *, no_color: bool = False) -> None:
    """Each leaf's elements: autograd value, numerical value and difference side by side, in
    columns when they fit the width, else one element per block of lines."""
    from rich.text import Text

    from .console import make_console

    console = make_console(out, no_color=no_color)
    what = (_("{name} (the last backward() call)").format(name=result.target) if result.target
            else _("the unnamed tensor of the last backward() call"))
    eps = result.leaves[0].eps if result.leaves else 0
    console.print(Text(_("gradients of {what} versus central differences ({dtypes}, eps "
                         "{eps:g})").format(what=what, eps=eps, dtypes="float64" if result.widened
                                            else _("own dtypes"))))
    rows = []
    notes = []
    for leaf in result.leaves:
        shown, left_out = _rows(leaf)
        rows += [_cells(leaf, e) for e in shown]
        if left_out:
            fails = sum(e[3] == "FAIL" for e in leaf.elements) - sum(e[3] == "FAIL" for e in shown)
            notes.append((_("{name}: {count} more element(s) checked, {fails} of them FAIL "
                            "(largest difference {gap:.1e})") if fails else
                          _("{name}: {count} more element(s) checked, all ok (largest "
                            "difference {gap:.1e})")).format(
                name=leaf.name, count=left_out, fails=fails, gap=leaf.report.max_abs_error))
    columns = [_(c) if c else c for c in _COLUMNS]
    widths = [max([text_width(c)] + [text_width(r[i]) for r in rows])
              for i, c in enumerate(columns)]
    style = {"ok": "ok", "FAIL": "fail"}
    if sum(widths) + 2 * (len(widths) - 1) <= console.width:
        header = "  ".join(_pad(c, w, left=i in (0, 4))
                           for i, (c, w) in enumerate(zip(columns, widths))).rstrip()
        console.print(Text(header, style="bold"))
        for row in rows:
            line = Text("  ".join(_pad(v, w, left=i == 0)
                                  for i, (v, w) in enumerate(zip(row[:4], widths))) + "  ")
            line.append(row[4], style=style.get(row[4], "dim"))
            console.print(line)
    else:  # too narrow for columns: every number whole, one per line
        for row in rows:
            line = Text(row[0] + " ")
            line.append(row[4], style=style.get(row[4], "dim"))
            console.print(line)
            for label, value in zip(columns[1:4], row[1:4]):
                console.print(Text("  " + _pad(label, 10, left=True) + " " + value))
    if result.leaves_total > len(result.leaves):
        notes.append(_("note: the program makes {total:,} leaves; an even sample of {count:,} "
                       "was checked (each checked element re-runs the program twice, so the "
                       "check samples leaves and elements to stay within about {most:,} "
                       "elements and {seconds:g} s)").format(
            total=result.leaves_total, count=len(result.leaves), most=MAX_TOTAL,
            seconds=TIME_BUDGET))
    for note in notes:
        console.print(Text(note, style="dim"))
    skipped = sum(leaf.skipped for leaf in result.leaves)
    if skipped:
        console.print(Text(_("note: {count} element(s) skipped: at a kink (relu/abs/clamp at "
                             "the edge, max ties) the rule picks one one-sided slope, and where "
                             "the derivative is infinite there is nothing to compare.").format(
            count=skipped), style="dim"))
    if not result.widened:
        console.print(Text(_(
            "warning: the program behaves differently in float64 (a dtype conversion or check), "
            "so it was checked in its own dtypes; float32 central differences are unreliable, "
            "hence eps={eps:g} and a loose tolerance.").format(eps=eps), style="warn"))
    if result.float32_gap:  # only a real difference needs explaining
        console.print(Text((_(
            "note: the program computes in float32 (about 7 significant digits), so the check "
            "ran on a float64 re-run; the program's own float32 gradients differ from the "
            "float64 ones by up to {gap:.1e} (relative); that is more than float32 rounding "
            "alone explains: consider float64.") if result.float32_gap > 1e-3 else _(
            "note: the program computes in float32 (about 7 significant digits), so the check "
            "ran on a float64 re-run; the program's own float32 gradients differ from the "
            "float64 ones by up to {gap:.1e} (relative): float32 rounding.")).format(
            gap=result.float32_gap), style="warn"))
    nans = [leaf.name for leaf in result.leaves if leaf.nan]
    if nans:
        console.print(Text(_("NaN gradient: {names} (a 0/0 or inf-inf on the way back, e.g. "
                             "sqrt or log at 0)").format(names=", ".join(nans)), style="fail"))
    failed = [leaf.name for leaf in result.leaves if not leaf.ok]
    count = len(result.leaves)
    mismatched = [leaf for leaf in result.leaves if not leaf.report.ok(rtol=leaf.rtol,
                                                                        atol=leaf.atol)]
    if failed:
        text = _("FAILED: {names} (tolerance rtol={rtol:g}, atol={atol:g}).").format(
            names=", ".join(failed), rtol=result.leaves[0].rtol, atol=result.leaves[0].atol)
        if mismatched:
            text += " " + _("A gradient path may be cut (detach(), .data, no_grad) or a rule is "
                            "wrong.")
        console.print(Text(text, style="fail"))
    elif count == 1:
        console.print(Text(_("the leaf {name} is ok").format(name=result.leaves[0].name),
                           style="ok"))
    else:
        console.print(Text(_("all {count} leaves ok").format(count=count), style="ok"))


def check_path(path: str, *, eps: float = 1e-6, no_color: bool = False,
               out: TextIO | None = None, err: TextIO | None = None,
               limits: RunLimits | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr

    def action() -> int:
        check_eps(eps)
        with applied(limits):
            result = check_source(load_source(path), eps=eps, err=err)
            render_check(result, out, no_color=no_color)
        return EXIT_OK if result.ok else EXIT_FAILED

    return guarded(action, err, subject=display_name(path), no_color=no_color)


__all__ = ["check_source", "check_path", "render_check", "CheckResult", "LeafCheck",
           "dtype_text"]
