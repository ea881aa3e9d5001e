"""Shapes and views: reshape/view, expand, permute/transpose, squeeze/unsqueeze, cat/stack,
unbind, clone, dtype conversion.

Views share their input's storage and version counter, as torch's do. `reshape` records
what torch records: a view when the strides allow one (ViewBackward0 for a contiguous
input, ReshapeAliasBackward0 otherwise), else a contiguous copy (CloneBackward0) viewed
again (UnsafeViewBackward0). NumPy's strides follow torch's here, so the same test tells.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..graph.nodes import record, record_outputs
from .operands import array_dtype, check_broadcast, dims, result_dtype, shape_arg, type_word
from .operands import dims as _dims
from .registry import Check, Family, any_, in_place_gap, no_in_place
from ..core.session import check_allocation

family = Family("Shapes and views", inplace=no_in_place(
    "a view, a copy or a new shape: torch has no in-place form"))
_RESHAPED_IN_PLACE = in_place_gap("changing a tensor's own shape (`x.t_()`, `x.squeeze_()`) is "
                                  "not offered: autodiff's in-place ops write values only")
op, exposes, word = family.op, family.exposes, family.word

_RESHAPED = dict(explain="a reshape: g is reshaped back to the input's shape",
                 formulas=("g reshaped to a's shape",))
VIEW = op("ViewBackward0", lambda F, g, out, a, shape: F.reshape(g, shape), views=True,
          check=Check(lambda a: a.reshape(3, 2) * 1.5, (any_(2, 3),)), **_RESHAPED)
RESHAPE_ALIAS = op("ReshapeAliasBackward0", lambda F, g, out, a, shape: F.reshape(g, shape),
                   views=True, check=Check(lambda a: a.t().reshape(3, 2) * 1.5, (any_(2, 3),)),
                   **_RESHAPED)
UNSAFE_VIEW = op("UnsafeViewBackward0", lambda F, g, out, a, shape: F.reshape(g, shape),
                 check=Check(lambda a: a.t().reshape(6) * 1.5, (any_(2, 3),)), **_RESHAPED)
CLONE = op("CloneBackward0", lambda F, g, out, a: g, explain="clone passes the gradient through",
           formulas=("∂clone(a)/∂a = 1",), check=Check(lambda a: a.clone(), (any_(2, 3),)))


def _reshaped(a, shape):
    x = a.array
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    try:
        out = x.reshape(shape)
    except ValueError:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {x.size}") from None
    if 1 in out.shape and type(x) is np.ndarray and out.size > 1 and \
            np.may_share_memory(out, x):
        out = with_strides(out, view_strides(x, out.shape))
    return x, out


def view_strides(x, shape) -> tuple | None:
    """The strides (in elements) torch gives a view of array `x` as `shape` (its
    computeStride), None where no view exists. Dims longer than 1 have one possible stride,
    which NumPy's reshape finds too; a size-1 dim's stride is free, and what torch puts there
    decides later tests on strides (mm's backward takes an operand with strides (1, rows)
    for a transposed one)."""
    item = x.itemsize
    old_shape, old_strides = x.shape, [st // item for st in x.strides]
    new_strides = [0] * len(shape)
    if not old_shape:
        return tuple(1 for _ in shape)
    view_d = len(shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = old_strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


def with_strides(out, strides):
    """`out` with these element strides where they differ from NumPy's (size-1 dims only:
    the same memory, read the same way)."""
    if strides is None:
        return out
    item = out.itemsize
    wanted = tuple(st * item for st in strides)
    if wanted == out.strides:
        return out
    return np.lib.stride_tricks.as_strided(out, out.shape, wanted,
                                           writeable=out.flags.writeable)


@exposes(VIEW, RESHAPE_ALIAS, UNSAFE_VIEW, functions=("reshape",), methods=("reshape",),
         params=("input", "shape"))
def reshape(a, *shape):
    if not shape:
        raise TypeError("reshape() needs a shape")  # (torch's parser words it: core/signatures.py)
    shape = shape_arg(shape)
    x, out = _reshaped(a, shape)
    if type(x) is not np.ndarray or x.flags.c_contiguous:
        return record(VIEW, out, (a,), {"shape": x.shape})
    if out.size == 0 or np.may_share_memory(out, x):
        return record(RESHAPE_ALIAS, out, (a,), {"shape": x.shape})
    copy = contiguous(a)
    return record(UNSAFE_VIEW, copy.array.reshape(shape), (copy,), {"shape": x.shape})


word("reshape", lambda g, shape: g.reshape(shape))(reshape)


@exposes(VIEW, methods=("view",), params=("input", ("dtype", "size")))
def view(a, *shape):
    if not shape:
        raise TypeError("view() needs a shape")  # (torch's parser words it: core/signatures.py)
    shape = shape_arg(shape)
    x, out = _reshaped(a, shape)
    if out.size > 1 and type(x) is np.ndarray and not x.flags.c_contiguous \
            and not np.may_share_memory(out, x):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return record(VIEW, out, (a,), {"shape": x.shape})


@exposes(functions=("flatten",), methods=("flatten",))
def flatten(a, start_dim=0, end_dim=-1):
    shape = a.array.shape
    if not shape:
        return reshape(a, (1,))
    s, e = dims(start_dim, len(shape))[0], dims(end_dim, len(shape))[0]
    if s >= e:
        return a  # nothing to merge: torch returns the tensor itself
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(a, shape[:s] + (n,) + shape[e + 1:])


@exposes(CLONE, functions=("clone",), methods=("clone",))
def clone(a):
    return record(CLONE, np.array(a.array, order="K", copy=True), (a,))  # strides kept


@word("contiguous", lambda g: g)
@exposes(CLONE, methods=("contiguous",))
def contiguous(a):
    x = a.array
    if type(x) is not np.ndarray or x.flags.c_contiguous:
        return a
    return record(CLONE, np.ascontiguousarray(x), (a,))


# === expand, permute, transpose ==================================================================

EXPAND = op("ExpandBackward0", lambda F, g, out, a, shape: F.sum_to(g, shape), views=True,
            explain="expand repeats a along new or size-1 dims: g is summed back over them",
            formulas=("g summed to a's shape",),
            check=Check(lambda a: a.expand(2, 3), (any_(1, 3),)))


def _expand_array(g, shape):
    # np.full is far cheaper than np.broadcast_to for the usual 0-d gradient of a sum or mean
    return np.full(shape, g, dtype=g.dtype) if not g.shape else np.broadcast_to(g, shape)


@word("expand", _expand_array)
@exposes(EXPAND, methods=("expand",), params=("input", "size"))
def expand(a, *shape):
    shape = shape_arg(shape)
    x = a.array
    target = expanded_shape(x.shape, shape, x.dtype)
    # a view costs nothing, but any op on it makes an array of its full size
    check_allocation(target, x.dtype)
    return record(EXPAND, expanded_view(x, target), (a,), {"shape": x.shape})


def expanded_view(x, shape):
    """x repeated to `shape` without a copy, writable when x is (as torch's expand: a fill_
    or index_put_ through it writes x; other in-place ops refuse it)."""
    if type(x) is not np.ndarray or not x.flags.writeable:
        return np.broadcast_to(x, shape)
    lead = len(shape) - x.ndim
    strides = (0,) * lead + tuple(0 if n == 1 and m != 1 else stride
                                  for n, m, stride in zip(x.shape, shape[lead:], x.strides))
    return np.lib.stride_tricks.as_strided(x, shape, strides)


def expanded_shape(have: tuple, shape: tuple, dtype) -> tuple:
    """The shape expand(shape) gives a tensor of shape `have`, or torch's error."""
    lead = len(shape) - len(have)
    if lead < 0:
        raise RuntimeError(
            f"expand(torch.{type_word(dtype)}Tensor{{{list(have)}}}, size={list(shape)}): "
            f"the number of sizes provided ({len(shape)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({len(have)})")
    target = tuple(have[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(shape))
    for i in range(lead, len(target)):
        size = have[i - lead]
        if size != 1 and size != target[i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[i]}) must match the existing size "
                f"({size}) at non-singleton dimension {i}.  Target sizes: {list(shape)}.  "
                f"Tensor sizes: {list(have)}")
    return target


@exposes(EXPAND, methods=("expand_as",))
def expand_as(a, other):
    return expand(a, other.array.shape)


@exposes(EXPAND, functions=("broadcast_to",), methods=("broadcast_to",), params=("input", "size"))
def broadcast_to(a, *size):
    return expand(a, *size)


@exposes(EXPAND, functions=("broadcast_tensors",), params=())
def broadcast_tensors(*tensors):
    """Each tensor expanded to the shape they broadcast to (one already of it is returned
    as it is, as torch does)."""
    target = ()
    for i, t in enumerate(tensors):
        if not hasattr(t, "_grad_fn"):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        check_broadcast(target, t.array.shape, t.array.dtype)
        target = np.broadcast_shapes(target, t.array.shape)
    return tuple(t if t.array.shape == target else expand(t, target) for t in tensors)


PERMUTE = op("PermuteBackward0", lambda F, g, out, a, dims: F.permute(g, _inverse(dims)),
             views=True, explain="a permutation of dims: g is permuted back",
             formulas=("g permuted back",), check=Check(lambda a: a.T, (any_(2, 3),)))
TRANSPOSE = op("TransposeBackward0",
               lambda F, g, out, a, dim0, dim1: F.transpose(g, dim0, dim1), views=True,
               explain="a transpose: g is transposed back", formulas=("g with the dims swapped back",),
               check=Check(lambda a: a.transpose(0, 1), (any_(2, 3),)))
T_OP = op("TBackward0", lambda F, g, out, a: F.t(g), views=True,
          explain="a matrix transpose: g is transposed back", formulas=("gᵀ",),
          check=Check(lambda a: a.t(), (any_(2, 3),)))


def _inverse(order):
    return tuple(int(i) for i in np.argsort(order))


@word("permute", lambda g, order: np.transpose(g, order))
@exposes(PERMUTE, functions=("permute",), methods=("permute",), params=("input", "dims"))
def permute(a, *order):
    order = dims(shape_arg(order), a.array.ndim)
    if len(set(order)) != len(order):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if len(order) != a.array.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {a.array.ndim} is "
            f"not equal to len(dims) = {len(order)}")
    return record(PERMUTE, np.transpose(a.array, order), (a,), {"dims": order})


@word("transpose", lambda g, d0, d1: np.swapaxes(g, d0, d1))
@exposes(TRANSPOSE, functions=("swapaxes",), methods=("swapaxes",),
         params=("input", "axis0", "axis1"), inplace=_RESHAPED_IN_PLACE)
@exposes(TRANSPOSE, functions=("transpose",), methods=("transpose",), inplace=_RESHAPED_IN_PLACE)
def transpose(a, dim0, dim1):
    d0, d1 = dims((dim0, dim1), a.array.ndim)
    return record(TRANSPOSE, np.swapaxes(a.array, d0, d1), (a,), {"dim0": d0, "dim1": d1})


def _t_array(g):
    return g.T if g.ndim == 2 else g


@word("t", _t_array)
@exposes(T_OP, functions=("t",), methods=("t",), inplace=_RESHAPED_IN_PLACE)
def t(a):
    if a.array.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.array.ndim}D")
    return record(T_OP, _t_array(a.array), (a,))


@exposes(PERMUTE)
def reversed_dims(a):
    """`a.T`: all dims reversed (a permute, as torch records it)."""
    return permute(a, tuple(range(a.array.ndim - 1, -1, -1)))


@exposes(TRANSPOSE)
def matrix_transpose(a):
    """`a.mT`: the last two dims swapped."""
    return transpose(a, -2, -1)


# === squeeze and unsqueeze =======================================================================

UNSQUEEZE = op("UnsqueezeBackward0", lambda F, g, out, a, dim: F.squeeze_dim(g, dim), views=True,
               explain="unsqueeze adds a dim of size 1: g loses it again",
               formulas=("g squeezed back",), check=Check(lambda a: a.unsqueeze(1), (any_(2, 3),)))


def _unsqueeze_to(F, g, shape):
    for d, n in enumerate(shape):
        if n == 1:
            g = F.unsqueeze(g, d)
    return g


SQUEEZE_ALL = op("SqueezeBackward0", lambda F, g, out, a, shape: _unsqueeze_to(F, g, shape),
                 views=True, explain="squeeze drops dims of size 1: g gets them back",
                 formulas=("g unsqueezed back",), check=Check(lambda a: a.squeeze(), (any_(2, 1, 3),)))
SQUEEZE_DIM = op("SqueezeBackward1",
                 lambda F, g, out, a, shape, dim: F.unsqueeze(g, dim) if shape and shape[dim] == 1
                 else g, views=True, explain="squeeze drops a dim of size 1: g gets it back",
                 formulas=("g unsqueezed back",),
                 check=Check(lambda a: a.squeeze(1), (any_(2, 1, 3),)))
# torch's matmul of a vector and a matrix squeezes its result in place (squeeze_.dim): the
# product is the squeezed tensor itself, not a view of another one
SQUEEZE_INPLACE = op("SqueezeBackward4",
                     lambda F, g, out, a, shape, dim: F.unsqueeze(g, dim),
                     explain="the vector-matrix product's result loses the added dim",
                     formulas=("g unsqueezed back",),
                     check=Check(lambda a, b: a @ b, (any_(3), any_(3, 2))))


def _unsqueezed(x, d):
    """np.expand_dims with torch's stride for the new dim (the size times the stride of the
    dim it goes before; 1 at the end)."""
    out = np.expand_dims(x, d)
    if type(x) is not np.ndarray or not x.ndim:
        return out
    strides = list(x.strides)  # (NumPy's expand_dims may change other size-1 dims' strides)
    strides.insert(d, x.strides[d] * x.shape[d] if d < x.ndim else x.itemsize)
    if tuple(strides) == out.strides:
        return out
    return np.lib.stride_tricks.as_strided(out, out.shape, tuple(strides),
                                           writeable=out.flags.writeable)


@word("unsqueeze", _unsqueezed)
@exposes(UNSQUEEZE, functions=("unsqueeze",), methods=("unsqueeze",), inplace=_RESHAPED_IN_PLACE)
def unsqueeze(a, dim):
    d = dims(dim, a.array.ndim + 1)[0]
    return record(UNSQUEEZE, _unsqueezed(a.array, d), (a,), {"dim": d})


def _squeeze_dim_array(g, dim):
    return np.squeeze(g, dim) if g.ndim and g.shape[dim] == 1 else g


@exposes(SQUEEZE_ALL, SQUEEZE_DIM, functions=("squeeze",), methods=("squeeze",),
         inplace=_RESHAPED_IN_PLACE)
def squeeze(a, dim=None):
    shape = a.array.shape
    if dim is None:
        out = a.array.reshape(tuple(n for n in shape if n != 1))
        return record(SQUEEZE_ALL, out, (a,), {"shape": shape})
    return squeeze_dim(a, dim)


@word("squeeze_dim", _squeeze_dim_array)
def squeeze_dim(a, dim, entry=SQUEEZE_DIM):
    shape = a.array.shape
    d = dims(dim, a.array.ndim)[0] if shape else 0
    out = a.array if not shape or shape[d] != 1 else np.squeeze(a.array, d)
    return record(entry, out, (a,), {"shape": shape, "dim": d})


# === joining and splitting =======================================================================

def _unbind_vjp(F, grads, out, a, dim, shape):
    """Each output's gradient back in its place; outputs no gradient reached give zeros."""
    part = shape[:dim] + shape[dim + 1:]
    present = next(g for g in grads if g is not None)
    zeros = F.zeros(part, array_dtype(present))
    return F.stack([zeros if g is None else g for g in grads], dim)


UNBIND = op("UnbindBackward0", _unbind_vjp, views=True,
            explain="iteration (unbind) splits a into its rows: their gradients are stacked back",
            formulas=("g stacked",),
            check=Check(lambda a: a.unbind(0)[0] * 2 + a.unbind(0)[1].exp(), (any_(3, 2),)))


@exposes(UNBIND, functions=("unbind",), methods=("unbind",))
def unbind(a, dim=0):
    """The rows (along `dim`) as views sharing one node, as iterating over a tensor gives."""
    x = a.array
    if x.ndim == 0:
        raise RuntimeError("Dimension specified as 0 but tensor has no dimensions")
    d = dims(dim, x.ndim)[0]
    parts = [x[(slice(None),) * d + (i, Ellipsis)] for i in range(x.shape[d])]  # 0-d: views
    return record_outputs(UNBIND, parts, (a,), {"dim": d, "shape": x.shape})


def _cat_part(F, g, out, *parts, position, dim, sizes):
    start = builtins.sum(sizes[:position])
    return F.slice(g, dim, start, start + sizes[position])


def _stack_part(F, g, out, *parts, position, dim, sizes):
    return F.select(g, dim, position)


CAT = op("CatBackward0", _cat_part, variadic=True,
         explain="a concatenation: each input gets its slice of g", formulas=("g sliced",),
         check=Check(lambda a, b: cat([a, b], 1), (any_(2, 3), any_(2, 2))))
STACK = op("StackBackward0", _stack_part, variadic=True,
           explain="a stack: each input gets its own entry of g", formulas=("g selected",),
           check=Check(lambda a, b: stack([a, b]), (any_(2, 3), any_(2, 3))))


def _join(entry, tensors, dim, stacked):
    tensors = list(tensors)
    if not tensors:  # torch's two checks, worded and typed each its own way
        if stacked:
            raise RuntimeError("stack expects a non-empty TensorList")
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    ndim = tensors[0].array.ndim + (1 if stacked else 0)
    d = dims(dim, ndim)[0]
    dt = result_dtype(*tensors)
    arrays = [t.array.astype(dt, copy=False) for t in tensors]
    _check_join_shapes(tensors, d, stacked)
    check_allocation((builtins.sum(t.array.size for t in tensors),), dt)
    out = np.stack(arrays, axis=d) if stacked else np.concatenate(arrays, axis=d)
    sizes = tuple(1 if stacked else t.array.shape[d] for t in tensors)
    return record(entry, out, tuple(tensors), {"dim": d, "sizes": sizes})


def _check_join_shapes(tensors, d, stacked):
    first = tensors[0].array.shape
    for number, t in enumerate(tensors[1:], start=1):
        shape = t.array.shape
        if stacked:
            if shape != first:
                raise RuntimeError(
                    f"stack expects each tensor to be equal size, but got {list(first)} at "
                    f"entry 0 and {list(shape)} at entry {number}")
            continue
        if len(shape) != len(first):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(first)} and {len(shape)}")
        for axis, (m, n) in enumerate(zip(first, shape)):
            if axis != d and m != n:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {m} "
                    f"but got size {n} for tensor number {number} in the list.")


@word("cat", lambda arrays, dim: np.concatenate(arrays, axis=dim))
@exposes(CAT, functions=("cat", "concat", "concatenate"))
def cat(tensors, dim=0):
    return _join(CAT, tensors, dim, False)


@word("stack", lambda arrays, dim: np.stack(arrays, axis=dim))
@exposes(STACK, functions=("stack",))
def stack(tensors, dim=0):
    return _join(STACK, tensors, dim, True)


FLIP = op("FlipBackward0", lambda F, g, out, a, dims: F.flip(g, dims),
          explain="a flip reverses the order along dims: g is flipped back",
          formulas=("g flipped back",), check=Check(lambda a: a.flip(1), (any_(2, 3),)))


@word("flip", lambda g, dims_: np.flip(g, dims_) if dims_ else g)
@exposes(FLIP, functions=("flip",), methods=("flip",), params=("input", "dims"))
def flip(a, *dims_, dims=None):
    """`torch.flip(x, dims)`, `x.flip(dims)` and `x.flip(0, 1)`: a copy, not a view."""
    if dims is not None:
        dims_ = (dims,)
    x = a.array
    chosen = _dims(shape_arg(dims_), x.ndim)  # (a 0-d tensor takes dim 0 or -1)
    if not x.ndim:
        chosen = ()
    seen = set()
    for d in chosen:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    out = np.flip(x, chosen).copy() if chosen else x.copy()
    return record(FLIP, out, (a,), {"dims": chosen})


# === dtype conversion ============================================================================

TO_COPY = op("ToCopyBackward0", lambda F, g, out, a: g,
             explain="a dtype conversion passes the gradient through, cast back",
             formulas=("g cast to a's dtype",),
             check=Check(lambda a: a.float(), (any_(2, 3),), eps=1e-3, rtol=1e-3, atol=1e-4))


def to_dtype(a, dtype):
    if a.array.dtype == dtype.np:
        return a
    out = a.array.astype(dtype.np)
    # a cast to a non-floating dtype cuts the graph, as in torch
    return record(TO_COPY, out, (a,)) if dtype.is_floating_point else type(a)._wrap(out)


def _cast_tensor(g, np_dtype):
    return g if g.array.dtype == np_dtype else record(TO_COPY, g.array.astype(np_dtype), (g,))


word("cast", lambda g, np_dtype: g.astype(np_dtype))(_cast_tensor)
