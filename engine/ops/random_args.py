"""How torch's random functions read their arguments, and the errors they give when they
cannot: `f(2, 3)`, `f((2, 3))`, `f(size=[2, 3])`, 0-d integer tensors as ints, and torch's
"received an invalid combination of arguments" listing each accepted form."""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from .operands import check_sizes, is_tensor, type_word
from ..random.generator import Generator

_TAIL = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
         "device = None, bool pin_memory = False, bool requires_grad = False)")
_LIKE_TAIL = "torch.memory_format memory_format = None, " + _TAIL.split(", ", 1)[1]


def _forms(*heads: str, like: bool = False) -> list[str]:
    tail = _LIKE_TAIL if like else _TAIL
    return [f"({head}, *, {gen}{tail}" for head in heads
            for gen in ("torch.Generator generator, ", "")]


_GEN = "*, torch.Generator generator = None"
SIGNATURES = {
    "rand": _forms("tuple of ints size"), "randn": _forms("tuple of ints size"),
    "randint": _forms("int high, tuple of ints size", "int low, int high, tuple of ints size"),
    "randperm": _forms("int n"),
    "rand_like": _forms("Tensor input", like=True), "randn_like": _forms("Tensor input", like=True),
    "randint_like": _forms("Tensor input, int low, int high", "Tensor input, Tensor high",
                           "Tensor input, int high", like=True),
    "normal": [f"(Tensor mean, Tensor std, {_GEN}, Tensor out = None)",
               f"(Tensor mean, float std = 1, {_GEN}, Tensor out = None)",
               f"(float mean, Tensor std, {_GEN}, Tensor out = None)",
               f"(float mean, float std, tuple of ints size, {_GEN}, " + _TAIL],
    "bernoulli": [f"(Tensor input, {_GEN}, Tensor out = None)",
                  f"(Tensor input, float p, {_GEN})"],
    "bernoulli_": [f"(Tensor p, {_GEN})", f"(float p = 0.5, {_GEN})"],
}


def type_name(value) -> str:
    """A value's type as torch's argument errors name it."""
    if type(value) is dtypes.DType:
        return "torch.dtype"
    if type(value) is Generator:
        return "torch.Generator"
    return type(value).__name__


def invalid(fn: str, args, kwargs) -> TypeError:
    """torch's error for arguments that fit none of `fn`'s forms (None keywords left out)."""
    got = [type_name(a) for a in args]
    got += [f"{k}={type_name(v)}" for k, v in kwargs.items() if v is not None]
    forms = "".join(f" * {form}\n" for form in SIGNATURES[fn])
    return TypeError(f"{fn}() received an invalid combination of arguments - got "
                     f"({', '.join(got)}), but expected one of:\n{forms}")


def is_int(value, bool_ok: bool = False) -> bool:
    """An int argument: a Python int or a 0-d integer tensor (never a float)."""
    if type(value) is int or (bool_ok and type(value) is bool):
        return True
    return is_tensor(value) and value.array.ndim == 0 and value.array.dtype.kind in "iu"


def int64(value) -> int:
    """An int argument's value; torch cannot take one outside int64."""
    value = int(value)
    if not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return value


def is_size(value) -> bool:
    return isinstance(value, (tuple, list)) and all(is_int(d, bool_ok=True) for d in value)


def size(fn: str, args: tuple, size_kw) -> tuple:
    """The shape from `f(2, 3)`, `f((2, 3))`, `f([2, 3])` or `f(size=(2, 3))`."""
    if size_kw is not None:
        if args:
            raise invalid(fn, args, {"size": size_kw})
        if not isinstance(size_kw, (tuple, list)):
            raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, not "
                            f"{type_name(size_kw)}")
        dims = size_kw
    elif len(args) == 1 and isinstance(args[0], (tuple, list)):
        dims = args[0]
    elif len(args) == 1 and not is_int(args[0]):
        raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type_name(args[0])}")
    elif not args or any(isinstance(a, (tuple, list)) for a in args):
        raise invalid(fn, args, {})
    else:
        dims = args
    for pos, d in enumerate(dims, 1):
        if not is_int(d, bool_ok=True):
            raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos {pos} "
                            f"with error \"type must be tuple of ints,but got {type_name(d)}\"")
    shape = tuple(int(d) for d in dims)
    check_sizes(shape)
    return shape


def number(fn: str, name: str, value, position: int | None) -> float:
    """A float argument: a Python number or a one-element tensor."""
    if isinstance(value, (bool, int, float)) or (is_tensor(value) and value.array.size == 1):
        return float(value)
    where = f" (position {position})" if position else ""
    raise TypeError(f"{fn}(): argument '{name}'{where} must be float, not {type_name(value)}")


def floating(dtype: np.dtype, kernel: str) -> None:
    """torch's error for a random kernel asked for a dtype it has no version for."""
    if dtype.kind != "f":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{type_word(dtype)}\'')
