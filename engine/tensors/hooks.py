"""Tensor.register_hook: a program's function run on a tensor's gradient as the backward pass
computes it (kept on the tensor's node, which graph.run_backward asks), and the handle that
removes it.

A hook sees the gradient as a tensor and may return a replacement of the same shape (or None
to keep it). Leaf hooks run before the gradient is accumulated into `.grad`; a non-leaf's
before retain_grad() keeps it; autograd.grad returns what the hooks left.
"""

from __future__ import annotations

from ..core.session import current
from ..graph.nodes import FROM_TENSORS, AccumulateGrad, edge_to
from ..ops.registry import Family, no_in_place

# Tensor methods only: no op of its own
family = Family("Tensor hooks", inplace=no_in_place("a hook registration, not an op"))
exposes = family.exposes


class _Pinned:
    """A strong stand-in for the weak reference `tensor._accumulator` holds: a leaf with hooks
    keeps its AccumulateGrad (and so its hooks) between graphs."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __call__(self):
        return self.node


def add_hook(tensor, hook) -> list:
    """Run `hook(g) -> g` on each gradient computed for `tensor` (before a leaf accumulates
    it, before retain_grad keeps it, before autograd.grad returns it), in the order added;
    returns the list holding it (removing it from there removes the hook)."""
    node, nr = edge_to(tensor)
    if type(node) is AccumulateGrad:
        tensor._accumulator = _Pinned(node)
    if node.hooks is None:
        node.hooks = {}
    hooks = node.hooks.setdefault(nr, [])
    hooks.append(hook)
    return hooks


class RemovableHandle:
    """What a hook registration returns (a tensor's or a module's): `id` counts the run's
    registrations as torch's class counter does; `remove()` takes the hook out (again:
    nothing happens)."""

    _tg_public = frozenset({"remove", "id"})

    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key  # a list holding hook `key`, or a dict keyed by it
        session = current()
        self.id = session.hook_ids
        session.hook_ids += 1

    def remove(self) -> None:
        hooks = self._hooks
        if type(hooks) is list:
            for i, hook in enumerate(hooks):
                if hook is self._key:
                    del hooks[i]
                    return
        else:
            hooks.pop(self._key, None)

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at {id(self):#x}>"


@exposes(methods=("register_hook",))
def register_hook(tensor, hook):
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    cls = type(tensor)
    shape = tensor.array.shape
    name = getattr(hook, "__name__", type(hook).__name__)

    def run(g):
        as_tensor = type(g) is cls
        result = hook(g if as_tensor else cls._wrap(g))
        if result is None:
            return g
        if type(result) is not cls:
            raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
        if result.array.shape != shape:
            raise RuntimeError(f"hook '{name}' has changed the size of value")
        return result if as_tensor else result.array

    return RemovableHandle(add_hook(tensor, run), run)


@exposes(methods=("register_post_accumulate_grad_hook",))
def register_post_accumulate_grad_hook(tensor, hook):
    """`hook(tensor)` after each gradient is accumulated into the leaf's `.grad` (not for
    autograd.grad, which accumulates nothing); what it returns is ignored, as in torch."""
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if tensor.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    node, _ = edge_to(tensor)
    tensor._accumulator = _Pinned(node)
    if node.post_hooks is None:
        node.post_hooks = []

    def run(variable):
        hook(variable)

    node.post_hooks.append(run)
    return RemovableHandle(node.post_hooks, run)


# --- Node.register_hook and Node.register_prehook -----------------------------------------------

def _as_tensors(grads, cls) -> tuple:
    return tuple(None if g is None else g if type(g) is cls else cls._wrap(g) for g in grads)


def _as_given(returned, like, name: str, expected: int, cls) -> list:
    """A hook's returned gradients in the form the pass computes with (arrays or tensors)."""
    returned = returned if isinstance(returned, tuple) else (returned,)
    if len(returned) != expected:
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got "
                           f"{len(returned)}, but expected {expected})")
    arrays = next((type(g) is not cls for g in like if g is not None), True)
    out = []
    for g in returned:
        if g is not None and type(g) is not cls:
            raise TypeError(f"expected Variable, but hook returned '{type(g).__name__}'")
        out.append(g.array if arrays and g is not None else g)
    return out


def register_node_hook(node, fn):
    cls = _tensor_class()
    name = getattr(fn, "__name__", type(fn).__name__)

    def run(grad_inputs, grad_outputs):
        returned = fn(_as_tensors(grad_inputs, cls), _as_tensors(grad_outputs, cls))
        if returned is None:
            return None
        return _as_given(returned, list(grad_outputs), name, len(grad_inputs), cls)

    if node.post_hooks is None:
        node.post_hooks = []
    node.post_hooks.append(run)
    return RemovableHandle(node.post_hooks, run)


def register_node_prehook(node, fn):
    from ..graph.nodes import PREHOOKS, MultiNode  # noqa: PLC0415

    cls = _tensor_class()
    name = getattr(fn, "__name__", type(fn).__name__)
    multi = type(node) is MultiNode

    def run(g):
        grads = list(g) if multi else [g]
        returned = fn(_as_tensors(grads, cls))
        if returned is None:
            return g
        new = _as_given(returned, grads, name, len(grads), cls)
        return new if multi else new[0]

    if node.hooks is None:
        node.hooks = {}
    hooks = node.hooks.setdefault(PREHOOKS, [])
    hooks.append(run)
    return RemovableHandle(hooks, run)


def _tensor_class():
    from .tensor import Tensor  # noqa: PLC0415 - tensor.py imports this module

    return Tensor


FROM_TENSORS.update(post_hook=register_node_hook, pre_hook=register_node_prehook,
                    tensor_class=_tensor_class)
