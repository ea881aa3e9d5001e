"""Run a program while watching the engine: every created tensor and every backward call.

`trace_source` is what every view (report, graph, check, explain) builds on. It attaches a
`TraceObserver` to the run's engine session (engine/core/observer.py) and reads only the
events: each new tensor, each top-level tensor binding, and each backward pass (which
tensor it starts from, each step, each gradient accumulated, its end).
"""

from __future__ import annotations

import io
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, TextIO

import numpy as np

from autodiff.engine.core.observer import Observer
from autodiff.engine.core.session import current
from autodiff.engine.graph.nodes import AccumulateGrad, watched_grad_fn
from autodiff.engine.tensors.inspection import node_params, saved_inputs, saved_result, value_array
from autodiff.engine.tensors.tensor import Tensor
from autodiff.text.diagnostics import TgError

from .outcome import ProgramError
from .source import LoadedSource


class Capture(io.StringIO):
    """A program's output kept as text, refusing what a UTF-8 stdout refuses (a lone
    surrogate), so a captured run fails on the same line as a printed one, as Python would."""

    def write(self, text: str) -> int:
        text.encode("utf-8")
        return super().write(text)


class Binding(NamedTuple):
    """A top-level name bound to a tensor by the statement at `line`. Tensors are held
    weakly (the Trace keeps the last one each line bound to each name, so an earlier binding
    can still be shown while its node is in the graph): memory stays bounded by the
    program's size, not by how often a loop runs."""

    name: str
    line: int
    tensor: weakref.ref  # -> Tensor, or None once the program dropped it
    node: weakref.ref | None  # -> its grad_fn (None: a leaf or no graph)


# The records below hold arrays and tensors, whose == is elementwise: they compare by
# identity (eq=False), so `in`, `index` and `==` on them never touch their contents.
@dataclass(eq=False)
class Step:
    """One node the engine ran: the gradient arriving and the rule's gradients per input
    (before they are summed to each input's shape); grads_out is None for AccumulateGrad."""

    node: Any
    grad_in: np.ndarray
    grads_out: list | None
    # what the rule read, copied as it ran (a backward without retain_graph frees it after):
    # the inputs (arrays, numbers or None), the forward result, the recorded params
    inputs: tuple | None = None
    out: np.ndarray | None = None
    params: dict | None = None


@dataclass(eq=False)
class BackwardCall:
    tensor: Tensor
    value: np.ndarray  # the tensor's value when backward was called
    seed: np.ndarray  # the gradient backward started from (ones for a scalar)
    explicit_seed: bool
    create_graph: bool
    delivered: dict = field(default_factory=dict)  # id(leaf) -> gradient this call added
    steps: list[Step] = field(default_factory=list)
    finished: bool | None = None  # False: an error stopped this pass part way


@dataclass(eq=False)
class Trace:
    source: LoadedSource
    globals: dict[str, Any]
    assigned_lines: dict[str, int]
    created: list[Tensor]
    calls: list[BackwardCall]
    error: TgError | None
    output: str = ""
    bindings: list[Binding] = field(default_factory=list)  # every tensor binding, in order
    kept: dict = field(default_factory=dict)  # (name, line) -> the last tensor bound there
    failed_call: BackwardCall | None = None  # the last backward call, when it raised

    def tensors(self) -> dict[str, Tensor]:
        """Top-level names bound to tensors, in order of first assignment."""
        return {n: v for n, v in self.globals.items() if type(v) is Tensor}

    def tensor_names(self) -> dict[int, str]:
        names: dict[int, str] = {}
        for name, t in self.tensors().items():
            names.setdefault(id(t), name)
        return names

    def node_names(self) -> dict[int, str]:
        """id(grad_fn node) -> the name of the tensor it made (AccumulateGrad: its leaf)."""
        names: dict[int, str] = {}
        for name, t in self.tensors().items():
            if watched_grad_fn(t) is not None:
                names.setdefault(id(watched_grad_fn(t)), name)
        for binding in self.bindings:  # earlier bindings of a rebound name
            node = binding.node() if binding.node is not None else None
            if node is not None:
                names.setdefault(id(node), binding.name)
        return names

    def node_lines(self) -> dict[int, int]:
        """id(grad_fn node) -> the line of the binding that made it."""
        lines: dict[int, int] = {}
        for binding in self.bindings:
            node = binding.node() if binding.node is not None else None
            if node is not None:
                lines[id(node)] = binding.line
        return lines

    def line_of(self, name: str | None) -> int | None:
        """The line of the binding `name` holds now (its first assignment when unknown)."""
        if not name:
            return None
        current = self.globals.get(name)
        for binding in reversed(self.bindings):
            if binding.name == name and binding.tensor() is current:
                return binding.line
        return self.assigned_lines.get(name)

    def earlier_bindings(self) -> list:
        """Bindings a name no longer holds whose node is still part of the graph of a tensor
        the program holds; of several made by one line (a loop), the last one, with how many
        it stands for: [(binding, tensor, count, line that rebound it)]."""
        held = {id(t) for t in self.tensors().values()}
        reachable = _graph_nodes([watched_grad_fn(t) for t in self.tensors().values()
                                  if watched_grad_fn(t) is not None])
        counts: dict = {}
        later: dict = {}
        for i, binding in enumerate(self.bindings):
            node = binding.node() if binding.node is not None else None
            tensor = binding.tensor()
            if node is None or id(node) not in reachable or (
                    tensor is not None and id(tensor) in held):
                continue
            key = (binding.name, binding.line)
            counts[key] = counts.get(key, 0) + 1
            later[key] = next((b.line for b in self.bindings[i + 1:] if b.name == binding.name),
                              None)
        found = []
        for key, count in counts.items():
            t = self.kept.get(key)
            if t is not None and id(t) not in held and watched_grad_fn(t) is not None and \
                    id(watched_grad_fn(t)) in reachable:
                binding = next(b for b in reversed(self.bindings) if (b.name, b.line) == key)
                found.append((binding, t, count, later[key]))
        return found

    def raise_error(self) -> None:
        if self.error is not None:
            raise ProgramError(self.error, self.source.text)


def _graph_nodes(starts) -> set:
    seen, stack = set(), list(starts)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(c for c, _ in node.next_functions if c is not None)
    return seen


def trace_source(source: LoadedSource, *, out: TextIO | None = None, err: TextIO | None = None,
                 record_steps: bool = False, watch_bindings: bool = True,
                 on_create: Callable[[int, Tensor], None] | None = None,
                 after_backward: Callable[[int], None] | None = None,
                 seeds: dict[int, np.ndarray] | None = None) -> Trace:
    """Run `source`, printing to `out` (captured into Trace.output when None); the program's
    warnings go to `err` (stderr when None). With `watch_bindings`, every tensor bound to a
    top-level name is noted with its line (Trace.bindings). Views that re-run a program pass a throwaway
    `err` for the re-runs, so each warning is shown once. Every run starts from a fresh
    session, so re-runs draw the same random numbers."""
    from autodiff.interpreter import run_source

    capture = out is None
    stream = Capture() if capture else out
    trace = Trace(source, {}, {}, [], [], None)
    session = current().for_run()
    session.observers.attach(TraceObserver(trace, record_steps=record_steps,
                                           on_create=on_create, after_backward=after_backward,
                                           seeds=seeds))
    result = run_source(source.text, source.filename, out=stream, err=err, session=session,
                        watch_assignments=watch_bindings)
    trace.globals = result.globals
    trace.assigned_lines = result.assigned_lines
    trace.error = result.error
    if capture:
        trace.output = stream.getvalue()
    return trace


def _array(g) -> np.ndarray:
    return np.array(value_array(g) if type(g) is Tensor else g, copy=True)


def _grad_array(g):
    if type(g) is list:  # a node with several outputs: one gradient (or None) per output
        return [None if x is None else _array(x) for x in g]
    return _array(g)


def _read_by_rule(node) -> tuple:
    """(inputs, out, params) of a node as its rule is about to read them."""
    if type(node) is AccumulateGrad:
        return None, None, None
    saved = saved_inputs(node)
    inputs = None if saved is None else tuple(_array(v) if type(v) is Tensor else v
                                              for v in saved)
    result = saved_result(node)
    out = None if result is None else np.array(result, copy=True)
    params = node_params(node)
    return inputs, out, None if params is None else dict(params)


class TraceObserver(Observer):
    """Fills a `Trace` as the program runs: each tensor made, each top-level tensor binding
    (in a run that watches assignments), each backward call with the gradients it delivered
    (and, with `record_steps`, every node it ran with what its rule read). `on_create(index,
    tensor)` and `after_backward(calls so far)` let a view act at those moments; `seeds`
    (call number -> gradient) replaces the gradient a backward call starts from."""

    def __init__(self, trace: Trace, *, record_steps: bool = False,
                 on_create: Callable[[int, Tensor], None] | None = None,
                 after_backward: Callable[[int], None] | None = None,
                 seeds: dict[int, np.ndarray] | None = None) -> None:
        self.trace = trace
        self.record_steps = record_steps
        self.on_create = on_create
        self.after_backward = after_backward
        self.seeds = seeds or {}
        self.call: BackwardCall | None = None  # the backward call running now
        # the last call on each tensor (and grad_fn): only that one is ever explained, so an
        # earlier call's recorded steps go when a later one starts (a training loop's would
        # pile up)
        self.last_on: dict[int, BackwardCall] = {}
        self.made: set[int] = set()  # ids of the tensors in trace.created

    def tensor_made(self, tensor: Tensor) -> None:
        if id(tensor) in self.made:  # (ids stay unique: `created` keeps each tensor alive)
            return  # (made by a creation function, then made to require grad: one leaf)
        self.made.add(id(tensor))
        if self.on_create is not None:
            self.on_create(len(self.trace.created), tensor)
        self.trace.created.append(tensor)

    def assigned(self, name: str, value: Any, line: int) -> None:
        if isinstance(value, Tensor):
            node = watched_grad_fn(value)
            self.trace.bindings.append(Binding(name, line, weakref.ref(value),
                                               None if node is None else weakref.ref(node)))
            self.trace.kept[(name, line)] = value

    def backward_started(self, tensors, grad_tensors, create_graph, is_grad):
        if is_grad:  # torch.autograd.grad: watched only through its steps (ignored below)
            self.call = None
            return None
        trace = self.trace
        t = tensors[0]
        value = value_array(t)
        gradient = None if grad_tensors is None else grad_tensors[0]
        if len(trace.calls) in self.seeds:  # `autodiff explain` builds J row by row this way
            gradient = np.asarray(self.seeds[len(trace.calls)], dtype=value.dtype)
        if gradient is None:
            seed = np.ones_like(value)
        else:
            seed = np.array(value_array(gradient) if type(gradient) is Tensor else gradient,
                            dtype=value.dtype)
        call = BackwardCall(t, np.array(value, copy=True), seed, gradient is not None,
                            create_graph)
        if self.record_steps:
            node = watched_grad_fn(t)
            for key in (id(t),) if node is None else (id(t), id(node)):
                earlier = self.last_on.get(key)
                if earlier is not None:
                    earlier.steps = []
                self.last_on[key] = call
        trace.calls.append(call)
        trace.failed_call = None
        self.call = call
        return None if gradient is None else [gradient]

    def backward_step(self, node, grad_in, grads_out) -> None:
        call = self.call
        if call is None or not self.record_steps:  # (None: a torch.autograd.grad pass)
            return
        outs = [None if o is None else _array(o) for o in grads_out]
        call.steps.append(Step(node, _grad_array(grad_in), outs, *_read_by_rule(node)))

    def gradient_accumulated(self, node, grad) -> None:
        call = self.call
        if call is None:
            return
        v = node.variable
        previous = call.delivered.get(id(v))
        g = _array(grad)
        call.delivered[id(v)] = (v, g if previous is None else previous[1] + g)
        if self.record_steps:
            call.steps.append(Step(node, _grad_array(grad), None, *_read_by_rule(node)))

    def backward_ended(self, ok: bool) -> None:
        trace = self.trace
        call, self.call = self.call, None
        if call is not None:
            call.finished = ok
        if not ok and call is not None and trace.calls and trace.calls[-1] is call:
            # it raised: a program may catch that and go on, so it is no call of the run;
            # `explain` still shows its steps when that error is what stopped the program
            trace.calls.pop()
            trace.failed_call = call
        if ok and self.after_backward is not None:
            self.after_backward(len(trace.calls))
