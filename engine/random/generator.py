"""PyTorch's CPU random number generator, value for value.

A Generator is what torch's CPU generator is: a standard MT19937 stream of 32-bit words,
seeded with the seed's low 32 bits as NumPy's legacy `RandomState` seeds it, plus one
number kept between calls (the second normal of the last Box–Muller pair). Each
distribution method returns, as a flat NumPy array, the values torch's CPU kernel writes,
in the order it writes them, and takes exactly the words that kernel takes, so any
sequence of calls stays in step with torch. Measured against torch 2.13.0:

- uniform float32: one word w, (w & 2**24-1) * 2**-24; float64: one 64-bit draw (two
  words, first << 32 | second) masked to 53 bits, times 2**-53. Bounds: fma(x, to-from,
  from), to-from taken in the tensor's dtype.
- normal, 16+ contiguous values: uniforms first, then Box–Muller per block of 16 (u1 =
  1 - d[j], u2 = d[j+8], r cos and r sin back into j and j+8); when the size is not a
  multiple of 16 the last 16 places are refilled with fresh uniforms and transformed again.
  float32 uses the vectorised kernel of random_math, float64 the C library. Then
  fma(n, std, mean).
- normal, fewer values or not contiguous: per value a float64 normal; a pair takes two
  float64 uniforms u1 (angle) and u2 (radius): r = sqrt(-2 log1p(-u2)), r cos 2πu1 is
  returned and r sin 2πu1 kept for the generator's next normal of this kind. Then
  fma(n, std, mean) in float64, rounded to the dtype.
- integers in [low, high): word % range + low, or a 64-bit draw % range when the range
  is 2**28 or more.
- permutation: Fisher–Yates forward, swapping i with i + word % (n - i).
- bernoulli with one p: float64 uniform < p; with a tensor of p: uniform of p's dtype < p.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.classes import TorchCClass
from ..numerics.fma import fma32, fma64
from .kernels import box_muller_avx, libm

DEFAULT_SEED = 67280421310721  # the seed of a new torch.Generator()
_SEED_RANGE = (-(2 ** 63), 2 ** 64)  # what torch accepts; negative seeds wrap modulo 2**64
_WIDE_RANGE = 2 ** 28  # integer ranges from here on draw 64 bits per value
_LOW_24, _LOW_53 = 2 ** 24 - 1, np.uint64(2 ** 53 - 1)


class Generator(metaclass=TorchCClass):
    """A torch.Generator on the CPU (prints as torch's does)."""

    __slots__ = ("_seed", "_stream", "_next_normal")
    _tg_public = frozenset({"manual_seed", "initial_seed", "seed"})

    def __init__(self, device="cpu"):
        if device != "cpu":
            raise RuntimeError(f"autodiff supports only the CPU generator, not device {device!r}")
        self._seed = DEFAULT_SEED
        self._stream = None  # a NumPy RandomState, made on the first draw (importing
        # numpy.random costs start-up time that most programs never need)
        self._next_normal = None

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"

    def manual_seed(self, seed) -> "Generator":
        if type(seed) is not int:
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not _SEED_RANGE[0] <= seed < _SEED_RANGE[1]:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2 ** 64
        self._stream = None
        self._next_normal = None
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """A fresh nondeterministic 64-bit seed, as torch draws one, set and returned."""
        import secrets  # noqa: PLC0415 - the rare path only

        self.manual_seed(0)  # (the stream and cached normal reset as manual_seed does)
        self._seed = secrets.randbits(64)
        return self._seed

    # --- the raw stream ------------------------------------------------------------------

    def _words(self, n: int) -> np.ndarray:
        """The next n 32-bit words."""
        if self._stream is None:
            self._stream = np.random.RandomState(self._seed & 0xFFFFFFFF)
        return self._stream.randint(0, 2 ** 32, size=n, dtype=np.uint32)

    def _dwords(self, n: int) -> np.ndarray:
        """The next n 64-bit draws: two words each, the first one high."""
        w = self._words(2 * n).astype(np.uint64)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _floats(self, n: int) -> np.ndarray:
        d = (self._words(n) & _LOW_24).astype(np.float32)
        d *= np.float32(2.0 ** -24)
        return d

    def _doubles(self, n: int) -> np.ndarray:
        d = (self._dwords(n) & _LOW_53).astype(np.float64)
        d *= 2.0 ** -53
        return d

    # --- distributions ----------------------------------------------------------------------

    def uniform(self, n: int, dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """n values in [low, high) of NumPy dtype float32 or float64."""
        if np.dtype(dtype) == np.float32:
            x = self._floats(n)
            low, high = np.float32(low), np.float32(high)
            return x if (low, high) == (0, 1) else fma32(x, high - low, low)
        x = self._doubles(n)
        return x if (low, high) == (0, 1) else fma64(x, high - low, low)

    def normal(self, n: int, dtype, mean: float = 0.0, std: float = 1.0,
               contiguous: bool = True) -> np.ndarray:
        """n normal values of NumPy dtype float32 or float64."""
        dtype = np.dtype(dtype)
        if n < 16 or not contiguous:
            return self._normals_one_by_one(n, mean, std).astype(dtype)
        single = dtype == np.float32
        draw = self._floats if single else self._doubles
        transform = box_muller_avx if single else _box_muller_libm
        d = draw(n)
        whole = n - n % 16
        transform(d[:whole])
        if n % 16:
            tail = draw(16)
            transform(tail)
            d[n - 16:] = tail
        return _scale(d, mean, std)

    def _normals_one_by_one(self, n: int, mean: float, std: float) -> np.ndarray:
        out = np.empty(n)
        start = 0
        if n and self._next_normal is not None:
            out[0], self._next_normal, start = self._next_normal, None, 1
        pairs = (n - start + 1) // 2
        if pairs:
            u = self._doubles(2 * pairs).reshape(pairs, 2)
            radius = np.sqrt(-2.0 * libm(math.log1p, -u[:, 1]))
            theta = (2.0 * math.pi) * u[:, 0]
            both = np.empty((pairs, 2))
            np.multiply(radius, libm(math.cos, theta), out=both[:, 0])
            np.multiply(radius, libm(math.sin, theta), out=both[:, 1])
            both = both.reshape(-1)
            out[start:] = both[:n - start]
            if (n - start) % 2:
                self._next_normal = float(both[-1])
        return _scale(out, mean, std)

    def exponential(self, n: int, dtype, lambd: float = 1.0) -> np.ndarray:
        """n values of Exp(lambd), of NumPy dtype float32 or float64: torch's CPU kernel takes
        -1/lambd * log1p(-u) of a double draw u (the C library's log1p), then rounds."""
        return ((-1.0 / lambd) * libm(math.log1p, -self._doubles(n))).astype(dtype)

    def integers(self, n: int, low: int, high: int) -> np.ndarray:
        """n int64 values in [low, high)."""
        span = high - low
        if span >= _WIDE_RANGE:
            offset = self._dwords(n) % np.uint64(span)
            return (offset + np.uint64(low % 2 ** 64)).view(np.int64)  # wraps as int64 does
        return (self._words(n) % np.uint32(span)).astype(np.int64) + low

    def permutation(self, n: int) -> np.ndarray:
        """A random permutation of range(n) (int64)."""
        picks = (self._words(max(n - 1, 0)) % np.arange(n, 1, -1, dtype=np.uint32)).tolist()
        order = list(range(n))
        for i, z in enumerate(picks):
            j = i + z
            order[i], order[j] = order[j], order[i]
        return np.array(order, dtype=np.int64)

    def bernoulli(self, n: int, p: float) -> np.ndarray:
        """n bools, each True with probability p."""
        return self._doubles(n) < p

    def bernoulli_each(self, p: np.ndarray) -> np.ndarray:
        """A bool per element of p (flat, in C order), True with that probability."""
        p = p.ravel()
        draw = self._floats if p.dtype == np.float32 else self._doubles
        return draw(p.size) < p


def _scale(n: np.ndarray, mean: float, std: float) -> np.ndarray:
    """fma(n, std, mean) in n's dtype; for N(0, 1) that is n + 0 (which turns -0 into 0)."""
    if mean == 0 and std == 1 and not math.copysign(1, mean) < 0:
        n += n.dtype.type(0)
        return n
    if n.dtype == np.float32:
        return fma32(n, np.float32(std), np.float32(mean))
    return fma64(n, std, mean)


def _box_muller_libm(d: np.ndarray) -> None:
    """float64 Box–Muller per block of 16, in place, with the C library's log, cos and sin."""
    blocks = d.reshape(-1, 2, 8)
    radius = np.sqrt(-2.0 * libm(math.log, 1.0 - blocks[:, 0]))
    theta = (2.0 * math.pi) * blocks[:, 1]
    blocks[:, 0] = radius * libm(math.cos, theta)
    blocks[:, 1] = radius * libm(math.sin, theta)
