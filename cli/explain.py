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

from autodiff.engine.graph.nodes import AccumulateGrad, MultiNode, watched_grad_fn
from autodiff.engine.ops.operands import sum_to
from autodiff.engine.core.printing import format_tensor
from autodiff.engine.tensors.inspection import node_op
from .explain_text import bind_symbols, rule_with_numbers, value_text

from autodiff.text.display import text_width
from autodiff.text.i18n import N_, _

from .graph import input_meta
from .limits import RunLimits, applied
from .names import Namer, shape_text
from .outcome import EXIT_OK, UsageError, guarded
from .source import LoadedSource, display_name, load_source
from .trace import BackwardCall, Step, Trace, trace_source

INDENT = "    "
CALL = N_("backward() call {n} of {total}, on {name}")
STOPPED = N_("the program stopped with an error at line {line} (its message follows on stderr)")


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
        return _("{value} (all {count} elements)").format(value=text, count=array.size)
    return text if "…" not in text else _fmt(array)


def pick_calls(trace: Trace, root: str | None, call: int | None) -> list[int]:
    """Positions in trace.calls to explain: all of them, those on `root`, or number `call`."""
    if not trace.calls:
        if trace.error is not None:
            return []  # (a call the error stopped is trace.failed_call)
        raise UsageError(_("the program never calls backward(): nothing to explain"))
    chosen = list(range(len(trace.calls)))
    if root is not None:
        tensors = trace.tensors()
        if root not in tensors:
            raise UsageError(_("--root {name}: no top-level tensor of that name").format(name=root))
        target = tensors[root]
        chosen = [n for n in chosen if trace.calls[n].tensor is target or (
            watched_grad_fn(trace.calls[n].tensor) is not None
            and watched_grad_fn(trace.calls[n].tensor) is watched_grad_fn(target))]
        if not chosen:
            raise UsageError(_("--root {name}: backward() was never called on {name}").format(
                name=root))
    if call is not None:
        if not 1 <= call <= len(trace.calls):
            raise UsageError((_("--call {n}: the program makes 1 backward call (1 to 1)")
                              if len(trace.calls) == 1 else
                              _("--call {n}: the program makes {count} backward calls (1 to "
                                "{count})")).format(n=call, count=len(trace.calls)))
        if call - 1 not in chosen:
            raise UsageError(_("--call {n} is not a backward call on {name}").format(
                n=call, name=root))
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
        lines.append(_(STOPPED).format(line=trace.error.line))
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
    lines = [_(CALL).format(n=number + 1, total=total, name=name or _("the output"))
             + f" {shape_text(call.value.shape)} = {_fmt(call.value)}"]
    if jacobians and call.finished is not False and (call.value.size != 1 or call.explicit_seed):
        lines += _vjp_lines(source, trace, call, number, symbol)
    if call.finished is False and not call.steps:
        return lines + [_("(the error stopped this call before its first step)")]
    if call.explicit_seed:
        lines.append(_("seed: the gradient argument v = {value}").format(value=_shown(call.seed)))
    else:
        lines.append(_("seed: ∂{y}/∂{y} = {value}").format(y=symbol, value=_shown(call.seed)))
    arrivals = _arrivals(call)
    for i, step in enumerate(call.steps, 1):
        lines += _step_lines(i, step, namer, tnames, arrivals.get(id(step.node), []))
    if call.finished is False:
        lines.append(_("(the error stopped this backward pass here)"))
    return lines


def _arrivals(call: BackwardCall) -> dict[int, list]:
    """id(node) -> [(step number, input position, gradient in the input's shape)] for each
    gradient a step sent to that node (the engine sums them before the node runs)."""
    arrivals: dict[int, list] = {}
    for i, step in enumerate(call.steps, 1):
        if step.grads_out is None:
            continue
        for j, ((child, _slot), sent) in enumerate(zip(step.node.next_functions, step.grads_out)):
            if child is None or sent is None:
                continue
            shape, _dtype = input_meta(step.node, j)
            value = np.asarray(sent)
            if shape is not None and list(value.shape) != shape:
                value = sum_to(value, tuple(shape))
            arrivals.setdefault(id(child), []).append((i, j, value))
    return arrivals


def _arriving(grad_in, parts: list) -> str:
    """`2.25 + 2.25 = 4.5 (all 4 elements), the sum over 2 paths (from [3] input 0, …)`."""
    if type(grad_in) is list:  # a node with several outputs: one gradient per output
        return _("one per output: {values}").format(values=", ".join(
            "None" if g is None else value_text(g) for g in grad_in))
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
    where = ", ".join(f"[{i}] " + _("input {j}").format(j=j) for i, j, _value in parts)
    return _("{terms} = {value}, the sum over {count} paths (from {where})").format(
        terms=terms, value=_shown(grad_in), count=len(parts), where=where)


def _step_lines(i: int, step: Step, namer: Namer, tnames: dict, parts: list) -> list[str]:
    node = step.node
    if type(node) is AccumulateGrad:
        leaf = tnames.get(id(node.variable), _("an unnamed leaf"))
        return [f"[{i}] AccumulateGrad → {leaf} {shape_text(node.variable.shape)}",
                f"{INDENT}{leaf}.grad += {_arriving(step.grad_in, parts)}"]
    op = node_op(node)
    lines = [f"[{i}] {namer.label(node)}: {_(op.explain)}",
             INDENT + _("gradient arriving: g = {value}").format(
                 value=_arriving(step.grad_in, parts))]
    for j, ((child, _slot), sent) in enumerate(zip(node.next_functions, step.grads_out or [])):
        if child is None or sent is None:
            continue
        formula = op.formulas[j] if j < len(op.formulas) and op.formulas[j] else (
            op.formulas[0] if op.variadic and op.formulas else "g")
        rule, _colon, expression = formula.partition(":")
        lines.append(INDENT + "→ " + _("input {j}").format(j=j)
                     + f" ({namer.label(child)}): {rule.strip()}")
        lines += [INDENT * 2 + line for line in _worked(op, j, step, expression.strip(), sent)]
        shape, _dtype = input_meta(node, j)
        if shape is not None and list(np.shape(sent)) != shape:
            summed = sum_to(np.asarray(sent), tuple(shape))
            lines.append(INDENT * 2 + _("broadcast: summed from {shape} to {target} = "
                                        "{value}").format(shape=shape_text(np.shape(sent)),
                                                          target=shape_text(shape),
                                                          value=_shown(summed)))
    return lines


def _worked(op, j: int, step: Step, expression: str, sent) -> list[str]:
    """`g·b = 0.25·3 = 0.75`: the expression, with the node's numbers, and what it sent."""
    result = _shown(sent)
    if type(step.grad_in) is list or type(step.node) is MultiNode:
        return [_("sends {value}").format(value=result)]
    values = bind_symbols(op, step.grad_in, step.out, step.inputs, step.params)
    filled = rule_with_numbers(op, j, values)
    if filled is None:
        return [f"{expression} = {result}" if expression else
                _("sends {value}").format(value=result)]
    text, first_only = filled
    if first_only:
        first = value_text(np.asarray(sent).reshape(-1)[:1])
        return [f"{expression} = {text} = " + _("{value} (the first element)").format(value=first),
                _("sends {value}").format(value=result)]
    if text == result:
        return [f"{expression} = {result}"]
    return [f"{expression} = {text} = {result}"]


MAX_JACOBIAN_ROWS = 16  # J is built by one re-run of the program per output element


def _vjp_lines(source, trace: Trace, call: BackwardCall, number: int, symbol: str) -> list[str]:
    """J, v and vᵀJ for each leaf this call reaches (rows of J from backward(eᵢ) re-runs)."""
    y = call.value
    if y.size > MAX_JACOBIAN_ROWS:
        return [_("backward(v) on a non-scalar output computes the vector-Jacobian product vᵀJ, "
                  "never J itself (J is not shown: the output has {count:,} elements, and J "
                  "takes one re-run of the program per element; it is shown for outputs of up "
                  "to {most})").format(count=y.size, most=MAX_JACOBIAN_ROWS)]
    rows: dict[int, list] = {}
    for i in range(y.size):
        e = np.zeros(y.size, dtype=y.dtype)
        e[i] = 1
        run = trace_source(source, err=io.StringIO(), seeds={number: e.reshape(y.shape)},
                           watch_bindings=False)
        if len(run.calls) <= number or run.calls[number].finished is False:
            return [_("(J could not be rebuilt: the program runs differently)")]
        for k, t in enumerate(run.created):
            got = run.calls[number].delivered.get(id(t))
            if got is not None:
                rows.setdefault(k, []).append(np.asarray(got[1]).reshape(-1))
    v = call.seed.reshape(-1)
    if y.size != 1:
        head = _("{call} on a non-scalar output computes the vector-Jacobian product vᵀJ, "
                 "never J itself:")
    else:
        head = _("{call} on a scalar output computes the vector-Jacobian product vᵀJ, never J "
                 "itself:")
    lines = [head.format(call="backward(v)" if call.explicit_seed else "backward()"),
             f"    v = {_fmt(v)}"]
    tnames = trace.tensor_names()
    for k, row_list in rows.items():
        if len(row_list) != y.size or k >= len(trace.created):
            continue
        leaf = tnames.get(id(trace.created[k]), _("leaf #{k}").format(k=k))
        jac = np.stack(row_list)
        lines.append(f"    J = ∂{symbol}/∂{leaf} {shape_text(jac.shape)} =")
        lines.extend("        " + s for s in _fmt(jac).split("\n"))
        lines.append(f"    vᵀJ = {_fmt(v @ jac)}  " + _("(what {leaf}.grad receives)").format(
            leaf=leaf))
    return lines


def _align(lines: list[str]) -> list[str]:
    """Continuation lines of a multi-line tensor start under its `tensor(`."""
    aligned = []
    for line in lines:
        first, *rest = line.split("\n")
        pad = " " * text_width(first[:max(first.find("tensor("), 0)])  # columns, for CJK text
        aligned.append(first)
        aligned.extend(pad + r for r in rest)
    return aligned


def render_explain(lines: list[str], out: TextIO, *, no_color: bool = False) -> None:
    from rich.text import Text

    from .console import make_console

    console = make_console(out, no_color=no_color)
    call_head, stopped = _(CALL).split("{")[0], _(STOPPED).split("{")[0]
    for line in lines:
        if line.startswith("[") or line.startswith(call_head):
            style = "bold"
        elif ".grad +=" in line:
            style = "leaf"
        elif line.startswith(stopped):
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
