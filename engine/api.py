"""What a .tg program sees as `torch`, `torch.nn`, `torch.nn.functional` and `torch.autograd`.

Namespaces are plain objects whose class lists its public names in `_tg_public`, the
allow-list the interpreter checks before any attribute access. The op functions come
from the registry families; creation functions from tensors/creation.py.
"""

from __future__ import annotations

import math

import numpy as np

from .graph import calls as _autograd
from .autograd import gradcheck as autograd_gradcheck, functional as functional_autograd
from .autograd import func_transforms
from .tensors import creation, random_creation, serialization
from .data import loader as data
from .core import devices, dtypes
from .nn import (
    init,
    conv as nn_conv,
    embedding as nn_embedding,
    layers as nn_layers,
    normalization as nn_normalization,
    parallel as nn_parallel,
    rnn as nn_rnn,
    utils as nn_utils,
)
from .optim import lr_scheduler, optimizers as optim
from .ops import reduce as ops_reduce
from .autograd.function import Function
from .graph.nodes import AccumulateGrad, Node
from .tensors.parameter import Parameter, TensorKind, announce
from .core.printing import set_printoptions
from .random.generator import Generator
from .ops.registry import FAMILIES
from .ops.operands import result_dtype
from .core import signatures
from .graph.nodes import NUMBERS
from .core.session import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from .tensors.tensor import LEGACY_TYPES, RULES, Size, Tensor


VERSION = "2.13.0+cpu"  # the PyTorch whose behaviour autodiff reproduces (torch.__version__)


def make_namespace(name: str, members: dict) -> object:
    """An object exposing exactly `members` as attributes (functions stay unbound)."""
    body = {key: staticmethod(v) if callable(v) and not isinstance(v, type) else v
            for key, v in members.items()}
    body["_tg_public"] = frozenset(members)
    body["_tg_module_name"] = name
    body["__repr__"] = lambda self: f"<module '{name}'>"
    return type(name.replace(".", "_"), (), body)()


def _function(name: str, forward):
    """torch.X as a function: an operand it cannot take is torch's TypeError (an operator
    returns NotImplemented instead, so that Python can try the other side)."""
    def function(*args, **kwargs):
        if args and type(args[0]) is not Tensor and name not in _TAKES_NON_TENSOR:
            args = _number_first(name, args, kwargs)
        result = forward(*args, **kwargs)
        if result is NotImplemented:
            other = args[1] if len(args) > 1 else next(iter(kwargs.values()), None)
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        return result
    function.__name__ = function.__qualname__ = name
    function.__wrapped__ = forward  # (what torch_keywords reads the parameters of)
    return function


_TAKES_NON_TENSOR = frozenset({"cat", "concat", "concatenate", "stack", "where", "einsum",
                               "is_tensor", "hstack", "vstack", "meshgrid"})


def _number_first(name: str, args: tuple, kwargs: dict) -> tuple:
    """The arguments of `torch.name(number, ...)` as torch's parser reads them, or its
    TypeError. The ops whose Tensor parameters take numbers (add, mul, div...) get each
    number as a 0-d tensor of the dtype it promotes to beside the other operand (torch's
    wrapped number: `torch.add(1.5, int_tensor)` is float32, `torch.add(1, 2)` int64); an op
    with a `(Number self, Tensor other)` signature (pow, remainder) takes the number itself."""
    first = args[0]
    if type(first) in NUMBERS:
        second = args[1] if len(args) > 1 else kwargs.get("other", kwargs.get("exponent"))
        if name in signatures.NUMBERS_AS_TENSORS:  # (a wrong `other` is then the op's to name)
            wrapped = [_wrapped_number(first, second)]
            if len(args) > 1 and type(second) in NUMBERS:
                wrapped.append(_wrapped_number(second, first))
            return (*wrapped, *args[len(wrapped):])
        if name in signatures.NUMBER_SELF and type(second) is Tensor:
            return args
    raise TypeError(signatures.message(name, False, args, kwargs) or
                    f"{name}(): argument 'input' (position 1) must be Tensor, not "
                    f"{type(first).__name__}")


def _wrapped_number(value, other) -> Tensor:
    dtype = result_dtype(value, other) if type(other) is Tensor else result_dtype(value)
    return Tensor._wrap(np.asarray(value, dtype))


def _collect(attribute: str) -> dict:
    found: dict = {}
    for family in FAMILIES:
        for name, forward in getattr(family, attribute).items():
            found[name] = _function(name, forward)
    return found


# --- torch.autograd ---------------------------------------------------------------------------

def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    _autograd.backward(tensors, grad_tensors if grad_tensors is not None else grad_variables,
                       retain_graph, create_graph, inputs, RULES)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    return _autograd.grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                          allow_unused, RULES)


class Variable(metaclass=TensorKind):
    """torch.autograd.Variable(data, requires_grad=False), the legacy constructor: a tensor
    sharing `data`'s storage, without its history (every tensor is a Variable)."""

    _tg_path = "torch.autograd.variable.Variable"
    _tg_public = frozenset()

    @staticmethod
    def _tg_is_instance(value) -> bool:
        return type(value) is Tensor

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            return creation.empty(0, requires_grad=requires_grad)
        if type(data) is not Tensor:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return announce(data.detach().requires_grad_(requires_grad))


class GraphNode(metaclass=TensorKind):
    """torch.autograd.graph.Node, for `isinstance(t.grad_fn, Node)`: every grad_fn is one."""

    _tg_path = "torch.autograd.graph.Node"
    _tg_public = frozenset()

    @staticmethod
    def _tg_is_instance(value) -> bool:
        return isinstance(value, (Node, AccumulateGrad))

    def __new__(cls, *args, **kwargs):
        raise TypeError("Can't instantiate abstract class Node with abstract methods "
                        "_input_metadata, _register_hook_dict, _sequence_nr, metadata, name, "
                        "next_functions, register_hook, register_prehook")


autograd = make_namespace("torch.autograd", {
    "graph": make_namespace("torch.autograd.graph", {"Node": GraphNode}),
    "grad": grad, "backward": backward, "Function": Function, "Variable": Variable,
    "no_grad": no_grad, "enable_grad": enable_grad, "set_grad_enabled": set_grad_enabled,
    "set_detect_anomaly": set_detect_anomaly, "detect_anomaly": detect_anomaly,
    **autograd_gradcheck.FUNCTIONS,
    "functional": make_namespace("torch.autograd.functional", functional_autograd.FUNCTIONS)})

_NN_FUNCTIONS = _collect("nn_functions")
functional = make_namespace("torch.nn.functional", _NN_FUNCTIONS)
nn = make_namespace("torch.nn", {"functional": functional,
                                 "init": make_namespace("torch.nn.init", init.FUNCTIONS),
                                 "utils": make_namespace("torch.nn.utils", nn_utils.FUNCTIONS),
                                 "Parameter": Parameter, **nn_layers.MODULES,
                                 **nn_embedding.MODULES, **nn_conv.MODULES,
                                 **nn_normalization.MODULES, **nn_parallel.MODULES,
                                 **nn_rnn.MODULES})
optim_namespace = make_namespace("torch.optim", dict(
    optim.OPTIMIZERS, Optimizer=optim.Optimizer,
    lr_scheduler=make_namespace("torch.optim.lr_scheduler", lr_scheduler.SCHEDULERS)))
func = make_namespace("torch.func", {"grad": functional_autograd.func_grad,
                                     **func_transforms.FUNCTIONS})
# functorch: torch's older name for torch.func's transforms
functorch = make_namespace("functorch", {"grad": functional_autograd.func_grad,
                                         **func_transforms.FUNCTIONS})
linalg = make_namespace("torch.linalg", ops_reduce.LINALG)
utils = make_namespace("torch.utils", {"data": make_namespace("torch.utils.data", data.FUNCTIONS)})

def promote_types(type1, type2):
    """torch.promote_types: the dtype an op on tensors of these two dtypes gives."""
    for position, (name, value) in enumerate((("type1", type1), ("type2", type2)), 1):
        if not isinstance(value, dtypes.DType):
            raise TypeError(f"promote_types(): argument '{name}' (position {position}) must be "
                            f"torch.dtype, not {type(value).__name__}")
    return dtypes.promote([type1, type2], [], [])


_RESULT_TYPE_FORMS = [signatures._parse(text) for text in (
    "(Tensor tensor, Tensor other)", "(Number scalar, Tensor tensor)",
    "(Tensor tensor, Number other)", "(Number scalar1, Number scalar2)")]


def result_type(tensor, other):
    """torch.result_type: the dtype torch's promotion gives these two operands."""
    if any(type(v) is not Tensor and type(v) not in NUMBERS for v in (tensor, other)):
        raise TypeError(signatures._listing("result_type", _RESULT_TYPE_FORMS, (tensor, other),
                                            {}))
    return dtypes.from_numpy(result_dtype(tensor, other))


_TORCH_FUNCTIONS = _collect("functions")
torch = make_namespace("torch", {
    **_TORCH_FUNCTIONS,
    **{name: fn for name, fn in _NN_FUNCTIONS.items() if name in ("softmax", "log_softmax")
       and name not in _TORCH_FUNCTIONS},
    "tensor": creation.tensor, "ones": creation.ones, "zeros": creation.zeros,
    "ones_like": creation.ones_like, "zeros_like": creation.zeros_like,
    "empty_like": creation.empty_like, "full": creation.full, "eye": creation.eye,
    "arange": creation.arange, "linspace": creation.linspace, "empty": creation.empty,
    "from_numpy": creation.from_numpy, "full_like": creation.full_like,
    "as_tensor": creation.as_tensor, "get_default_dtype": creation.get_default_dtype,
    "logspace": creation.logspace,
    **{f.__name__: f for f in (random_creation.rand, random_creation.randn,
                               random_creation.randint, random_creation.randperm,
                               random_creation.normal, random_creation.rand_like,
                               random_creation.randn_like, random_creation.randint_like,
                               random_creation.manual_seed, random_creation.initial_seed,
                               random_creation.seed)},
    "Generator": Generator,
    "no_grad": no_grad, "enable_grad": enable_grad, "set_grad_enabled": set_grad_enabled,
    "inference_mode": inference_mode,
    "is_grad_enabled": is_grad_enabled, "autograd": autograd, "nn": nn,
    "is_anomaly_enabled": is_anomaly_enabled, "is_inference_mode_enabled": is_inference_mode_enabled,
    "is_anomaly_check_nan_enabled": is_anomaly_check_nan_enabled,
    "optim": optim_namespace, "func": func, "utils": utils, "linalg": linalg,
    "Tensor": Tensor, "Size": Size, **LEGACY_TYPES,
    "device": devices.device, "cuda": make_namespace("torch.cuda", devices.CUDA),
    "backends": make_namespace("torch.backends", {"cudnn": devices.cudnn}),
    "set_printoptions": set_printoptions, "__version__": VERSION,
    **serialization.FUNCTIONS,
    "promote_types": promote_types, "result_type": result_type,
    "pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan,
    **dtypes.ALIASES,
})

__all__ = ["torch", "nn", "functional", "autograd", "optim_namespace", "func", "functorch", "utils", "linalg",
           "Tensor",
           "Node", "AccumulateGrad"]
