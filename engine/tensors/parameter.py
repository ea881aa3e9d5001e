"""nn.Parameter: an engine Tensor marked as a parameter.

The engine's ops compare tensor types exactly (a result takes its inputs' class), so a
Tensor subclass would not mix with them; `isinstance(t, nn.Parameter)` tests the mark
instead, through the metaclass the legacy `autograd.Variable` shares.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes, inference
from ..graph.nodes import LEGACY_TYPE_NAMES
from ..core.session import current
from .tensor import Tensor, mark_parameter
from .tensor import is_parameter as tensor_is_parameter


class TensorKind(type):
    """The metaclass of classes whose instances are plain Tensors carrying a mark
    (nn.Parameter, autograd.Variable): `isinstance` asks the class's `_tg_is_instance`."""

    def __instancecheck__(cls, obj) -> bool:
        return cls._tg_is_instance(obj)

    def __repr__(cls) -> str:
        return f"<class '{cls._tg_path}'>"


def is_parameter(value) -> bool:
    return type(value) is Tensor and tensor_is_parameter(value)


class Parameter(metaclass=TensorKind):
    """nn.Parameter(data=None, requires_grad=True): a leaf sharing `data`'s storage."""

    _tg_path = "torch.nn.parameter.Parameter"
    _tg_public = frozenset()
    _tg_is_instance = staticmethod(is_parameter)

    def __new__(cls, data=None, requires_grad=True):
        return announce(make_parameter(data, requires_grad))


def make_parameter(data=None, requires_grad=True) -> Tensor:
    """A Parameter over `data`'s storage (nn.Parameter without telling the run's observers:
    a layer announces its parameters once it has initialised them)."""
    if data is None:
        data = Tensor._wrap(np.empty(0, dtypes.DEFAULT_FLOAT.np))
    if type(data) is not Tensor:
        raise TypeError(f"Parameter.__new__() got an unexpected data of type "
                        f"{type(data).__name__} (a Tensor expected)")
    if requires_grad and data.array.dtype.kind != "f":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    param = data.detach()  # same storage and version counter, no history
    inference.check_requires_grad(param, requires_grad)
    param.requires_grad = bool(requires_grad)
    mark_parameter(param)
    return param


def announce(tensor: Tensor) -> Tensor:
    """Tell a watching tool about a new leaf, as creation functions do (`autodiff check`
    perturbs leaves by creation order)."""
    made = current().observers.tensor_made
    if made is not None:
        made(tensor)
    return tensor


def type_name(value) -> str:
    """torch.typename: a tensor's legacy type name (torch.FloatTensor), else the class name."""
    if type(value) is Tensor:
        return LEGACY_TYPE_NAMES[value.array.dtype.name]
    return type(value).__name__


def zero_grad_of(param, set_to_none: bool) -> None:
    """What Module.zero_grad and Optimizer.zero_grad do to one parameter's `.grad`."""
    grad = param._grad
    if grad is None:
        return
    if set_to_none:
        param._grad = None
        return
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad = False
    grad.zero_()
