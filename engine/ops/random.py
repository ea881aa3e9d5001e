"""Random draws into tensors: uniform_, normal_, bernoulli_, bernoulli, dropout, and
torch.normal of tensors; the default generator of the run (PyTorch's CPU generator, bit for
bit: random/generator.py).

Each draws from a Generator: the `generator=` argument or the run's default one, kept in
the run's session, so every run starts as a new process would. torch seeds its default
generator from the operating system when a process starts; autodiff starts it from the
seed a new torch.Generator() has, so an unseeded run is repeatable (`autodiff check` and
`explain` re-run programs and need the same numbers). In-place fills walk a strided tensor
in memory order, as torch's kernels do. The gradient of a random draw is zero.
"""

from __future__ import annotations

import numpy as np

from . import random_args as parse
from ..graph.nodes import record
from .operands import check_broadcast, is_tensor, type_word
from .arith import mul
from .division import record_not_implemented
from .inplace import check_inplace, check_internal_overlap, recorded_write
from .inplace import inplace as write_in_place
from .shape import expand
from ..random.generator import Generator
from .registry import OWN_IN_PLACE, Check, Family, any_, no_in_place
from ..core.session import check_allocation, current

family = Family("Random draws", inplace=no_in_place("dropout's in-place form is its "
                                                    "inplace=True argument"))
op, exposes, word = family.op, family.exposes, family.word

_FLOAT_WORDS = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def default_generator() -> Generator:
    """The run's default generator (what torch.manual_seed seeds), made on first use."""
    session = current()
    if session.generator is None:
        session.generator = Generator()
    return session.generator


def generator_for(fn: str, generator, args=(), kwargs=None) -> Generator:
    if generator is None:
        return default_generator()
    if type(generator) is not Generator:
        if fn in parse.SIGNATURES:
            raise parse.invalid(fn, args, {**(kwargs or {}), "generator": generator})
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not "
                        f"{parse.type_name(generator)}")
    return generator


def check_std(std: float) -> None:
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _seeded() -> Generator:
    """A generator at a fixed state: gradient checks call an op many times and need the
    same draws each time."""
    return Generator().manual_seed(0)


def _zero_rule(F, g, out, *inputs, **params):
    return F.zeros_like(g)


def _drawn(name, entry_check, explain="a random draw: its values do not depend on the input"):
    return op(name, _zero_rule, explain=explain, formulas=("0",), check=entry_check)


# --- normal with tensor arguments -------------------------------------------------------------

# torch defines a draw's gradient as zero (a sample's true one would be 1 for its mean and z
# for its std): the checks multiply the draw by 0, so central differences see the same
NORMAL_MEAN = _drawn("NormalBackward1",
                     Check(lambda m: normal_of_tensors(_seeded(), m, 1.0) * 0 + m, (any_(3),)))
NORMAL_STD = _drawn("NormalBackward2",
                    Check(lambda s: normal_of_tensors(_seeded(), 0.0, s.abs()) * 0 + s, (any_(3),)))
NORMAL_BOTH = op("NormalBackward3", _zero_rule, _zero_rule,
                 explain="a random draw: its values do not depend on mean and std",
                 formulas=("0", "0"),
                 check=Check(lambda m, s: normal_of_tensors(_seeded(), m, s.abs()) * 0 + m * s,
                             (any_(3), any_(3))))


@exposes(NORMAL_MEAN, NORMAL_STD, NORMAL_BOTH)
def normal_of_tensors(gen, mean, std):
    """torch's way: N(0, 1) (or N(0, std) for a number std) drawn in the result's dtype (the
    tensor argument's, the mean's when both are), times std, plus mean, each step rounded."""
    gen = gen or default_generator()
    if is_tensor(std):
        if std.array.size and not np.min(std.array) >= 0:
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        check_std(parse.number("normal", "std", std, 2))
    out_dtype = (mean if is_tensor(mean) else std).array.dtype
    parse.floating(out_dtype, "normal_kernel_cpu")
    if is_tensor(mean) and is_tensor(std):
        check_broadcast(mean.array.shape, std.array.shape, out_dtype)
        shape = np.broadcast_shapes(mean.array.shape, std.array.shape)
    else:
        shape = (mean if is_tensor(mean) else std).array.shape
    check_allocation(shape, out_dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if is_tensor(std):
        out = gen.normal(count, out_dtype).reshape(shape)
        np.multiply(out, std.array, out=out, casting="unsafe")
    else:
        out = gen.normal(count, out_dtype, 0.0, float(std)).reshape(shape)
    np.add(out, mean.array if is_tensor(mean) else out_dtype.type(mean), out=out,
           casting="unsafe")
    if is_tensor(mean) and is_tensor(std):
        return record(NORMAL_BOTH, out, (mean, std))
    return record(NORMAL_MEAN, out, (mean,)) if is_tensor(mean) else \
        record(NORMAL_STD, out, (std,))


# --- in place --------------------------------------------------------------------------------

UNIFORM = _drawn("UniformBackward0", Check(lambda a: (a * 1).uniform_(generator=_seeded()) * a, (any_(3),)),
                 "uniform_ overwrites a with random values: nothing flows back")
NORMAL = _drawn("NormalBackward0", Check(lambda a: (a * 1).normal_(generator=_seeded()) * a, (any_(3),)),
                "normal_ overwrites a with random values: nothing flows back")
BERNOULLI_EACH = _drawn("BernoulliBackward1",
                        Check(lambda a: (a * 1).bernoulli_(a.sigmoid().detach(), generator=_seeded()) * a, (any_(3),)),
                        "bernoulli_ overwrites a with random 0s and 1s: nothing flows back")
BERNOULLI_ONE_P = _drawn("BernoulliBackward2", Check(lambda a: (a * 1).bernoulli_(0.5, generator=_seeded()) * a,
                                                     (any_(3),)),
                         "bernoulli_ overwrites a with random 0s and 1s: nothing flows back")


def _fill_(t, draw, entry):
    """Overwrite t with draw(count, contiguous, order): values for its elements in memory
    order, as torch's kernels walk a strided tensor (order: its axes, largest stride first)."""
    check_internal_overlap(t)  # (torch's kernel checks it, after the arguments)
    target = t.own_array()
    order = sorted(range(target.ndim), key=lambda d: -abs(target.strides[d]))
    walk = target.transpose(order)
    walk[...] = draw(target.size, target.flags.c_contiguous, order).reshape(walk.shape)
    return recorded_write(t, entry, (t,))


@exposes(UNIFORM, methods=("uniform_",), params=("input", "from", "to"))
def uniform_(self, from_=0.0, to=1.0, generator=None):
    low, high = parse.number("uniform_", "from", from_, 1), parse.number("uniform_", "to", to, 2)
    gen = generator_for("uniform_", generator)
    check_inplace(self)
    dt = self.array.dtype
    parse.floating(dt, "check_uniform_bounds")
    word = _FLOAT_WORDS[dt]
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


@exposes(NORMAL, methods=("normal_",))
def normal_(self, mean=0.0, std=1.0, generator=None):
    mean, std = parse.number("normal_", "mean", mean, 1), parse.number("normal_", "std", std, 2)
    gen = generator_for("normal_", generator)
    check_inplace(self)
    check_std(std)
    dt = self.array.dtype
    parse.floating(dt, "normal_kernel_cpu")
    return _fill_(self, lambda n, contiguous, order: gen.normal(n, dt, mean, std, contiguous),
                  NORMAL)


@exposes(BERNOULLI_EACH, BERNOULLI_ONE_P, methods=("bernoulli_",))
def bernoulli_(self, p=0.5, generator=None):
    gen = generator_for("bernoulli_", generator)
    if not is_tensor(p) and not isinstance(p, (bool, int, float)):
        raise parse.invalid("bernoulli_", (p,), {})
    check_inplace(self)
    if is_tensor(p):
        probabilities = _probabilities(p, "bernoulli_tensor_cpu_p_")
        expanded = expand(type(self)._wrap(probabilities), *self.array.shape).array  # torch's error

        def each(n, contiguous, order):
            return gen.bernoulli_each(expanded.transpose(order))
        return _fill_(self, each, BERNOULLI_EACH)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return _fill_(self, lambda n, contiguous, order: gen.bernoulli(n, p), BERNOULLI_ONE_P)


EXPONENTIAL = _drawn("ExponentialBackward0",
                     Check(lambda a: (a * 1).exponential_(generator=_seeded()) * a, (any_(3),)),
                     "exponential_ overwrites a with random values: nothing flows back")


@exposes(EXPONENTIAL, methods=("exponential_",))
def exponential_(self, lambd=1.0, *, generator=None):
    lambd = parse.number("exponential_", "lambd", lambd, 1)
    gen = generator_for("exponential_", generator)
    check_inplace(self)
    dt = self.array.dtype
    if dt.kind != "f":
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {type_word(dt)}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill_(self, lambda n, contiguous, order: gen.exponential(n, dt, lambd), EXPONENTIAL)


@exposes(functions=("multinomial",), methods=("multinomial",))
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn with the rows of `input` as weights, as torch's CPU kernels draw
    them: without replacement (or one sample) the largest input / Exp(1) (the Gumbel trick);
    with replacement a search of each row's normalised running sum for a double draw."""
    gen = generator_for("multinomial", generator)
    p = np.asarray(input.array)
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if p.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{type_word(p.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = p.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if categories > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = p.reshape(-1, categories)
    if not replacement or num_samples == 1:
        if rows.size and not (np.max(rows) < np.inf and np.min(rows) >= 0):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(axis=1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        keys = rows / gen.exponential(rows.size, p.dtype).reshape(rows.shape)
        picks = (np.argmax(keys, axis=1)[:, None] if num_samples == 1
                 else np.argsort(-keys, axis=1, kind="stable")[:, :num_samples])
    else:
        picks = np.empty((rows.shape[0], num_samples), np.int64)
        for i, row in enumerate(rows):
            bad = ~((row >= 0) & np.isfinite(row))
            if bad.any():
                first = row[np.argmax(bad)]
                raise RuntimeError("invalid multinomial distribution (encountering probability "
                                   + ("entry = infinity or NaN)" if first >= 0 else "entry < 0)"))
            running = np.cumsum(row)  # sequential, in the input's dtype, as the kernel adds
            if not running[-1] > 0:
                raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
            running /= running[-1]
            running[-1] = 1
            draws = gen.uniform(num_samples, np.float64)
            picks[i] = np.searchsorted(running.astype(np.float64), draws, side="left")
    return type(input)._wrap(picks.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


def _probabilities(p, kernel: str) -> np.ndarray:
    probabilities = np.asarray(p.array)
    parse.floating(probabilities.dtype, kernel)
    if probabilities.size and not (np.min(probabilities) >= 0 and np.max(probabilities) <= 1):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    return probabilities


BERNOULLI = _drawn("BernoulliBackward0", Check(lambda a: a.sigmoid().bernoulli(generator=_seeded()) * a, (any_(3),)),
                   "bernoulli draws 0s and 1s with the input's probabilities: no gradient")


@exposes(BERNOULLI, functions=("bernoulli",), methods=("bernoulli",),
         inplace=OWN_IN_PLACE)  # (bernoulli_ above: it draws with a p of its own)
def bernoulli(input=None, p=None, generator=None):
    """torch.bernoulli(probabilities), or with p: a tensor like input, each 1 with chance p."""
    if not is_tensor(input):
        raise parse.invalid("bernoulli", () if input is None else (input,),
                            {} if p is None else {"p": p})
    gen = generator_for("bernoulli", generator)
    if p is not None:
        out = type(input)._wrap(np.empty_like(np.asarray(input.array)))
        drawn = bernoulli_(out, p, generator=gen).array
        return record_not_implemented("bernoulli", input, None, drawn)  # (no derivative in torch)
    probabilities = _probabilities(input, "bernoulli_tensor_cpu_p_")
    drawn = gen.bernoulli_each(probabilities).reshape(probabilities.shape)
    return record(BERNOULLI, drawn.astype(probabilities.dtype), (input,))


@exposes(nn=("dropout",))
def dropout(input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout: zero each element with chance p, scale the rest by
    1/(1-p); the mask is torch's bernoulli_(1 - p) draw."""
    if p < 0.0 or p > 1.0:  # (written as torch's F.dropout: a str p fails this comparison alike)
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.array.size == 0:
        return input
    if p == 1:
        noise = type(input)._wrap(np.zeros((), input.array.dtype))
    else:
        noise = type(input)._wrap(np.empty_like(np.asarray(input.array)))
        bernoulli_(noise, 1 - p)
        if noise.array.dtype.kind != "f":  # (torch's noise.div_(1 - p) into the input's dtype)
            raise RuntimeError("result type Float can't be cast to the desired output type "
                               f"{type_word(noise.array.dtype)}")
        np.divide(noise.array, noise.array.dtype.type(1 - p), out=noise.array)
    if inplace:
        return write_in_place(input, mul(input, noise))
    return mul(input, noise)
