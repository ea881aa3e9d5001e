"""Tensor.register_hook: a program's function run on a tensor's gradient as the backward pass
computes it (graph.add_hook keeps it on the tensor's node), and the handle that removes it.

A hook sees the gradient as a tensor and may return a replacement of the same shape (or None
to keep it). Leaf hooks run before the gradient is accumulated into `.grad`; a non-leaf's
before retain_grad() keeps it; autograd.grad returns what the hooks left.
"""

from __future__ import annotations

from .graph import add_hook
from .registry import Family

family = Family("Tensor hooks")  # Tensor methods only: no op of its own
exposes = family.exposes


class RemovableHandle:
    """What register_hook returns: `remove()` takes the hook out (again: nothing happens)."""

    _tg_public = frozenset({"remove"})

    def __init__(self, hooks: list, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        for i, hook in enumerate(self._hooks):
            if hook is self._hook:
                del self._hooks[i]
                return

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
