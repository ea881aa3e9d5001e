"""Run a program while watching the engine: every created tensor and every backward call.

`trace_source` is what every view (report, graph, check, explain) builds on. It
uses only the observer hooks of the run's engine session: each new tensor, and each
backward pass (which tensor it starts from, each step, its end).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Callable, TextIO

import numpy as np

from autodiff.engine.graph import AccumulateGrad
from autodiff.engine.session import Observers, current
from autodiff.engine.tensor import Tensor
from autodiff.parser.diagnostics import TgError

from .outcome import ProgramError
from .source import LoadedSource


class Capture(io.StringIO):
    """A program's output kept as text, refusing what a UTF-8 stdout refuses (a lone
    surrogate), so a captured run fails on the same line as a printed one, as Python would."""

    def write(self, text: str) -> int:
        text.encode("utf-8")
        return super().write(text)


# The records below hold arrays and tensors, whose == is elementwise: they compare by
# identity (eq=False), so `in`, `index` and `==` on them never touch their contents.
@dataclass(eq=False)
class Step:
    """One node the engine ran: the gradient arriving and the rule's gradients per input
    (before they are summed to each input's shape); grads_out is None for AccumulateGrad."""

    node: Any
    grad_in: np.ndarray
    grads_out: list | None


@dataclass(eq=False)
class BackwardCall:
    tensor: Tensor
    value: np.ndarray  # the tensor's value when backward was called
    seed: np.ndarray  # the gradient backward started from (ones for a scalar)
    explicit_seed: bool
    create_graph: bool
    delivered: dict = field(default_factory=dict)  # id(leaf) -> gradient this call added
    steps: list[Step] = field(default_factory=list)


@dataclass(eq=False)
class Trace:
    source: LoadedSource
    globals: dict[str, Any]
    assigned_lines: dict[str, int]
    created: list[Tensor]
    calls: list[BackwardCall]
    error: TgError | None
    output: str = ""

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
            if t.grad_fn is not None:
                names.setdefault(id(t.grad_fn), name)
        return names

    def line_of(self, name: str | None) -> int | None:
        return self.assigned_lines.get(name) if name else None

    def raise_error(self) -> None:
        if self.error is not None:
            raise ProgramError(self.error, self.source.text)


def trace_source(source: LoadedSource, *, out: TextIO | None = None, err: TextIO | None = None,
                 record_steps: bool = False,
                 on_create: Callable[[int, Tensor], None] | None = None,
                 after_backward: Callable[[int], None] | None = None,
                 seeds: dict[int, np.ndarray] | None = None) -> Trace:
    """Run `source`, printing to `out` (captured into Trace.output when None); the program's
    warnings go to `err` (stderr when None). Views that re-run a program pass a throwaway
    `err` for the re-runs, so each warning is shown once. Every run starts from a fresh
    session, so re-runs draw the same random numbers."""
    from autodiff.interpreter import run_source

    capture = out is None
    stream = Capture() if capture else out
    trace = Trace(source, {}, {}, [], [], None)

    def created(t: Tensor) -> None:
        if on_create is not None:
            on_create(len(trace.created), t)
        trace.created.append(t)

    session = current().for_run()
    session.observers = _observers(trace, created, record_steps, after_backward, seeds or {})
    result = run_source(source.text, source.filename, out=stream, err=err, session=session)
    trace.globals = result.globals
    trace.assigned_lines = result.assigned_lines
    trace.error = result.error
    if capture:
        trace.output = stream.getvalue()
    return trace


def _array(g) -> np.ndarray:
    return np.array(g.array if type(g) is Tensor else g, copy=True)


def _observers(trace: Trace, created, record_steps: bool, after_backward, seeds: dict) -> Observers:
    current: list[BackwardCall | None] = [None]
    # the last call on each tensor (and grad_fn): only that one is ever explained, so an
    # earlier call's recorded steps go when a later one starts (a training loop's would pile up)
    last_on: dict[int, BackwardCall] = {}

    def observe(node, grad_in, grads_out) -> None:
        call = current[0]
        if call is None:  # a torch.autograd.grad pass: not a backward call
            return
        if type(node) is AccumulateGrad:
            v = node.variable
            previous = call.delivered.get(id(v))
            g = _array(grad_in)
            call.delivered[id(v)] = (v, g if previous is None else previous[1] + g)
        if record_steps:
            outs = None if grads_out is None else [None if o is None else _array(o)
                                                   for o in grads_out]
            call.steps.append(Step(node, _array(grad_in), outs))

    def started(tensors, grad_tensors, create_graph, is_grad):
        if is_grad:  # torch.autograd.grad: watched only through its steps (ignored above)
            current[0] = None
            return None
        t = tensors[0]
        gradient = None if grad_tensors is None else grad_tensors[0]
        if len(trace.calls) in seeds:  # `autodiff explain` builds J row by row this way
            gradient = Tensor._wrap(np.asarray(seeds[len(trace.calls)], dtype=t.array.dtype))
        if gradient is None:
            seed = np.ones_like(t.array)
        else:
            seed = np.array(gradient.array if type(gradient) is Tensor else gradient,
                            dtype=t.array.dtype)
        call = BackwardCall(t, np.array(t.array, copy=True), seed, gradient is not None,
                            create_graph)
        if record_steps:
            for key in (id(t),) if t.grad_fn is None else (id(t), id(t.grad_fn)):
                earlier = last_on.get(key)
                if earlier is not None:
                    earlier.steps = []
                last_on[key] = call
        trace.calls.append(call)
        current[0] = call
        return None if gradient is None else [gradient]

    def finished(ok: bool) -> None:
        call, current[0] = current[0], None
        if not ok and call is not None and trace.calls and trace.calls[-1] is call:
            trace.calls.pop()  # it raised: a program may catch that and go on; nothing to show
        if ok and after_backward is not None:
            after_backward(len(trace.calls))

    observers = Observers()
    observers.created, observers.backward_started = created, started
    observers.backward_step, observers.backward_finished = observe, finished
    return observers
