"""Memory layouts as torch's TensorIterator chooses them.

torch walks the dims of an elementwise op or a reduction in an order it derives from its
operands' strides (`iteration_order`), and a new elementwise result is laid out in that
order (`elementwise_layout`). NumPy's own choice (its 'K' order) agrees when the inputs
share one layout, but not when they differ (`a.t() + b`: torch follows the first operand,
NumPy may fall back to C order), nor in the strides of size-1 dims. Both show: a later
`view` works or fails on the layout, `reshape` records a view or a copy, and a matrix
product's backward tests its operands' strides.
"""

from __future__ import annotations

import numpy as np


def iteration_order(sizes, operand_strides, reduction: bool = False) -> list:
    """torch's reorder_dimensions: the dims, fastest first. `operand_strides` lists each
    operand's strides (0 for a broadcast dim), in torch's operand order (a reduction's output
    first, with 0 for its reduced dims, which then go first)."""
    perm = list(range(len(sizes) - 1, -1, -1))

    def should_swap(d0, d1) -> int:
        for k, strides in enumerate(operand_strides):
            s0, s1 = strides[d0], strides[d1]
            if reduction and k == 0 and (s0 == 0) != (s1 == 0):
                return 1 if s1 == 0 else -1
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if sizes[d0] > sizes[d1]:
                return 1
        return 0

    for i in range(1, len(perm)):
        j = i
        for k in range(i - 1, -1, -1):
            c = should_swap(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return perm


def dense(x) -> bool:
    """torch's is_non_overlapping_and_dense: the elements fill their span, in some order."""
    step = x.itemsize
    for stride, size in sorted((abs(st), n) for st, n in zip(x.strides, x.shape) if n != 1):
        if stride != step:
            return False
        step *= size
    return True


def laid_out_like(g: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A new copy of gradient `g` for a leaf's first `.grad`, by torch's layout contract:
    the leaf's own strides when it is dense (a transposed gradient of a row-major leaf comes
    out row-major, so `w.grad.view(-1)` works as in torch), else contiguous."""
    if g.flags.c_contiguous and like.flags.c_contiguous:
        return np.array(g, dtype=like.dtype, copy=True)  # (the usual case)
    out = np.empty_like(like) if dense(like) else np.empty(like.shape, like.dtype)
    np.copyto(out, g, casting="unsafe")
    return out


def elementwise_layout(out: np.ndarray, inputs) -> np.ndarray:
    """`out`, an elementwise result of the arrays and numbers in `inputs`, laid out as torch
    lays out that op's new result (the same values; a copy only where the order of dims
    differs, else the same memory with torch's strides on size-1 dims)."""
    shape, item = out.shape, out.itemsize
    arrays = [x for x in inputs if type(x) is np.ndarray and x.ndim]
    if all(x.flags.c_contiguous for x in arrays):
        return out  # (both lay out a result of contiguous inputs contiguously)
    same_shape = len(arrays) == len(inputs) and all(x.shape == shape for x in arrays)
    if same_shape and all(dense(x) for x in arrays) and \
            all(x.strides == arrays[0].strides for x in arrays):
        strides = tuple(st // arrays[0].itemsize for st in arrays[0].strides)
    else:
        ndim = len(shape)
        operand_strides = []
        for x in arrays:
            lead = ndim - x.ndim
            operand_strides.append((0,) * lead + tuple(
                0 if n == 1 and m != 1 else st // x.itemsize
                for n, m, st in zip(x.shape, shape[lead:], x.strides)))
        strides = [0] * ndim
        step = 1
        for d in iteration_order(shape, operand_strides):
            strides[d] = step
            step *= shape[d]
    wanted = tuple(st * item for st in strides)
    if wanted == out.strides:
        return out
    if all(a == b for a, b, n in zip(wanted, out.strides, shape) if n != 1):
        return np.lib.stride_tricks.as_strided(out, shape, wanted)  # (size-1 dims only)
    laid = np.lib.stride_tricks.as_strided(np.empty(out.size, out.dtype), shape, wanted)
    laid[...] = out
    return laid
