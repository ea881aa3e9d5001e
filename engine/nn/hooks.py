"""nn.Module hooks: forward pre-hooks, forward hooks, full and (deprecated) non-full backward
hooks, and the call that runs them (torch's Module._call_impl).

Built-in modules set `__call__` to their forward, so a call costs one Python call; the first
hook registered on a module gives its class Module.__call__ (`call_with_hooks` when the
instance has hooks, plain forward otherwise), so modules without hooks keep that fast path
until a hook is registered on one of their class.

A full backward hook wraps the module's tensor inputs and outputs in an identity node,
BackwardHookFunctionBackward, as torch does (the program sees it as the output's grad_fn):
the outputs' node keeps the gradients arriving at the module, the inputs' node hands them and
the gradients leaving it to the hooks, whose result replaces the latter.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

from ..autograd.function import Function
from ..core.session import current, warn_once
from ..tensors.hooks import RemovableHandle
from ..tensors.tensor import Tensor

_BOTH = ("Cannot use both regular backward hooks and full backward hooks on a single Module. "
         "Please use only one of them.")


class ModuleHooks:
    """A module's hooks, in the order they run (handle id -> hook)."""

    __slots__ = ("forward_pre", "forward", "backward", "pre_kwargs", "forward_kwargs",
                 "full_backward")

    def __init__(self):
        self.forward_pre = OrderedDict()
        self.forward = OrderedDict()
        self.backward = OrderedDict()
        self.pre_kwargs = set()
        self.forward_kwargs = set()
        self.full_backward = None  # torch's _is_full_backward_hook: set by the first kind used

    def any(self) -> bool:
        return bool(self.forward_pre or self.forward or self.backward)


def hooks_of(module) -> ModuleHooks:
    """The module's hooks, made on the first registration (its class then runs them)."""
    hooks = module.__dict__.get("_tg_hooks")
    if hooks is None:
        hooks = ModuleHooks()
        object.__setattr__(module, "_tg_hooks", hooks)
        cls = type(module)
        from .module import Module  # noqa: PLC0415 - module.py imports this module
        if cls.__call__ is not Module.__call__:
            cls.__call__ = Module.__call__
    return hooks


def _add(module, registry: OrderedDict, hook, prepend: bool) -> RemovableHandle:
    if not callable(hook):
        raise TypeError(f"'{type(hook).__name__}' object is not callable")
    handle = RemovableHandle(registry, None)
    handle._key = handle.id
    registry[handle.id] = hook
    if prepend:
        registry.move_to_end(handle.id, last=False)
    return handle


def register_forward_pre_hook(module, hook, *, prepend=False, with_kwargs=False):
    hooks = hooks_of(module)
    handle = _add(module, hooks.forward_pre, hook, prepend)
    if with_kwargs:
        hooks.pre_kwargs.add(handle.id)
    return handle


def register_forward_hook(module, hook, *, prepend=False, with_kwargs=False, always_call=False):
    hooks = hooks_of(module)
    handle = _add(module, hooks.forward, hook, prepend)
    if with_kwargs:
        hooks.forward_kwargs.add(handle.id)
    return handle


def register_full_backward_hook(module, hook, prepend=False):
    hooks = hooks_of(module)
    if hooks.full_backward is False:
        raise RuntimeError(_BOTH)
    hooks.full_backward = True
    return _add(module, hooks.backward, hook, prepend)


def register_backward_hook(module, hook):
    hooks = hooks_of(module)
    if hooks.full_backward is True:
        raise RuntimeError(_BOTH)
    hooks.full_backward = False
    return _add(module, hooks.backward, hook, False)


# --- the call -----------------------------------------------------------------------------------

def call_with_hooks(module, hooks: ModuleHooks, args: tuple, kwargs: dict):
    """torch's Module._call_impl for a module with hooks."""
    full = non_full = ()
    if hooks.backward and current().grad_enabled:
        if hooks.full_backward:
            full = tuple(hooks.backward.values())
        else:
            non_full = tuple(hooks.backward.values())
    for key, hook in tuple(hooks.forward_pre.items()):
        if key in hooks.pre_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    backward = None
    if full:
        backward = _BackwardHook(module, full)
        args = backward.setup_inputs(args)
    result = module.forward(*args, **kwargs)
    for key, hook in tuple(hooks.forward.items()):
        if key in hooks.forward_kwargs:
            returned = hook(module, args, kwargs, result)
        else:
            returned = hook(module, args, result)
        if returned is not None:
            result = returned
    if backward is not None:
        if not isinstance(result, (Tensor, tuple)):
            warnings.warn("For backward hooks to be called, module output should be a Tensor or "
                          f"a tuple of Tensors but received {type(result)}", UserWarning)
        result = backward.setup_outputs(result)
    if non_full:
        _non_full_hooks(module, non_full, args, result)
    return result


def _tensors(values) -> list:
    return [i for i, v in enumerate(values) if type(v) is Tensor]


class BackwardHookFunction(Function):
    """The identity node a full backward hook puts on a module's inputs and outputs."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class _BackwardHook:
    """One call's full backward hooks (torch's torch.utils.hooks.BackwardHook)."""

    def __init__(self, module, hooks):
        self.module, self.hooks = module, hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = 0
        self.inputs_index = self.outputs_index = None

    def _wrap(self, values: tuple, post_hook):
        index = _tensors(values)
        tensors = [values[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and current().grad_enabled):
            return values, None
        wrapped = BackwardHookFunction.apply(*tensors)
        node = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
        if node.post_hooks is None:
            node.post_hooks = []
        node.post_hooks.append(post_hook)
        out = list(values)
        for i, t in zip(index, wrapped):
            out[i] = t
        return tuple(out), index

    def _pack(self, index, grads, size) -> tuple:
        packed = [None] * size
        for i, g in zip(index, grads):
            packed[i] = None if g is None else _as_tensor(g)
        return tuple(packed)

    def setup_inputs(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, self.inputs_index = self._wrap(args, self._inputs_reached)
        return args

    def setup_outputs(self, result):
        single = not isinstance(result, tuple)
        values = (result,) if single else result
        self.n_outputs = len(values)
        values, self.outputs_index = self._wrap(values, self._outputs_reached)
        return values[0] if single else values

    def _outputs_reached(self, grad_inputs, grad_outputs):
        self.grad_outputs = self._pack(self.outputs_index, grad_outputs, self.n_outputs)
        if self.inputs_index is None:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module "
                "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/"
                "main/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook "
                "for more details.", UserWarning)
            grad_in = (None,) * self.n_inputs
            for hook in self.hooks:
                returned = hook(self.module, grad_in, self.grad_outputs)
                if returned is not None and not (isinstance(returned, tuple)
                                                 and all(g is None for g in returned)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return None

    def _inputs_reached(self, grad_inputs, grad_outputs):
        if self.grad_outputs is None:
            return None  # the gradient reached the inputs without passing the outputs
        arrays = type(grad_outputs[0]) is not Tensor if grad_outputs else True
        res = self._pack(self.inputs_index, grad_inputs, self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, got "
                                   f"{len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        picked = [res[i] for i in self.inputs_index]
        return [g.array if arrays and type(g) is Tensor else g for g in picked]


def _as_tensor(g):
    return g if type(g) is Tensor else Tensor._wrap(g)


# --- non-full backward hooks (deprecated) -------------------------------------------------------

class _NodeHook:
    """A non-full backward hook on the output's grad_fn: it sees that one node's gradients."""

    def __init__(self, hook, module):
        self.hook, self.module = hook, module

    def __call__(self, grad_inputs, grad_outputs):
        arrays = bool(grad_outputs) and type(grad_outputs[0]) is not Tensor
        grad_in = tuple(None if g is None else _as_tensor(g) for g in grad_inputs)
        grad_out = tuple(None if g is None else _as_tensor(g) for g in grad_outputs)
        returned = self.hook(self.module, grad_in, grad_out)
        if returned is None:
            return None
        returned = returned if isinstance(returned, tuple) else (returned,)
        if len(returned) != len(grad_in):
            raise RuntimeError(f"hook '{getattr(self.hook, '__name__', 'hook')}' has returned an "
                               f"incorrect number of values (got {len(returned)}, but expected "
                               f"{len(grad_in)})")
        return [g.array if arrays and type(g) is Tensor else g for g in returned]


def _non_full_hooks(module, hooks, args, result) -> None:
    var = result
    while type(var) is not Tensor:
        if isinstance(var, dict):
            var = next(v for v in var.values() if type(v) is Tensor)
        else:
            var = var[0]
    node = var.grad_fn
    if node is None:
        return
    if node.post_hooks is None:
        node.post_hooks = []
    for hook in hooks:
        node.post_hooks.append(_NodeHook(hook, module))
    _warn_non_full(args, result, node)


_DEPRECATED = ("is deprecated and will be removed in future versions. This hook will be missing "
               "some")


def _warn_future(message: str) -> None:
    # torch warns from one line of its own module.py: Python's filter shows it once a process
    warn_once(message, 2, FutureWarning)


def _warn_non_full(inputs, result, node) -> None:
    """torch's Module._maybe_warn_non_full_backward_hook."""
    if type(result) is not Tensor:
        if not (isinstance(result, tuple) and all(type(r) is Tensor for r in result)):
            _warn_future("Using non-full backward hooks on a Module that does not return a "
                          f"single Tensor or a tuple of Tensors {_DEPRECATED} of the grad_output. "
                          "Please use register_full_backward_hook to get the documented "
                          "behavior.")
            return
    else:
        result = (result,)
    if not all(type(i) is Tensor for i in inputs):
        _warn_future("Using non-full backward hooks on a Module that does not take as input a "
                      f"single Tensor or a tuple of Tensors {_DEPRECATED} of the grad_input. "
                      "Please use register_full_backward_hook to get the documented behavior.")
        return
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and node not in out_nodes):
        _warn_future("Using a non-full backward hook when outputs are nested in python data "
                      f"structure {_DEPRECATED} grad_output.")
    elif len(out_nodes) > 1:
        _warn_future("Using a non-full backward hook when outputs are generated by different "
                      f"autograd Nodes {_DEPRECATED} grad_output. Please use "
                      "register_full_backward_hook to get the documented behavior.")
    else:
        in_nodes = {i.grad_fn for i in inputs if i.grad_fn is not None}
        if in_nodes != {child for child, _ in node.next_functions}:
            _warn_future("Using a non-full backward hook when the forward contains multiple "
                          f"autograd Nodes {_DEPRECATED} grad_input. Please use "
                          "register_full_backward_hook to get the documented behavior.")
