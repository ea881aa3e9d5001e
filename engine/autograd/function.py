"""torch.autograd.Function: an op a program writes itself, a forward and a backward.

`MyFn.apply(x, ...)` runs `MyFn.forward(ctx, x, ...)` under no_grad; when grad mode is on and a
tensor argument requires grad, the outputs share one graph node (a MultiNode, so each output
has its number) whose op is MyFn's own registry-style entry, `MyFnBackward`. That entry has a
`node_rule` instead of per-input rules: the backward pass hands it the node's gradients, it
calls the program's `MyFn.backward(ctx, *grads)` with them as tensors (in the grad mode of the
pass: recorded under create_graph) and checks what comes back as torch does (one gradient per
forward argument, None for non-tensors, shapes that sum down to the input's).

`ctx` is a FunctionCtx: save_for_backward / saved_tensors / needs_input_grad /
mark_non_differentiable / set_materialize_grads, and any attribute the program sets on it.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..core import inference
from ..core.classes import TorchClass
from ..graph.nodes import (
    SECOND_BACKWARD,
    MultiNode,
    check_saved_version,
    edge_to,
    released,
    version_of,
)
from ..core.program_classes import class_body, own_attribute
from ..ops.registry import Op
from ..core.session import current, no_grad
from ..tensors.tensor import Tensor

_NO_EDGE = (None, 0)


class FunctionCtx:
    """What a custom Function's forward leaves for its backward (torch's ctx, which prints
    as the node it becomes)."""

    _tg_public = frozenset({"save_for_backward", "saved_tensors", "needs_input_grad",
                            "mark_non_differentiable", "set_materialize_grads"})

    def __init__(self, function_class, needs_input_grad):
        self._function = function_class
        self._saved = None
        self._versions = ()
        self._node = None
        self._non_differentiable = ()
        self._materialize = True
        self._outputs = ()  # (shape, dtype) of each output, None for a non-tensor
        self.needs_input_grad = needs_input_grad

    _tg_readable = staticmethod(own_attribute)

    @staticmethod
    def _tg_writable(obj, name: str) -> bool:
        return not name.startswith("_") and name not in FunctionCtx._tg_public

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and type(t) is not Tensor:
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self._saved = tensors
        self._versions = tuple(None if t is None else version_of(t) for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        if self._node is not None and released(self._node):
            raise RuntimeError(SECOND_BACKWARD)
        for t, version in zip(self._saved or (), self._versions):
            if t is not None:
                check_saved_version(t, version)
        return tuple(self._saved or ())

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{self._function.__name__}Backward object at {id(self):#x}>"


class Function(metaclass=TorchClass):
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `apply`."""

    _tg_public = frozenset({"apply", "forward", "backward"})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    @classmethod
    def tg_subclass(cls, name: str, members: dict) -> type:
        """The class a program's `class NAME(torch.autograd.Function):` makes."""
        return type(name, (cls,), class_body(cls, name, members))

    @staticmethod
    def tg_super_init(instance, *args, **kwargs) -> None:
        """`super().__init__()` in a Function subclass: nothing to set up."""

    @classmethod
    def apply(cls, *args, **kwargs):
        needs = tuple(type(a) is Tensor and a.requires_grad for a in args)
        ctx = FunctionCtx(cls, needs)
        with no_grad():
            result = cls.forward(ctx, *args, **kwargs)
        if not (current().grad_enabled and any(needs)):
            return result
        return _connect(cls, ctx, args, result)


def _connect(cls, ctx, args, result):
    """Give the tensor outputs one node whose rule is the program's backward."""
    if ctx._saved and inference.TENSORS:  # (what ctx saved is saved for backward, as an op's)
        inference.check_saved(ctx._saved, range(len(ctx._saved)))
    tensors = [a for a in args if type(a) is Tensor]
    edges = tuple(edge_to(t) if t.requires_grad else _NO_EDGE for t in tensors)
    meta = tuple((t.array.shape, t.array.dtype) for t in tensors)
    node = MultiNode(_op_of(cls), edges, None if ctx._saved is None else (), None,
                     {"ctx": ctx, "args": args}, meta)
    ctx._node = node
    single = not isinstance(result, tuple)
    outputs = [result] if single else list(result)
    given = {id(a) for a in tensors}
    frozen = {id(t) for t in ctx._non_differentiable}
    node.output_numbers = {}
    node.n_outputs = len(outputs)
    shapes = []
    for i, out in enumerate(outputs):
        if type(out) is not Tensor:
            shapes.append(None)
            continue
        if id(out) in given or out.grad_fn is not None:
            out = outputs[i] = out.detach()  # an input returned as is: a new tensor, its alias
        shapes.append((out.array.shape, out.array.dtype))
        if id(out) in frozen or out.array.dtype.kind != "f":  # torch: no gradient for these
            continue
        out.grad_fn = node
        out.requires_grad = True
        node.output_numbers[id(out)] = i
    ctx._outputs = tuple(shapes)
    return outputs[0] if single else tuple(outputs)


_OPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _op_of(cls) -> Op:
    """The entry of `cls`'s node: `MyFnBackward`, as torch names the node of a Python Function."""
    op = _OPS.get(cls)
    if op is None:
        name = cls.__name__ + "Backward"
        op = _OPS[cls] = Op(name, explain=f"{cls.__name__}.backward: the program's own rule for "
                                          f"its autograd.Function {cls.__name__}")
        op.node_rule = _program_backward
        op.repr_name = "torch.autograd.function." + name
    return op


def _program_backward(node, grads, rules, create_graph) -> list:
    """The node rule: call the program's backward, check its gradients, one per edge."""
    ctx = node.params["ctx"]
    args = node.params["args"]
    name = node.op.name
    incoming = []
    for g, shape in zip(grads, ctx._outputs):
        if g is None:
            if shape is None or not ctx._materialize:
                incoming.append(None)
                continue
            g = np.zeros(*shape)
        incoming.append(rules.gradient(g) if create_graph else Tensor._wrap(g))
    returned = ctx._function.backward(ctx, *incoming)
    returned = returned if isinstance(returned, tuple) else (returned,)
    if len(returned) > len(args) and all(g is None for g in returned[len(args):]):
        returned = returned[:len(args)]
    if len(returned) != len(args):
        raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                           f"(expected {len(args)}, got {len(returned)})")
    result = []
    for i, (arg, g) in enumerate(zip(args, returned)):
        if type(arg) is not Tensor:
            if g is not None:
                raise RuntimeError(f"function {name} returned a gradient different than None at "
                                   f"position {i + 1}, but the corresponding forward input was "
                                   "not a Variable")
            continue
        if g is not None:
            if type(g) is not Tensor:
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            _check_shape(name, i, g.array.shape, arg.array.shape)
            g = g if create_graph else g.array
        result.append(g)
    return result


def _check_shape(name: str, index: int, got: tuple, expected: tuple) -> None:
    """A gradient may be larger than its input along broadcast dims (it is summed down)."""
    fits = len(expected) <= len(got) and all(
        e == g or e == 1 for e, g in zip(reversed(expected), reversed(got)))
    if not fits:
        raise RuntimeError(f"Function {name} returned an invalid gradient at index {index} - got "
                           f"{list(got)} but expected shape compatible with {list(expected)}")
