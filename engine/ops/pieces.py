"""Pieces, repeats and triangles: split/chunk, narrow, index_select, index_copy/index_add/
index_fill, repeat, repeat_interleave, hstack/vstack,
view_as/reshape_as/type_as, diag, tril/triu, trace.

Rules are torch's backward formulas with the same ops (split_backward's cat,
repeat_backward's reshape and sums, index_select's index_add into zeros, trace's index_fill
into zeros), so a gradient made with create_graph=True prints torch's graph.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..graph.nodes import NUMBERS, record, record_outputs
from .operands import ArgumentTypeError, array_dtype, check_sizes, dims, shape_arg, type_word
from .einsum import _diagonal_array
from .index import slice_dim
from .shape import CLONE, cat, expand, flatten, reshape, to_dtype, unsqueeze, view
from .registry import METHOD_IN_PLACE, OWN_IN_PLACE, Check, Family, any_, no_in_place
from ..core.session import check_allocation

family = Family("Pieces, repeats and triangles", inplace=no_in_place(
    "pieces, copies and views: new tensors, as in torch"))
op, exposes, word = family.op, family.exposes, family.word


# === split and chunk =============================================================================

def _split_vjp(F, grads, out, a, dim, sizes):
    """torch's split_backward: the pieces' gradients concatenated, zeros for a piece no
    gradient reached."""
    present = next(g for g in grads if g is not None)
    shape = list(a.shape if hasattr(a, "shape") else ())
    parts = []
    for g, size in zip(grads, sizes):
        if g is None:
            shape[dim] = size
            g = F.zeros(tuple(shape), array_dtype(present))
        parts.append(g)
    return F.cat(parts, dim)


SPLIT = op("SplitBackward0", _split_vjp, views=True, saves="i",
           explain="split cuts a into pieces of one size: their gradients are concatenated back",
           formulas=("g of each piece, concatenated",),
           check=Check(lambda a: a.split(2, 1)[0] * a.split(2, 1)[1].exp(), (any_(3, 4),)))
SPLIT_SIZES = op("SplitWithSizesBackward0", _split_vjp, views=True, saves="i",
                 explain="split cuts a into pieces of the sizes given: their gradients are "
                         "concatenated back",
                 formulas=("g of each piece, concatenated",),
                 check=Check(lambda a: a.split([1, 3], 1)[1].exp(), (any_(3, 4),)))


def _pieces(entry, a, d, sizes):
    x = a.array
    starts = np.cumsum((0,) + tuple(sizes[:-1]))
    key = (slice(None),) * d
    parts = [x[key + (slice(int(s), int(s) + n),)] for s, n in zip(starts, sizes)]
    return record_outputs(entry, parts, (a,), {"dim": d, "sizes": tuple(sizes)})


def _split_dim(a, dim):
    x = a.array
    if not x.ndim:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    return dims(dim, x.ndim)[0]


@exposes(SPLIT, SPLIT_SIZES, methods=("split",), params=("input", "split_size", "dim"))
@exposes(SPLIT, SPLIT_SIZES, functions=("split",),
         params=("tensor", "split_size_or_sections", "dim"))
def split(a, split_size_or_sections, dim=0):
    d = _split_dim(a, dim)
    n = a.array.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n or builtins.min(sizes, default=0) < 0:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}")
        return _pieces(SPLIT_SIZES, a, d, sizes)
    size = split_size_or_sections
    if not isinstance(size, int):  # (torch's Tensor.split hands anything else to split_with_sizes)
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                        f"of ints, not {type(size).__name__}")
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}")
    count = builtins.max(-(-n // size), 1) if size else 1
    sizes = [builtins.min(size, n - i * size) for i in range(count)]
    return _pieces(SPLIT, a, d, sizes)


@exposes(SPLIT, functions=("chunk",), methods=("chunk",))
def chunk(a, chunks, dim=0):
    if type(chunks) not in NUMBERS or isinstance(chunks, float):
        raise TypeError(f"chunk(): argument 'chunks' (position 1) must be int, not "
                        f"{type(chunks).__name__}")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _split_dim(a, dim)
    n = a.array.shape[d]
    return split(a, -(-n // chunks) if n else 0, d)  # torch: pieces of ceil(n / chunks)


# === narrow, index_select =========================================================================

@exposes(functions=("narrow",), methods=("narrow",))
def narrow(a, dim, start, length):
    x = a.array
    if not x.ndim:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = dims(dim, x.ndim)[0]
    size = x.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    start = start % size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return slice_dim(a, d, start, start + length)  # SliceBackward0, a view


def _index_add_arrays(zeros_shape, dim, index, g):
    if not zeros_shape:  # a 0-d tensor's one element
        return np.array(g, copy=True)
    out = np.zeros(zeros_shape, g.dtype)
    np.add.at(out, (slice(None),) * dim + (index,), g)
    return out


INDEX_SELECT = op("IndexSelectBackward0",
                  lambda F, g, out, a, dim, index, shape: F.index_add_zeros(shape, dim, index, g),
                  explain="index_select picks slices along a dim: g is added back where they "
                          "came from",
                  formulas=("g added at index (repeats add up)",),
                  check=Check(lambda a: a.index_select(1, _long(a, [2, 0, 2])), (any_(2, 3),)),
                  saves="p")
INDEX_ADD = op("IndexAddBackward0", lambda F, g, out, a, source, dim, index, alpha=1, shape=None: g,
               lambda F, g, out, a, source, dim, index, alpha=1, shape=None: _source_grad(
                   F, g, shape, dim, index, alpha),
               explain="index_add adds source's slices at index (index_select's gradient is "
                       "one, into zeros): a gets g, source g selected at index",
               formulas=("g", "g selected at index (times alpha)"),
               check=Check(lambda a: a.index_select(0, _long(a, [1, 1])) ** 2, (any_(2, 3),)),
               saves="p")


def _long(like, values):
    # (through the public API, so that the same check runs on torch's tensors too)
    return like.new_tensor(values).long()


@word("index_add_zeros", _index_add_arrays)
def _index_add_zeros(shape, dim, index, g):
    zeros = type(g)._wrap(np.zeros(shape, g.array.dtype))
    return record(INDEX_ADD, _index_add_arrays(shape, dim, index, g.array), (zeros, g),
                  {"dim": dim, "index": index})


@word("index_select", lambda g, dim, index: np.take(g, index, axis=dim) if np.ndim(g) else g)
@exposes(INDEX_SELECT, functions=("index_select",), methods=("index_select",))
def index_select(a, dim, index):
    if not hasattr(index, "_grad_fn"):
        raise TypeError("index_select(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}")
    x, idx = a.array, index.array
    if idx.dtype.kind not in "iu" or idx.dtype.kind == "b":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    idx = idx.reshape(-1).astype(np.int64)
    if not x.ndim:
        if idx.size != 1:
            raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                               f"{idx.size} value(s)")
        dims(dim, 0)
        if idx[0] != 0:
            raise IndexError("index out of range in self")
        return record(INDEX_SELECT, np.array(x, copy=True), (a,),
                      {"dim": 0, "index": idx, "shape": ()})
    d = dims(dim, x.ndim)[0]
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[d]):
        raise IndexError("index out of range in self")
    return record(INDEX_SELECT, np.take(x, idx, axis=d), (a,),
                  {"dim": d, "index": idx, "shape": x.shape})


# === repeat ======================================================================================

def _repeat_vjp(F, g, out, a, repeats, shape):
    """torch's repeat_backward: leading new dims summed away, then one reshape that splits each
    repeated dim into (repeat, size) and one sum over the repeats."""
    if 0 in repeats:
        return F.zeros(shape, array_dtype(g))
    for _ in range(len(repeats) - len(shape)):
        g = F.sum_dims(g, (0,), False)
    sizes, summed = [], []
    for d, size in enumerate(shape):
        if repeats[d + len(repeats) - len(shape)] != 1:
            sizes.append(repeats[d + len(repeats) - len(shape)])
            summed.append(len(sizes) - 1)
        sizes.append(size)
    if summed:
        g = F.sum_dims(F.reshape(g, tuple(sizes)), tuple(summed), False)
    return g


REPEAT = op("RepeatBackward0", _repeat_vjp,
            explain="repeat tiles a: each element gets the sum of g over its copies",
            formulas=("g summed over the copies",),
            check=Check(lambda a: a.repeat(2, 1, 3), (any_(2, 3),)))


@exposes(REPEAT, methods=("repeat",), params=("input", "repeats"))
def repeat(a, *repeats):
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    repeats = shape_arg(repeats)
    x = a.array
    if len(repeats) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(repeats) - x.ndim) + x.shape
    target = tuple(n * r for n, r in zip(padded, repeats))
    check_sizes(target)
    check_allocation(target, x.dtype)
    out = np.tile(x.reshape(padded), repeats)
    return record(REPEAT, out, (a,), {"repeats": repeats, "shape": x.shape})


# === index_copy, index_add, index_fill ===========================================================

def _as_index(g, index):
    """An index array as index_select's word takes it: a tensor under create_graph."""
    return type(g)._wrap(index) if hasattr(g, "_grad_fn") else index


def _source_grad(F, g, shape, dim, index, alpha=1):
    """torch's source gradient of index_copy/index_add: g at index, expanded to source's
    shape (None: index_select's own gradient, already of that shape)."""
    picked = F.index_select(g, dim, _as_index(g, index))
    if alpha != 1:
        picked = picked * alpha
    if shape is None or len(shape) != len(picked.shape):
        return picked  # (a 0-d source: the engine sums the one element back)
    return F.expand(picked, shape)


def _index_fill_array(g, dim, index, value):
    out = np.array(g, copy=True)
    if out.ndim:
        out[(slice(None),) * dim + (index,)] = value
    elif index.size:
        out[()] = value
    return out


INDEX_FILL_NUMBER = op(
    "IndexFillBackward0", lambda F, g, out, a, dim, index, value: F.index_fill(g, dim, index, 0),
    explain="index_fill writes a number at index along a dim: the old values there get nothing",
    formulas=("g, 0 where filled",), saves="p",
    check=Check(lambda a: a.index_fill(1, _long(a, [2, 0]), 1.5), (any_(2, 3),)))
INDEX_FILL_TENSOR = op(
    "IndexFillBackward1", lambda F, g, out, a, value, dim, index: F.index_fill(g, dim, index, 0),
    lambda F, g, out, a, value, dim, index: F.sum_all(
        F.index_select(g, dim, _as_index(g, np.unique(index)))),
    explain="index_fill with a 0-d tensor v: v gets the sum of g over the filled slices",
    formulas=("g, 0 where filled", "Σ g at the (distinct) indices"), saves="p",
    check=Check(lambda a, v: a.index_fill(0, _long(a, [1, 1]), v), (any_(3, 2), any_())))
INDEX_COPY = op(
    "IndexCopyBackward0",
    lambda F, g, out, a, source, dim, index, shape: F.index_fill(g, dim, index, 0),
    lambda F, g, out, a, source, dim, index, shape: _source_grad(F, g, shape, dim, index),
    saves="p",
    explain="index_copy writes source's slices at index along a dim: a keeps g elsewhere, "
            "source gets g at index",
    formulas=("g, 0 at index", "g selected at index"),
    check=Check(lambda a, s: a.index_copy(1, _long(a, [2, 0]), s), (any_(2, 3), any_(2, 2))))


@word("index_fill", _index_fill_array)
def _index_fill_word(g, dim, index, value):
    return record(INDEX_FILL_NUMBER, _index_fill_array(g.array, dim, index, value), (g,),
                  {"dim": dim, "index": index, "value": value})


def _index_positions(name: str, x, d: int, idx, kinds: str, negative: bool, copy: bool):
    """index as int64 positions along d, with torch's checks for `name`."""
    i = idx.array
    if copy:
        if i.ndim > 1:
            raise IndexError(f"{name}(): Index should have dimension 1 or 0 (got {i.ndim})")
        if i.dtype != np.int64:
            raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                               f"{type_word(i.dtype)}")
    elif name == "index_add_":
        if i.ndim > 1:
            raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                             f"{i.ndim} with type: {type_word(i.dtype)} and size: "
                             f"{list(i.shape)}")
        if i.dtype not in (np.int32, np.int64):
            raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                               f"{type_word(i.dtype)}")
    else:
        if i.ndim > 1:
            raise RuntimeError("Index has to be a vector/scalar")
        if i.dtype != np.int64:
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
    return i.reshape(-1).astype(np.int64)


def _bounds(prefix: str, idx, size: int, d: int, negative: bool):
    for k in idx:
        if not (-size <= k < size if negative else 0 <= k < size):
            raise IndexError(f"{prefix}index {k} is out of bounds for dimension {d} with size "
                             f"{size}")
    return np.where(idx < 0, idx + size, idx) if negative else idx


def _tensor_arg(name: str, value):
    if not hasattr(value, "_grad_fn"):
        raise ArgumentTypeError(name, "Tensor", value)


@exposes(INDEX_COPY, functions=("index_copy",), methods=("index_copy",), inplace=OWN_IN_PLACE)
def index_copy(a, dim, index, source):
    _tensor_arg("index", index)
    _tensor_arg("source", source)
    x, src = a.array, source.array
    d = dims(dim, x.ndim)[0]
    # (torch's order: the index's rank, the scalar and rank rules, then the dtypes)
    if index.array.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index.array.ndim})")
    if not src.ndim and index.array.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {index.array.size})")
    if x.ndim and src.ndim and x.ndim != src.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({src.ndim}), "
                         f"destination dimensionality ({x.ndim})")
    idx = _index_positions("index_copy_", x, d, index, "l", False, True)
    if x.dtype != src.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {type_word(x.dtype)} and (source) "
                           f"{type_word(src.dtype)}")
    if x.ndim and src.ndim:
        for k, (m, n) in enumerate(zip(x.shape[:d] + x.shape[d + 1:],
                                       src.shape[:d] + src.shape[d + 1:])):
            if m != n:
                raise RuntimeError(f"index_copy_(): Source/destination tensor must have same "
                                   f"slice shapes. Destination slice shape: {m} at dimension {k} "
                                   f"and source slice shape: {n} at dimension {k}.")
    count = src.shape[d] if src.ndim else 1
    if idx.size != count:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({count})")
    idx = _bounds("index_copy_(): ", idx, x.shape[d] if x.ndim else 1, d, False)
    out = np.array(x, copy=True)
    if x.ndim:
        out[(slice(None),) * d + (idx,)] = src if src.ndim else src.reshape((1,) * x.ndim)
    else:
        out[()] = src.reshape(())
    return record(INDEX_COPY, out, (a, source), {"dim": d, "index": idx, "shape": src.shape})


def _fused_add_at(out, d, idx, src, alpha):
    """out[idx[k]] += alpha * src[k] along d, one index at a time, each step rounded once
    (torch adds with alpha as a fused multiply-add): computed wider, then rounded."""
    wide = np.longdouble if out.dtype == np.float64 else np.float64
    lead = (slice(None),) * d
    for k, i in enumerate(idx):
        here = lead + (i,)
        out[here] = (out[here].astype(wide) + wide(alpha) * src[lead + (k,)].astype(wide)
                     ).astype(out.dtype)


@exposes(INDEX_ADD, functions=("index_add",), methods=("index_add",), inplace=OWN_IN_PLACE)
def index_add(a, dim, index, source, *, alpha=1):
    _tensor_arg("index", index)
    _tensor_arg("source", source)
    x, src = a.array, source.array
    d = dims(dim, x.ndim)[0]
    idx = _index_positions("index_add_", x, d, index, "il", False, False)
    if x.dtype != src.dtype:
        raise RuntimeError(f"index_add_(): self ({type_word(x.dtype)}) and source "
                           f"({type_word(src.dtype)}) must have the same scalar type")
    if d != 0 and d >= src.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {src.ndim}")
    if idx.size != (src.shape[d] if src.ndim else 1):
        if not src.ndim:  # (torch's message asks a 0-d source for its size)
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({src.shape[d]}), for dim: {d}")
    if src.ndim != x.ndim or src.shape[:d] + src.shape[d + 1:] != x.shape[:d] + x.shape[d + 1:]:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(src.shape)}")
    size = x.shape[d] if x.ndim else 1
    bad = [int(k) for k in idx if not 0 <= k < size]
    if bad and not (x.ndim > 1 and x.size == 0):
        # torch adds a first or last dim of a tensor of 2 or more dims with scatter_add (for
        # alpha 1 and int64 indices), whose words differ from its slice-by-slice loop's
        if x.ndim > 1 and alpha == 1 and index.array.dtype == np.int64 and \
                d in (0, x.ndim - 1):
            raise RuntimeError(f"index {bad[0]} is out of bounds for dimension {d} with size "
                               f"{size}")
        raise IndexError("index out of range in self")
    scale = alpha if x.dtype.kind == "f" else int(alpha)
    out = np.array(x, copy=True)
    if not x.size:
        pass  # (nothing to add to; torch checks no index then)
    elif x.ndim and scale != 1 and x.dtype.kind == "f":
        _fused_add_at(out, d, idx, src, scale)
    elif x.ndim:
        np.add.at(out, (slice(None),) * d + (idx,), src * np.asarray(scale, x.dtype)
                  if scale != 1 else src)
    else:
        out = out + (src * np.asarray(scale, x.dtype)).reshape(())
    params = {"dim": d, "index": idx, "shape": src.shape}
    if alpha != 1:
        params["alpha"] = alpha
    return record(INDEX_ADD, np.asarray(out, x.dtype), (a, source), params)


@exposes(INDEX_FILL_NUMBER, INDEX_FILL_TENSOR, functions=("index_fill",),
         methods=("index_fill",), inplace=OWN_IN_PLACE)
def index_fill(a, dim, index, value):
    _tensor_arg("index", index)
    tensor = hasattr(value, "_grad_fn")
    if not tensor and (not isinstance(value, (int, float, bool)) or value is None):
        raise ArgumentTypeError("value", "Number", value)
    x = a.array
    d = dims(dim, x.ndim)[0]
    idx = _index_positions("index_fill_", x, d, index, "l", True, False)
    if tensor and value.array.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.array.ndim} dimension(s).")
    idx = _bounds("", idx, x.shape[d] if x.ndim else 1, d, True)
    fill = value.array if tensor else value
    out = _index_fill_array(x, d, idx, np.asarray(fill).astype(x.dtype))
    if tensor:
        return record(INDEX_FILL_TENSOR, out, (a, value), {"dim": d, "index": idx})
    return record(INDEX_FILL_NUMBER, out, (a,), {"dim": d, "index": idx, "value": value})


def _written(name: str, forward):
    def method(a, *args, **kwargs):
        from .inplace import check_inplace, inplace  # noqa: PLC0415 - (that family comes later)

        check_inplace(a)
        return inplace(a, forward(a, *args, **kwargs), checked=True)
    method.__name__ = method.__qualname__ = name
    method.__wrapped__ = forward
    return method


for _name, _forward in (("index_copy_", index_copy), ("index_add_", index_add),
                        ("index_fill_", index_fill)):
    exposes(methods=(_name,))(_written(_name, _forward))


# === repeat_interleave ===========================================================================
#
# Composed as torch composes it: an int repeats unsqueezes, expands, clones and views
# (ViewBackward0); a tensor of repeats picks with index_select (IndexSelectBackward0).

def _repeated_positions(counts, output_size, single: bool):
    """torch.repeat_interleave(repeats): each position i, counts[i] times."""
    c = counts.array
    if c.ndim != 1 and single or c.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat" if single else
                           "repeats must be 0-dim or 1-dim tensor")
    if c.dtype.kind not in "iu" or c.dtype == np.bool_:
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{type_word(c.dtype)}'")
    c = c.reshape(-1).astype(np.int64)
    if c.size and c.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(c.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    check_allocation((total,), np.int64)
    return np.repeat(np.arange(c.size, dtype=np.int64), c)


def _int_arg(value, name: str):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ArgumentTypeError(name, "int", value)


@exposes(functions=("repeat_interleave",))
def repeat_interleave(a, repeats=None, dim=None, *, output_size=None):
    _int_arg(dim, "dim")
    _int_arg(output_size, "output_size")
    if repeats is None:  # torch.repeat_interleave(repeats): the positions, repeated
        return type(a)._wrap(_repeated_positions(a, output_size, True))
    tensor = hasattr(repeats, "_grad_fn")
    if not tensor:
        _int_arg(repeats, "repeats")
    if dim is None:
        a, dim = flatten(a), 0
    x = a.array
    if not tensor:
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        d = dims(dim, x.ndim)[0]
        wanted = x.shape[d] * repeats if x.ndim else repeats
        if output_size is not None and output_size != wanted:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {wanted} but "
                               f"got {output_size}")
        u = unsqueeze(a, d + 1)
        shape = list(u.array.shape)
        shape[d + 1] = repeats
        check_allocation(tuple(shape), x.dtype)
        e = expand(u, tuple(shape))
        c = record(CLONE, np.array(e.array, order="C", copy=True), (e,))
        return view(c, x.shape[:d] + (wanted,) + x.shape[d + 1:])
    counts = repeats.array
    d = dims(dim, x.ndim)[0]
    if counts.ndim <= 1 and counts.size == 1 and x.ndim and x.shape[d] != 1:
        repeats = type(repeats)._wrap(np.full(x.shape[d], counts.reshape(-1)[0], counts.dtype))
    elif counts.ndim <= 1 and x.ndim and counts.size != x.shape[d]:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size({d}) = {x.shape[d]}")
    index = type(a)._wrap(_repeated_positions(repeats, output_size, False))
    return index_select(a, d, index)


@exposes(methods=("repeat_interleave",))
def repeat_interleave_method(a, repeats, dim=None, *, output_size=None):
    """Tensor.repeat_interleave: its repeats are not optional (no single-tensor form)."""
    return repeat_interleave(a, repeats, dim, output_size=output_size)


# === the shape and dtype of another tensor ======================================================

@exposes(methods=("view_as",))
def view_as(a, other):
    return view(a, other.array.shape)


@exposes(methods=("reshape_as",))
def reshape_as(a, other):
    return reshape(a, other.array.shape)


@exposes(methods=("type_as",))
def type_as(a, other):
    return to_dtype(a, other.dtype)


# === hstack and vstack ===========================================================================

def _at_least(t, ndim):
    x = t.array
    if x.ndim >= ndim:
        return t
    if ndim == 2 and x.ndim == 1:
        return unsqueeze(t, 0)
    return reshape(t, (1,) * ndim)


def _stacked(name, tensors, ndim):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {_type_name(tensors)}")
    for i, t in enumerate(tensors):
        if not hasattr(t, "_grad_fn"):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{_type_name(t)}")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    parts = [_at_least(t, ndim) for t in tensors]
    return cat(parts, 0 if name == "vstack" or parts[0].array.ndim == 1 else 1)


def _type_name(value) -> str:
    return "Tensor" if hasattr(value, "_grad_fn") else type(value).__name__


@exposes(functions=("hstack",))
def hstack(tensors):
    return _stacked("hstack", tensors, 1)


@exposes(functions=("vstack",))
def vstack(tensors):
    return _stacked("vstack", tensors, 2)


# === diag, tril, triu, trace =====================================================================

DIAG_EMBED = op("DiagEmbedBackward0",
                lambda F, g, out, a, offset: F.diagonal(g, offset, 0, 1),
                explain="diag of a vector builds a matrix: the vector gets g's diagonal",
                formulas=("g's diagonal",),
                check=Check(lambda a: a.diag(1), (any_(3),)))
DIAG_COPY = op("DiagonalBackward0_copy",
               lambda F, g, out, a, shape, offset: F.diagonal_backward(g, shape, offset, 0, 1),
               explain="diag of a matrix copies its diagonal: g goes back onto the diagonal",
               formulas=("g on a's diagonal, 0 elsewhere",),
               check=Check(lambda a: a.diag(-1), (any_(3, 4),)))


@exposes(DIAG_EMBED, DIAG_COPY, functions=("diag",), methods=("diag",))
def diag(a, diagonal=0):
    x = a.array
    if x.ndim == 1:
        n = x.shape[0] + abs(diagonal)
        check_allocation((n, n), x.dtype)
        return record(DIAG_EMBED, np.diag(x, diagonal), (a,), {"offset": diagonal})
    if x.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
    out = np.array(_diagonal_array(x, diagonal, 0, 1), copy=True)
    return record(DIAG_COPY, out, (a,), {"shape": x.shape, "offset": diagonal})


TRIL = op("TrilBackward0", lambda F, g, out, a, diagonal: F.tril(g, diagonal),
          explain="tril keeps the lower triangle: g flows there only",
          formulas=("g's lower triangle",),
          check=Check(lambda a: a.tril(-1), (any_(3, 4),)))
TRIU = op("TriuBackward0", lambda F, g, out, a, diagonal: F.triu(g, diagonal),
          explain="triu keeps the upper triangle: g flows there only",
          formulas=("g's upper triangle",),
          check=Check(lambda a: a.triu(1), (any_(2, 3, 4),)))


def _triangle(name, entry, keep, a, diagonal):
    if not isinstance(diagonal, int):
        raise ArgumentTypeError("diagonal", "int", diagonal)
    x = a.array
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return record(entry, keep(x, diagonal), (a,), {"diagonal": diagonal})


@word("tril", np.tril)
@exposes(TRIL, functions=("tril",), methods=("tril",), inplace=METHOD_IN_PLACE)
def tril(a, diagonal=0):
    return _triangle("tril", TRIL, np.tril, a, diagonal)


@word("triu", np.triu)
@exposes(TRIU, functions=("triu",), methods=("triu",), inplace=METHOD_IN_PLACE)
def triu(a, diagonal=0):
    return _triangle("triu", TRIU, np.triu, a, diagonal)


def _trace_vjp(F, g, out, a, shape):
    """torch's trace_backward: g written into zeros at the diagonal's flat positions
    (index_fill), viewed as the matrix."""
    flat = np.arange(0, shape[0] * shape[1], shape[1] + 1)[:builtins.min(shape)]
    return F.reshape(F.index_fill_zeros(shape[0] * shape[1], flat, g), shape)


TRACE = op("TraceBackward0", _trace_vjp,
           explain="the trace sums the diagonal: each diagonal element gets g",
           formulas=("g on the diagonal, 0 elsewhere",),
           check=Check(lambda a: a.trace(), (any_(3, 4),)))


# trace's gradient writes g into zeros as torch's index_fill_ with a 0-d tensor does: its node
# is index_fill's IndexFillBackward1
def _index_fill_arrays(n, index, value):
    out = np.zeros(n, np.asarray(value).dtype)
    out[index] = value
    return out


@word("index_fill_zeros", _index_fill_arrays)
def _index_fill_zeros(n, index, value):
    zeros = type(value)._wrap(np.zeros(n, value.array.dtype))
    return record(INDEX_FILL_TENSOR, _index_fill_arrays(n, index, value.array), (zeros, value),
                  {"dim": 0, "index": index})


@exposes(TRACE, functions=("trace",), methods=("trace",))
def trace(a):
    x = a.array
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    if x.dtype == np.bool_:
        raise RuntimeError('"trace" not implemented for \'Bool\'')
    out_dt = np.int64 if x.dtype.kind in "iu" else x.dtype
    return record(TRACE, np.trace(x, dtype=out_dt), (a,), {"shape": x.shape})

