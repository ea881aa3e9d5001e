"""What a run tells the tools that watch it: the `Observer` interface and a session's list.

The engine and the interpreter publish events; a tool (`autodiff explain`, `graph`, `check`,
the REPL) subclasses `Observer`, overrides the events it needs and attaches an instance to
the run's session. The producers never import or know the tools: data flows one way,
program -> engine -> observers -> views.

    class Counter(Observer):
        def op_recorded(self, node, out):
            self.ops += 1

    session.observers.attach(Counter())

Events, in the order a program makes them:

    tensor_made(tensor)                 a creation function (or a layer) made a new leaf
    op_recorded(node, out)              an op joined the graph: `node` is `out`'s grad_fn
    assigned(name, value, line)         a top-level name was bound, by the statement at `line`
                                        (only in a run that watches assignments)
    backward_started(tensors, grad_tensors, create_graph, is_grad)
                                        a backward() (is_grad False) or autograd.grad() began;
                                        may return replacement grad_tensors (arrays or tensors)
    backward_step(node, grad_in, grads_out)
                                        a node's rule ran: the gradient at its output and the
                                        gradients it sends to each input
    gradient_accumulated(node, grad)    an AccumulateGrad node adds `grad` to node.variable.grad
    backward_ended(ok)                  the pass ended (ok False: it raised)
    error(error)                        the run (or one REPL input) stopped with this TgError

Cost when nobody watches: each event is an attribute of `Observers` that is None unless an
attached observer overrides that method, so the engine's hot paths test one attribute, as
they did when observers were bare callables.
"""

from __future__ import annotations

EVENTS = ("tensor_made", "op_recorded", "assigned", "backward_started", "backward_step",
          "gradient_accumulated", "backward_ended", "error")


class Observer:
    """A tool watching runs. Every method is a no-op; override the events you need."""

    def tensor_made(self, tensor) -> None:
        pass

    def op_recorded(self, node, out) -> None:
        pass

    def assigned(self, name: str, value, line: int) -> None:
        pass

    def backward_started(self, tensors, grad_tensors, create_graph: bool, is_grad: bool):
        return None

    def backward_step(self, node, grad_in, grads_out) -> None:
        pass

    def gradient_accumulated(self, node, grad) -> None:
        pass

    def backward_ended(self, ok: bool) -> None:
        pass

    def error(self, error) -> None:
        pass


class Observers:
    """The observers attached to one session, in attachment order. Each event name is an
    attribute: None when no attached observer overrides it, else a callable telling each
    that does (for backward_started, each sees the seeds the one before it returned)."""

    __slots__ = ("attached",) + EVENTS

    def __init__(self, attached=()) -> None:
        self.attached: tuple[Observer, ...] = tuple(attached)
        self._dispatch()

    def attach(self, observer: Observer) -> Observer:
        self.attached += (observer,)
        self._dispatch()
        return observer

    def detach(self, observer: Observer) -> None:
        self.attached = tuple(o for o in self.attached if o is not observer)
        self._dispatch()

    def copy(self) -> "Observers":
        """The same observers, in a list of its own (a run's attachments stay its own)."""
        return Observers(self.attached)

    def _dispatch(self) -> None:
        for event in EVENTS:
            base = getattr(Observer, event)
            methods = tuple(getattr(o, event) for o in self.attached
                            if getattr(type(o), event, base) is not base)
            if not methods:
                setattr(self, event, None)
            elif event == "backward_started":
                setattr(self, event, _seeding(methods))
            elif len(methods) == 1:
                setattr(self, event, methods[0])
            else:
                setattr(self, event, _each(methods))


def _each(methods):
    def notify(*args) -> None:
        for method in methods:
            method(*args)
    return notify


def _seeding(methods):
    def started(tensors, grad_tensors, create_graph, is_grad):
        replaced = None
        for method in methods:
            seeds = method(tensors, grad_tensors, create_graph, is_grad)
            if seeds is not None:
                replaced = grad_tensors = seeds
        return replaced
    return started
