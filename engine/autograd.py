"""The autograd graph: grad_fn nodes, grad mode, and the backward pass.

A node is created once per differentiable op result (`record` in tensor.py) and
points at the nodes of its inputs through `next_functions`, as PyTorch's do.
"""

from __future__ import annotations

import heapq
import itertools
import weakref

import numpy as np

from .printing import format_grad_fn


class GradMode:
    """Whether ops record a graph (`torch.is_grad_enabled()`)."""

    enabled = True


class _GradModeContext:
    _tg_public = frozenset()
    _target = True

    def __enter__(self):
        self._previous = GradMode.enabled
        GradMode.enabled = self._target
        return None

    def __exit__(self, *exc):
        GradMode.enabled = self._previous
        return False


class no_grad(_GradModeContext):
    _target = False


class enable_grad(_GradModeContext):
    _target = True


class set_grad_enabled(_GradModeContext):
    def __init__(self, mode: bool):
        self._target = bool(mode)
        # like torch, the mode applies at once, not only inside `with`
        self._previous = GradMode.enabled
        GradMode.enabled = self._target


_sequence = itertools.count()
_FREED = object()  # marks saved values released by a backward without retain_graph


class Node:
    """A grad_fn: the backward rule of one op application."""

    __slots__ = ("op", "next_functions", "saved", "versions", "out", "out_version", "params",
                 "meta", "seq", "retained", "__weakref__")
    _tg_public = frozenset({"next_functions", "name"})

    def __init__(self, op, next_functions, saved, versions, out, params, meta):
        self.op = op
        self.next_functions = next_functions
        self.saved = saved  # the inputs, when the op's rules read them
        self.versions = versions  # their version counters when saved (None: all 0)
        self.out = out  # the forward result's array, when the rules read it
        self.out_version = None  # the result's version counter, shared with the result
        self.params = params
        self.meta = meta  # (shape, dtype) of each tensor input, to fit gradients to it
        self.seq = next(_sequence)
        self.retained = None

    def name(self) -> str:
        return self.op.qualified_name

    def __repr__(self) -> str:
        return format_grad_fn(self.op.name, id(self))


class AccumulateGrad:
    """The sink node of a leaf that requires grad: adds arriving gradients to `.grad`."""

    __slots__ = ("variable", "seq", "__weakref__")
    _tg_public = frozenset({"next_functions", "name", "variable"})
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable
        self.seq = float("inf")  # torch runs these as soon as they are ready

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return format_grad_fn("AccumulateGrad", id(self))


def accumulate_node(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad, alive as long as some graph refers to it (as in torch)."""
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(node)
    return node


# --- the backward pass ------------------------------------------------------------------

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _engine():
    """Names from modules that import this one, fetched once (a cycle at import time)."""
    global _ENGINE
    if _ENGINE is None:
        from .dtypes import from_numpy
        from .tensor import Tensor, sum_to
        _ENGINE = (Tensor, sum_to, from_numpy)
    return _ENGINE


_ENGINE = None


def _dependencies(roots) -> dict:
    """How many edges lead into each node reachable from the roots (iterative DFS)."""
    counts: dict = {}
    stack = list(roots)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            if child in counts:
                counts[child] += 1
            else:
                counts[child] = 1
                stack.append(child)
    return counts


class BackwardObserver:
    """Hooks for tools that watch backward passes (`autodiff explain`, `graph`, `check`).

    `started(tensors, grad_tensors, create_graph, is_grad)` is called when backward() or
    autograd.grad() begins, and may return replacement grad_tensors (`autodiff explain`
    builds a Jacobian row by row that way); `current(node, grad_in, grads_out)` at each
    step, with grads_out None for an AccumulateGrad; `finished(ok)` when the pass ends.
    All are read once per pass, not per node."""

    started = None
    current = None
    finished = None


def _reaching(roots, targets) -> set:
    """The nodes from which some target can be reached: only those run in autograd.grad."""
    reach: set = set()
    done: set = set()
    stack = [(node, False) for node in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            done.add(node)
            if node in targets or any(c in reach for c, _ in node.next_functions
                                      if c is not None):
                reach.add(node)
            continue
        if node in done:
            continue
        stack.append((node, True))
        stack.extend((c, False) for c, _ in node.next_functions if c is not None and c not in done)
    return reach


def run_backward(roots, grads, *, retain_graph: bool, create_graph: bool, capture=None):
    """Propagate `grads` from the `roots` nodes to every reachable leaf.

    A child-counting topological order: a node runs once every edge into it has
    delivered its gradient; among ready nodes the most recently created runs first,
    as in torch. With `capture` (a dict node -> None), gradients arriving at those
    nodes are stored there and nothing is accumulated into `.grad` (autograd.grad).
    """
    Tensor, sum_to, from_numpy = _engine()
    observe = BackwardObserver.current
    counts = _dependencies(roots)
    needed = None if capture is None else _reaching(roots, capture)
    pending: dict = {}
    for node, g in zip(roots, grads):
        pending[node] = pending[node] + g if node in pending else g
    ready = []
    sinks = []  # AccumulateGrad nodes run as soon as they are ready (torch's top priority)
    for node in pending:
        if counts.get(node, 0) == 0:
            if type(node) is AccumulateGrad:
                sinks.append(node)
            else:
                ready.append((-node.seq, node))
    heapq.heapify(ready)
    previous_mode = GradMode.enabled
    GradMode.enabled = create_graph
    try:
        while ready or sinks:
            node = sinks.pop() if sinks else heapq.heappop(ready)[1]
            g = pending.pop(node)
            if capture is not None:
                if node in capture:
                    capture[node] = g
                if type(node) is AccumulateGrad:
                    continue  # autograd.grad never touches .grad
            elif type(node) is AccumulateGrad:
                if observe is not None:
                    observe(node, g, None)
                _accumulate(node.variable, g, create_graph)
                continue
            elif node.retained is not None:
                _accumulate(node.retained, g, create_graph)
            inputs_grads = _apply_rule(node, g, create_graph, Tensor)
            if observe is not None:
                observe(node, g, inputs_grads)
            if not retain_graph and node.saved is not None:
                node.saved = _FREED
                node.out = None
            for (child, _), gi, meta in zip(node.next_functions, inputs_grads, node.meta):
                if child is None or gi is None or (needed is not None and child not in needed):
                    continue
                shape, dtype = meta
                if gi.shape != shape:
                    gi = sum_to(gi, shape)
                if gi.dtype != dtype:
                    gi = gi.to(from_numpy(dtype)) if type(gi) is Tensor else gi.astype(dtype)
                if child in pending:
                    pending[child] = pending[child] + gi
                else:
                    pending[child] = gi
                left = counts[child] - 1
                counts[child] = left
                if left == 0:
                    if type(child) is AccumulateGrad:
                        sinks.append(child)
                    else:
                        heapq.heappush(ready, (-child.seq, child))
    finally:
        GradMode.enabled = previous_mode


def _apply_rule(node, g, create_graph, Tensor):
    saved = node.saved
    if saved is _FREED:
        raise RuntimeError(SECOND_BACKWARD)
    if saved is None:
        args = _NONES[len(node.next_functions)]
    else:
        versions = node.versions
        arrays = []
        for j, value in enumerate(saved):
            if type(value) is Tensor:
                vc = value._vc  # only a tensor changed in place has a counter
                if vc is not None and vc[0] != (0 if versions is None else versions[j]):
                    _check_versions(node)  # it moved on: is it read, and by a rule that runs?
                arrays.append(value.array)
            else:
                arrays.append(value)
        args = saved if create_graph else arrays
    out = node.out
    if out is not None and node.out_version[0] != 0:
        _raise_modified(out, "which is output 0 of " + _short_name(node.name()),
                        node.out_version[0], 0)
    if create_graph:
        if type(g) is not Tensor:
            g = Tensor._wrap(g)
        if out is not None:
            out = Tensor._wrap(out, grad_fn=node)
    elif type(g) is Tensor:
        g = g.array
    params = node.params or _NO_PARAMS
    grads = []
    for (child, _), vjp in zip(node.next_functions, node.op.vjps):
        grads.append(None if child is None else vjp(g, out, *args, **params))
    return grads


_NO_PARAMS: dict = {}
_NONES = [(None,) * n for n in range(70)]


def _check_versions(node) -> None:
    """torch's error when a saved tensor that a running rule reads was changed in place."""
    reads = node.op.reads
    if reads is None:
        used = range(len(node.saved))
    else:
        used = {j for (child, _), r in zip(node.next_functions, reads) if child is not None
                for j in r}
    for j in used:
        value = node.saved[j]
        now = getattr(value, "_version", None)  # Python scalars have no version
        expected = node.versions[j] if node.versions is not None else 0
        if now is not None and now != expected:
            # torch names what produces the tensor now (e.g. the in-place op that changed it)
            producer = value.grad_fn
            if producer is None:
                where = "which is a leaf Variable" if value.requires_grad else "which is a Tensor"
            else:
                where = "which is output 0 of " + _short_name(producer.name())
            _raise_modified(value.array, where, now, expected)


def _short_name(name: str) -> str:
    """torch's short op name in messages: MulBackward0 -> Mul, PowBackward1 -> Pow1."""
    return name.replace("Backward0", "").replace("Backward", "")


_LEGACY_TYPE_NAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                      "int64": "torch.LongTensor", "int32": "torch.IntTensor",
                      "bool": "torch.BoolTensor"}


def _raise_modified(array, where: str, now: int, expected: int):
    array = np.asarray(array)
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{_LEGACY_TYPE_NAMES[array.dtype.name]} "
        f"[{', '.join(map(str, array.shape))}]], {where}, is at version {now}; expected version "
        f"{expected} instead. Hint: enable anomaly detection to find the operation that failed "
        "to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def _accumulate(tensor, g, create_graph: bool) -> None:
    Tensor = (_ENGINE or _engine())[0]
    grad = tensor._grad
    if create_graph:
        from .ops import copy_for_grad

        g = g if type(g) is Tensor else Tensor._wrap(g)
        tensor._grad = copy_for_grad(g) if grad is None else grad + g
        return
    if type(g) is Tensor:
        g = g.array
    if grad is None:
        # copy: one gradient array can reach several leaves (e.g. through an add)
        tensor._grad = Tensor._wrap(np.array(g, dtype=tensor.array.dtype, copy=True))
    else:
        # in place, as torch does: a reference taken to `.grad` (or its storage) sees the sum
        target = grad.array
        if type(target) is np.ndarray and target.flags.writeable and target.shape == g.shape:
            np.add(target, g, out=target, casting="unsafe")
        else:
            grad.array = np.add(target, g, dtype=target.dtype)
        grad._bump_version()
