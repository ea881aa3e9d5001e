"""The built-in modules tutorials use: Linear, LazyLinear, Sequential, ModuleList,
ModuleDict, ParameterList, ParameterDict, Flatten, Dropout, Identity, and the loss modules
(the activations: nn/activations.py), each printing as torch prints it.

A module whose forward is one function sets `__call__` to its forward: `model(x)` then costs
one Python call, as the per-op overhead of a training loop matters (torch runs hooks there,
which programs here cannot register).
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict

import numpy as np

from ..core import dtypes
from . import init
from .activations import ACTIVATIONS
from .module import Module
from ..tensors.parameter import announce, is_parameter, make_parameter, type_name
from ..ops.operands import check_sizes
from ..ops.linalg import linear
from ..ops.losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_similarity,
    huber_loss,
    kl_div,
    l1_loss,
    reduction_of,
    smooth_l1_loss,
)
from ..ops.nn import cross_entropy, mse_loss, nll_loss
from ..ops.random import dropout
from ..ops.shape import flatten
from ..core.session import check_allocation
from ..tensors.tensor import Tensor, mark_initialised, mark_uninitialised


class Linear(Module):
    """y = x·Wᵀ + b, with torch's default initialisation (kaiming_uniform_(a=√5) on W, then
    uniform(±1/√fan_in) on b), drawn from the run's generator."""

    _tg_public = Module._tg_public | {"in_features", "out_features", "weight", "bias",
                                      "reset_parameters"}

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        weight_and_bias(self, (out_features, in_features), bias, dtype)

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return linear(input, self.weight, self.bias)

    __call__ = forward

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class LazyLinear(Linear):
    """LazyLinear(out_features): a Linear whose in_features come from its first input; only
    then are its parameters shaped and initialised (from the generator as it is then), and,
    as in torch, the module becomes a Linear. The parameters keep their identity throughout,
    so an optimiser made before the first call updates them."""

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = lazy_parameter(dtype)
        if bias:
            self.bias = lazy_parameter(dtype)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.in_features != 0:
            super().reset_parameters()

    def forward(self, input):
        self.in_features = input.shape[-1]
        for param, shape in ((self.weight, (self.out_features, self.in_features)),
                             (self.bias, (self.out_features,))):
            if param is not None:
                param.array = _uninitialised(shape, param.dtype).array
        self.__class__ = Linear
        self.reset_parameters()
        for param in (self.weight, self.bias):
            if param is not None:
                mark_initialised(param)
                announce(param)
        return linear(input, self.weight, self.bias)

    __call__ = forward


def weight_and_bias(layer, shape: tuple, bias: bool, dtype, outputs: int | None = None) -> None:
    """A layer's `weight` of `shape` and (with `bias`) its `bias`, one per output (`outputs`,
    by default shape[0]), drawn by the layer's reset_parameters, in torch's order, then
    announced as leaves."""
    layer.weight = make_parameter(_uninitialised(shape, dtype))
    if bias:
        layer.bias = make_parameter(_uninitialised((outputs or shape[0],), dtype))
    else:
        layer.register_parameter("bias", None)
    layer.reset_parameters()
    for param in (layer.weight, layer.bias):
        if param is not None:
            announce(param)  # initialised: now a leaf like any other


def lazy_parameter(dtype, kind: str = "Parameter") -> Tensor:
    """A lazy module's parameter (or buffer) before its first call: empty, printed as torch's
    <UninitializedParameter>, shaped and initialised by the module's first forward."""
    empty = _uninitialised((0,), dtype)
    tensor = make_parameter(empty) if kind == "Parameter" else empty
    mark_uninitialised(tensor, kind)
    return tensor


def _uninitialised(shape: tuple, dtype) -> Tensor:
    """A layer's parameter storage before its initialisation (not announced to a watching
    tool: `autodiff check` should see, and widen, the initialised values)."""
    dt = (dtype or dtypes.DEFAULT_FLOAT).np
    check_sizes(shape)
    check_allocation(shape, dt)
    return Tensor._wrap(np.zeros(shape, dt))


# --- containers ---------------------------------------------------------------------------------

def _checked(module):
    if not isinstance(module, Module):
        raise TypeError(f"{type_name(module)} is not a Module subclass")
    return module


def _position(container, index) -> int:
    size = len(container._modules)
    index = operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of range")
    return index % size


class Sequential(Module):
    """Sequential(*modules): each module's output is the next one's input."""

    _tg_public = Module._tg_public | {"append", "insert", "extend"}

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], dict):
            for key, module in args[0].items():
                self.add_module(key, _checked(module))
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), _checked(module))

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    __call__ = forward

    def __getitem__(self, index):
        items = list(self._modules.items())
        if isinstance(index, slice):
            part = Sequential()
            for key, module in items[index]:
                part.add_module(key, module)
            return part
        return items[_position(self, index)][1]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), _checked(module))
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index if index >= 0 else len(items) + index, _checked(module))
        for key in list(self._modules):
            self._forget(key)
        for idx, item in enumerate(items):
            self.add_module(str(idx), item)
        return self


class ModuleList(Module):
    """ModuleList(modules): a list of modules, registered (no forward of its own)."""

    _tg_public = Module._tg_public | {"append", "extend", "insert"}

    def __init__(self, modules=None):
        super().__init__()
        for module in modules or ():
            self.append(module)

    def __getitem__(self, index):
        items = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(items[index])
        return items[_position(self, index)]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    append = Sequential.append
    extend = Sequential.extend
    insert = Sequential.insert

    def __repr__(self) -> str:
        """torch groups consecutive equal entries: `(0-1): 2 x Linear(...)`."""
        entries = [repr(m) for m in self._modules.values()]
        if not entries:
            return "ModuleList()"
        lines, start = [], 0
        for end in range(1, len(entries) + 1):
            if end == len(entries) or entries[end] != entries[start]:
                text = entries[start].replace("\n", "\n  ")
                label = f"({start})" if end - start == 1 else f"({start}-{end - 1}): {end - start} x"
                lines.append(f"{label}: {text}" if end - start == 1 else f"{label} {text}")
                start = end
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """ModuleDict(modules): modules by name, registered in insertion order (no forward)."""

    _tg_public = Module._tg_public | {"keys", "values", "items", "update", "pop", "clear"}

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str):
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        self._forget(key)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str):
        module = self._modules[key]
        self._forget(key)
        return module

    def clear(self) -> None:
        for key in list(self._modules):
            self._forget(key)

    def update(self, modules) -> None:
        if isinstance(modules, (dict, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for index, entry in enumerate(modules):
            if not isinstance(entry, (list, tuple)):
                raise TypeError(f"ModuleDict update sequence element #{index} should be Iterable; "
                                f"is {type(entry).__name__}")
            if len(entry) != 2:
                raise ValueError(f"ModuleDict update sequence element #{index} has length "
                                 f"{len(entry)}; 2 is required")
            self[entry[0]] = entry[1]


# --- shape layers -----------------------------------------------------------------------------

class Flatten(Module):
    _tg_public = Module._tg_public | {"start_dim", "end_dim"}

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    _tg_public = Module._tg_public | {"p", "inplace"}

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


# --- losses: their printed form never shows their arguments -------------------------------------

class _Loss(Module):
    _tg_public = Module._tg_public | {"reduction"}

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:  # (torch checks the rest at forward)
            reduction = reduction_of(reduction, size_average, reduce)
        self.reduction = reduction


class MSELoss(_Loss):
    def forward(self, input, target):
        return mse_loss(input, target, reduction=self.reduction)

    __call__ = forward


class L1Loss(_Loss):
    def forward(self, input, target):
        return l1_loss(input, target, reduction=self.reduction)


class _WeightedLoss(_Loss):
    _tg_public = _Loss._tg_public | {"weight"}

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


def _unsupported(name: str, **arguments) -> None:
    """Arguments whose effect the engine's loss does not compute yet: refused, not ignored."""
    for key, (value, default) in arguments.items():
        if value is not None and value != default:
            raise NotImplementedError(f"nn.{name}({key}=...) is not supported by autodiff")


class NLLLoss(_WeightedLoss):
    _tg_public = _WeightedLoss._tg_public | {"ignore_index"}

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        _unsupported(type(self).__name__, weight=(weight, None), ignore_index=(ignore_index, -100))
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return nll_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(NLLLoss):
    _tg_public = NLLLoss._tg_public | {"label_smoothing"}

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        _unsupported("CrossEntropyLoss", label_smoothing=(label_smoothing, 0.0))
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return cross_entropy(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    def forward(self, input, target):
        return binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    _tg_public = _WeightedLoss._tg_public | {"pos_weight"}

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return binary_cross_entropy_with_logits(input, target, self.weight,
                                                reduction=self.reduction,
                                                pos_weight=self.pos_weight)


class SmoothL1Loss(_Loss):
    _tg_public = _Loss._tg_public | {"beta"}

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    _tg_public = _Loss._tg_public | {"delta"}

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    _tg_public = _Loss._tg_public | {"log_target"}

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CosineSimilarity(Module):
    _tg_public = Module._tg_public | {"dim", "eps"}

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)


# --- parameter containers -------------------------------------------------------------------

def _as_parameter(value):
    """What a parameter container keeps: a Parameter as it is, any other tensor made one (as
    torch wraps it), anything else as a plain attribute."""
    if type(value) is Tensor and not is_parameter(value):
        return announce(make_parameter(value))
    return value


def _entry_line(key, value, legacy_type_names: bool) -> str:
    if type(value) is not Tensor:
        return f"  ({key}): Object of type: {type_name(value)}"
    kind = "Parameter" if is_parameter(value) else "Tensor"
    described = value.type() if legacy_type_names else value.dtype
    size = "x".join(str(n) for n in value.shape)
    return f"  ({key}): {kind} containing: [{described} of size {size}]"


class ParameterList(Module):
    """ParameterList(values): parameters by position, registered as "0", "1", ... (tensors
    are made Parameters, other objects kept as they are)."""

    _tg_public = Module._tg_public | {"append", "extend"}

    def __init__(self, values=None):
        super().__init__()
        self.__dict__["_size"] = 0
        if values is not None:
            self += values

    def _get(self, index: int):
        return getattr(self, str(index))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ParameterList([self._get(i) for i in range(self._size)[index]])
        size = self._size
        index = operator.index(index)
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of range")
        return self._get(index % size)

    def __setitem__(self, index, value) -> None:
        index = operator.index(index)
        index = index + self._size if index < 0 else index
        setattr(self, str(index), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter([self._get(i) for i in range(self._size)])

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        self.__dict__["_size"] = self._size + 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type_name(values))
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_line(k, v, False) for k, v in enumerate(self))


class ParameterDict(Module):
    """ParameterDict(values): parameters by name in insertion order (tensors made
    Parameters, other objects kept)."""

    _tg_public = Module._tg_public | {"keys", "values", "items", "update", "pop", "clear",
                                      "get", "setdefault", "popitem", "copy"}

    def __init__(self, values=None):
        super().__init__()
        self.__dict__["_keys"] = {}
        if values is not None:
            self.update(values)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"attribute name should be a string. Got {type_name(key)}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        self._forget(key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key, default=None):
        return self[key] if key in self._keys else default

    def setdefault(self, key, default=None):
        if key not in self._keys:
            self[key] = default
        return self[key]

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def copy(self):
        return ParameterDict(dict(self.items()))

    def update(self, values) -> None:
        if isinstance(values, (OrderedDict, ParameterDict)):
            pairs = list(values.items())
        elif isinstance(values, dict):  # torch sorts a plain mapping's keys
            pairs = sorted(values.items())
        else:
            pairs = []
            for index, pair in enumerate(values):
                pair = list(pair)
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{index} has length "
                                     f"{len(pair)}; 2 is required")
                pairs.append(pair)
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_entry_line(k, v, True) for k, v in self.items())


MODULES = {cls.__name__: cls for cls in (
    Module, Linear, LazyLinear, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
    Flatten, Dropout, Identity,
    MSELoss, L1Loss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss, SmoothL1Loss,
    HuberLoss, KLDivLoss, CosineSimilarity)}
MODULES.update(ACTIVATIONS)
