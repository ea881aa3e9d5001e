"""The autograd graph: grad_fn nodes, how an op result joins the graph, the backward pass.

A node is made once per differentiable op result (`record`) and points at the nodes of
its inputs through `next_functions`, as PyTorch's do. Nothing here knows the Tensor class:
an op's result is made by the class of its tensor inputs, and the backward pass computes
with the rule vocabulary it is handed (arrays, or tensors under create_graph).
"""

from __future__ import annotations

import heapq
import itertools
import weakref

import numpy as np

from ..core import inference
from ..numerics.layout import laid_out_like
from ..core.printing import format_grad_fn
from ..core.session import current

NUMBERS = frozenset({bool, int, float})
_sequence = itertools.count()
_FREED = object()  # marks saved values released by a backward without retain_graph
_NO_EDGE = (None, 0)  # an input that needs no gradient, as next_functions shows it
# what the tensors room installs here, as the graph imports no Tensor (tensors/hooks.py):
# "post_hook", "pre_hook" register a node's hooks; "tensor_class" gives the Tensor class
FROM_TENSORS: dict = {}


class Node:
    """A grad_fn: one application of an op, with what its rules need."""

    __slots__ = ("op", "next_functions", "saved", "versions", "out", "out_version", "params",
                 "meta", "seq", "retained", "hooks", "post_hooks", "user_metadata",
                 "__weakref__")
    _tg_public = frozenset({"next_functions", "name", "metadata", "register_hook",
                            "register_prehook"})

    def __init__(self, op, next_functions, saved, versions, params, meta):
        self.op = op
        self.next_functions = next_functions
        self.saved = saved  # the inputs, when the op's rules read them
        self.versions = versions  # their version counters when saved (None: all 0)
        self.out = None  # the forward result's array, when the rules read it
        self.out_version = None  # the result's version counter, shared with the result
        self.params = params
        self.meta = meta  # (shape, dtype) of each tensor input, to fit gradients to it
        self.seq = next(_sequence)
        self.retained = None
        self.hooks = None  # {output number: [hook, ...]}: Tensor.register_hook on an output
        self.post_hooks = None  # [hook(grad_inputs, grad_outputs), ...]: run after the rule

    def name(self) -> str:
        return self.op.qualified_name

    @property
    def metadata(self) -> dict:
        """The program's own dict on this node (torch's Node.metadata), made on first read."""
        try:
            return self.user_metadata
        except AttributeError:
            self.user_metadata = {}
            return self.user_metadata

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after the node's rule; may return new grad_inputs."""
        return FROM_TENSORS["post_hook"](self, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before the node's rule; may return new grad_outputs."""
        return FROM_TENSORS["pre_hook"](self, fn)

    def tg_type_name(self) -> str:
        return self.op.name  # torch's node classes are named after the op (MulBackward0)

    def __repr__(self) -> str:
        return format_grad_fn(self.op.repr_name, id(self))


class MultiNode(Node):
    """A grad_fn with several differentiable outputs (`unbind`, iteration over a tensor).

    Edges into it carry the output number; its rule receives one gradient per output
    (None for an output no gradient reached)."""

    __slots__ = ("output_numbers", "n_outputs")

    def output_nr(self, tensor) -> int:
        return self.output_numbers[id(tensor)]


class AccumulateGrad:
    """The sink node of a leaf that requires grad: adds arriving gradients to `.grad`."""

    __slots__ = ("variable", "seq", "hooks", "post_hooks", "__weakref__")
    _tg_public = frozenset({"next_functions", "name", "variable"})
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable
        self.hooks = None  # {0: [hook, ...]}: Tensor.register_hook on the leaf
        self.post_hooks = None  # [hook(tensor), ...]: register_post_accumulate_grad_hook
        self.seq = float("inf")  # torch runs these as soon as they are ready

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return format_grad_fn("AccumulateGrad", id(self))


NO_ACCUMULATOR = False  # a view taken under no_grad: it requires grad but accumulates nowhere


def accumulate_node(tensor) -> AccumulateGrad | None:
    """The leaf's AccumulateGrad, alive as long as some graph refers to it (as in torch)."""
    ref = tensor._accumulator
    if ref is NO_ACCUMULATOR:
        return None
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(node)
    return node


def _run_hooks(node, g):
    """The gradient arriving at `node` after the Tensor.register_hook hooks of its outputs
    (node.hooks: output number -> hooks, see tensors/hooks.py), run in the order they were added."""
    for nr, hooks in node.hooks.items():
        if nr == PREHOOKS:
            continue
        if type(node) is MultiNode:
            if g[nr] is not None:
                for hook in tuple(hooks):
                    g[nr] = hook(g[nr])
        else:
            for hook in tuple(hooks):
                g = hook(g)
    for hook in tuple(node.hooks.get(PREHOOKS, ())):  # the node's own, after its tensors'
        g = hook(g)
    return g


PREHOOKS = -1  # the key of Node.register_prehook's hooks in node.hooks


def _run_post_hooks(node, inputs_grads, g, rules):
    """A node's hooks that see the gradients its rule computed (fitted to each input, None
    where an input takes none) with the gradients it received; a hook may return new ones."""
    fitted = []
    for (child, _), gi, meta in zip(node.next_functions, inputs_grads, node.meta):
        if child is None or gi is None:
            gi = None
        elif gi.shape != meta[0]:
            gi = rules.sum_to(gi, meta[0])
        fitted.append(gi)
    outputs = list(g) if type(node) is MultiNode else [g]
    for hook in tuple(node.post_hooks):
        returned = hook(fitted, outputs)
        if returned is not None:
            fitted = list(returned)
    return fitted


def edge_to(t) -> tuple:
    """(node, output number) through which a gradient reaches tensor `t`."""
    node = t._grad_fn if t._base is None else t.grad_fn  # (a view's may be remade)
    if node is None:
        return accumulate_node(t), 0  # (None, 0) for a view without accumulator
    return (node, node.output_nr(t)) if type(node) is MultiNode else (node, 0)


def watched_grad_fn(t):
    """`t.grad_fn` as a tool watching a program reads it: never an error (a view whose grad_fn
    torch refuses to remake keeps the node it was made with)."""
    try:
        return t.grad_fn
    except RuntimeError:
        return t._grad_fn


# --- joining the graph ------------------------------------------------------------------------

def tensor_class(inputs):
    """The class of the tensors among an op's inputs (Python numbers are the others)."""
    for t in inputs:
        kind = type(t)
        if kind not in NUMBERS:
            return kind
    raise TypeError("an op needs at least one tensor input")


def record(op, out_data, inputs, params=None):
    """Wrap an op's result; when grad mode is on and an input requires grad, add a node.

    `inputs` holds tensors and Python numbers in the op's argument order; numbers
    appear in `next_functions` as `(None, 0)`, as torch shows them.
    """
    cls = type(inputs[0])
    if cls in NUMBERS:
        cls = tensor_class(inputs)
    out = cls._wrap(out_data)
    session = current()
    if session.grad_enabled:
        for t in inputs:
            if type(t) is cls and t.requires_grad:
                _attach_node(out, op, inputs, params, cls, Node)
                recorded = session.observers.op_recorded
                if recorded is not None:
                    recorded(out._grad_fn, out)
                break
    if op.views:
        _made_view(out, out_data, inputs[0], session.grad_enabled)
    return out


def record_outputs(op, arrays, inputs, params=None) -> tuple:
    """`record` for an op with several outputs that share one node (unbind)."""
    cls = tensor_class(inputs)
    outs = tuple(cls._wrap(a) for a in arrays)
    session = current()
    if outs and session.grad_enabled and any(type(t) is cls and t.requires_grad for t in inputs):
        _attach_node(outs[0], op, inputs, params, cls, MultiNode)
        node = outs[0].grad_fn
        node.output_numbers = {id(t): i for i, t in enumerate(outs)}
        node.n_outputs = len(outs)
        for t in outs:
            t.grad_fn = node
            t.requires_grad = True
        recorded = session.observers.op_recorded
        if recorded is not None:
            recorded(node, outs)
    if op.views:
        for t, a in zip(outs, arrays):
            _made_view(t, a, inputs[0], session.grad_enabled)
    return outs


def _made_view(view, data, base, grad_enabled: bool) -> None:
    if type(base.array) is not np.ndarray:
        # a 0-d base kept as a NumPy scalar: it gets a 0-d array for its views to share
        storage = base.own_array()
        view.array = storage.reshape(data.shape) if data.size == 1 else \
            np.lib.stride_tricks.as_strided(storage, data.shape, (0,) * data.ndim)
    elif type(data) is np.ndarray and not data.shape:
        view.array = data  # a 0-d view stays a view of its base's storage (writable)
    share_storage(view, base)
    # torch: a view made under no_grad still says requires_grad (as a leaf) when the tensor
    # it views at the root (a view's base is never itself a view) does, but a backward
    # through it accumulates nowhere
    if not grad_enabled and view._base.requires_grad:
        view.requires_grad = True
        view._accumulator = NO_ACCUMULATOR
    elif base._accumulator is NO_ACCUMULATOR and base._base is not None:
        view._accumulator = NO_ACCUMULATOR  # a view of such a view: in place is refused alike


def _attach_node(out, op, inputs, params, cls, node_class) -> None:
    edges = []
    meta = []
    for t in inputs:  # one loop, not two comprehensions: this runs for every recorded op
        if type(t) is cls:
            array = t.array
            meta.append((array.shape, array.dtype))
            if not t.requires_grad:
                edges.append(_NO_EDGE)
            elif type(t._grad_fn) is Node and t._base is None:  # edge_to's usual case, written out
                edges.append((t._grad_fn, 0))
            else:
                edges.append(edge_to(t))
        else:
            meta.append(None)
            edges.append(_NO_EDGE)
    saved = versions = None
    if op.saves_inputs:
        saved = inputs
        if inference.TENSORS:  # (torch saves only what the rules of inputs with an edge read)
            inference.check_saved(inputs, _read_positions(op.reads, edges))
        for t in inputs:
            if type(t) is cls and t._vc is not None:  # None everywhere means "all at 0"
                versions = tuple([version_of(t) if type(t) is cls else 0 for t in inputs])
                break
    node = out._grad_fn = node_class(op, tuple(edges), saved, versions, params, tuple(meta))
    if op.saves_out:
        # the output's own counter: changing it in place must fail the backward, as in torch
        out._vc = [0]
        node.out = out.array
        node.out_version = out._vc
    out.requires_grad = True


def share_storage(view, base):
    """Mark `view` as a view of `base`: one version counter, as torch's views share."""
    if base._vc is None:
        base._vc = [0]
    view._vc = base._vc
    view._base = base if base._base is None else base._base
    view._view_version = base._vc[0]
    if inference.TENSORS:  # (a view made in inference mode is marked: it may be a normal one)
        inference.inherit(view, base)
    return view


# --- the backward pass --------------------------------------------------------------------------

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


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


def _reaching(roots, targets) -> set:
    """The nodes from which some target can be reached (the targets included): only those
    receive gradients when the pass is limited to targets (autograd.grad, inputs=)."""
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


def run_backward(roots, grads, rules, *, retain_graph: bool, create_graph: bool,
                 capture=None, inputs=None):
    """Propagate `grads` from the `roots` edges (node, output number) to every reachable leaf.

    `rules` is the vocabulary the op rules compute with: arrays in a plain backward,
    tensors (so the rules are recorded) under create_graph. A child-counting topological
    order: a node runs once every edge into it has delivered its gradient; among ready
    nodes the most recently created runs first, as in torch. With `capture` (a dict
    node -> None), gradients arriving at those nodes are stored there and nothing is
    accumulated into `.grad` (autograd.grad). With `inputs` (a set of nodes), only the
    AccumulateGrad nodes among them accumulate. Either way a node runs its rule only
    when some target lies below it.
    """
    session = current()
    observe = session.observers.backward_step
    accumulated = session.observers.gradient_accumulated
    if session.anomaly:  # (anomaly mode checking for NaN: a step's check, then the tools')
        observe = _nan_check(observe)
    pending: dict = {}
    root_nodes = []
    for edge, g in zip(roots, grads):
        node, nr = edge
        if node is None:
            continue  # a view without accumulator: its gradient goes nowhere
        root_nodes.append(node)
        if type(node) is MultiNode:
            _deliver_to_output(pending, node, nr, g)
        else:
            pending[node] = pending[node] + g if node in pending else g
    counts = _dependencies(root_nodes)
    targets = capture if capture is not None else inputs
    needed = expand = None
    if targets is not None:
        needed = _reaching(root_nodes, targets)
        # backward(inputs=) still runs a non-leaf input's own node (freeing what it saved);
        # autograd.grad stops at the captured nodes
        expand = {node for node in needed
                  if (inputs is not None and node in inputs)
                  or any(c in needed for c, _ in node.next_functions if c is not None)}
    ready = []
    sinks = []  # AccumulateGrad nodes run as soon as they are ready (torch's top priority)
    for node in pending:
        if counts.get(node, 0) == 0:
            if type(node) is AccumulateGrad:
                sinks.append(node)
            else:
                ready.append((-node.seq, node))
    heapq.heapify(ready)
    previous_mode = session.grad_enabled
    session.grad_enabled = create_graph
    sum_to, cast = rules.sum_to, rules.cast
    pop_ready = heapq.heappop
    push_ready = heapq.heappush
    try:
        while True:
            if sinks:
                node = sinks.pop()
                g = pending.pop(node)
                if node.hooks:
                    g = _run_hooks(node, g)
                if capture is not None:  # autograd.grad never touches .grad
                    if node in capture:
                        capture[node] = g
                elif inputs is None or node in inputs:
                    if accumulated is not None:
                        accumulated(node, g)
                    accumulate(node.variable, g, rules, create_graph)
                    if node.post_hooks:
                        for hook in tuple(node.post_hooks):
                            hook(node.variable)
                continue
            if not ready:
                break
            node = pop_ready(ready)[1]
            g = pending.pop(node)
            if node.hooks:
                g = _run_hooks(node, g)
            if capture is not None:
                if node in capture:
                    capture[node] = g
            elif node.retained is not None:
                _accumulate_retained(node, g, rules, create_graph)
            if expand is not None and node not in expand:
                continue  # no target lies below: torch does not run this node
            inputs_grads = apply_rule(node, g, rules, create_graph)
            if node.post_hooks:
                inputs_grads = _run_post_hooks(node, inputs_grads, g, rules)
            if observe is not None:
                observe(node, g, inputs_grads)
            if not retain_graph and (node.saved is not None or node.out is not None
                                     or node.op.saves_params):
                node.saved = _FREED  # what the node saved (inputs or its result) is released
                node.out = None
            for (child, nr), gi, meta in zip(node.next_functions, inputs_grads, node.meta):
                if child is None or gi is None or (needed is not None and child not in needed):
                    continue
                shape, dtype = meta
                if gi.shape != shape:
                    gi = sum_to(gi, shape)
                kind = gi.dtype
                if kind is not dtype and kind != dtype:
                    gi = cast(gi, dtype)
                if type(child) is MultiNode:
                    _deliver_to_output(pending, child, nr, gi)
                elif child in pending:
                    pending[child] = pending[child] + gi
                else:
                    pending[child] = gi
                left = counts[child] - 1
                counts[child] = left
                if left == 0:
                    if type(child) is AccumulateGrad:
                        sinks.append(child)
                    else:
                        push_ready(ready, (-child.seq, child))
    finally:
        session.grad_enabled = previous_mode


def _nan_check(observe):
    """A backward-step observer that stops the pass, as torch's anomaly mode does, when a
    node sends a NaN to one of its inputs; then `observe` (the tools', or None)."""
    def check(node, g, grads):
        if grads is not None:
            for i, gi in enumerate(grads):
                values = getattr(gi, "array", gi)
                if values is not None and np.isnan(values).any():
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
        if observe is not None:
            observe(node, g, grads)
    return check


def _accumulate_retained(node, g, rules, create_graph: bool) -> None:
    """`.grad` of outputs that called retain_grad() (by output number on a multi-output node)."""
    if type(node) is MultiNode:
        for nr, tensor in node.retained.items():
            if g[nr] is not None:
                accumulate(tensor, g[nr], rules, create_graph, retained=True)
    else:
        accumulate(node.retained, g, rules, create_graph, retained=True)


def _deliver_to_output(pending: dict, node: MultiNode, nr: int, g) -> None:
    """Add `g` to the gradient waiting for output `nr` of a multi-output node."""
    slots = pending.get(node)
    if slots is None:
        slots = pending[node] = [None] * node.n_outputs
    slots[nr] = g if slots[nr] is None else slots[nr] + g


def apply_rule(node, g, rules, create_graph):
    """The gradients a node's rules send to each of its inputs, for the gradient `g` at its
    output (checking that what it saved was not changed in place since)."""
    op = node.op
    if op.node_rule is not None:
        return op.node_rule(node, g, rules, create_graph)
    saved = node.saved
    if saved is _FREED:
        raise RuntimeError(SECOND_BACKWARD)
    if saved is None:
        args = _NONES[len(node.next_functions)]
    else:
        versions = node.versions
        if versions is None:  # none was recorded: all 0
            versions = _ZEROS if len(saved) <= 64 else (0,) * len(saved)
        arrays = []
        for j, value in enumerate(saved):
            if type(value) in NUMBERS or value is None:
                arrays.append(value)
                continue
            vc = value._vc  # only a tensor changed in place has a counter
            if vc is not None and vc[0] != versions[j]:
                _check_versions(node)  # it moved on: is it read, and by a rule that runs?
            arrays.append(value.array)
        args = saved if create_graph else arrays
    out = node.out
    if out is not None and node.out_version[0] != 0:
        _raise_modified(out, "which is output 0 of " + short_name(node.name()),
                        node.out_version[0], 0)
    if create_graph:  # (a plain backward's gradients are arrays throughout)
        wrap = rules.gradient
        g = [None if v is None else wrap(v) for v in g] if type(node) is MultiNode else wrap(g)
        if out is not None:
            out = rules.result_of(node, out)
    params = node.params or _NO_PARAMS
    if op.variadic:  # one rule for every input, told which one it is
        vjp = op.vjps[0]
        return [None if child is None else vjp(rules, g, out, *args, position=i, **params)
                for i, (child, _) in enumerate(node.next_functions)]
    grads = []
    if params:
        for (child, _), vjp in zip(node.next_functions, op.vjps):
            grads.append(None if child is None or vjp is None
                         else vjp(rules, g, out, *args, **params))
    else:  # (most ops have no parameters: a call without ** is cheaper)
        for (child, _), vjp in zip(node.next_functions, op.vjps):
            grads.append(None if child is None or vjp is None else vjp(rules, g, out, *args))
    return grads


_NO_PARAMS: dict = {}
_ZEROS = (0,) * 64  # (apply_rule's bound: a node saving more makes its own)
_NONES = [(None,) * n for n in range(70)]


def _read_positions(reads, edges):
    """The inputs that the rules of the inputs with an edge read (all when the op's entry
    does not say): what torch saves for backward."""
    if reads is None:
        return range(len(edges))
    return {j for (child, _), r in zip(edges, reads) if child is not None for j in r}


def _check_versions(node) -> None:
    """torch's error when a saved tensor that a running rule reads was changed in place."""
    for j in _read_positions(node.op.reads, node.next_functions):
        value = node.saved[j]
        if hasattr(value, "_vc"):  # Python numbers have no version
            check_saved_version(value, node.versions[j] if node.versions is not None else 0)


def short_name(name: str) -> str:
    """torch's op name in messages: MulBackward0 -> Mul, PowBackward1 -> Pow1; a node of the
    engine itself keeps its qualified name (torch::autograd::CopySlices)."""
    if name.startswith("torch::autograd::"):
        return name
    return name.replace("Backward0", "").replace("Backward", "")


LEGACY_TYPE_NAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                     "int64": "torch.LongTensor", "int32": "torch.IntTensor",
                     "bool": "torch.BoolTensor"}


def released(node) -> bool:
    """Whether a backward without retain_graph has released what `node` saved."""
    return node.saved is _FREED


def version_of(t) -> int:
    """A tensor's version counter as the engine reads it (`Tensor._version` is the program's,
    which an inference tensor refuses)."""
    return 0 if t._vc is None else t._vc[0]


def check_saved_version(tensor, expected: int) -> None:
    """torch's error when a tensor saved for backward (at version `expected`) was changed in
    place since."""
    now = version_of(tensor)
    if now != expected:
        # torch names what produces the tensor now (e.g. the in-place op that changed it)
        producer = tensor.grad_fn
        if producer is None:
            where = "which is a leaf Variable" if tensor.requires_grad else "which is a Tensor"
        else:
            where = "which is output 0 of " + short_name(producer.name())
        _raise_modified(tensor.array, where, now, expected)


def _raise_modified(array, where: str, now: int, expected: int):
    array = np.asarray(array)
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{LEGACY_TYPE_NAMES[array.dtype.name]} "
        f"[{', '.join(map(str, array.shape))}]], {where}, is at version {now}; expected version "
        f"{expected} instead. Hint: enable anomaly detection to find the operation that failed "
        "to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def accumulate(tensor, g, rules, create_graph: bool, retained: bool = False) -> None:
    """Add gradient `g` into `tensor.grad` (as torch's AccumulateGrad does; for a non-leaf that
    retains its gradient, `retained`: torch's retain_grad hook, whose first .grad is a
    contiguous copy whatever the layouts)."""
    grad = tensor._grad
    if create_graph:
        g = rules.gradient(g)
        tensor._grad = rules.first_grad(g) if grad is None else grad + g
        return
    if type(g) is not np.ndarray and hasattr(g, "array"):
        g = g.array
    cls = type(tensor)
    if grad is None:
        # copy: one gradient array can reach several leaves (e.g. through an add)
        like = tensor.array
        tensor._grad = cls._wrap(
            laid_out_like(g, like) if not retained and type(g) is np.ndarray
            and type(like) is np.ndarray
            else np.array(g, dtype=like.dtype, order="C", copy=True))
    else:
        # in place, as torch does: a reference taken to `.grad` (or its storage) sees the sum
        target = grad.array
        if type(target) is np.ndarray and target.flags.writeable and target.shape == g.shape \
                and 0 not in target.strides:  # (a `.grad` set to an expand's view)
            np.add(target, g, out=target, casting="unsafe")
        else:
            grad.array = np.add(target, g, dtype=target.dtype)
        grad._bump_version()
