"""The values of torch.arange and torch.linspace for floating dtypes, bit for bit.

PyTorch's CPU kernels compute each value with a fused multiply-add (`start + step * i`
rounded once), in double for arange and in the tensor's own dtype for linspace; arange
also fills whole vector registers from one base value per register. A plain NumPy
`start + step * i` differs in the last bit, which printing shows near zero (5.5511e-17
instead of 0., which switches a whole tensor to scientific notation).
"""

from __future__ import annotations

import numpy as np

from .fma import fma32, fma64

_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}  # AVX2 registers, as torch's CPU build


def arange_values(start: float, step: float, count: int, dtype: np.dtype) -> np.ndarray:
    """torch.arange for a floating dtype: pairs of vector registers, each filled from a base
    fma(step, i, start) plus fma(k, step, base) in its lanes; the tail one value at a time."""
    dtype = np.dtype(dtype)
    lanes = _LANES.get(dtype)
    if lanes is None:
        return fma64(step, np.arange(count, dtype=np.float64), start).astype(dtype)
    index = np.arange(count, dtype=np.float64)
    vectorized = count - count % (2 * lanes)
    out = np.empty(count, dtype=dtype)
    if vectorized:
        lane = np.arange(lanes, dtype=np.float64)
        bases = fma64(step, index[:vectorized:lanes], start).astype(dtype).astype(np.float64)
        values = fma64(lane[None, :], step, bases[:, None])
        out[:vectorized] = values.reshape(-1).astype(dtype)
    out[vectorized:] = fma64(step, index[vectorized:], start).astype(dtype)
    return out


def linspace_values(start: float, end: float, steps: int, dtype: np.dtype) -> np.ndarray:
    """torch.linspace for a floating dtype: the first half counts up from start, the second
    half down from end, each value one fused multiply-add in the dtype itself."""
    dtype = np.dtype(dtype)
    if steps == 1:
        return np.array([start], dtype=dtype)
    first, last = dtype.type(start), dtype.type(end)
    step = (last - first) / dtype.type(steps - 1)
    index = np.arange(steps)
    half = steps // 2
    fma = fma32 if dtype == np.float32 else fma64
    up = fma(np.full(half, step), index[:half], np.full(half, first))
    down = fma(np.full(steps - half, -step), steps - 1 - index[half:], np.full(steps - half, last))
    return np.concatenate([up, down]).astype(dtype)
