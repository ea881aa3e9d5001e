"""torch's random creation functions as a program calls them: rand, randn, randint,
randperm, normal, the *_like forms, manual_seed, initial_seed (argument forms, checks and
errors as torch's). The draws themselves are random/generator.py's; the run's default generator and
the in-place fills are ops/random.py's."""

from __future__ import annotations

import warnings

import numpy as np

from ..core import devices, dtypes
from ..ops import random_args as parse
from .creation import finish_creation
from ..ops.operands import check_sizes
from ..ops.random import check_std, default_generator, generator_for, normal_of_tensors
from ..core.session import check_allocation
from .tensor import Tensor


def manual_seed(seed):
    return default_generator().manual_seed(int(seed))  # torch takes int(seed): 2.7 -> 2, True -> 1


def initial_seed() -> int:
    return default_generator().initial_seed()


def seed() -> int:
    return default_generator().seed()


def _new(shape: tuple, dtype, requires_grad: bool, draw) -> Tensor:
    """A new tensor of `shape` filled by draw(count, numpy dtype)."""
    dt = (dtype or dtypes.DEFAULT_FLOAT).np
    check_allocation(shape, dt)
    count = int(np.prod(shape, dtype=np.int64))
    return finish_creation(draw(count, dt).reshape(shape), None, requires_grad)


def _shown(**kwargs) -> dict:
    """Keyword arguments as torch's errors list them (the ones given)."""
    return {k: v for k, v in kwargs.items() if v is not None and v is not False}


# --- creation --------------------------------------------------------------------------------

def rand(*args, size=None, generator=None, dtype=None, requires_grad=False, device=None,
         **unknown) -> Tensor:
    devices.check(device)
    return _uniform_or_normal("rand", args, size, generator, dtype, requires_grad, unknown)


def randn(*args, size=None, generator=None, dtype=None, requires_grad=False, device=None,
          **unknown) -> Tensor:
    devices.check(device)
    return _uniform_or_normal("randn", args, size, generator, dtype, requires_grad, unknown)


def _uniform_or_normal(fn, args, size, generator, dtype, requires_grad, unknown) -> Tensor:
    if unknown:
        raise parse.invalid(fn, args, _shown(size=size, dtype=dtype, **unknown))
    shape = parse.size(fn, args, size)
    gen = generator_for(fn, generator, args, _shown(size=size))
    kernel = "check_uniform_bounds" if fn == "rand" else "normal_kernel_cpu"

    def draw(n, dt):
        parse.floating(dt, kernel)
        return gen.uniform(n, dt) if fn == "rand" else gen.normal(n, dt)
    return _new(shape, dtype, requires_grad, draw)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None,
            requires_grad=False, device=None, **unknown) -> Tensor:
    devices.check(device)
    given = {"low": low, "high": high, "size": size}
    shown = _shown(**given, dtype=dtype, **unknown)
    count = len(args) + sum(v is not None for v in given.values())
    names = ("high", "size") if count == 2 and low is None else ("low", "high", "size")
    if unknown or len(args) > len(names) or any(given[n] is not None for n in names[:len(args)]):
        raise parse.invalid("randint", args, shown)
    given.update(zip(names, args))
    low, high, size = given["low"], given["high"], given["size"]
    low = 0 if low is None else low
    if high is None or size is None or not parse.is_int(low) or not parse.is_int(high):
        raise parse.invalid("randint", args, shown)
    if not isinstance(size, (tuple, list)) and len(args) != 3:
        where = " (position 2)" if len(args) == 2 else ""
        raise TypeError(f"randint(): argument 'size'{where} must be tuple of ints, not "
                        f"{parse.type_name(size)}")
    if not parse.is_size(size):
        raise parse.invalid("randint", args, shown)
    shape = parse.size("randint", (), size)
    gen = generator_for("randint", generator, args, shown)
    dtype = dtype or dtypes.int64
    low, high = _integer_bounds(parse.int64(low), parse.int64(high), dtype.np)
    return _new(shape, dtype, requires_grad, lambda n, dt: gen.integers(n, low, high).astype(dt))


_INT_BOUNDS = {np.dtype(np.int32): (-2 ** 31, 2 ** 31 - 1), np.dtype(np.bool_): (0, 1)}
_FLOAT_DIGITS = {np.dtype(np.float32): (24, "float"), np.dtype(np.float64): (53, "double")}


def _integer_bounds(low: int, high: int, dt: np.dtype) -> tuple[int, int]:
    """torch's checks of [low, high) for the dtype, and its adjustment for floating dtypes:
    a bound the dtype cannot hold moves inwards to one it can."""
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if dt in _FLOAT_DIGITS:
        digits, word = _FLOAT_DIGITS[dt]
        as_float = dt.type
        if int(as_float(low + 1)) < low:
            low = int(as_float(low + 1)) + (1 << (abs(low + 1).bit_length() - 1 - digits + 1))
        if int(as_float(high - 1)) >= high:
            high = int(as_float(high - 1)) - (1 << (abs(high - 1).bit_length() - 1 - digits + 1))
        if not low < high:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' "
                               f"casted to dtype, but got from={low} >= to={high}")
        for name, value in (("from", low), ("to - 1", high - 1)):
            if not -(2 ** digits) <= value <= 2 ** digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {word} can support discrete uniform "
                              "distribution only within this range. This warning will become an "
                              "error in version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=3)
    elif dt in _INT_BOUNDS:
        lo, hi = _INT_BOUNDS[dt]
        word = "bool" if dt == np.bool_ else "int"
        for name, value in (("from", low), ("to - 1", high - 1)):
            if not lo <= value <= hi:
                raise RuntimeError(f"{name} is out of bounds for {word}")
    return low, high


def randperm(*args, n=None, generator=None, dtype=None, requires_grad=False, device=None,
             **unknown) -> Tensor:
    devices.check(device)
    shown = _shown(n=n, dtype=dtype, **unknown)
    if unknown or len(args) + (n is not None) != 1:
        raise parse.invalid("randperm", args, shown)
    n = args[0] if args else n
    if not parse.is_int(n):
        raise TypeError(f"randperm(): argument 'n'{' (position 1)' if args else ''} must be "
                        f"int, not {parse.type_name(n)}")
    n = parse.int64(n)
    check_sizes((n,))
    gen = generator_for("randperm", generator, args, shown)
    dtype = dtype or dtypes.int64
    if dtype is dtypes.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    return _new((n,), dtype, requires_grad, lambda count, dt: gen.permutation(n).astype(dt))


def rand_like(input=None, *args, generator=None, dtype=None, requires_grad=False, device=None,
              **unknown) -> Tensor:
    devices.check(device)
    _like("rand_like", input, args, _shown(dtype=dtype, **unknown))
    return rand(size=input.array.shape, generator=generator, dtype=dtype or input.dtype,
                requires_grad=requires_grad)


def randn_like(input=None, *args, generator=None, dtype=None, requires_grad=False, device=None,
               **unknown) -> Tensor:
    devices.check(device)
    _like("randn_like", input, args, _shown(dtype=dtype, **unknown))
    return randn(size=input.array.shape, generator=generator, dtype=dtype or input.dtype,
                 requires_grad=requires_grad)


def randint_like(input=None, *args, low=None, high=None, generator=None, dtype=None,
                 requires_grad=False, device=None, **unknown) -> Tensor:
    devices.check(device)
    shown = _shown(low=low, high=high, dtype=dtype, **unknown)
    bounds = [low, high] if low is not None else [high] if high is not None else []
    if type(input) is not Tensor or unknown or len(args) + len(bounds) not in (1, 2) \
            or (high is not None and args) or (low is not None and len(args) > 1):
        raise parse.invalid("randint_like", (input, *args), shown)
    if low is not None:
        bounds = [low, *args] if high is None else bounds
    else:
        bounds = list(args) + bounds
    if not all(parse.is_int(b) for b in bounds):
        raise parse.invalid("randint_like", (input, *args), shown)
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    return randint(low, high, tuple(input.array.shape), generator=generator,
                   dtype=dtype or input.dtype, requires_grad=requires_grad)


def _like(fn: str, input, args, shown) -> None:
    if type(input) is not Tensor or args or shown.keys() - {"dtype"}:
        raise parse.invalid(fn, (input, *args) if input is not None else args, shown)


_MISSING = object()


def normal(*args, mean=_MISSING, std=_MISSING, size=None, generator=None, dtype=None,
           requires_grad=False, device=None, **unknown) -> Tensor:
    """torch.normal(mean, std[, size]): either may be a tensor (then the other is a number
    or a tensor and there is no size), or both numbers with a size."""
    devices.check(device)
    given = {"mean": mean, "std": std, "size": size}
    shown = _shown(**{k: v for k, v in given.items() if v is not _MISSING}, dtype=dtype,
                   requires_grad=requires_grad, **unknown)
    names = ("mean", "std", "size")
    if unknown or len(args) > 3 or any(given[n] not in (_MISSING, None) for n in names[:len(args)]):
        raise parse.invalid("normal", args, shown)
    given.update(zip(names, args))
    mean, std, size = given["mean"], given["std"], given["size"]
    tensors = type(mean) is Tensor or type(std) is Tensor
    if mean is _MISSING or (tensors and (size is not None or dtype is not None or requires_grad)):
        raise parse.invalid("normal", args, shown)
    gen = generator_for("normal", generator, args, shown)
    if not tensors:
        positional_int_size = len(args) == 3 and not isinstance(size, (tuple, list))
        if std is _MISSING or size is None or positional_int_size:
            raise parse.invalid("normal", args, shown)
        mean = parse.number("normal", "mean", mean, 1)
        std = parse.number("normal", "std", std, 2)
        check_std(std)
        shape = parse.size("normal", (), size)

        def draw(n, dt):
            parse.floating(dt, "normal_kernel_cpu")
            return gen.normal(n, dt, mean, std)
        return _new(shape, dtype, requires_grad, draw)
    return normal_of_tensors(gen, mean, 1.0 if std is _MISSING else std)
