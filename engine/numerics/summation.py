"""Float sums added in the order torch's CPU kernel adds them.

Floating-point addition is not associative: a float32 sum of five elements or more taken
in NumPy's pairwise order differs from torch's in the last place more often than not, and
`print(loss.item())` shows every digit. torch's order (its SumKernel, measured against
torch 2.13 on x86-64, where its reductions run on 8-float / 4-double vectors):

- The dims are walked as torch's TensorIterator walks them: size-1 dims dropped, the
  reduced dims first, each group by increasing stride, neighbours that are one block in
  memory merged. The innermost two dims form one "2-d loop"; any others are outer loops.
- In that loop, a reduced dim that is contiguous and at least one vector long is summed
  as rows of one vector each (`_vector_row_sum`); else, when the kept dim is contiguous,
  columns are summed in blocks of 4 vectors (`_cascade`, one per column), then single
  vectors and single columns (`_row_sum`); else one element at a time in the same two
  ways (4 columns at once, or one).
- `_row_sum` keeps 4 running sums side by side (element i into sum i % 4), `_cascade`
  keeps each running sum in 4 levels of 16-row blocks (torch's multi_row_sum).
- Each result is added into an output that starts at +0.

A mean is this sum divided by the count. Past 32,768 elements torch splits a sum across
its threads (the order then depends on the machine): NumPy's sum is used there, and for
integer dtypes, whose sums are exact in any order.
"""

from __future__ import annotations

import numpy as np

from .fma import fma32, fma64
from .layout import iteration_order

_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_ONE_THREAD = 32768  # at::internal::GRAIN_SIZE: a longer reduction may be split across threads
_ILP = 4  # running sums side by side in row_sum
_LEVELS = 4  # cascade levels in multi_row_sum
_ZERO = {np.dtype(np.float32): np.float32(0), np.dtype(np.float64): np.float64(0)}
_reduce, _accumulate = np.add.reduce, np.add.accumulate


def total(x: np.ndarray):
    """The sum of all of x's elements, as torch's `x.sum()` adds them (a NumPy scalar)."""
    lanes = _LANES.get(x.dtype)
    if lanes is None or x.size > _ONE_THREAD:
        return np.add.reduce(x, axis=None)
    if x.flags.c_contiguous:  # (the usual case: one run of memory, a 1-d walk)
        n = x.size
        if n <= _ILP * lanes and n % lanes == 0 and n:
            return _few_vectors(x, lanes)[0]
        flat = x.reshape(-1)
        if n < 64 * lanes:
            return _short_total(flat, lanes)
        return _vector_row_sum(flat[None], lanes)[0] + _ZERO[x.dtype]
    return _walk(x, frozenset(range(x.ndim)), lanes, ())[()]


def along(x: np.ndarray, axes: tuple, keepdims: bool) -> np.ndarray:
    """x summed over `axes` (distinct, non-negative), as torch's `x.sum(axes)` adds."""
    lanes = _LANES.get(x.dtype)
    if lanes is None or x.size > _ONE_THREAD or x.size == 0:
        return np.add.reduce(x, axis=axes, keepdims=keepdims)
    shape = x.shape
    if axes == (0,) and x.ndim == 2 and x.flags.c_contiguous:
        # (the commonest: a bias's gradient, a batch summed away)
        if shape[1] == 1:  # (a column: its elements are one run of memory)
            n = shape[0]
            if n <= _ILP * lanes and n % lanes == 0 and not keepdims:
                return _few_vectors(x, lanes)
            out = total(x)
        elif shape[0] < 256 and shape[1] % (4 * lanes) == 0:
            out = _short_cascade(x)
            return out[None] if keepdims else out
        elif shape[0] < 256:
            out = _short_columns(x, lanes) + _ZERO[x.dtype]
        else:
            out = _walk(x, frozenset(axes), lanes, shape[1:])
        return out.reshape((1, shape[1]) if keepdims else shape[1:])
    kept_shape = tuple([n for i, n in enumerate(shape) if i not in axes])
    if len(axes) == x.ndim or all(n == 1 for n in kept_shape):
        out = total(x)  # (every dim longer than 1 reduced: one walk over all)
    else:
        out = _walk(x, frozenset(axes), lanes, kept_shape)
    if keepdims:
        return np.reshape(out, tuple([1 if i in axes else n for i, n in enumerate(shape)]))
    return np.reshape(out, kept_shape)


def _few_vectors(x, lanes) -> np.ndarray:
    """The sum of one to four whole vectors in one run of memory, as a 1-element array (the
    commonest short sum, written out): each vector is its own running sum; they are added
    lane by lane, then the lanes in order. Each lane starts from +0 (where torch's output
    does), which changes no sum but a -0., so the result is never -0., as torch's is not."""
    return _accumulate(_reduce(x.reshape(-1, lanes), axis=0, initial=0.0))[-1:]


# --- the walk over dims ------------------------------------------------------------------------

def _walk(x, axes, lanes, kept_shape) -> np.ndarray:
    item = x.itemsize
    out_strides, step = {}, 1
    for i in range(x.ndim - 1, -1, -1):  # the output is C-contiguous over the kept dims
        if i not in axes:
            out_strides[i] = step
            step *= x.shape[i]
    # (size, input stride, output stride) of each dim that is not 1 long, in elements
    dims = [(x.shape[i], x.strides[i] // item, 0 if i in axes else out_strides[i])
            for i in range(x.ndim) if x.shape[i] != 1]
    if any(s < 0 for _, s, _ in dims) or any(s % item for s in x.strides):
        x = np.ascontiguousarray(x)
        return _walk(x, axes, lanes, kept_shape)
    out = np.zeros(kept_shape, x.dtype)
    if not any(o == 0 for _, _, o in dims):  # nothing of size > 1 reduced: a copy
        return (x.reshape(kept_shape) + out).reshape(kept_shape)
    dims = _coalesced(_ordered(dims))
    if len(dims) == 1:
        dims.append((1, 0, 0))
    (n0, s0, o0), (n1, s1, o1) = dims[0], dims[1]
    if o0 != 0 and o1 == 0:
        (n0, s0, o0), (n1, s1, o1) = (n1, s1, o1), (n0, s0, o0)
    outer = dims[2:]
    # the input as (outer dims, slowest first..., n1, n0): one 2-d loop per outer index
    view = np.lib.stride_tricks.as_strided(
        x, tuple(n for n, _, _ in reversed(outer)) + (n1, n0),
        tuple(s * item for _, s, _ in reversed(outer)) + (s1 * item, s0 * item), writeable=False)
    results = _loop_2d(view, s0, n0, s1, n1, lanes)  # (outer..., n1)
    # into the output, in the order the loops store: a 0 output stride adds up in place
    strides = [o for _, _, o in reversed(outer)] + [o1]
    summed = [k for k, o in enumerate(strides) if o == 0]
    if summed:
        keep = [k for k in range(len(strides)) if strides[k] != 0]
        moved = np.transpose(results, summed + keep)
        results = _in_order(moved.reshape((-1,) + moved.shape[len(summed):]))
        strides = [strides[k] for k in keep]
    flat = out.reshape(-1)
    target = np.lib.stride_tricks.as_strided(flat, results.shape, tuple(o * item for o in strides))
    target += results
    return out


def _ordered(dims) -> list:
    """torch's reorder_dimensions for a reduction: reduced dims first, then by stride (the
    output's, then the input's), fastest first."""
    perm = iteration_order([n for n, _, _ in dims], ([o for _, _, o in dims],
                                                     [s for _, s, _ in dims]), reduction=True)
    return [dims[p] for p in perm]


def _coalesced(dims) -> list:
    """Neighbouring dims that are one block for both input and output become one."""
    merged = [dims[0]]
    for n, s, o in dims[1:]:
        pn, ps, po = merged[-1]
        if pn * ps == s and pn * po == o:
            merged[-1] = (pn * n, ps, po)
        else:
            merged.append((n, s, o))
    return merged


def _loop_2d(view, s0, n0, s1, n1, lanes) -> np.ndarray:
    """SumKernel's loop over (n1 outputs) x (n0 reduced elements), batched over outer dims:
    `view` is (..., n1, n0); the result (..., n1)."""
    if s0 == 1 and n0 >= lanes:
        return _vector_row_sum(view, lanes)
    columns = _to_front(view, -1)  # (n0, ..., n1): the reduced elements first
    if s1 == 1 and n1 >= lanes:
        block = 4 * lanes
        cut = n1 - n1 % block
        tail = n1 - n1 % lanes
        parts = [_cascade(columns[..., :cut]), _row_sum(columns[..., cut:tail]),
                 _row_sum(columns[..., tail:])]
    elif s0 < s1:
        parts = [_row_sum(columns)]
    else:
        cut = n1 - n1 % _ILP
        parts = [_cascade(columns[..., :cut]), _row_sum(columns[..., cut:])]
    parts = [p for p in parts if p.shape[-1]]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)


def _vector_row_sum(rows, lanes) -> np.ndarray:
    """vectorized_inner_sum: each row (last axis) as vectors of `lanes`, summed by row_sum;
    then from 0 the elements past the last whole vector and the vector's lanes."""
    n = rows.shape[-1]
    whole = n - n % lanes
    vectors = rows[..., :whole].reshape(rows.shape[:-1] + (whole // lanes, lanes))
    summed = _row_sum(_to_front(vectors, -2))  # (..., lanes)
    last = np.concatenate((rows[..., whole:], summed), axis=-1)
    return _in_order(_to_front(last, -1))


def _row_sum(items) -> np.ndarray:
    """row_sum: along the first axis, 4 running sums side by side (item i into sum i % 4,
    each a cascade), the items past the last group of 4 into sum 0, then the 4 in order."""
    n = items.shape[0]
    groups = n // _ILP
    partial = _cascade(items[:groups * _ILP].reshape((groups, _ILP) + items.shape[1:]))
    if n > groups * _ILP:
        first = _in_order(np.concatenate((partial[:1], items[groups * _ILP:]), axis=0))
        partial = np.concatenate((first[None], partial[1:]), axis=0)
    return _in_order(partial)


def _cascade(rows) -> np.ndarray:
    """multi_row_sum: along the first axis, blocks of 16 rows (or longer) added in order into
    level 0; level j is added into level j + 1 every 16^j blocks; the levels at the end."""
    size = rows.shape[0]
    power = max(4, (size - 1).bit_length() // _LEVELS)  # (ceil(log2(size)) for size > 1)
    step = 1 << power
    blocks = size >> power
    if not blocks:
        return _in_order(rows)
    sums = _in_order(rows[:blocks * step].reshape((blocks, step) + rows.shape[1:]), axis=1)
    if blocks < step:  # (the usual case: level 1 is never emptied into level 2)
        level = _in_order(sums)
        return level if size == blocks * step else _in_order(rows[blocks * step:]) + level
    rest = _in_order(rows[blocks * step:])
    result = rest
    for _ in range(1, _LEVELS - 1):  # levels 1 and 2 are emptied every 16^j blocks
        full = sums.shape[0] >> power
        result = result + _in_order(sums[full << power:])
        sums = _in_order(sums[:full << power].reshape((full, step) + sums.shape[1:]), axis=1)
    return result + _in_order(sums)  # level 3 is never emptied


def _in_order(values, axis: int = 0) -> np.ndarray:
    """v[0] + v[1] + ... along `axis`, one addition at a time (nothing: 0; callers that need
    torch's +0. start for a sum of -0. add the 0 once, at the end)."""
    if values.size == 0:
        return np.zeros(values.shape[:axis] + values.shape[axis + 1:], values.dtype)
    outer = values.shape[0] if axis == 0 else values.shape[0] * values.shape[1]
    if values.size >= 2 * outer and values.flags.c_contiguous:
        # a reduce over an axis that is not the last in memory adds its rows one after
        # another (the elements after it are the inner loop); over the last one it pairs
        return np.add.reduce(values, axis=axis)
    summed = np.add.accumulate(values, axis=axis)
    return summed[-1] if axis == 0 else summed[:, -1]


def _to_front(a, axis: int):
    """`a` with `axis` moved first, the others in order (np.moveaxis, without its overhead)."""
    axis %= a.ndim
    return a.transpose((axis,) + tuple(i for i in range(a.ndim) if i != axis))


# --- the common short cases, written out (the general walk costs tens of microseconds) ----

# row_sum of fewer elements than a vector: the first 4 are the running sums, the others go
# into sum 0, then sums 1, 2, 3 follow: one sequence
_FEW_ORDER = {n: ([0] + list(range(4, n)) + [1, 2, 3]) if n > 4 else list(range(n))
              for n in range(16)}


def _short_total(flat, lanes):
    """`total` of fewer than 64 vectors in one run of memory (no cascade level is filled)."""
    n = flat.size
    if n < lanes:
        return _in_order(flat[_FEW_ORDER[n]] if n > 4 else flat) + _ZERO[flat.dtype]
    vectors = n // lanes
    whole = vectors * lanes
    if vectors < 2 * _ILP:  # (one group or none: the sums added as one sequence of vectors)
        rows = flat[:whole].reshape(vectors, lanes)
        summed = np.add.reduce(rows[_FEW_ORDER[vectors]] if vectors > _ILP else rows, axis=0)
    else:
        grouped = vectors // _ILP * _ILP * lanes
        partial = np.add.reduce(flat[:grouped].reshape(-1, _ILP, lanes), axis=0)
        if whole > grouped:  # the vectors past the last group go into sum 0, then sums 1-3
            partial = np.concatenate((partial[:1], flat[grouped:whole].reshape(-1, lanes),
                                      partial[1:]))
        summed = np.add.reduce(partial, axis=0)
    if whole < n:
        summed = np.concatenate((flat[whole:], summed))
    return np.add.accumulate(summed)[-1] + _ZERO[flat.dtype]


def _short_cascade(m):
    """`_cascade` of a C-contiguous (rows < 256, columns > 1) array, written out, with
    torch's +0 start: a reduce over a leading axis adds its rows one after another, from
    `initial`; at most one level of 16-row blocks fills."""
    rows = m.shape[0]
    if rows < 16:
        return _reduce(m, axis=0, initial=0.0)
    blocks = rows >> 4
    head = blocks << 4
    # (each block from +0, so no block sum is -0. and level 1 needs no +0 start of its own)
    sums = _reduce((m[:head] if head < rows else m).reshape(blocks, 16, m.shape[1]), axis=1,
                   initial=0.0)
    level = sums[0] + sums[1] if blocks == 2 else _reduce(sums, axis=0)
    return level if head == rows else _reduce(m[head:], axis=0, initial=0.0) + level


def _short_columns(m, lanes):
    """`along` axis 0 of a C-contiguous (rows < 256, columns) array, without the final + 0:
    vectorized_outer_sum (scalar_outer_sum under a vector's width of columns), where at most
    one cascade level fills."""
    columns = m.shape[1]
    cut = columns - columns % (4 * lanes if columns >= lanes else _ILP)
    if cut == columns:
        return _cascade(m)
    if cut == 0:
        return _row_sum(m)
    return np.concatenate((_cascade(m[:, :cut]), _row_sum(m[:, cut:])))


def nll_total(terms: np.ndarray):
    """The sum of nll_loss's terms (-log-probability of each target, in batch order), as
    torch's kernel adds them: its 8-level cascade empties into the top level after the first
    term, so that term comes last; the others in 16-term blocks, as `_cascade` adds rows."""
    if terms.dtype not in _LANES or terms.size > 16 ** 4 or terms.size == 0:
        return np.add.reduce(terms, axis=None)
    rest = _cascade(terms[1:]) if terms.size > 1 else _ZERO[terms.dtype]
    return rest + terms[0] + _ZERO[terms.dtype]


# --- vec::reduce_all, the other order ---------------------------------------------------------

_VECTOR_BYTES = 64  # softmax's kernels run on 512-bit vectors on x86-64 with AVX-512


def along_last_by_lanes(e: np.ndarray) -> np.ndarray:
    """Sums along the last axis (kept, as length 1) in the order of torch's vec::reduce_all,
    which its softmax and log_softmax kernels use over their dim: one vector-wide running
    sum, the elements past the last whole vector into its first lanes, then the lanes
    halved pairwise (i + i+8, + i+4, + i+2, + i+1); a row shorter than a vector in order."""
    n = e.shape[-1]
    lanes = _VECTOR_BYTES // e.itemsize
    if n < lanes or e.dtype not in _LANES:
        return np.add.accumulate(e, axis=-1)[..., -1:]
    whole = n - n % lanes
    vectors = e[..., :whole].reshape(e.shape[:-1] + (whole // lanes, lanes))
    acc = np.add.accumulate(vectors, axis=-2)[..., -1, :]
    if n > whole:
        acc[..., :n - whole] += e[..., whole:]
    while lanes > 1:
        lanes //= 2
        acc = acc[..., :lanes] + acc[..., lanes:2 * lanes]
    return acc


def norm2_rows(rows: np.ndarray) -> np.ndarray:
    """The 2-norm of each row of a C-contiguous 2-d float array, as torch's vectorised
    last-dim norm kernel adds: squares into 8 float (4 double) lanes, one vector at a time,
    the lanes folded left into lane 0, then the rest of the row one element at a time, where
    the compiler fuses `acc += x * x` into an FMA (float32: a block of 4 first, multiplied as
    a vector and added in order, unfused). Measured against torch 2.13 on x86-64."""
    dt = rows.dtype
    lanes = _LANES[dt]
    n = rows.shape[1]
    whole = n - n % lanes
    squares = rows * rows
    if whole:
        blocks = squares[:, :whole].reshape(rows.shape[0], whole // lanes, lanes)
        acc = _accumulate(blocks, axis=1)[:, -1]
        out = acc[:, 0].copy()
        for lane in range(1, lanes):
            out = out + acc[:, lane]
    else:
        out = np.zeros(rows.shape[0], dt)
    at = whole
    if dt == np.float32 and n - at >= 4:
        for k in range(4):
            out = out + squares[:, at + k]
        at += 4
    fused = fma32 if dt == np.float32 else fma64
    for k in range(at, n):
        out = fused(rows[:, k], rows[:, k], out).astype(dt, copy=False)
    return np.sqrt(out)
