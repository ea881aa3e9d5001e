"""torch's random functions as a program calls them: argument forms, checks, errors, grad_fns.

Each function draws from a Generator (random.py): the `generator=` argument or the run's
default one, which `api.fresh_session()` replaces so that every run starts as a new process.
torch seeds its default generator from the operating system when a process starts; autodiff
starts it from the seed a new torch.Generator() has, so an unseeded run is repeatable
(`autodiff check` and `explain` re-run programs and need the same numbers).
In-place fills walk a strided tensor in memory order, as torch's kernels do.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import dtypes, ops
from . import random_args as parse
from .autograd import GradMode
from .creation import check_sizes, finish_creation
from .limits import check_allocation
from .random import Generator
from .tensor import Tensor, record


class DefaultGenerator:
    """The run's default generator (what torch.manual_seed seeds)."""

    current: Generator | None = None


def default_generator() -> Generator:
    if DefaultGenerator.current is None:
        DefaultGenerator.current = Generator()
    return DefaultGenerator.current


def manual_seed(seed) -> Generator:
    return default_generator().manual_seed(int(seed))  # torch takes int(seed): 2.7 -> 2, True -> 1


def initial_seed() -> int:
    return default_generator().initial_seed()


def _generator(fn: str, generator, args=(), kwargs=None) -> Generator:
    if generator is None:
        return default_generator()
    if type(generator) is not Generator:
        if fn in parse.SIGNATURES:
            raise parse.invalid(fn, args, {**(kwargs or {}), "generator": generator})
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not "
                        f"{parse.type_name(generator)}")
    return generator


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

def rand(*args, size=None, generator=None, dtype=None, requires_grad=False, **unknown) -> Tensor:
    return _uniform_or_normal("rand", args, size, generator, dtype, requires_grad, unknown)


def randn(*args, size=None, generator=None, dtype=None, requires_grad=False, **unknown) -> Tensor:
    return _uniform_or_normal("randn", args, size, generator, dtype, requires_grad, unknown)


def _uniform_or_normal(fn, args, size, generator, dtype, requires_grad, unknown) -> Tensor:
    if unknown:
        raise parse.invalid(fn, args, _shown(size=size, dtype=dtype, **unknown))
    shape = parse.size(fn, args, size)
    gen = _generator(fn, generator, args, _shown(size=size))
    kernel = "check_uniform_bounds" if fn == "rand" else "normal_kernel_cpu"

    def draw(n, dt):
        parse.floating(dt, kernel)
        return gen.uniform(n, dt) if fn == "rand" else gen.normal(n, dt)
    return _new(shape, dtype, requires_grad, draw)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None,
            requires_grad=False, **unknown) -> Tensor:
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
    gen = _generator("randint", generator, args, shown)
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


def randperm(*args, n=None, generator=None, dtype=None, requires_grad=False,
             **unknown) -> Tensor:
    shown = _shown(n=n, dtype=dtype, **unknown)
    if unknown or len(args) + (n is not None) != 1:
        raise parse.invalid("randperm", args, shown)
    n = args[0] if args else n
    if not parse.is_int(n):
        raise TypeError(f"randperm(): argument 'n'{' (position 1)' if args else ''} must be "
                        f"int, not {parse.type_name(n)}")
    n = parse.int64(n)
    check_sizes((n,))
    gen = _generator("randperm", generator, args, shown)
    dtype = dtype or dtypes.int64
    if dtype is dtypes.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    return _new((n,), dtype, requires_grad, lambda count, dt: gen.permutation(n).astype(dt))


def rand_like(input=None, *args, generator=None, dtype=None, requires_grad=False,
              **unknown) -> Tensor:
    _like("rand_like", input, args, _shown(dtype=dtype, **unknown))
    return rand(size=input.array.shape, generator=generator, dtype=dtype or input.dtype,
                requires_grad=requires_grad)


def randn_like(input=None, *args, generator=None, dtype=None, requires_grad=False,
               **unknown) -> Tensor:
    _like("randn_like", input, args, _shown(dtype=dtype, **unknown))
    return randn(size=input.array.shape, generator=generator, dtype=dtype or input.dtype,
                 requires_grad=requires_grad)


def randint_like(input=None, *args, low=None, high=None, generator=None, dtype=None,
                 requires_grad=False, **unknown) -> Tensor:
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


# --- normal ----------------------------------------------------------------------------------

NORMAL_MEAN = ops.Op("NormalBackward1", lambda g, out, mean: ops._zeros_like(g))
NORMAL_STD = ops.Op("NormalBackward2", lambda g, out, std: ops._zeros_like(g))
NORMAL_BOTH = ops.Op("NormalBackward3", lambda g, out, mean, std: ops._zeros_like(g),
                     lambda g, out, mean, std: ops._zeros_like(g))
_MISSING = object()


def normal(*args, mean=_MISSING, std=_MISSING, size=None, generator=None, dtype=None,
           requires_grad=False, **unknown) -> Tensor:
    """torch.normal(mean, std[, size]): either may be a tensor (then the other is a number
    or a tensor and there is no size), or both numbers with a size."""
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
    gen = _generator("normal", generator, args, shown)
    if not tensors:
        positional_int_size = len(args) == 3 and not isinstance(size, (tuple, list))
        if std is _MISSING or size is None or positional_int_size:
            raise parse.invalid("normal", args, shown)
        mean = parse.number("normal", "mean", mean, 1)
        std = parse.number("normal", "std", std, 2)
        _check_std(std)
        shape = parse.size("normal", (), size)

        def draw(n, dt):
            parse.floating(dt, "normal_kernel_cpu")
            return gen.normal(n, dt, mean, std)
        return _new(shape, dtype, requires_grad, draw)
    return _normal_of_tensors(gen, mean, 1.0 if std is _MISSING else std)


def _normal_of_tensors(gen: Generator, mean, std) -> Tensor:
    """torch's way: N(0, 1) (or N(0, std) for a number std) drawn in the result's dtype (the
    tensor argument's, the mean's when both are), times std, plus mean, each step rounded."""
    if type(std) is Tensor:
        if std.array.size and not np.min(std.array) >= 0:
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std(parse.number("normal", "std", std, 2))
    out_dtype = (mean if type(mean) is Tensor else std).array.dtype
    parse.floating(out_dtype, "normal_kernel_cpu")
    if type(mean) is Tensor and type(std) is Tensor:
        ops.check_broadcast(mean.array.shape, std.array.shape, out_dtype)
        shape = np.broadcast_shapes(mean.array.shape, std.array.shape)
    else:
        shape = (mean if type(mean) is Tensor else std).array.shape
    check_allocation(shape, out_dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if type(std) is Tensor:
        out = gen.normal(count, out_dtype).reshape(shape)
        np.multiply(out, std.array, out=out, casting="unsafe")
    else:
        out = gen.normal(count, out_dtype, 0.0, float(std)).reshape(shape)
    np.add(out, mean.array if type(mean) is Tensor else out_dtype.type(mean), out=out,
           casting="unsafe")
    if type(mean) is Tensor and type(std) is Tensor:
        return record(NORMAL_BOTH, out, (mean, std))
    return record(NORMAL_MEAN, out, (mean,)) if type(mean) is Tensor else \
        record(NORMAL_STD, out, (std,))


def _check_std(std: float) -> None:
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


# --- in place --------------------------------------------------------------------------------

UNIFORM = ops.Op("UniformBackward0", lambda g, out, a: ops._zeros_like(g))
NORMAL = ops.Op("NormalBackward0", lambda g, out, a: ops._zeros_like(g))
BERNOULLI_EACH = ops.Op("BernoulliBackward1", lambda g, out, a: ops._zeros_like(g))
BERNOULLI_ONE_P = ops.Op("BernoulliBackward2", lambda g, out, a: ops._zeros_like(g))


def _fill_(t: Tensor, draw, op) -> Tensor:
    """Overwrite t with draw(count, contiguous, order): values for its elements in memory
    order, as torch's kernels walk a strided tensor (order: its axes, largest stride first)."""
    target = t.storage()
    if target.size and any(s == 0 and n > 1 for s, n in zip(target.strides, target.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    order = sorted(range(target.ndim), key=lambda d: -abs(target.strides[d]))
    walk = target.transpose(order)
    walk[...] = draw(target.size, target.flags.c_contiguous, order).reshape(walk.shape)
    t._bump_version()
    if GradMode.enabled and t.requires_grad:
        t.grad_fn = record(op, t.array, (t,)).grad_fn
    return t


def uniform_(self: Tensor, from_=0.0, to=1.0, generator=None) -> Tensor:
    low, high = parse.number("uniform_", "from", from_, 1), parse.number("uniform_", "to", to, 2)
    gen = _generator("uniform_", generator)
    ops.check_inplace(self)
    dt = self.array.dtype
    parse.floating(dt, "check_uniform_bounds")
    word = _FLOAT_DIGITS[dt][1]
    limit = float(np.finfo(dt).max)
    for name, value in (("from", low), ("to", high)):
        if not -limit <= value <= limit:
            raise RuntimeError(f"{name} is out of bounds for {word}")
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={low:g} > to={high:g}")
    if not high - low <= limit:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{word.title()}>"
                           f"::max(), but found to={high:g} and from={low:g} which result in "
                           "to-from to exceed the limit")
    return _fill_(self, lambda n, contiguous, order: gen.uniform(n, dt, low, high), UNIFORM)


def normal_(self: Tensor, mean=0.0, std=1.0, generator=None) -> Tensor:
    mean, std = parse.number("normal_", "mean", mean, 1), parse.number("normal_", "std", std, 2)
    gen = _generator("normal_", generator)
    ops.check_inplace(self)
    _check_std(std)
    dt = self.array.dtype
    parse.floating(dt, "normal_kernel_cpu")
    return _fill_(self, lambda n, contiguous, order: gen.normal(n, dt, mean, std, contiguous),
                  NORMAL)


def bernoulli_(self: Tensor, p=0.5, generator=None) -> Tensor:
    gen = _generator("bernoulli_", generator)
    if type(p) is not Tensor and not isinstance(p, (bool, int, float)):
        raise parse.invalid("bernoulli_", (p,), {})
    ops.check_inplace(self)
    if type(p) is Tensor:
        probabilities = _probabilities(p, "bernoulli_tensor_cpu_p_")
        expanded = ops.expand(Tensor._wrap(probabilities), *self.array.shape).array  # torch's error

        def each(n, contiguous, order):
            return gen.bernoulli_each(expanded.transpose(order))
        return _fill_(self, each, BERNOULLI_EACH)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return _fill_(self, lambda n, contiguous, order: gen.bernoulli(n, p), BERNOULLI_ONE_P)


def _probabilities(p: Tensor, kernel: str) -> np.ndarray:
    probabilities = np.asarray(p.array)
    parse.floating(probabilities.dtype, kernel)
    if probabilities.size and not (np.min(probabilities) >= 0 and np.max(probabilities) <= 1):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    return probabilities


BERNOULLI = ops.Op("BernoulliBackward0", lambda g, out, a: ops._zeros_like(g))


def bernoulli(input=None, p=None, generator=None) -> Tensor:
    """torch.bernoulli(probabilities), or with p: a tensor like input, each 1 with chance p."""
    if type(input) is not Tensor:
        raise parse.invalid("bernoulli", () if input is None else (input,), _shown(p=p))
    gen = _generator("bernoulli", generator)
    if p is not None:
        out = Tensor._wrap(np.empty_like(np.asarray(input.array)))
        return bernoulli_(out, p, generator=gen)
    probabilities = _probabilities(input, "bernoulli_tensor_cpu_p_")
    drawn = gen.bernoulli_each(probabilities).reshape(probabilities.shape)
    return record(BERNOULLI, drawn.astype(probabilities.dtype), (input,))


def dropout(input: Tensor, p=0.5, training=True, inplace=False) -> Tensor:
    """torch.nn.functional.dropout: zero each element with chance p, scale the rest by
    1/(1-p); the mask is torch's bernoulli_(1 - p) draw."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.array.size == 0:
        return input
    if p == 1:
        noise = Tensor._wrap(np.zeros((), input.array.dtype))
    else:
        noise = Tensor._wrap(np.empty_like(np.asarray(input.array)))
        bernoulli_(noise, 1 - p)
        np.divide(noise.array, noise.array.dtype.type(1 - p), out=noise.array)
    if inplace:
        return ops.inplace(input, ops.mul(input, noise))
    return ops.mul(input, noise)
