"""Rolls, grids, padding and uniques: roll, meshgrid, F.pad (constant, reflect, replicate),
masked_select, unique / unique_consecutive and diff.

Rules are torch's backward formulas with the same ops (roll's roll back, constant_pad_nd's
constant_pad_nd with the pads negated, masked_select's masked_scatter into zeros, the
reflection and replication pads' own backward ops), so a gradient made with
create_graph=True prints torch's graph. meshgrid and diff are made of other ops, as in torch.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..graph.nodes import record
from .operands import check_broadcast, check_sizes, dims
from .logical import logical_xor
from .arith import sub
from .inplace import COPY_INTO  # (diff with n=0 is zeros_like(a).copy_(a), as in torch)
from .pieces import narrow
from .shape import cat, expand, view
from .registry import Check, Family, any_, no_in_place
from ..core.session import check_allocation, warn_once
from ..core.unsupported import Unsupported

family = Family("Rolls, grids, padding and uniques", inplace=no_in_place(
    "a rearranged or padded copy: a new tensor"))
op, exposes, word = family.op, family.exposes, family.word


def _is_tensor(value) -> bool:
    return hasattr(value, "_grad_fn")


def _type_name(value) -> str:
    return "Tensor" if _is_tensor(value) else type(value).__name__


def _ints(value) -> bool:
    return type(value) is int or isinstance(value, np.integer)


# === roll ========================================================================================

def _roll_array(x, shifts, dims_):
    return np.roll(x, shifts, dims_) if x.ndim else np.array(x, copy=True)


ROLL = op("RollBackward0",
          lambda F, g, out, a, shifts, dims: F.roll(g, tuple(-s for s in shifts), dims),
          explain="roll shifts a's elements around: g is rolled back the other way",
          formulas=("g rolled by -shifts",),
          check=Check(lambda a: a.roll((1, -2), (0, 1)) * a, (any_(3, 4),)))


def _int_tuple(function, param, position, value) -> tuple:
    """An int or a sequence of ints, refused as torch's parser words it: by the first
    element's type, or by a later element's 'failed to unpack'."""
    if _ints(value):
        return (int(value),)
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{function}(): argument '{param}' (position {position}) must be tuple "
                        f"of ints, not {_type_name(value)}")
    for i, item in enumerate(value):
        if _ints(item):
            continue
        if i == 0:
            raise TypeError(f"{function}(): argument '{param}' (position {position}) must be "
                            f"tuple of ints, but found element of type {_type_name(item)} at "
                            "pos 0")
        raise TypeError(f"{function}(): argument '{param}' failed to unpack the object at pos "
                        f"{i + 1} with error \"type must be tuple of ints,but got "
                        f"{_type_name(item)}\"")
    return tuple(int(item) for item in value)


@word("roll", _roll_array)
@exposes(ROLL, functions=("roll",), methods=("roll",))
def roll(a, shifts, dims=None):
    shifts = _int_tuple("roll", "shifts", 2, shifts)
    chosen = () if dims is None else _int_tuple("roll", "dims", 3, dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if (chosen or len(shifts) != 1) and len(shifts) != len(chosen):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(chosen)}")
    x = a.array
    axes = _dims_of(chosen, x.ndim) if chosen else None
    out = _roll_array(x, shifts if axes else shifts[0], axes)
    return record(ROLL, out, (a,), {"shifts": shifts, "dims": axes})


def _dims_of(chosen, ndim):
    return tuple(dims(d, ndim)[0] for d in chosen)


# === meshgrid ====================================================================================

_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                     "indexing argument. (Triggered internally at "
                     "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)")


@exposes(functions=("meshgrid",), params=())
def meshgrid(*tensors, indexing=None):
    """Each tensor viewed along its own dim and expanded to the grid (torch's view + expand);
    'xy' swaps the first two before and after."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not _is_tensor(t):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{_type_name(t)}")
    if indexing is None:
        warn_once(_MESHGRID_WARNING, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for first, second in zip(tensors, tensors[1:]):
        if first.array.dtype != second.array.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("xy", "ij"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    for t in order:
        if t.array.ndim > 1:  # (torch's message prints the tensor the C++ way)
            raise Unsupported("torch.meshgrid of a tensor with more than 1 dimension")
    shape = tuple(int(t.array.size) for t in order)
    check_sizes(shape)
    grids = []
    for i, t in enumerate(order):
        place = [1] * len(order)
        place[i] = -1
        grids.append(expand(view(t, tuple(place)), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# === F.pad =======================================================================================

def _constant_pad_array(x, pad, value):
    """x with pad[2k], pad[2k+1] elements of `value` before and after its dim -1-k; a negative
    pad crops instead."""
    key = [slice(None)] * x.ndim
    widths = [(0, 0)] * x.ndim
    for k in range(len(pad) // 2):
        d = x.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        key[d] = slice(-before if before < 0 else 0, after if after < 0 else None)
        widths[d] = (builtins.max(before, 0), builtins.max(after, 0))
    cropped = x[tuple(key)]
    return np.pad(cropped, widths, constant_values=np.array(value).astype(x.dtype))


def _check_crop(shape, pad):
    """The errors of the narrows constant_pad_nd crops a negative pad with."""
    for k in range(len(pad) // 2):
        d = len(shape) - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        size = shape[d]
        narrows = ([(-before, size + before)] if before < 0 else []) + \
            ([(0, None)] if after < 0 else [])
        for start, length in narrows:
            length = size + after if length is None else length
            if length < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
            if not -size <= start <= size:
                raise IndexError(f"start out of range (expected to be in range of [{-size}, "
                                 f"{size}], but got {start})")
            if start + length > size:
                raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                                   f"({size}).")
            size = length
        if shape[d] + before + after < 0:
            raise RuntimeError(
                f"The input size {shape[d]}, plus negative padding {before} and {after} resulted "
                f"in a negative output size, which is invalid. Check dimension {d} of your input.")


CONSTANT_PAD = op("ConstantPadNdBackward0",
                  lambda F, g, out, a, pad: F.constant_pad(g, tuple(-p for p in pad), 0),
                  explain="a constant pad puts a in the middle of a bigger tensor: a gets the "
                          "middle part of g",
                  formulas=("g with the padding cut off",),
                  check=Check(lambda a: pad(a, (1, 2, -1, 1), value=0.5) ** 2, (any_(3, 4),)))


def _padded_shape(shape, pad) -> tuple:
    sizes = list(shape)
    for k in range(len(pad) // 2):
        sizes[len(shape) - 1 - k] += pad[2 * k] + pad[2 * k + 1]
    return tuple(sizes)


@word("constant_pad", _constant_pad_array)
def constant_pad(a, pad, value):
    x = a.array
    _check_crop(x.shape, pad)
    check_allocation(_padded_shape(x.shape, pad), x.dtype)
    out = _constant_pad_array(x, pad, value)
    return record(CONSTANT_PAD, out, (a,), {"pad": tuple(pad)})


def _pad_indices(size, before, after, reflect):
    """For each output position along one dim, the input position it copies (torch's
    reflection and replication index rules, which negative pads follow too)."""
    j = np.arange(-before, size + after)
    if reflect:
        j = np.abs(j)
        j = np.where(j >= size, 2 * (size - 1) - j, j)
    else:
        j = np.clip(j, 0, size - 1)
    return j


def _edge_pad_array(x, pad, reflect):
    for k in range(len(pad) // 2):
        d = x.ndim - 1 - k
        x = np.take(x, _pad_indices(x.shape[d], pad[2 * k], pad[2 * k + 1], reflect), axis=d)
    return x


def _edge_pad_backward_array(g, a, pad, reflect):
    shape = np.shape(a)
    for k in range(len(pad) // 2):
        d = len(shape) - 1 - k
        index = _pad_indices(shape[d], pad[2 * k], pad[2 * k + 1], reflect)
        sizes = list(g.shape)
        sizes[d] = shape[d]
        out = np.zeros(sizes, g.dtype)
        np.add.at(out, (slice(None),) * d + (index,), g)
        g = out
    return g


def _dtype_of(g):
    return g.array.dtype if _is_tensor(g) else np.asarray(g).dtype


_EDGE_PADS = {}  # (reflect, number of padded dims) -> (forward entry, backward entry)


def _edge_entries(reflect: bool, n: int):
    kind = "Reflection" if reflect else "Replication"
    what = "reflected" if reflect else "repeated"
    shape = (2, 3, 4, 5)[-n - 1:]
    pads = (1, 2, 2, 1, 1, 0)[:2 * n]
    mode = "reflect" if reflect else "replicate"
    backward = op(f"{kind}Pad{n}DBackwardBackward0",
                  lambda F, g, out, gg, a, pad, shape: F.edge_pad(g, pad, reflect),
                  lambda F, g, out, gg, a, pad, shape: F.zeros(shape, _dtype_of(g)),
                  explain=f"the gradient of a {mode} pad, as an op of its own: the border's "
                          "gradients added into the input's places; its own gradient pads again",
                  formulas=(f"g padded ({mode})", "0"),
                  check=Check(lambda a: pad(a, pads, mode=mode) ** 2, (any_(*shape),)))
    forward = op(f"{kind}Pad{n}DBackward0",
                 lambda F, g, out, a, pad: F.edge_pad_backward(g, a, pad, reflect),
                 saves="i",
                 explain=f"a {mode} pad copies a's border elements outward ({what}): each "
                         "element gets g from every place it was copied to",
                 formulas=("g of the copies, added up",),
                 check=Check(lambda a: pad(a, pads, mode=mode), (any_(*shape),)))
    _EDGE_PADS[reflect, n] = (forward, backward)


for _reflect in (True, False):
    for _n in (1, 2, 3):
        _edge_entries(_reflect, _n)


@word("edge_pad", lambda g, pad, reflect: _edge_pad_array(g, pad, reflect))
def edge_pad(a, pad, reflect):
    entry = _EDGE_PADS[reflect, len(pad) // 2][0]
    out = _edge_pad_array(a.array, pad, reflect)
    return record(entry, out, (a,), {"pad": tuple(pad)})


@word("edge_pad_backward", _edge_pad_backward_array)
def edge_pad_backward(g, a, pad, reflect):
    entry = _EDGE_PADS[reflect, len(pad) // 2][1]
    out = _edge_pad_backward_array(g.array, a.array, pad, reflect)
    return record(entry, out, (g, a), {"pad": tuple(pad), "shape": a.array.shape})


_PAD_COMBINATIONS = ("Supported combinations for non-constant padding:\n"
                     "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                     "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                     "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _check_edge_pad(x, pad, reflect):
    n = len(pad) // 2
    ndim = x.ndim
    if n not in (1, 2, 3) or ndim not in (n + 1, n + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {ndim}D input "
                                  f"tensor.\n{_PAD_COMBINATIONS}")
    if 0 in x.shape[ndim - n - 1 + (ndim == n + 1):]:
        raise RuntimeError(
            f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(x.shape)}")
    if reflect:
        for k in range(n):
            d = ndim - 1 - k
            before, after = pad[2 * k], pad[2 * k + 1]
            if before >= x.shape[d] or after >= x.shape[d]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * k}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({before}, {after}) at dimension {d} "
                    f"of input {list(x.shape)}")
    for k in range(n):
        d = ndim - 1 - k
        if x.shape[d] + pad[2 * k] + pad[2 * k + 1] < 1:
            raise Unsupported("F.pad cropping a dim to nothing")


@exposes(nn=("pad",))
def pad(input, pad, mode="constant", value=None):
    if not _is_tensor(input):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    if _ints(pad):
        raise TypeError("pad(): argument 'pad' (position 2) must be tuple of ints, not int")
    pad = _int_tuple("pad", "pad", 2, pad)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    x = input.array
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * x.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{x.ndim}")
    if mode == "constant":
        return constant_pad(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode == "circular":
        raise Unsupported("F.pad(mode='circular')")
    reflect = mode == "reflect"
    _check_edge_pad(x, pad, reflect)
    check_allocation(_padded_shape(x.shape, pad), x.dtype)
    return edge_pad(input, pad, reflect)


# === masked_select ===============================================================================

def _masked_scatter_arrays(shape, mask, g):
    out = np.zeros(shape, g.dtype)
    out[np.broadcast_to(mask, shape)] = np.reshape(g, -1)
    return out


def _masked_select_array(x, mask):
    shape = np.broadcast_shapes(np.shape(x), np.shape(mask))
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


MASKED_SELECT = op("MaskedSelectBackward0",
                   lambda F, g, out, a, mask, shape: F.masked_scatter_zeros(shape, mask, g),
                   explain="masked_select picks the elements where mask is True: g goes back to "
                           "those places, 0 elsewhere",
                   formulas=("g where mask, 0 elsewhere",),
                   check=Check(lambda a: a.masked_select(_mask(a, [[True, False, True]])) ** 2,
                               (any_(2, 3),)),
                   saves="p")
MASKED_SCATTER = op("MaskedScatterBackward0", None,
                    lambda F, g, out, zeros, source, mask, shape: F.reshape(
                        F.masked_select(g, mask), np.shape(source)),
                    explain="the gradient of masked_select, as an op of its own: g written "
                            "where mask is True into zeros; its own gradient selects again",
                    formulas=("g where not mask", "g selected where mask"),
                    check=Check(lambda a: (a.masked_select(_mask(a, [True, False, True])) ** 2),
                                (any_(2, 3),)),
                    saves="ip")


def _mask(like, values):
    # (through the public API, so that the same check runs on torch's tensors too)
    return like.new_tensor(values).bool()


@word("masked_scatter_zeros", _masked_scatter_arrays)
def _masked_scatter_zeros(shape, mask, g):
    zeros = type(g)._wrap(np.zeros(shape, g.array.dtype))
    return record(MASKED_SCATTER, _masked_scatter_arrays(shape, mask, g.array), (zeros, g),
                  {"mask": mask, "shape": shape})


@word("masked_select", lambda g, mask: _masked_select_array(g, mask))
@exposes(MASKED_SELECT, functions=("masked_select",), methods=("masked_select",))
def masked_select(a, mask):
    if not _is_tensor(mask):
        raise TypeError("masked_select(): argument 'mask' (position 2) must be Tensor, not "
                        f"{_type_name(mask)}")
    m = mask.array if _is_tensor(mask) else mask
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    x = a.array
    check_broadcast(m.shape, x.shape, x.dtype)  # (torch names the mask tensor a)
    shape = np.broadcast_shapes(x.shape, m.shape)
    out = np.ascontiguousarray(_masked_select_array(x, m))
    return record(MASKED_SELECT, out, (a,), {"mask": np.array(m, copy=True), "shape": shape})


# === unique, unique_consecutive ===================================================================

def _no_derivative(aten):
    def vjp(F, g, out, a):
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")
    return vjp


UNIQUE = op("Unique2Backward0", _no_derivative("_unique2"), differentiable=False,
            formulas=("none: a backward through it fails",),
            explain="unique has no derivative in torch: a backward that reaches it fails",
            check=Check(lambda a: a.unique(), (any_(5),)))
UNIQUE_CONSECUTIVE = op("UniqueConsecutiveBackward0", _no_derivative("unique_consecutive"),
                        differentiable=False, formulas=("none: a backward through it fails",),
                        explain="unique_consecutive has no derivative in torch: a backward that "
                                "reaches it fails",
                        check=Check(lambda a: a.unique_consecutive(), (any_(5),)))


UNIQUE_DIM = op("UniqueDimBackward0", _no_derivative("unique_dim"), differentiable=False,
                formulas=("none: a backward through it fails",),
                explain="unique along a dim has no derivative in torch: a backward that "
                        "reaches it fails",
                check=Check(lambda a: a.unique(dim=0), (any_(4, 2),)))


def _slices_along(a, dim):
    """The dim torch's unique_dim reads, and a's slices along it as rows (one per index)."""
    x = a.array
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = dims(dim, x.ndim)[0]
    if x.size == 0 and x.shape[d] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    moved = np.moveaxis(x, d, 0)
    return d, moved, moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:], dtype=np.int64)))


def _slices_kept(moved, keep, d):
    """The slices at `keep`, back in a's layout."""
    return np.ascontiguousarray(np.moveaxis(moved[keep], 0, d))


def _unique_dim(a, dim, consecutive):
    d, moved, rows = _slices_along(a, dim)
    n = rows.shape[0]
    if consecutive:
        starts = np.ones(n, bool)
        starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
        keep = np.flatnonzero(starts)
        inverse = np.cumsum(starts) - 1
    else:  # lexicographic order of the slices, as torch sorts them
        order = np.lexsort(rows.T[::-1]) if n else np.zeros(0, np.int64)
        ranked = rows[order]
        starts = np.ones(n, bool)
        starts[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
        keep = order[starts]
        inverse = np.empty(n, np.int64)
        inverse[order] = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    return _slices_kept(moved, keep, d), inverse, counts


def _unique_results(a, entry, values, inverse, counts, return_inverse, return_counts,
                    inverse_shape=None):
    results = [record(entry, values, (a,))]
    if return_inverse:
        shape = a.array.shape if inverse_shape is None else inverse_shape
        results.append(type(a)._wrap(inverse.astype(np.int64).reshape(shape)))
    if return_counts:
        results.append(type(a)._wrap(counts.astype(np.int64)))
    return results[0] if len(results) == 1 else tuple(results)


@exposes(UNIQUE, UNIQUE_DIM, functions=("unique",), methods=("unique",))
def unique(a, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:  # (sorted or not, torch sorts the slices)
        values, inverse, counts = _unique_dim(a, dim, False)
        return _unique_results(a, UNIQUE_DIM, values, inverse, counts, return_inverse,
                               return_counts, inverse.shape)
    flat = a.array.reshape(-1)
    values, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
    return _unique_results(a, UNIQUE, values, inverse, counts, return_inverse, return_counts)


@exposes(UNIQUE_CONSECUTIVE, functions=("unique_consecutive",), methods=("unique_consecutive",))
def unique_consecutive(a, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        values, inverse, counts = _unique_dim(a, dim, True)
        return _unique_results(a, UNIQUE_CONSECUTIVE, values, inverse, counts, return_inverse,
                               return_counts, inverse.shape)
    flat = a.array.reshape(-1)
    starts = np.ones(flat.size, bool)
    starts[1:] = flat[1:] != flat[:-1]
    values = flat[starts]
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), flat.size))
    return _unique_results(a, UNIQUE_CONSECUTIVE, values, inverse, counts, return_inverse,
                           return_counts)


# === diff ========================================================================================

@exposes(functions=("diff",), methods=("diff",))
def diff(a, n=1, dim=-1, prepend=None, append=None):
    if not _ints(n):
        raise TypeError(f"diff(): argument 'n' must be int, not {_type_name(n)}")
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is not None and not _is_tensor(extra):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {_type_name(extra)}")
    x = a.array
    if not x.ndim:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = dims(dim, x.ndim)[0]
    for extra in (prepend, append):
        if extra is None:
            continue
        if extra.array.ndim != x.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(x.ndim):
            if i != d and extra.array.shape[i] != x.shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({i}) = "
                    f"{x.shape[i]}, but got tensor.size({i}) = {extra.array.shape[i]}")
    if n == 0:  # torch: zeros_like(a).copy_(a)
        return record(COPY_INTO, np.array(x, copy=True), (type(a)._wrap(np.zeros_like(x)), a))
    if prepend is not None or append is not None:
        a = cat([t for t in (prepend, a, append) if t is not None], d)
    size = a.array.shape[d]
    length = size - 1
    result = a
    for _ in range(builtins.min(n, size)):
        later, earlier = narrow(result, d, 1, length), narrow(result, d, 0, length)
        result = logical_xor(later, earlier) if result.array.dtype == np.bool_ else \
            sub(later, earlier)
        length -= 1
    return result

