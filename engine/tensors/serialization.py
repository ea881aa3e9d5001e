"""torch.save and torch.load, to and from the run's in-memory files (core/files.py).

What a checkpoint may hold is what tutorials save: tensors and Parameters, dicts,
OrderedDicts (a state_dict), lists, tuples, numbers, strings, None. A file holds a JSON
outline of the object and the tensors' bytes after it: nothing is ever unpickled, so a
file's bytes (the program's own, or crafted) can only come back as those values. Loading
makes new tensors, as torch's load does: none shares storage with a saved one, each keeps
requires_grad (and being a Parameter), and a tensor saved twice in one object is one
tensor after loading. The bytes are autodiff's, not torch's zip format: a program that
reads a checkpoint's size or bytes sees other numbers than under torch.
"""

from __future__ import annotations

import io
import json
import re
from collections import OrderedDict

import numpy as np

from ..core import dtypes
from ..core.session import files
from ..core.unsupported import Unsupported
from .parameter import is_parameter, make_parameter
from .tensor import Tensor

MAGIC = b"autodiff checkpoint 1\n"
MAX_DEPTH = 100  # lists in dicts in lists...: JSON's C coder recurses on the C stack


class UnpicklingError(Exception):
    """What torch's load raises for bytes that are no checkpoint (pickle's error)."""

    tg_error_class = "_pickle.UnpicklingError"


# --- save --------------------------------------------------------------------------------------

def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    if pickle_module is not None:
        raise Unsupported("torch.save with a pickle_module")
    blobs: list[bytes] = []
    tensors: dict[int, int] = {}  # id(tensor) -> its index: one tensor saved once
    outline = _outline(obj, blobs, tensors, set(), 0)
    header = json.dumps({"object": outline, "sizes": [len(b) for b in blobs]}).encode()
    data = MAGIC + len(header).to_bytes(8, "little") + header + b"".join(blobs)
    if isinstance(f, (str, bytes)):
        fs = files()
        path = f if isinstance(f, str) else f.decode()
        folder = path.rpartition("/")[0]
        if folder and not fs.isdir(folder):
            raise RuntimeError(f"Parent directory {folder} does not exist.")
        fs.write_bytes(path, data)
    elif isinstance(f, io.IOBase) and not isinstance(f, io.TextIOBase):
        f.write(data)  # (an open binary file of the run's: there are no others)
    else:
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'write'")


def _outline(obj, blobs: list, tensors: dict, holding: set, depth: int):
    kind = type(obj)
    if depth > MAX_DEPTH:
        raise Unsupported(f"torch.save of containers nested more than {MAX_DEPTH} deep")
    if obj is None or kind in (bool, int, float, str):
        return [kind.__name__ if obj is not None else "None", obj]
    if kind is Tensor:
        index = tensors.get(id(obj))
        if index is None:
            array = np.asarray(obj.array)  # (tobytes() is in C order; a 0-d one stays 0-d)
            index = tensors[id(obj)] = len(blobs)
            blobs.append(array.tobytes())
            return ["tensor", index, obj.dtype.name, list(array.shape), bool(obj.requires_grad),
                    is_parameter(obj)]
        return ["same", index]
    if kind in (list, tuple) or isinstance(obj, dict):
        if id(obj) in holding:
            raise ValueError("torch.save of an object that holds itself is not supported by "
                             "autodiff")
        holding.add(id(obj))
        try:
            if isinstance(obj, dict):
                return ["OrderedDict" if isinstance(obj, OrderedDict) else "dict",
                        [[_outline(k, blobs, tensors, holding, depth + 1),
                          _outline(v, blobs, tensors, holding, depth + 1)]
                         for k, v in obj.items()]]
            return [kind.__name__, [_outline(item, blobs, tensors, holding, depth + 1)
                                    for item in obj]]
        finally:
            holding.discard(id(obj))
    shown = getattr(kind, "_tg_path", None) or kind.__name__
    raise Unsupported(f"torch.save of a {shown.rsplit('.', 1)[-1]} object (save tensors, "
                      "state_dict()s, and dicts, lists and numbers of them)")


# --- load --------------------------------------------------------------------------------------

def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    if pickle_module is not None or pickle_load_args:
        raise Unsupported("torch.load with a pickle_module or its arguments")
    if isinstance(f, (str, bytes)):
        data = files().read_bytes(f if isinstance(f, str) else f.decode())
    elif isinstance(f, io.IOBase) and not isinstance(f, io.TextIOBase):
        data = f.read()  # (an open binary file of the run's)
    else:
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'read'")
    _check_location(map_location)
    if not data:
        raise EOFError()
    if not data.startswith(MAGIC):
        raise UnpicklingError(f"invalid load key, {chr(data[0])!r}.")
    try:
        size = int.from_bytes(data[len(MAGIC):len(MAGIC) + 8], "little")
        start = len(MAGIC) + 8
        text = data[start:start + size].decode()
        if _depth(text) > 3 * MAX_DEPTH + 4:  # (crafted bytes: never deeper than save writes)
            raise ValueError("too deep")
        header = json.loads(text)
        offsets, position = [], start + size
        for length in header["sizes"]:
            offsets.append((position, position + length))
            position += length
        return _value(header["object"], data, offsets, {})
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError):
        raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding "
                           "central directory") from None


def _depth(text: str) -> int:
    """How deep a JSON text's brackets nest, outside its strings."""
    brackets = np.frombuffer(re.sub(r'"(?:[^"\\]|\\.)*"', '""', text).encode(), np.uint8)
    if not brackets.size:
        return 0
    steps = (brackets == ord("[")).astype(np.int64) - (brackets == ord("]")) + \
        (brackets == ord("{")) - (brackets == ord("}"))
    return int(np.cumsum(steps).max())


def _check_location(map_location) -> None:
    where = getattr(map_location, "type", map_location)
    if isinstance(where, str) and where.split(":")[0] == "cuda":
        raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                           "torch.cuda.is_available() is False. If you are running on a "
                           "CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")


def _value(outline, data: bytes, offsets: list, made: dict):
    tag = outline[0]
    if tag in ("None", "bool", "int", "float", "str"):
        value = outline[1]
        if tag != "None" and type(value) is not {"bool": bool, "int": int, "float": float,
                                                  "str": str}[tag]:
            raise TypeError(tag)
        return value
    if tag == "tensor":
        index, name, shape, requires_grad, parameter = outline[1:]
        start, end = offsets[index]
        dtype = dtypes.by_name(name)
        array = np.frombuffer(data[start:end], dtype.np).reshape(shape).copy()
        tensor = Tensor._wrap(array)
        if parameter:
            tensor = make_parameter(tensor, requires_grad)
        elif requires_grad:
            tensor.requires_grad = True
        made[index] = tensor
        return tensor
    if tag == "same":
        return made[outline[1]]
    if tag in ("list", "tuple"):
        items = [_value(item, data, offsets, made) for item in outline[1]]
        return items if tag == "list" else tuple(items)
    if tag in ("dict", "OrderedDict"):
        pairs = [(_value(k, data, offsets, made), _value(v, data, offsets, made))
                 for k, v in outline[1]]
        return dict(pairs) if tag == "dict" else OrderedDict(pairs)
    raise ValueError(tag)


FUNCTIONS = {"save": save, "load": load}
