"""`autodiff explain`: the backward pass step by step, in the engine's own order.

Every backward call is shown (or the one `--call N` picks, or those on `--root`). Each step
shows the node, the gradient arriving (as a sum when it arrives along several paths), and
for each input the rule, the rule with the engine's own numbers put in, and the result
(the op's registry entry holds the rule and puts the numbers in); then any sum over
broadcast dimensions, and what each AccumulateGrad adds to a `.grad`. For `backward(v)` on a
non-scalar output it first shows J, v and vᵀJ (J is built row by row by re-running the
program with backward(eᵢ)). On a program that fails, the calls up to the failure are shown
(a call the error stopped, with the steps it ran), then the error.
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

import numpy as np

from autodiff.engine.graph import AccumulateGrad, MultiNode
from autodiff.engine.operands import sum_to
from autodiff.engine.printing import format_tensor
from autodiff.engine.registry import bind_symbols, rule_with_numbers, value_text

from .graph import input_meta
from .limits import RunLimits, applied
from .names import Namer, shape_text
from .outcome import EXIT_OK, UsageError, guarded
from .source import LoadedSource, display_name, load_source
from .trace import BackwardCall, Step, Trace, trace_source

INDENT = "    "


def _fmt(array) -> str:
    return format_tensor(np.asarray(array))


def _shown(array) -> str:
    """A value for reading: `4.5` (one number), `4.5 (all 4 elements)`, `[1, 2]`, or the
    tensor as PyTorch prints it when it is too long to list."""
    array = np.asarray(array)
    text = value_text(array)
    if array.size <= 1:
        return text
    if not text.startswith("["):
        return f"{text} (all {array.size} elements)"
    return text if "…" not in text else _fmt(array)


def pick_calls(trace: Trace, root: str | None, call: int | None) -> list[int]:
    """Positions in trace.calls to explain: all of them, those on `root`, or number `call`."""
    if not trace.calls:
        if trace.error is not None:
            return []  # (a call the error stopped is trace.failed_call)
        raise UsageError("the program never calls backward(): nothing to explain")
    chosen = list(range(len(trace.calls)))
    if root is not None:
        tensors = trace.tensors()
        if root not in tensors:
            raise UsageError(f"--root {root}: no top-level tensor of that name")
        target = tensors[root]
        chosen = [n for n in chosen if trace.calls[n].tensor is target or (
            trace.calls[n].tensor.grad_fn is not None
            and trace.calls[n].tensor.grad_fn is target.grad_fn)]
        if not chosen:
            raise UsageError(f"--root {root}: backward() was never called on {root}")
    if call is not None:
        if not 1 <= call <= len(trace.calls):
            raise UsageError(f"--call {call}: the program makes {len(trace.calls)} backward "
                             f"call{'s' if len(trace.calls) != 1 else ''} (1 to "
                             f"{len(trace.calls)})")
        if call - 1 not in chosen:
            raise UsageError(f"--call {call} is not a backward call on {root}")
        chosen = [call - 1]
    return chosen


def explain_trace(source: LoadedSource, root: str | None = None, call: int | None = None,
                  err: TextIO | None = None) -> tuple[Trace, list[str]]:
    trace = trace_source(source, err=err, record_steps=True)
    return trace, explain_from(trace, root, call)


def explain_from(trace: Trace, root: str | None = None, call: int | None = None, *,
                 jacobians: bool = True) -> list[str]:
    """The explanation of a traced run (a finished one, or the REPL's session so far);
    `jacobians`: rebuild J for a non-scalar output by re-running the program."""
    numbers = pick_calls(trace, root, call)
    namer = Namer(trace)
    lines: list[str] = []
    total = len(trace.calls)
    failed = trace.failed_call if trace.error is not None and call is None else None
    if failed is not None and root is not None:
        held = trace.tensors().get(root)
        failed = failed if held is failed.tensor else None
    shown = [(trace.calls[n], n) for n in numbers] + ([(failed, total)] if failed else [])
    for backward_call, number in shown:
        if lines:
            lines.append("")
        lines += _call_lines(trace.source, trace, namer, backward_call, number,
                             total + (failed is not None), jacobians)
    if trace.error is not None:
        if lines:
            lines.append("")
        lines.append(f"the program stopped with an error at line {trace.error.line} "
                     "(its message follows on stderr)")
    return _align(lines)


def explain_lines(source: LoadedSource, root: str | None = None, err: TextIO | None = None,
                  call: int | None = None) -> list[str]:
    """The explanation as plain lines (render_explain styles them); the program's warnings
    go to `err` once (the re-runs that build J drop theirs)."""
    return explain_trace(source, root, call, err)[1]


def _call_lines(source, trace: Trace, namer: Namer, call: BackwardCall, number: int,
                total: int, jacobians: bool = True) -> list[str]:
    tnames = trace.tensor_names()
    name = tnames.get(id(call.tensor))
    symbol = name or "out"  # what ∂ formulas call the output
    lines = [f"backward() call {number + 1} of {total}, on {name or 'the output'} "
             f"{shape_text(call.value.shape)} = {_fmt(call.value)}"]
    if jacobians and call.finished is not False and (call.value.size != 1 or call.explicit_seed):
        lines += _vjp_lines(source, trace, call, number, symbol)
    if call.finished is False and not call.steps:
        return lines + ["(the error stopped this call before its first step)"]
    if call.explicit_seed:
        lines.append(f"seed: the gradient argument v = {_shown(call.seed)}")
    else:
        lines.append(f"seed: ∂{symbol}/∂{symbol} = {_shown(call.seed)}")
    arrivals = _arrivals(call)
    for i, step in enumerate(call.steps, 1):
        lines += _step_lines(i, step, namer, tnames, arrivals.get(id(step.node), []))
    if call.finished is False:
        lines.append("(the error stopped this backward pass here)")
    return lines


def _arrivals(call: BackwardCall) -> dict[int, list]:
    """id(node) -> [(step number, input position, gradient in the input's shape)] for each
    gradient a step sent to that node (the engine sums them before the node runs)."""
    arrivals: dict[int, list] = {}
    for i, step in enumerate(call.steps, 1):
        if step.grads_out is None:
            continue
        for j, ((child, _), sent) in enumerate(zip(step.node.next_functions, step.grads_out)):
            if child is None or sent is None:
                continue
            shape, _ = input_meta(step.node, j)
            value = np.asarray(sent)
            if shape is not None and list(value.shape) != shape:
                value = sum_to(value, tuple(shape))
            arrivals.setdefault(id(child), []).append((i, j, value))
    return arrivals


def _arriving(grad_in, parts: list) -> str:
    """`2.25 + 2.25 = 4.5 (all 4 elements), the sum over 2 paths (from [3] input 0, …)`."""
    if type(grad_in) is list:  # a node with several outputs: one gradient per output
        return "one per output: " + ", ".join("None" if g is None else value_text(g)
                                              for g in grad_in)
    if len(parts) < 2:
        return _shown(grad_in)
    values = [p[2] for p in parts]
    total = values[0]
    for v in values[1:]:
        total = total + v
    if np.shape(total) != np.shape(grad_in) or not np.allclose(total, grad_in, equal_nan=True):
        return _shown(grad_in)  # a hook changed it: show what the node got
    terms = value_text(values[0])
    for v in values[1:]:
        text = value_text(v)
        terms += f" - {text[1:]}" if text.startswith("-") else f" + {text}"
    where = ", ".join(f"[{i}] input {j}" for i, j, _ in parts)
    return f"{terms} = {_shown(grad_in)}, the sum over {len(parts)} paths (from {where})"


def _step_lines(i: int, step: Step, namer: Namer, tnames: dict, parts: list) -> list[str]:
    node = step.node
    if type(node) is AccumulateGrad:
        leaf = tnames.get(id(node.variable), "an unnamed leaf")
        return [f"[{i}] AccumulateGrad → {leaf} {shape_text(node.variable.shape)}",
                f"{INDENT}{leaf}.grad += {_arriving(step.grad_in, parts)}"]
    op = node.op
    lines = [f"[{i}] {namer.label(node)}: {op.explain}",
             f"{INDENT}gradient arriving: g = {_arriving(step.grad_in, parts)}"]
    for j, ((child, _), sent) in enumerate(zip(node.next_functions, step.grads_out or [])):
        if child is None or sent is None:
            continue
        formula = op.formulas[j] if j < len(op.formulas) and op.formulas[j] else (
            op.formulas[0] if op.variadic and op.formulas else "g")
        rule, _, expression = formula.partition(":")
        lines.append(f"{INDENT}→ input {j} ({namer.label(child)}): {rule.strip()}")
        lines += [INDENT * 2 + line for line in _worked(op, j, step, expression.strip(), sent)]
        shape, _ = input_meta(node, j)
        if shape is not None and list(np.shape(sent)) != shape:
            summed = sum_to(np.asarray(sent), tuple(shape))
            lines.append(f"{INDENT * 2}broadcast: summed from {shape_text(np.shape(sent))} to "
                         f"{shape_text(shape)} = {_shown(summed)}")
    return lines


def _worked(op, j: int, step: Step, expression: str, sent) -> list[str]:
    """`g·b = 0.25·3 = 0.75`: the expression, with the node's numbers, and what it sent."""
    result = _shown(sent)
    if type(step.grad_in) is list or type(step.node) is MultiNode:
        return [f"sends {result}"]
    values = bind_symbols(op, step.grad_in, step.out, step.inputs, step.params)
    filled = rule_with_numbers(op, j, values)
    if filled is None:
        return [f"{expression} = {result}" if expression else f"sends {result}"]
    text, first_only = filled
    if first_only:
        first = value_text(np.asarray(sent).reshape(-1)[:1])
        return [f"{expression} = {text} = {first} (the first element)", f"sends {result}"]
    if text == result:
        return [f"{expression} = {result}"]
    return [f"{expression} = {text} = {result}"]


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
        run = trace_source(source, err=io.StringIO(), seeds={number: e.reshape(y.shape)},
                           watch_bindings=False)
        if len(run.calls) <= number or run.calls[number].finished is False:
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
        if len(row_list) != y.size or k >= len(trace.created):
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
        if line.startswith("[") or line.startswith("backward() call"):
            style = "bold"
        elif ".grad +=" in line:
            style = "leaf"
        elif line.startswith("the program stopped"):
            style = "error"
        else:
            style = ""
        console.print(Text(line, style=style), soft_wrap=True)


def explain_path(path: str, *, root: str | None = None, call: int | None = None,
                 no_color: bool = False, out: TextIO | None = None,
                 err: TextIO | None = None, limits: RunLimits | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr

    def action() -> int:
        with applied(limits):
            trace, lines = explain_trace(load_source(path), root, call, err)
            render_explain(lines, out, no_color=no_color)
            trace.raise_error()
        return EXIT_OK

    return guarded(action, err, subject=display_name(path), no_color=no_color)
