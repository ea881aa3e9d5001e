"""The Tensor: a NumPy array plus the autograd bookkeeping PyTorch keeps beside it.

Its operators and op methods come from the op registry (the `ops_*` families), made
here once, where the class is defined; its own methods are the attributes and autograd
state every tensor has. Results of ops are made by `graph.record`.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from ..graph import calls as autograd, nodes as graph
from ..core import devices, dtypes, inference
from . import hooks, storage as tensor_storage
from ..ops import (
    activation as ops_activation,
    arith as ops_arith,
    cumulative as ops_cumulative,
    division as ops_division,
    einsum as ops_einsum,
    index as ops_index,
    inplace as ops_inplace,
    linalg as ops_linalg,
    losses as ops_losses,
    math as ops_math,
    nn as ops_nn,
    random as ops_random,
    reduce as ops_reduce,
    shape as ops_shape,
)
from ..ops import logical as ops_logical, new as ops_new, pieces as ops_pieces, stats as ops_stats  # (after the families their rules build on)
from ..ops import arrange as ops_arrange, conv as ops_conv, embedding as ops_embedding  # (built on pieces, logic and shapes)
from ..ops import normalization as ops_normalization
from ..ops import rnn as ops_rnn  # noqa: F401 - (its entries: built on activations and shapes)
from ..ops.operands import c_type_word, check_sizes, data_as, infer_array, sum_to, type_word
from ..core.session import check_allocation
from ..core.session import current as current_session
from ..core.printing import format_size, format_spec, format_tensor
from ..core.classes import TorchCClass
from ..ops.registry import FAMILIES, Rules

FAMILY_MODULES = (ops_arith, ops_division, ops_math, ops_reduce, ops_cumulative, ops_shape,
                  ops_index, ops_linalg, ops_einsum, ops_activation, ops_nn, ops_losses,
                  ops_inplace, ops_random, ops_stats, ops_logical, ops_pieces, ops_new, ops_arrange,
                  ops_conv, ops_embedding, ops_normalization, hooks)


_INT64 = 1 << 63


class Size(tuple, metaclass=TorchCClass):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`.

    `torch.Size(items)` in a program takes what torch takes (integers, of any size); as in
    torch, what reads them as int64 (printing, numel, slicing, +) fails beyond that range.
    The engine makes its sizes from NumPy shapes with `_size`, unchecked."""

    _tg_public = frozenset({"numel", "index", "count"})
    _tg_type_name = "torch.Size"  # as torch's own errors name the type

    def __new__(cls, sizes=()):
        items = []
        for i, d in enumerate(sizes):
            if not hasattr(type(d), "__index__") or isinstance(d, float):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(d).__name__}')")
            items.append(d.__index__())
        return tuple.__new__(cls, items)

    def __repr__(self) -> str:
        return format_size(_int64(self))

    __str__ = __repr__

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return _size(_int64(item)) if isinstance(index, slice) else item

    def __add__(self, other):
        return _size(_int64(tuple.__add__(self, other)))

    def __radd__(self, other):
        return _size(_int64(tuple.__add__(other, self)))

    def numel(self) -> int:
        """The product, in int64 arithmetic as torch computes it (it wraps around)."""
        n = 1
        for d in _int64(self):
            n = (n * d) % (1 << 64)
        return n - (1 << 64) if n >= _INT64 else n


def _int64(items):
    """`items`, each read as torch reads a size: an int64, or torch's error."""
    for d in items:
        if not -_INT64 <= d < _INT64:
            raise ValueError("Overflow when unpacking long long")
    return items


def _size(shape) -> Size:
    """A Size from a NumPy shape (already ints)."""
    return tuple.__new__(Size, shape)


# A 0-d tensor keeps its value as a NumPy scalar: scalar arithmetic is ~10x faster than
# on 0-d arrays. It becomes a 0-d array (`storage`) once something must share or write it.
_NUMPY_SCALARS = frozenset({np.float32, np.float64, np.int64, np.int32, np.bool_})

ops_inplace.offer_in_place_variants()  # (every family is loaded: their surfaces decide)


def _registry_methods() -> dict:
    """Tensor's op methods and operators, as the families offer them."""
    methods: dict = {}
    for family in FAMILIES:
        methods.update(family.methods)
    for name, forward in methods.items():
        if not name.startswith("__") and "NotImplemented" in forward.__code__.co_names:
            methods[name] = _refusing_operands(name, forward)
    return methods


def _refusing_operands(name: str, forward):
    """`t.mul("a")`: an operator's forward answers NotImplemented (so that Python may try the
    other side); called by name, it is torch's TypeError, as torch's parser words it."""
    def method(self, *args, **kwargs):
        result = forward(self, *args, **kwargs)
        if result is NotImplemented:
            from ..core.signatures import message  # noqa: PLC0415 - an error path

            raise TypeError(message(name, True, args, kwargs) or (
                f"{name}(): argument 'other' (position 1) must be Tensor, not "
                f"{type(args[0] if args else next(iter(kwargs.values()), None)).__name__}"))
        return result
    method.__name__ = method.__qualname__ = name
    method.__wrapped__ = forward
    return method


def _became_leaf(tensor) -> None:
    """A tensor a program made without requires_grad (an op's result, `torch.Tensor([...])`)
    now requires it: a leaf like those creation functions make, for the tools watching."""
    made = current_session().observers.tensor_made
    if made is not None:
        made(tensor)


class _TensorType(type):
    """The metaclass of Tensor and of torch's legacy typed classes (FloatTensor, ...):
    calling one builds a tensor as torch's legacy constructor does; it prints as torch's."""

    def __call__(cls, *args, device=None, **kwargs):
        devices.check(device)
        if kwargs:
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({', '.join(f'{k}={type(v).__name__}' for k, v in kwargs.items())})")
        dtype = (cls.__dict__.get("legacy_dtype") or dtypes.DEFAULT_FLOAT).np
        if not args:
            return Tensor._wrap(np.zeros(0, dtype=dtype))
        if all(type(a) is int for a in args) or (len(args) == 1 and type(args[0]) is Size):
            shape = tuple(args[0]) if type(args[0]) is Size else args
            check_sizes(shape)
            check_allocation(shape, dtype)
            return Tensor._wrap(np.zeros(shape, dtype=dtype))  # (torch leaves it uninitialized)
        if len(args) == 1 and not isinstance(args[0], (bool, int, float, str)):
            return Tensor._wrap(data_as(infer_array(args[0], floats=dtype.kind == "f"), dtype))
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")

    def __instancecheck__(cls, obj) -> bool:
        legacy = cls.__dict__.get("legacy_dtype")
        if legacy is None:
            return type.__instancecheck__(cls, obj)
        return type(obj) is Tensor and obj.array.dtype == legacy.np

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


class Tensor(metaclass=_TensorType):
    __slots__ = ("array", "requires_grad", "_grad_fn", "_grad", "_vc", "_base", "_accumulator",
                 "_retains_grad", "_view_version", "__weakref__")
    # `_view_version`: set on views only, the version their grad_fn was made at. (No more
    # slots: a tensor of 10 fits pymalloc's 112-byte class, and the garbage collector's walks
    # over a long graph's tensors cost ~10 % more at 128; nn.Parameter's tensors are marked
    # in PARAMETERS instead.)

    @classmethod
    def _wrap(cls, data, grad_fn=None, requires_grad=False) -> "Tensor":
        """The one constructor: `data` must already be a NumPy value of a supported dtype."""
        t = object.__new__(cls)
        if type(data) is np.ndarray:
            if not data.shape:
                data = data[()]
        elif type(data) not in _NUMPY_SCALARS:
            data = np.asarray(data)
            if not data.shape:
                data = data[()]
        t.array = data
        t._grad_fn = grad_fn
        t.requires_grad = requires_grad or grad_fn is not None
        t._grad = None
        t._vc = None  # version counter [n], shared with views; None until first needed
        t._base = None  # the tensor this one is a view of
        t._accumulator = None
        t._retains_grad = False
        if current_session().inference:
            inference.mark(t)
        return t

    locals().update(_registry_methods())

    # --- attributes -----------------------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.of_array(self.array)

    @property
    def shape(self) -> Size:
        return _size(self.array.shape)

    @property
    def ndim(self) -> int:
        return self.array.ndim

    @property
    def grad_fn(self):
        # torch remakes a view's grad_fn once its storage changed in place by another way (its
        # base, another view, a detached alias): AsStridedBackward0 over the base's history
        if self._base is not None and self._vc[0] != self._view_version:
            return ops_inplace.view_history(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node
        if self._base is not None:
            self._view_version = self._vc[0]

    @property
    def _version(self) -> int:
        if inference.is_inference(self):
            raise RuntimeError(inference.VERSION)
        return self._vc[0] if self._vc is not None else 0

    def _bump_version(self) -> None:
        if inference.TENSORS:  # (after the write, where torch's check fails too)
            inference.check_in_place(self)
        if self._vc is None:
            self._vc = [1]
        else:
            self._vc[0] += 1

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad:  # (never remade here)
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if type(value) is not Tensor:
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.array.shape != self.array.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.array.shape)}' to a "
                    f"tensor of size '{list(self.array.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size")
            if value.array.dtype != self.array.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{c_type_word(value.array.dtype)}'"
                    f" to a tensor with grad_dtype '{type_word(self.array.dtype)}'. The gradient "
                    "must match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
                    "set the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                    "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
                    "its gradient may break downstream systems that assume they match.")
        self._grad = value

    def own_array(self) -> np.ndarray:
        """The writable array behind this tensor (a 0-d value becomes a 0-d array)."""
        array = self.array
        if type(array) is not np.ndarray:
            array = self.array = np.array(array)
        return array

    # --- storage (engine/tensors/storage.py) ----------------------------------------------
    def storage(self):
        return tensor_storage.typed_storage(self)

    def untyped_storage(self):
        return tensor_storage.untyped_storage(self)

    def storage_offset(self) -> int:
        return tensor_storage.storage_offset(self)

    def data_ptr(self) -> int:
        return tensor_storage.data_ptr(self)

    def element_size(self) -> int:
        return self.array.dtype.itemsize

    resize_ = tensor_storage.resize_
    resize = tensor_storage.resize

    @property
    def data(self) -> "Tensor":
        """A detached tensor sharing this one's storage: changes to it bypass autograd."""
        alias = _alias(self.own_array())
        if inference.TENSORS:
            inference.inherit(alias, self)
        return alias

    @data.setter
    def data(self, value: "Tensor") -> None:
        if type(value) is not Tensor:
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self.requires_grad and value.array.dtype.kind != "f":
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self.array = value.array
        if inference.TENSORS:  # (torch swaps the whole tensor under the name)
            inference.inherit(self, value)

    def _tg_assign(self, name: str, value) -> None:
        """A program's `t.name = value` (the engine sets its slots directly): PyTorch's checks."""
        if name == "requires_grad":
            if type(value) is not bool:
                raise RuntimeError("requires_grad must be a bool")
            if self.grad_fn is not None:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables." if value else
                    "you can only change requires_grad flags of leaf variables. If you want to use "
                    "a computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            if value and self.array.dtype.kind != "f":
                raise RuntimeError("only Tensors of floating point and complex dtype can require "
                                   "gradients")
            inference.check_requires_grad(self, value)
            if value and not self.requires_grad:
                _became_leaf(self)
        setattr(self, name, value)

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    T = property(ops_shape.reversed_dims)
    mT = property(ops_shape.matrix_transpose)

    def size(self, dim=None):
        return _size(self.array.shape) if dim is None else self.array.shape[dim]

    def dim(self) -> int:
        return self.array.ndim

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the elements lie in row-major order (size-1 dims aside, as in torch)."""
        if memory_format is not None:
            from ..core.unsupported import Unsupported  # noqa: PLC0415 - the rare path only

            raise Unsupported("is_contiguous(memory_format=...)")
        array = self.array
        return type(array) is not np.ndarray or array.flags.c_contiguous

    def numel(self) -> int:
        return int(self.array.size)

    nelement = numel

    def item(self):
        if self.array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self.array.size} elements cannot be converted to Scalar")
        return self.array.reshape(()).item()

    def tolist(self):
        return self.array.tolist()

    def numpy(self):
        """The tensor's data as a NumPy array sharing its memory (the program's wrapper)."""
        from ..numpy.data import to_numpy  # noqa: PLC0415 - NumPy data is rare: load it on use

        return to_numpy(self)

    def __len__(self) -> int:
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    def __iter__(self):
        if self.array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(ops_shape.unbind(self, 0))  # torch iterates through unbind: one node

    def __bool__(self) -> bool:
        if self.array.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.array.reshape(()))

    def _python_scalar(self):
        if self.array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.array.reshape(()).item()

    def __float__(self) -> float:
        return float(self._python_scalar())

    def __int__(self) -> int:
        return int(self._python_scalar())

    def __index__(self) -> int:
        if self.array.dtype.kind not in "iu" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        if UNINITIALISED and (kind := _uninitialised_kind(self)) is not None:
            return f"<Uninitialized{kind}>"
        name = _grad_fn_name(self)
        text = format_tensor(self.array, requires_grad=self.requires_grad, grad_fn_name=name)
        return "Parameter containing:\n" + text if is_parameter(self) else text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if is_parameter(self):  # a torch.Tensor subclass: object.__format__
            if spec:
                raise TypeError("unsupported format string passed to Parameter.__format__")
            return repr(self)
        name = _grad_fn_name(self)
        return format_spec(self.array, spec, requires_grad=self.requires_grad, grad_fn_name=name)

    # --- conversions and devices ---------------------------------------------------------
    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False,
           memory_format=None):
        """`.to(dtype)`, `.to("cpu")`, `.to(device, dtype)`, `.to(other)` (its dtype)."""
        for arg in args:
            if isinstance(arg, dtypes.DType):
                dtype = arg
            elif type(arg) is Tensor:
                dtype = arg.dtype
            else:
                devices.check(arg)
        devices.check(device)
        result = self if dtype is None else ops_shape.to_dtype(self, dtype)
        return ops_shape.clone(result) if copy and result is self else result

    @property
    def device(self) -> devices.device:
        return devices.CPU

    is_cuda = False

    def get_device(self) -> int:
        return -1  # torch's answer for a CPU tensor

    def cpu(self) -> "Tensor":
        return self

    def cuda(self, *args, **kwargs) -> "Tensor":
        raise AssertionError(devices.NO_CUDA)

    def float(self):
        return ops_shape.to_dtype(self, dtypes.float32)

    def double(self):
        return ops_shape.to_dtype(self, dtypes.float64)

    def long(self):
        return ops_shape.to_dtype(self, dtypes.int64)

    def int(self):
        return ops_shape.to_dtype(self, dtypes.int32)

    def bool(self):
        return ops_shape.to_dtype(self, dtypes.bool_)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """`t.type()`: the legacy type name ('torch.FloatTensor'); `t.type(d)` is `t.to(d)`
        for a dtype, a legacy class (torch.FloatTensor) or its name."""
        if dtype is None:
            return graph.LEGACY_TYPE_NAMES[self.array.dtype.name]
        if isinstance(dtype, str):
            named = [n for n, legacy in graph.LEGACY_TYPE_NAMES.items() if legacy == dtype]
            if not named:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = dtypes.by_name(named[0])
        dtype = getattr(dtype, "legacy_dtype", dtype)  # torch.FloatTensor and the like
        if not isinstance(dtype, dtypes.DType):
            raise TypeError(f"type() received an invalid combination of arguments - got "
                            f"({type(dtype).__name__})")
        return ops_shape.to_dtype(self, dtype)

    # --- autograd ---------------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        autograd.backward([self], None if gradient is None else [gradient], retain_graph,
                          create_graph, inputs, RULES)

    def detach(self) -> "Tensor":
        # same storage and version counter, but not an autograd view: in place is allowed
        detached = _alias(self.own_array())
        if self._vc is None:
            self._vc = [0]
        detached._vc = self._vc
        if inference.TENSORS:
            inference.inherit(detached, self)
        return detached

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self.requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and self.array.dtype.kind not in "f":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        inference.check_requires_grad(self, requires_grad)
        if requires_grad and not self.requires_grad:
            _became_leaf(self)
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        node = self.grad_fn
        if node is not None and not self._retains_grad:
            self._retains_grad = True
            if type(node) is graph.MultiNode:
                node.retained = node.retained or {}
                node.retained[node.output_nr(self)] = self
            else:
                node.retained = self

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    # what a program may read and write (the sandbox's allow-list for tensors)
    _tg_public = frozenset(name for name in _registry_methods() if not name.startswith("_")) | {
        "shape", "dtype", "grad", "grad_fn", "requires_grad", "is_leaf", "data", "T", "mT",
        "ndim", "size", "dim", "numel", "item", "tolist", "backward", "detach", "detach_",
        "requires_grad_", "retain_grad", "retains_grad", "to", "float", "double", "long", "int",
        "bool", "device", "is_cuda", "get_device", "cpu", "cuda", "numpy", "type", "nelement", "is_contiguous",
        "storage", "untyped_storage", "storage_offset", "data_ptr", "element_size", "resize_",
        "resize",
        "_version"}  # (an int; tutorials show it counting in-place changes)
    _tg_writable = frozenset({"requires_grad", "grad", "data"})
    _tg_type_name = "torch._C.TensorBase"  # as torch's own errors name the type
    _tg_known_as = "torch.Tensor"  # its other PyTorch names are "not supported by autodiff"


NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
    "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. "
    "See github.com/pytorch/pytorch/pull/30531 for more information.")


# The tensors nn.Parameter made: id -> a weak reference (dropped with the tensor)
PARAMETERS: dict = {}


def mark_parameter(t) -> None:
    key = id(t)
    PARAMETERS[key] = weakref.ref(t, lambda _, key=key: PARAMETERS.pop(key, None))


def is_parameter(value) -> bool:
    ref = PARAMETERS.get(id(value))
    return ref is not None and ref() is value


# a lazy module's parameters and buffers before its first call print as torch's
# <UninitializedParameter> / <UninitializedBuffer>: tensor id -> (weak reference, class name)
UNINITIALISED: dict = {}


def mark_uninitialised(t, kind: str) -> None:
    """`kind`: "Parameter" or "Buffer"; `mark_initialised` ends it."""
    key = id(t)
    UNINITIALISED[key] = (weakref.ref(t, lambda _, key=key: UNINITIALISED.pop(key, None)), kind)


def mark_initialised(t) -> None:
    UNINITIALISED.pop(id(t), None)


def uninitialised(t) -> bool:
    """A lazy module's parameter or buffer before its first call (torch keeps these, not a
    detached copy, in a state_dict)."""
    return bool(UNINITIALISED) and _uninitialised_kind(t) is not None


def _uninitialised_kind(t) -> str | None:
    entry = UNINITIALISED.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def _grad_fn_name(t) -> str | None:
    """The grad_fn name a tensor prints with (torch prints <Invalid> for a view whose grad_fn
    it refuses to remake)."""
    try:
        node = t.grad_fn
    except RuntimeError:
        return "Invalid"
    return None if node is None else node.op.name


def _alias(array: np.ndarray) -> Tensor:
    """A tensor over the very same array (no 0-d scalar conversion)."""
    t = Tensor._wrap(array)
    t.array = array
    return t


# --- the rule vocabularies ------------------------------------------------------------------------

def _sum_to_tensor(g, shape):
    """torch's at::sum_to: sum over leading and broadcast dims keeping them, then a view
    only when leading dims went (SumBackward0 to a 0-d shape)."""
    if not shape:
        return ops_reduce.sum(g)
    lead = g.array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and g.array.shape[i + lead] != 1)
    if axes:
        g = ops_reduce.sum(g, axes, True)
    return ops_shape.reshape(g, shape) if lead else g


def _as_array(g):
    return g.array if type(g) is Tensor else g


def _as_tensor(g):
    return g if type(g) is Tensor else Tensor._wrap(g)


def _zeros_tensor(shape, dtype):
    return Tensor._wrap(np.zeros(shape, dtype=dtype))


def _first_grad(g):
    """The first `.grad` written by backward(create_graph=True) is a recorded copy."""
    return graph.record(ops_inplace.COPY_INTO, g.array.copy(),
                        (Tensor._wrap(np.zeros_like(g.array)), g))


ARRAY_RULES = Rules(0, gradient=_as_array, sum_to=sum_to, zeros=np.zeros, ones=np.ones)
TENSOR_RULES = Rules(1, gradient=_as_tensor, sum_to=_sum_to_tensor, zeros=_zeros_tensor,
                     ones=lambda shape, dtype: Tensor._wrap(np.ones(shape, dtype=dtype)),
                     result_of=lambda node, out: Tensor._wrap(out, grad_fn=node),
                     first_grad=_first_grad)
RULES = (ARRAY_RULES, TENSOR_RULES)


def _typed(name: str, dtype) -> type:
    return _TensorType(name, (), {"legacy_dtype": dtype, "__slots__": (), "_tg_public": frozenset()})


# torch's legacy typed tensor classes: calling one makes a tensor of its dtype
LEGACY_TYPES = {name: _typed(name, dtype) for name, dtype in (
    ("FloatTensor", dtypes.float32), ("DoubleTensor", dtypes.float64),
    ("LongTensor", dtypes.int64), ("IntTensor", dtypes.int32), ("BoolTensor", dtypes.bool_))}
