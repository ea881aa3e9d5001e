"""The observer interface (engine/core/observer.py): what a run tells an attached observer,
in order, and that nobody watching costs nothing but a None test per event."""

from __future__ import annotations

import io

import numpy as np

from autodiff.engine.core.observer import EVENTS, Observer, Observers
from autodiff.engine.core.session import current
from autodiff.interpreter import run_source

PROGRAM = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * 3).sum()
y.backward()
print(x.grad)
z = missing
"""


class Recorder(Observer):
    """Every event, as (event, what identifies it)."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def tensor_made(self, tensor):
        self.events.append(("tensor_made", tensor.tolist()))

    def op_recorded(self, node, out):
        self.events.append(("op_recorded", node.name(), out.tolist()))

    def assigned(self, name, value, line):
        self.events.append(("assigned", name, line))

    def backward_started(self, tensors, grad_tensors, create_graph, is_grad):
        self.events.append(("backward_started", tensors[0].tolist(), grad_tensors, is_grad))

    def backward_step(self, node, grad_in, grads_out):
        self.events.append(("backward_step", node.name(), np.asarray(grad_in).tolist(),
                            [np.asarray(g).tolist() for g in grads_out]))

    def gradient_accumulated(self, node, grad):
        self.events.append(("gradient_accumulated", node.variable.tolist(),
                            np.asarray(grad).tolist()))

    def backward_ended(self, ok):
        self.events.append(("backward_ended", ok))

    def error(self, error):
        self.events.append(("error", error.error_class, error.line))


def _run(source: str, *observers: Observer, watch: bool = True):
    session = current().for_run()
    for observer in observers:
        session.observers.attach(observer)
    out = io.StringIO()
    result = run_source(source, "<t>", out=out, err=io.StringIO(), session=session,
                        watch_assignments=watch)
    return result, out.getvalue()


def test_an_attached_observer_sees_each_event_in_program_order():
    recorder = Recorder()
    result, out = _run(PROGRAM, recorder)
    assert out == "tensor([3., 3.])\n"
    assert result.error is not None and result.error.error_class == "NameError"
    assert recorder.events == [
        # `import torch` rebinds torch to the module it already names: no new binding
        ("tensor_made", [1.0, 2.0]),
        ("assigned", "x", 2),
        ("op_recorded", "MulBackward0", [3.0, 6.0]),
        ("op_recorded", "SumBackward0", 9.0),
        ("assigned", "y", 3),
        ("backward_started", 9.0, None, False),
        ("backward_step", "SumBackward0", 1.0, [[1.0, 1.0]]),
        ("backward_step", "MulBackward0", [1.0, 1.0], [[3.0, 3.0], None]),
        ("gradient_accumulated", [1.0, 2.0], [3.0, 3.0]),
        ("backward_ended", True),
        ("error", "NameError", 6),
    ]


def test_assignments_are_reported_only_when_the_run_watches_them():
    recorder = Recorder()
    _run(PROGRAM, recorder, watch=False)
    assert [e for e in recorder.events if e[0] == "assigned"] == []
    assert ("backward_ended", True) in recorder.events


def test_a_compile_error_is_an_error_event():
    recorder = Recorder()
    result, _ = _run("x = (1,\n", recorder)
    assert recorder.events == [("error", "SyntaxError", result.error.line)]


def test_a_failing_backward_ends_with_ok_false():
    recorder = Recorder()
    _run("import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).backward()\n",
         recorder, watch=False)
    assert recorder.events[-3:] == [("backward_started", [2.0, 2.0], None, False),
                                    ("backward_ended", False), ("error", "RuntimeError", 3)]


def test_a_run_with_no_observer_works_and_dispatches_nothing():
    session = current().for_run()
    assert session.observers.attached == ()
    assert all(getattr(session.observers, event) is None for event in EVENTS)
    out = io.StringIO()
    result = run_source(PROGRAM.replace("z = missing\n", ""), "<t>", out=out, session=session,
                        watch_assignments=True)
    assert result.error is None and out.getvalue() == "tensor([3., 3.])\n"


def test_only_overridden_events_are_dispatched_and_detach_undoes_attach():
    class Ops(Observer):
        def op_recorded(self, node, out):
            pass

    observers = Observers()
    ops = observers.attach(Ops())
    assert observers.op_recorded is not None
    assert [e for e in EVENTS if getattr(observers, e) is not None] == ["op_recorded"]
    observers.detach(ops)
    assert observers.op_recorded is None


def test_a_run_session_copies_its_parents_observers_and_keeps_its_own():
    parent = current().for_run()
    watcher = parent.observers.attach(Recorder())
    run = parent.for_run()
    run.observers.attach(Recorder())
    assert run.observers.attached[0] is watcher and len(run.observers.attached) == 2
    assert parent.observers.attached == (watcher,)


def test_each_observer_sees_the_seeds_the_one_before_returned():
    class Seed(Observer):
        def __init__(self, value):
            self.value, self.seen = value, []

        def backward_started(self, tensors, grad_tensors, create_graph, is_grad):
            self.seen.append(None if grad_tensors is None else np.asarray(grad_tensors[0]).tolist())
            return [np.array(self.value)] if self.value is not None else None

    first, second = Seed([2.0, 5.0]), Seed(None)
    _, out = _run("import torch\nx = torch.ones(2, requires_grad=True)\n(x * 3).backward()\n"
                  "print(x.grad)\n", first, second)
    assert first.seen == [None] and second.seen == [[2.0, 5.0]]
    assert out == "tensor([ 6., 15.])\n"
