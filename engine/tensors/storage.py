"""A tensor's storage as torch shows it: `t.storage()`, `t.untyped_storage()`,
`t.storage_offset()`, `t.data_ptr()`, `t.resize_()`.

A tensor's memory is its NumPy array; a view's array is a NumPy view of its base's (the
root tensor: views never nest, see graph.nodes.share_storage). The storage of a tensor is
the memory its root's array spans, read as a 1-d array of the dtype from its lowest address;
addresses are NumPy's real buffer addresses, so views into one storage agree with torch's
arithmetic (`data_ptr == storage's data_ptr + storage_offset * element_size`). A root that
resize_ grew or shrank keeps its whole buffer in RESIZED: torch keeps a shrunk storage's
size, and grows it in place.

Where autodiff makes a NumPy view and torch a copy (a root's array over another's memory,
`flip`), or a copy where torch's storage is the same one (`detach` of a resized tensor),
the addresses follow NumPy's memory, not torch's.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..core import devices, dtypes
from ..core.classes import TorchClass
from ..core.session import warn_once

TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")
RESIZE_WARNING = "non-inplace resize is deprecated"

# root tensor id -> (a weak reference to it, the 1-d buffer resize_ gave it)
RESIZED: dict = {}


def _bounds(array: np.ndarray) -> tuple[int, int]:
    """The lowest address an array's elements use and the end of its last one."""
    low = high = array.__array_interface__["data"][0]
    if array.size == 0:
        return low, low
    for n, stride in zip(array.shape, array.strides):
        if stride < 0:
            low += (n - 1) * stride
        else:
            high += (n - 1) * stride
    return low, high + array.itemsize


def _root(t):
    return t if t._base is None else t._base


def _resized_buffer(root) -> np.ndarray | None:
    entry = RESIZED.get(id(root))
    if entry is None or entry[0]() is not root:
        return None
    buffer = entry[1]
    return buffer if _within(root.own_array(), buffer) else None


def storage_array(t) -> np.ndarray:
    """The 1-d array of `t`'s whole storage (writable where the tensor is)."""
    root = _root(t)
    buffer = _resized_buffer(root)
    if buffer is None:
        buffer = _span(root.own_array())
    if root is not t and not _within(t.own_array(), buffer):
        # a view whose base got other memory since (`base.data = ...`, a grown resize_)
        if id(root) in RESIZED:
            from ..core.unsupported import Unsupported  # noqa: PLC0415 - the rare path only

            raise Unsupported("the storage of a view made before its base's resize_ grew it")
        owner = t.own_array()
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        return _span(owner)
    return buffer


def _within(array: np.ndarray, buffer: np.ndarray) -> bool:
    low, high = _bounds(array)
    start, end = _bounds(buffer)
    return start <= low and high <= end or array.size == 0


def _span(array: np.ndarray) -> np.ndarray:
    """The memory `array` spans, as a 1-d array from its lowest address."""
    if array.size == 0:
        return array.reshape(0)
    # the element at the lowest address first, then the span read in memory order
    first = array[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in array.strides)
                  + (Ellipsis,)]  # (a view even of a 0-d array)
    low, high = _bounds(array)
    return np.lib.stride_tricks.as_strided(first, ((high - low) // array.itemsize,),
                                           (array.itemsize,))


def data_ptr(t) -> int:
    """The address of the tensor's first element (0 for a tensor without elements, as torch)."""
    array = t.own_array()
    if array.size == 0 and _resized_buffer(_root(t)) is None and _root(t) is t:
        return 0
    return array.__array_interface__["data"][0]


def storage_offset(t) -> int:
    array = t.own_array()
    base = storage_array(t)
    if base.size == 0 and array.size == 0:
        return 0
    return (array.__array_interface__["data"][0] - base.__array_interface__["data"][0]) \
        // array.itemsize


def _python_value(value, dtype):
    """What `storage[i] = value` stores: a number (or a one-element tensor), as torch takes it."""
    from .tensor import Tensor  # noqa: PLC0415 - (tensor.py imports this module)

    if type(value) is Tensor:
        value = value.item()
    if isinstance(value, str) or not isinstance(value, (bool, int, float)):
        raise TypeError(f"can't assign a {type(value).__name__} to a "
                        f"{_LEGACY.get(dtype, 'torch.Tensor')}")
    return value


_LEGACY = {np.dtype(np.float32): "torch.FloatTensor", np.dtype(np.float64): "torch.DoubleTensor",
           np.dtype(np.int64): "torch.LongTensor", np.dtype(np.int32): "torch.IntTensor",
           np.dtype(np.bool_): "torch.BoolTensor"}


class _Storage(metaclass=TorchClass):
    """What both storages share: a 1-d array over the tensor's memory."""

    __slots__ = ("_array",)

    def __init__(self, *args, **kwargs) -> None:
        # (a program's `type(s)(...)`: torch makes a storage of its own from data)
        from ..core.unsupported import Unsupported  # noqa: PLC0415 - the error path only

        raise Unsupported(f"torch.{type(self).__name__}(...)")

    @classmethod
    def _over(cls, array: np.ndarray) -> "_Storage":
        """The storage over `array` (the engine's only way to make one)."""
        made = object.__new__(cls)
        made._array = array
        return made

    def _index(self, index) -> int:
        if isinstance(index, slice):
            raise RuntimeError(f"slices are only supported in {self._slices}.__getitem__")
        if isinstance(index, bool) or not isinstance(index, int):
            if not hasattr(type(index), "__index__") or isinstance(index, float):
                raise RuntimeError(f"can't index a {type(self)!r} with {type(index)!r}")
            index = index.__index__()
        n = self._array.shape[0]
        if not -n <= index < n:
            raise IndexError(f"index {index} out of range for storage of size {n}")
        return index + n if index < 0 else index

    def __len__(self) -> int:
        return self._array.shape[0]

    def size(self) -> int:
        return self._array.shape[0]

    def data_ptr(self) -> int:
        return self._array.__array_interface__["data"][0] if self._array.size else 0

    def nbytes(self) -> int:
        return self._array.nbytes

    def element_size(self) -> int:
        return self._array.itemsize

    @property
    def device(self) -> devices.device:
        return devices.CPU

    def tolist(self) -> list:
        return self._array.tolist()

    def __getitem__(self, index):
        return self._array[self._index(index)].item()

    def __iter__(self):
        return iter(self._array.tolist())

    def __repr__(self) -> str:
        items = "\n ".join(str(v) for v in self._array.tolist())
        return f" {items}\n[{self._title()} of size {self.size()}]"

    __str__ = __repr__


class TypedStorage(_Storage):
    """`t.storage()`: torch's deprecated TypedStorage, its elements of the tensor's dtype.
    Writing an element writes the tensor (torch's version counter does not move)."""

    __slots__ = ()
    _slices = "UntypedStorage"
    _tg_public = frozenset({"size", "data_ptr", "nbytes", "device", "dtype", "tolist",
                            "element_size"})

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.of_array(self._array)

    def __setitem__(self, index, value) -> None:
        if isinstance(index, slice):
            self._array[index] = _python_value(value, self._array.dtype)
            return
        self._array[self._index(index)] = _python_value(value, self._array.dtype)

    def _title(self) -> str:
        return f"torch.storage.TypedStorage(dtype={self.dtype}, device=cpu)"


class UntypedStorage(_Storage):
    """`t.untyped_storage()`: the same memory as bytes."""

    __slots__ = ()
    _slices = "UntypedStorage"
    _tg_public = frozenset({"size", "data_ptr", "nbytes", "device", "tolist", "element_size"})

    def _title(self) -> str:
        return "torch.storage.UntypedStorage(device=cpu)"


def typed_storage(t) -> TypedStorage:
    warn_once(TYPED_STORAGE_WARNING, stacklevel=3)
    return TypedStorage._over(storage_array(t))


def untyped_storage(t) -> UntypedStorage:
    return UntypedStorage._over(storage_array(t).view(np.uint8))


# --- resize ---------------------------------------------------------------------------------

def _sizes(name: str, sizes) -> tuple:
    from .tensor import Size  # noqa: PLC0415 - (tensor.py imports this module)

    if not sizes:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
        sizes = tuple(sizes[0])
    for d in sizes:
        if isinstance(d, bool) or not hasattr(type(d), "__index__") or isinstance(d, float):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(d).__name__}")
    shape = tuple(d.__index__() for d in sizes)
    if any(d < 0 for d in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    return shape


def resize_(t, *sizes):
    """torch's resize_: the tensor becomes contiguous of `sizes` at its storage offset; its
    storage grows when it must (keeping its elements; new ones are zeros here, torch's are
    uninitialised) and never shrinks. A growth moves the tensor and its base to the new
    memory; other views of the base keep the old (torch's see the new storage)."""
    from ..core.session import check_allocation  # noqa: PLC0415

    shape = _sizes("resize_", sizes)
    if t.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
    offset = storage_offset(t)
    buffer = storage_array(t)
    root = _root(t)
    if offset + numel > buffer.shape[0]:
        check_allocation((offset + numel,), buffer.dtype)
        grown = np.zeros(offset + numel, dtype=buffer.dtype)
        grown[:buffer.shape[0]] = buffer
        if root is not t:  # the base keeps its place in the storage, now the grown one
            base = root.own_array()
            start = (_bounds(base)[0] - buffer.__array_interface__["data"][0]) // base.itemsize
            first = grown[start:]
            root.array = np.lib.stride_tricks.as_strided(first, base.shape, base.strides)
        buffer = grown
    RESIZED[id(root)] = (weakref.ref(root, lambda _, key=id(root): RESIZED.pop(key, None)),
                         buffer)
    t.array = buffer[offset:offset + numel].reshape(shape)
    t._bump_version()
    return t


def resize(t, *sizes):
    """The deprecated out-of-place resize: the same elements as a contiguous view of `sizes`."""
    import warnings  # noqa: PLC0415

    from ..core.unsupported import Unsupported  # noqa: PLC0415
    from ..ops import shape as ops_shape  # noqa: PLC0415

    warnings.warn(RESIZE_WARNING, UserWarning, stacklevel=3)
    shape = _sizes("resize", sizes)
    numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if numel != t.array.size:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({numel} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, t.array.shape))} "
            f"({t.array.size} elements). autograd's resize can only change the shape of a given "
            "tensor, while preserving the number of elements. ")
    if t.requires_grad:
        raise Unsupported("Tensor.resize of a tensor that requires grad (its ResizeBackward)")
    return ops_shape.view(ops_shape.contiguous(t), *shape)
