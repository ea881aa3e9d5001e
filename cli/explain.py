"""`autodiff explain`: the backward pass step by step, in the engine's own order.

Each step shows the node, the gradient arriving, its local rule (the op's registry
entry: its explanation and one formula per input), the gradient sent to each input, any sum over
broadcast dimensions, and what each AccumulateGrad adds to a `.grad`. For
`backward(v)` on a non-scalar output it first shows J, v and vᵀJ (J is built row by
row by re-running the program with backward(eᵢ)).
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

import numpy as np

from autodiff.engine.graph import AccumulateGrad
from autodiff.engine.operands import sum_to
from autodiff.engine.printing import format_tensor

from .graph import input_meta
from .limits import RunLimits, applied
from .names import Namer, shape_text
from .outcome import EXIT_OK, UsageError, guarded
from .source import LoadedSource, display_name, load_source
from .trace import BackwardCall, Trace, trace_source

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
    trace = trace_source(source, err=err, record_steps=True)
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
        words, formulas = node.op.explain, node.op.formulas
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
                summed = sum_to(np.asarray(sent), tuple(shape))
                lines.append(f"        broadcast: summed from {shape_text(np.shape(sent))} to "
                             f"{shape_text(shape)} = {_fmt(summed)}")
    return _align(lines)


MAX_JACOBIAN_ROWS = 16  # J is built by one re-run of the program per output element


def _vjp_lines(source, trace: Trace, call: BackwardCall, number: int, symbol: str) -> list[str]:
    """J, v and vᵀJ for each leaf this call reaches (rows of J from backward(eᵢ) re-runs)."""
    y = call.value
    if y.size > MAX_JACOBIAN_ROWS:
        return [f"backward(v) on a non-scalar output computes the vector-Jacobian product vᵀJ, "
                f"never J itself (J is not shown: the output has {y.size:,} elements, and J "
                f"takes one re-run of the program per element; it is shown for outputs of up "
                f"to {MAX_JACOBIAN_ROWS})"]
    rows: dict[int, list] = {}
    for i in range(y.size):
        e = np.zeros(y.size, dtype=y.dtype)
        e[i] = 1
        run = trace_source(source, err=io.StringIO(), seeds={number: e.reshape(y.shape)})
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
                 out: TextIO | None = None, err: TextIO | None = None,
                 limits: RunLimits | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr

    def action() -> int:
        with applied(limits):
            render_explain(explain_lines(load_source(path), root, err), out, no_color=no_color)
        return EXIT_OK

    return guarded(action, err, subject=display_name(path))
