"""The floating-point arithmetic of PyTorch's CPU random kernels, reproduced bit for bit.

torch's kernels are compiled C++: GCC fuses each multiply feeding an add into one FMA
(a single rounding), the float32 normal kernel uses Cephes-style polynomial log/sin/cos
on 8-lane vectors, and the float64 kernels call the C library's log/sin/cos. NumPy has
none of these, so this module rebuilds them:

- the fused `n * std + mean` and `x * (to - from) + from`: numerics/fma.py.
- `box_muller_avx`: the float32 Box–Muller kernel (blocks of 16: u1 = 1 - d[j],
  u2 = d[j+8]). Its fused steps run in float64 and are rounded to float32 after each
  step; that one rounding equals the fused result on every one of the 2**24 possible
  inputs (checked exhaustively against exact FMAs).
- `libm`: a math-module function per element, i.e. the C library's own result.
"""

from __future__ import annotations

import math

import numpy as np

f32 = np.float32


def libm(fn, x: np.ndarray) -> np.ndarray:
    """fn (math.log, math.cos, ...) on each element: the C library's result, which NumPy's
    own vectorised versions do not always give."""
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)


# --- float32 Box–Muller on 8-lane vectors ---------------------------------------------------

_LOG = [float(f32(p)) for p in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)]
_LOG_Q1, _LOG_Q2 = f32(-2.12194440e-4), f32(0.693359375)  # ln 2 in two parts
_COS = [float(f32(c)) for c in (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)]
_SIN = [float(f32(c)) for c in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)]
_PI_4 = [float(f32(c)) for c in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)]
_FOUR_OVER_PI = f32(1.27323954473516)
_SQRT_HALF = f32(0.707106781186547524)
_TWO_PI = f32(2 * math.pi)
_CHUNK = 32768  # values per pass: the scratch buffers stay in cache and are reused


class _Scratch:
    def __init__(self, n: int):
        self.f = [np.empty(n, np.float32) for _ in range(7)]
        self.i = [np.empty(n, np.int32) for _ in range(2)]
        self.d = [np.empty(n, np.float64) for _ in range(2)]

    def take(self, n: int):
        return [b[:n] for b in self.f], [b[:n] for b in self.i], [b[:n] for b in self.d]


def _horner(x64, coeffs, tmp, out) -> None:
    """out = polynomial(x) by fused steps fma(out, x, c), each rounded to float32."""
    out.fill(coeffs[0])
    for c in coeffs[1:]:
        np.multiply(out, x64, out=tmp)
        np.add(tmp, c, out=out, casting="unsafe")


def _radius(u, out, scratch: _Scratch) -> None:
    """out = sqrt(-2 log u) for u in (0, 1], log as the Cephes polynomial on the mantissa."""
    (m, x, z, e, y, t, _), (ib, eb), (x64, tmp) = scratch.take(u.shape[0])
    bits = u.view(np.int32)
    np.bitwise_and(bits, 0x007FFFFF, out=ib)
    np.bitwise_or(ib, 0x3F000000, out=ib)   # the mantissa as a float in [0.5, 1)
    m[...] = ib.view(np.float32)
    np.right_shift(bits, 23, out=eb)
    np.subtract(eb, 126, out=eb)            # exponent + 1
    np.less(m, _SQRT_HALF, out=t, casting="unsafe")  # 1.0 where m < sqrt(1/2)
    np.subtract(eb, t, out=e, casting="unsafe")
    np.subtract(m, f32(1), out=x)
    np.multiply(m, t, out=y)
    np.add(x, y, out=x)                     # m - 1, or 2m - 1 below sqrt(1/2): both exact
    np.multiply(x, x, out=z)
    x64[...] = x
    _horner(x64, _LOG, tmp, y)
    np.multiply(y, x, out=y)
    np.multiply(y, z, out=tmp, dtype=np.float64)
    np.multiply(e, _LOG_Q1, out=t)
    np.add(tmp, t, out=y, casting="unsafe")
    np.multiply(z, f32(0.5), out=t)
    np.subtract(y, t, out=y)
    np.add(x, y, out=x)
    np.multiply(e, _LOG_Q2, out=t)
    np.add(x, t, out=out)
    np.multiply(out, f32(-2), out=out)
    np.sqrt(out, out=out)


def _sincos(theta, sin_out, cos_out, scratch: _Scratch) -> None:
    """sin and cos of theta in [0, 2 pi): reduction by pi/4 in three parts, two polynomials,
    then the octant picks polynomial and sign with bit masks (no data-dependent branches)."""
    (r, z, c, s, t, _, _), (j, k), (y64, tmp) = scratch.take(theta.shape[0])
    np.multiply(theta, _FOUR_OVER_PI, out=t)
    j[...] = t                              # truncation
    np.add(j, 1, out=j)
    np.bitwise_and(j, ~1, out=j)
    y64[...] = j
    r[...] = theta
    for part in _PI_4:
        np.multiply(y64, part, out=tmp)
        np.add(tmp, r, out=r, casting="unsafe")
    np.multiply(r, r, out=z)
    y64[...] = z
    _horner(y64, _COS, tmp, c)
    np.multiply(c, z, out=c)
    np.multiply(c, y64, out=tmp)
    np.multiply(z, f32(0.5), out=t)
    np.subtract(tmp, t, out=c, casting="unsafe")
    np.add(c, f32(1), out=c)
    _horner(y64, _SIN, tmp, s)
    np.multiply(s, z, out=s)
    np.multiply(s, r, out=tmp, dtype=np.float64)
    np.add(tmp, r, out=s, casting="unsafe")
    np.bitwise_and(j, 2, out=k)
    np.right_shift(k, 1, out=k)
    np.subtract(k, 1, out=k)                # all ones where the sine polynomial gives sin
    sb, cb, tb = s.view(np.int32), c.view(np.int32), t.view(np.int32)
    so, co = sin_out.view(np.int32), cos_out.view(np.int32)
    np.bitwise_and(sb, k, out=so)
    np.bitwise_and(cb, k, out=co)
    np.invert(k, out=k)
    np.bitwise_and(cb, k, out=tb)
    np.bitwise_or(so, tb, out=so)
    np.bitwise_and(sb, k, out=tb)
    np.bitwise_or(co, tb, out=co)
    np.bitwise_and(j, 4, out=k)
    np.left_shift(k, 29, out=k)             # octants 4-7: sin changes sign
    np.bitwise_xor(so, k, out=so)
    np.subtract(j, 2, out=k)
    np.invert(k, out=k)
    np.bitwise_and(k, 4, out=k)
    np.left_shift(k, 29, out=k)             # octants 2-5: cos changes sign
    np.bitwise_xor(co, k, out=co)


def box_muller_avx(d: np.ndarray) -> None:
    """Turn float32 uniforms (a multiple of 16, contiguous) into normals in place, as
    torch's vectorised kernel does before its final fused `n * std + mean`."""
    blocks = d.reshape(-1, 2, 8)
    rows = min(blocks.shape[0], _CHUNK // 8)
    scratch = _Scratch(rows * 8)
    u, theta, radius, sin, cos = (np.empty((rows, 8), np.float32) for _ in range(5))
    for start in range(0, blocks.shape[0], rows):
        block = blocks[start:start + rows]
        n = block.shape[0]
        U, T, R, S, C = u[:n], theta[:n], radius[:n], sin[:n], cos[:n]
        np.subtract(f32(1), block[:, 0], out=U)
        np.multiply(_TWO_PI, block[:, 1], out=T)
        _radius(U.reshape(-1), R.reshape(-1), scratch)
        _sincos(T.reshape(-1), S.reshape(-1), C.reshape(-1), scratch)
        np.multiply(R, C, out=block[:, 0])
        np.multiply(R, S, out=block[:, 1])
