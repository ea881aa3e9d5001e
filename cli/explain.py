"""`autodiff explain`: the backward pass step by step, in the engine's own order.

Each step shows the node, the gradient arriving, its local rule (from RULES, keyed
by grad_fn name like the op table), the gradient sent to each input, any sum over
broadcast dimensions, and what each AccumulateGrad adds to a `.grad`. For
`backward(v)` on a non-scalar output it first shows J, v and vᵀJ (J is built row by
row by re-running the program with backward(eᵢ)).
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

import numpy as np

from autodiff.engine.autograd import AccumulateGrad
from autodiff.engine.printing import format_tensor

from .graph import input_meta
from .names import Namer, shape_text
from .outcome import EXIT_OK, UsageError, guarded
from .source import LoadedSource, load_source
from .trace import BackwardCall, Trace, trace_source

# grad_fn name -> (the rule in words, one formula per input); g is the arriving gradient
RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "AddBackward0": ("a sum passes the gradient through", ("∂(a+b)/∂a = 1: g", "∂(a+b)/∂b = 1: g·alpha")),
    "SubBackward0": ("a difference: +g to a, -g to b", ("∂(a-b)/∂a = 1: g", "∂(a-b)/∂b = -1: -g·alpha")),
    "RsubBackward1": ("c - a sends -g", ("∂(c-a)/∂a = -1: -g",)),
    "MulBackward0": ("a product: each factor gets g times the other",
                     ("∂(a·b)/∂a = b: g·b", "∂(a·b)/∂b = a: g·a")),
    "DivBackward0": ("a quotient", ("∂(a/b)/∂a = 1/b: g/b", "∂(a/b)/∂b = -a/b²: -g·a/b²")),
    "NegBackward0": ("negation flips the sign", ("∂(-a)/∂a = -1: -g",)),
    "PowBackward0": ("a power with a constant exponent n", ("∂(aⁿ)/∂a = n·aⁿ⁻¹: g·n·aⁿ⁻¹",)),
    "PowBackward1": ("a power with a tensor exponent",
                     ("∂(aᵇ)/∂a = b·aᵇ⁻¹: g·b·aᵇ⁻¹", "∂(aᵇ)/∂b = aᵇ·ln a: g·aᵇ·ln a")),
    "PowBackward2": ("a constant base c raised to a", ("∂(cᵃ)/∂a = cᵃ·ln c: g·cᵃ·ln c",)),
    "ExpBackward0": ("exp is its own derivative", ("∂(eᵃ)/∂a = eᵃ: g·out",)),
    "LogBackward0": ("natural log", ("∂(ln a)/∂a = 1/a: g/a",)),
    "SqrtBackward0": ("square root", ("∂(√a)/∂a = 1/(2√a): g/(2·out)",)),
    "SinBackward0": ("sine", ("∂(sin a)/∂a = cos a: g·cos a",)),
    "CosBackward0": ("cosine", ("∂(cos a)/∂a = -sin a: -g·sin a",)),
    "TanhBackward0": ("tanh", ("∂(tanh a)/∂a = 1 - tanh²a: g·(1 - out²)",)),
    "SigmoidBackward0": ("sigmoid", ("∂σ(a)/∂a = σ(a)(1-σ(a)): g·out·(1-out)",)),
    "ReluBackward0": ("relu lets the gradient through where the input was positive",
                      ("∂relu(a)/∂a = [a > 0]: g·[out > 0]",)),
    "AbsBackward0": ("absolute value", ("∂|a|/∂a = sign(a): g·sign(a)",)),
    "ClampBackward1": ("clamp passes the gradient inside [min, max]", ("∂clamp(a)/∂a = [min ≤ a ≤ max]",)),
    "SumBackward0": ("a sum of all elements: every element gets g", ("∂(Σa)/∂aᵢ = 1: g expanded to a's shape",)),
    "SumBackward1": ("a sum over dims: g is expanded back along them", ("∂(Σ_d a)/∂a = 1: g expanded",)),
    "MeanBackward0": ("a mean of n elements: each gets g/n", ("∂(Σa/n)/∂aᵢ = 1/n: g/n expanded",)),
    "MeanBackward1": ("a mean over dims: g/n expanded back", ("∂mean_d(a)/∂a = 1/n: g/n expanded",)),
    "MmBackward0": ("a matrix product A·B", ("∂(AB)/∂A: g·Bᵀ", "∂(AB)/∂B: Aᵀ·g")),
    "MvBackward0": ("a matrix-vector product M·v", ("∂(Mv)/∂M: g ⊗ v", "∂(Mv)/∂v: Mᵀ·g")),
    "DotBackward0": ("a dot product a·b", ("∂(a·b)/∂a = b: g·b", "∂(a·b)/∂b = a: g·a")),
    "LinalgVectorNormBackward0": ("the 2-norm", ("∂‖a‖/∂a = a/‖a‖: g·a/out",)),
    "MaximumBackward0": ("elementwise max: the larger input gets g (ties split)", ("g where a > b", "g where b > a")),
    "MinimumBackward0": ("elementwise min: the smaller input gets g (ties split)", ("g where a < b", "g where b < a")),
    "WhereBackward0": ("where(c, a, b): g goes where it came from", ("", "g where c", "g where not c")),
    "CloneBackward0": ("clone passes the gradient through", ("g",)),
    "ToCopyBackward0": ("a dtype conversion passes the gradient through, cast back", ("g",)),
    "ViewBackward0": ("a reshape: g reshaped back", ("g reshaped to a's shape",)),
    "UnsafeViewBackward0": ("a reshape: g reshaped back", ("g reshaped to a's shape",)),
    "ExpandBackward0": ("expand: g summed over the expanded dims", ("g, summed to a's shape",)),
    "TBackward0": ("a transpose: g transposed back", ("gᵀ",)),
    "TransposeBackward0": ("a transpose: g transposed back", ("g with the dims swapped back",)),
    "PermuteBackward0": ("a permutation: g permuted back", ("g permuted back",)),
    "SelectBackward0": ("indexing: g is placed where the element came from, zeros elsewhere", ("g placed",)),
    "SliceBackward0": ("slicing: g is placed in the slice, zeros elsewhere", ("g placed",)),
    "IndexBackward0": ("indexing: g is added where the elements came from", ("g scattered",)),
    "SoftmaxBackward0": ("softmax", ("out·(g - Σ g·out)",)),
    "LogSoftmaxBackward0": ("log-softmax", ("g - softmax(a)·Σg",)),
    "MseLossBackward0": ("mean squared error", ("2(a - b)/n·g", "-2(a - b)/n·g")),
}


def _fmt(array) -> str:
    return format_tensor(np.asarray(array))


def pick_call(trace: Trace, root: str | None) -> tuple[int, BackwardCall]:
    """The backward call to explain and its position in trace.calls (the last one on
    `root`, else the last one)."""
    if not trace.calls:
        raise UsageError("the program never calls backward(): nothing to explain")
    if root is None:
        return len(trace.calls) - 1, trace.calls[-1]
    tensors = trace.tensors()
    if root not in tensors:
        raise UsageError(f"--root {root}: no top-level tensor of that name")
    for number in reversed(range(len(trace.calls))):
        call = trace.calls[number]
        if call.tensor is tensors[root] or (call.tensor.grad_fn is not None
                                             and call.tensor.grad_fn is tensors[root].grad_fn):
            return number, call
    raise UsageError(f"--root {root}: backward() was never called on {root}")


def explain_lines(source: LoadedSource, root: str | None = None,
                  err: TextIO | None = None) -> list[str]:
    """The explanation as plain lines (render_explain styles them); the program's warnings
    go to `err` once (the re-runs that build J drop theirs)."""
    trace = trace_source(source, err=err, record_steps=True, reseed=True)
    trace.raise_error()
    number, call = pick_call(trace, root)
    namer = Namer(trace)
    tnames = trace.tensor_names()
    name = tnames.get(id(call.tensor))
    symbol = name or "out"  # what ∂ formulas call the output
    lines = [f"backward() call {number + 1} of {len(trace.calls)}, on {name or 'the output'} "
             f"{shape_text(call.value.shape)} = {_fmt(call.value)}"]
    if call.value.size != 1 or call.explicit_seed:
        lines += _vjp_lines(source, trace, call, number, symbol)
    if call.explicit_seed:
        lines.append(f"seed: the gradient argument v = {_fmt(call.seed)}")
    else:
        lines.append(f"seed: ∂{symbol}/∂{symbol} = {_fmt(call.seed)}")
    for i, step in enumerate(call.steps, 1):
        node = step.node
        if type(node) is AccumulateGrad:
            leaf = tnames.get(id(node.variable), "an unnamed leaf")
            lines.append(f"[{i}] AccumulateGrad → {leaf} {shape_text(node.variable.shape)}")
            lines.append(f"    {leaf}.grad += {_fmt(step.grad_in)}")
            continue
        op = node.name()
        words, formulas = RULES.get(op, ("rule from the op table (engine/ops.py)", ()))
        lines.append(f"[{i}] {namer.label(node)}: {words}")
        lines.append(f"    gradient arriving: g = {_fmt(step.grad_in)}")
        for j, ((child, _), sent) in enumerate(zip(node.next_functions, step.grads_out or [])):
            if child is None or sent is None:
                continue
            target = namer.label(child)
            formula = formulas[j] if j < len(formulas) and formulas[j] else "g"
            lines.append(f"    input {j} ({target}): {op}: {formula}")
            lines.append(f"        sends {_fmt(sent)}")
            shape, _ = input_meta(node, j)
            if shape is not None and list(np.shape(sent)) != shape:
                summed = _sum_to(np.asarray(sent), tuple(shape))
                lines.append(f"        broadcast: summed from {shape_text(np.shape(sent))} to "
                             f"{shape_text(shape)} = {_fmt(summed)}")
    return _align(lines)


def _sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and g.shape[i + lead] != 1)
    return np.sum(g, axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


def _vjp_lines(source, trace: Trace, call: BackwardCall, number: int, symbol: str) -> list[str]:
    """J, v and vᵀJ for each leaf this call reaches (rows of J from backward(eᵢ) re-runs)."""
    y = call.value
    rows: dict[int, list] = {}
    for i in range(y.size):
        e = np.zeros(y.size, dtype=y.dtype)
        e[i] = 1
        run = trace_source(source, err=io.StringIO(), reseed=True,
                           seeds={number: e.reshape(y.shape)})
        if run.error is not None or len(run.calls) <= number:
            return ["(J could not be rebuilt: the program runs differently)"]
        for k, t in enumerate(run.created):
            got = run.calls[number].delivered.get(id(t))
            if got is not None:
                rows.setdefault(k, []).append(np.asarray(got[1]).reshape(-1))
    v = call.seed.reshape(-1)
    lines = [f"{'backward(v)' if call.explicit_seed else 'backward()'} on a "
             f"{'non-scalar' if y.size != 1 else 'scalar'} output computes the vector-Jacobian "
             "product vᵀJ, never J itself:",
             f"    v = {_fmt(v)}"]
    tnames = trace.tensor_names()
    for k, row_list in rows.items():
        if len(row_list) != y.size:
            continue
        leaf = tnames.get(id(trace.created[k]), f"leaf #{k}")
        jac = np.stack(row_list)
        lines.append(f"    J = ∂{symbol}/∂{leaf} {shape_text(jac.shape)} =")
        lines.extend("        " + s for s in _fmt(jac).split("\n"))
        lines.append(f"    vᵀJ = {_fmt(v @ jac)}  (what {leaf}.grad receives)")
    return lines


def _align(lines: list[str]) -> list[str]:
    """Continuation lines of a multi-line tensor start under its `tensor(`."""
    aligned = []
    for line in lines:
        first, *rest = line.split("\n")
        pad = " " * max(first.find("tensor("), 0)
        aligned.append(first)
        aligned.extend(pad + r for r in rest)
    return aligned


def render_explain(lines: list[str], out: TextIO, *, no_color: bool = False) -> None:
    from rich.text import Text

    from .console import make_console

    console = make_console(out, no_color=no_color)
    for line in lines:
        style = "bold" if line.startswith("[") else ("leaf" if ".grad +=" in line else None)
        console.print(Text(line, style=style or ""))


def explain_path(path: str, *, root: str | None = None, no_color: bool = False,
                 out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr

    def action() -> int:
        render_explain(explain_lines(load_source(path), root, err), out, no_color=no_color)
        return EXIT_OK

    return guarded(action, err)
