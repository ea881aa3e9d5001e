"""Fused multiply-add, a*b + c rounded once, as the C compiler makes PyTorch's CPU kernels
compute it (NumPy's a*b + c rounds twice and can differ in the last bit).

float32: for float32 a and c and a b of at most 29 significant bits (a float32, or an
integer below 2**29) the product is exact in double; the double sum is rounded to odd,
after which rounding it to float32 is the one rounding (no double rounding).
float64: the product is split exactly (Dekker) and the three-term sum rounded once
(Boldo and Melquiond's emulation, with the inner sum rounded to odd).
"""

from __future__ import annotations

import numpy as np

_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's constant for splitting a double in halves
_CHUNK = 65536  # values per pass: the float64 temporaries stay in cache (several times faster)


def _two_sum(a, b):
    """s, t with s = fl(a+b) and s + t == a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    """p, e with p = fl(a*b) and p + e == a*b exactly (Dekker)."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    a_hi, b_hi = ca - (ca - a), cb - (cb - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _round_to_odd_sum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x + y in double, rounded to odd: an inexact result keeps an odd last bit."""
    s, err = _two_sum(x, y)
    s = np.array(s, dtype=np.float64)
    bits = s.view(np.int64)
    inexact_even = (err != 0) & ((bits & 1) == 0) & np.isfinite(s)
    # step one unit towards the exact sum: away from zero when err has s's sign
    step = 1 - 2 * (np.signbit(err) != np.signbit(s)).astype(np.int64)
    bits += inexact_even * step
    return s


def _by_chunks(fma, a, b, c, dtype) -> np.ndarray | None:
    """fma over slices of a large broadcast result (None when it is small)."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
    size = int(np.prod(shape, dtype=np.int64))
    if size <= _CHUNK:
        return None
    flat = [np.broadcast_to(v, shape).reshape(-1) if np.ndim(v) else v for v in (a, b, c)]
    out = np.empty(size, dtype)
    for start in range(0, size, _CHUNK):
        part = slice(start, start + _CHUNK)
        out[part] = fma(*(v[part] if np.ndim(v) else v for v in flat))
    return out.reshape(shape)


def fma32(a, b, c) -> np.ndarray:
    chunked = _by_chunks(fma32, a, b, c, np.float32)
    if chunked is not None:
        return chunked
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    return np.asarray(_round_to_odd_sum(a * b, c).astype(np.float32))  # a * b is exact


def fma64(a, b, c) -> np.ndarray:
    chunked = _by_chunks(fma64, a, b, c, np.float64)
    if chunked is not None:
        return chunked
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    product, product_low = _two_product(a, b)
    high, low = _two_sum(c, product)
    exact = high + _round_to_odd_sum(low, product_low)
    plain = a * b + c
    # infinities and NaNs break the error terms; there the plain result is the answer
    return np.where(np.isfinite(exact) & np.isfinite(plain), exact, plain)


_MIDPOINT_BITS, _MIDPOINT = np.int64(0x1FFFFFFF), np.int64(0x10000000)
_SMALLEST_NORMAL32 = 2.0 ** -126  # below it float32 rounding is not double's


def fma_wide(a, b, c):
    """a·b + c, to be rounded once to c's dtype by whoever stores it: for float32, the double
    sum (the product of two float32s is exact in a double) whenever rounding it again is the
    one rounding, else the exact float32 result."""
    if c.dtype != np.float32:
        return fma64(a, b, c)
    total = np.multiply(a, b, dtype=np.float64)
    total += c
    # rounding the double sum again is exact unless it lies halfway between two float32s
    # (or among the subnormals): then take the slow, always exact path
    if np.count_nonzero((total.view(np.int64) & _MIDPOINT_BITS) == _MIDPOINT) or \
            np.count_nonzero(np.abs(total) < _SMALLEST_NORMAL32):
        return fma32(a, b, c)
    return total


def fma(a, b, c, out=None):
    """a·b + c rounded once to c's dtype (a, c arrays; b an array or a number of that dtype),
    as torch's CPU kernels compute `add_(alpha=)`, `addcmul_` and `lerp_`; written into `out`
    when given (which may be `c` itself)."""
    result = fma_wide(a, b, c)
    if out is None:
        return np.asarray(result, dtype=c.dtype)
    np.copyto(out, result, casting="same_kind")
    return out
