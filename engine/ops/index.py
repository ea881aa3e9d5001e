"""Indexing: `a[i]`, `a[i:j]`, `a[None]`, `a[...]`, lists, tensors and masks as indices.

`a[index]` records the chain of view ops torch records (select, slice, unsqueeze, alias),
one per indexed dim; a list, tensor or mask index is one IndexBackward0. The gradients of
a select or slice are themselves ops (SelectBackwardBackward0, ...) so that a double
backward prints torch's names.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..graph.nodes import record
from .operands import array_dtype, c_type_word, check_broadcast, dims
from .shape import unsqueeze
from .registry import METHOD_IN_PLACE, OWN_IN_PLACE, Check, Family, any_, no_in_place

family = Family("Indexing", inplace=no_in_place("a selection: its result is a new tensor"))
op, exposes, word = family.op, family.exposes, family.word


def _key(dim, item):
    return (slice(None),) * dim + (item,)


def _placed(g, shape, key, accumulate=False):
    z = np.zeros(shape, dtype=g.dtype)
    if accumulate:
        np.add.at(z, key, g)
    else:
        z[key] = g
    return z


# --- the gradients of indexing, as ops of their own ---------------------------------------------

SELECT_BACKWARD = op("SelectBackwardBackward0",
                     lambda F, g, out, gg, shape, dim, index: F.select(g, dim, index),
                     explain="the gradient of a select: the selected part of g",
                     formulas=("g selected again",),
                     check=Check(lambda a: a[1] * a[1], (any_(2, 3),)))
SLICE_BACKWARD = op("SliceBackwardBackward0",
                    lambda F, g, out, gg, shape, dim, start, stop, step:
                    F.slice(g, dim, start, stop, step),
                    explain="the gradient of a slice: the sliced part of g",
                    formulas=("g sliced again",),
                    check=Check(lambda a: a[:, 1:] * a[:, 1:], (any_(2, 3),)))
INDEX_PUT = op("IndexPutImplBackward0", None, lambda F, g, out, zeros, gg, key: F.index(g, key),
               explain="the gradient of an index: the indexed part of g",
               formulas=("", "g indexed again"),
               check=Check(lambda a: a[[0, 0, 1]] * a[[0, 0, 1]], (any_(2, 3),)))


@word("select_backward",
      lambda g, shape, dim, index: _placed(g, shape, _key(dim, index)))
def select_backward(g, shape, dim, index):
    z = _placed(g.array, shape, _key(dim, index))
    return record(SELECT_BACKWARD, z, (g,), {"shape": shape, "dim": dim, "index": index})


@word("slice_backward",
      lambda g, shape, dim, start, stop, step: _placed(g, shape, _key(dim, slice(start, stop, step))))
def slice_backward(g, shape, dim, start, stop, step):
    z = _placed(g.array, shape, _key(dim, slice(start, stop, step)))
    return record(SLICE_BACKWARD, z, (g,),
                  {"shape": shape, "dim": dim, "start": start, "stop": stop, "step": step})


@word("index_put_zeros", lambda g, shape, key: _placed(g, shape, key, accumulate=True))
def index_put_zeros(g, shape, key):
    """zeros(shape).index_put_(key, g, accumulate=True): repeated indices add up."""
    zeros = type(g)._wrap(np.zeros(shape, dtype=g.array.dtype))
    return record(INDEX_PUT, _placed(g.array, shape, key, accumulate=True), (zeros, g),
                  {"key": key})


# --- the forward ops ----------------------------------------------------------------------------

SELECT = op("SelectBackward0",
            lambda F, g, out, a, shape, dim, index: F.select_backward(g, shape, dim, index),
            views=True, explain="indexing: g is placed where the element came from",
            formulas=("g placed, zeros elsewhere",), check=Check(lambda a: a[1], (any_(2, 3),)))
SLICE = op("SliceBackward0",
           lambda F, g, out, a, shape, dim, start, stop, step:
           F.slice_backward(g, shape, dim, start, stop, step),
           views=True, explain="slicing: g is placed in the slice, zeros elsewhere",
           formulas=("g placed, zeros elsewhere",), check=Check(lambda a: a[:, 1:], (any_(2, 3),)))
ALIAS = op("AliasBackward0", lambda F, g, out, a: g, views=True,
           explain="`a[...]` is a itself: g passes through", formulas=("g",),
           check=Check(lambda a: a[...], (any_(2, 3),)))
INDEX = op("IndexBackward0",
           lambda F, g, out, a, shape, key: F.index_put_zeros(g, shape, key),
           explain="indexing with lists, tensors or masks: g is added where elements came from",
           formulas=("g scattered (repeats add up)",),
           check=Check(lambda a: a[[0, 0, 1]], (any_(2, 3),)), saves="p")


@word("select", lambda g, dim, index: g[_key(dim, index)])
@exposes(SELECT, functions=("select",), methods=("select",))
def select(a, dim, index):
    x = a.array
    if not x.ndim:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = dims(dim, x.ndim)[0]
    size = x.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {d}")
    # (a trailing `...` keeps a 0-d result a view of x, not a copied scalar)
    return record(SELECT, x[_key(d, index) + (Ellipsis,)], (a,),
                  {"shape": x.shape, "dim": d, "index": int(index) % size})


@word("slice", lambda g, dim, start, stop, step=1: g[_key(dim, slice(start, stop, step))])
def slice_dim(a, dim, start, stop, step=1):
    x = a.array
    return record(SLICE, x[_key(dim, slice(start, stop, step))], (a,),
                  {"shape": x.shape, "dim": dim, "start": start, "stop": stop, "step": step})


@word("index", lambda g, key: g[key])
def index(a, key):
    x = a.array
    return record(INDEX, x[key], (a,), {"shape": x.shape, "key": key})


_BASIC = (int, slice, type(None), type(Ellipsis))


def _tensor_array(item):
    array = getattr(item, "array", None)
    return array if type(array) is np.ndarray or isinstance(array, np.generic) else None


_PLAIN_ITEMS = frozenset({int, slice, type(None), type(Ellipsis)})  # decided by their type


def is_advanced(item) -> bool:
    """A list (or range), or a tensor other than a 0-d integer one (which indexes like an
    int)."""
    if type(item) in _PLAIN_ITEMS:
        return False
    if isinstance(item, (list, range)):
        return True
    array = _tensor_array(item)
    return array is not None and not (array.ndim == 0 and array.dtype.kind in "iu")


def plain(item):
    """An index item as NumPy takes it."""
    array = _tensor_array(item)
    if array is not None:
        return array
    if isinstance(item, (list, range)):
        return np.asarray([plain(i) for i in item], dtype=None if len(item) else np.int64)
    return item


def check_item(item) -> None:
    """torch's errors for index items it does not take."""
    if isinstance(item, slice):
        if item.step is not None and item.step < 0:
            raise ValueError("step must be greater than zero")
        if item.step == 0:
            raise ValueError("slice step cannot be zero")
        return
    if type(item) in _BASIC or type(item) is bool or isinstance(item, (list, range)):
        return
    if _tensor_array(item) is not None:
        return
    if isinstance(item, float):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         "Variables are valid indices (got float)")
    raise TypeError(f"new(): invalid data type '{type(item).__name__}'")


def check_index_tensors(ndim: int, items) -> None:
    """torch's refusal of a float tensor among an index's items, after its count of the dims
    they index (a bool tensor indexes as many as it has)."""
    arrays = [_tensor_array(i) for i in items]
    if builtins.all(x is None or x.dtype.kind in "iub" for x in arrays):
        return
    counted = builtins.sum(1 if x is None or x.dtype.kind != "b" else x.ndim
                           for i, x in zip(items, arrays) if i is not None and i is not Ellipsis)
    if counted > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def whole(item, size: int) -> bool:
    """A slice that keeps a whole dimension (`:`, `0:`, `:n` with n >= size)."""
    return isinstance(item, slice) and item.step in (None, 1) and \
        item.indices(size)[:2] == (0, size)


ZERO_DIM_SELECT = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                   "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


def check_zero_dim_key(ndim: int, key) -> None:
    """torch's own errors for a lone int or slice (not a tuple) on a 0-d tensor: its
    indexing takes that key by a path of its own, which names the mistake."""
    if ndim:
        return
    if type(key) is int:
        raise IndexError(ZERO_DIM_SELECT if key == 0 else
                         f"index {key} is out of bounds for dimension 0 with size 0")
    if type(key) is slice:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def is_bool_item(item) -> bool:
    """True, False, or a 0-d bool tensor: torch indexes with it by adding a dim of size 1 and
    taking that one element (True) or none (False)."""
    kind = type(item)
    if kind is bool:
        return True
    if kind in _PLAIN_ITEMS:
        return False
    array = _tensor_array(item)
    return array is not None and array.ndim == 0 and array.dtype == np.bool_


def split_key(ndim: int, items) -> tuple[list, dict]:
    """A key with tensor, list or bool items, taken apart as torch's indexing does: the basic
    items first (a bool as None, an advanced item as `:`), which make a view, then the
    advanced items, each at the dim of that view where it lands ({dim: index array})."""
    specified = builtins.sum(
        0 if i is None or i is Ellipsis or is_bool_item(i) else
        getattr(plain(i), "ndim", 1) if getattr(plain(i), "dtype", None) == np.bool_ else 1
        for i in items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic, advanced, dim = [], {}, 0
    for item in items:
        if item is Ellipsis:
            basic.append(item)
            dim += builtins.max(ndim - specified, 0)
        elif item is None:
            basic.append(item)
            dim += 1
        elif is_bool_item(item):
            basic.append(None)
            advanced[dim] = np.zeros(1 if bool(plain(item)) else 0, dtype=np.int64)
            dim += 1
        elif is_advanced(item):
            key = plain(item)
            basic.append(slice(None))
            advanced[dim] = key
            dim += key.ndim if key.dtype == np.bool_ else 1
        elif isinstance(item, slice):
            basic.append(item)
            dim += 1
        else:
            basic.append(item)
    return basic, advanced


def advanced_key(ndim: int, advanced: dict) -> tuple:
    """The NumPy key of `split_key`'s advanced items over a view of `ndim` dims."""
    key, dim = [], 0
    while dim < ndim:
        k = advanced.get(dim)
        if k is None:
            key.append(slice(None))
            dim += 1
        else:
            key.append(k)
            dim += k.ndim if k.dtype == np.bool_ else 1
    for d in sorted(advanced):
        if d >= dim:  # (an index past the last dim: NumPy's "too many indices")
            key.append(advanced[d])
    return tuple(key)


def check_masks(shape, key) -> None:
    """torch's errors for an advanced key (`advanced_key`'s) over a tensor of `shape`."""
    spans = [k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1 for k in key]
    if builtins.sum(spans) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    dim = 0
    for k, span in zip(key, spans):
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            for j, size in enumerate(k.shape):
                if size != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {list(shape)} at index {dim + j}")
        dim += span


def makes_view(basic) -> bool:
    """Whether the basic items of a split key take a view (`:` and `...` alone do not)."""
    return builtins.any(not (i is Ellipsis or (isinstance(i, slice) and i == slice(None)))
                        for i in basic)


def _advanced_index(a, items):
    basic, advanced = split_key(a.array.ndim, items)
    if makes_view(basic):
        a = basic_index(a, basic, keep_whole=False)
    arr = a.array
    key = advanced_key(arr.ndim, advanced)
    check_masks(arr.shape, key)
    try:
        out = np.ascontiguousarray(arr[key])  # (torch's index result is always contiguous)
    except IndexError as exc:
        raise IndexError(str(exc).replace("axis", "dimension")) from None
    return record(INDEX, out, (a,), {"shape": arr.shape, "key": key})


@exposes(SELECT, SLICE, ALIAS, INDEX, methods=("__getitem__",))
def getitem(a, index):
    """`a[index]`, recorded as the chain of ops torch records (select, slice, unsqueeze...)."""
    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        check_item(item)
    check_zero_dim_key(a.array.ndim, index)
    if builtins.any(is_advanced(i) or is_bool_item(i) for i in items):
        check_index_tensors(a.array.ndim, items)
        return _advanced_index(a, items)
    return basic_index(a, items)


def basic_index(a, items, keep_whole=True):
    """`a[items]` for ints, slices, None and `...`; `keep_whole=False`: the basic part of an
    advanced key, where `:` and `...` take no view at all."""
    ndim = a.array.ndim
    consumed = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    shape = a.array.shape
    source = 0  # the dimension of `a` an item indexes (for torch's messages)
    spans = []
    for item in items:
        spans.append(source)
        if item is Ellipsis:
            source += ndim - consumed
        elif item is not None:
            source += 1
    if keep_whole and not (len(items) == 1 and isinstance(items[0], slice)) and builtins.all(
            i is Ellipsis or (i is not None and whole(i, shape[d])) for i, d in zip(items, spans)):
        return record(ALIAS, a.array[...], (a,))
    result, dim = a, 0  # `dim`: the same position in the result built so far
    for item, src in zip(items, spans):
        if item is Ellipsis:
            dim += ndim - consumed
        elif item is None:
            result = unsqueeze(result, dim)
            dim += 1
        elif isinstance(item, slice):
            if not whole(item, shape[src]) or (len(items) == 1 and keep_whole):
                start, stop, step = item.indices(shape[src])
                result = slice_dim(result, dim, start, stop, step)
            dim += 1
        else:
            i = int(item)
            size = shape[src]
            if not -size <= i < size:
                raise IndexError(
                    f"index {i} is out of bounds for dimension {src} with size {size}")
            result = select(result, dim, i)
    return result


# === masked_fill, scatter and gather ===============================================================

def _mask(mask):
    array = _tensor_array(mask)
    return (mask if array is None else array).astype(bool, copy=False)


MASKED_FILL = op("MaskedFillBackward0",
                 lambda F, g, out, a, mask, value: F.masked_fill(g, mask, 0.0),
                 explain="masked_fill overwrites the masked elements: g flows elsewhere",
                 formulas=("g where not mask",),
                 check=Check(lambda a: a.masked_fill(a > 0, 0.5), (any_(2, 3),)), saves="p")
MASKED_FILL_TENSOR = op("MaskedFillBackward1",
                        lambda F, g, out, a, value, mask: F.masked_fill(g, mask, 0.0),
                        lambda F, g, out, a, value, mask: F.sum_all(F.where(mask, g, 0.0)),
                        explain="masked_fill with a tensor value v: v gets the masked part of g",
                        formulas=("g where not mask", "Σ g where mask"),
                        check=Check(lambda a, v: a.masked_fill(a > 0, v), (any_(2, 3), any_())),
                        saves="p")


def _masked_fill_arrays(a, mask, value):
    return np.where(_mask(mask), value, a).astype(np.result_type(a), copy=False)


def masked_fill_operands(mask, value) -> tuple:
    """The mask's array and the value's (None for a number), as torch's parser takes them (a
    rule passes the mask's array itself)."""
    m = mask if isinstance(mask, (np.ndarray, np.generic)) else _tensor_array(mask)
    value_array = _tensor_array(value)
    if m is None or value_array is None and type(value) not in (float, int, bool):
        # (signatures.call_error words it as torch's parser does)
        raise TypeError("masked_fill(): a Tensor mask and a Tensor or Number value")
    return m, value_array


def check_masked_fill(m, value_array) -> None:
    """torch's masked_fill_ kernel's checks: a 0-d value tensor, a bool mask."""
    if value_array is not None and value_array.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value_array.ndim} dimension(s).")
    if m.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{c_type_word(m.dtype)}")


@word("masked_fill", _masked_fill_arrays)
@exposes(MASKED_FILL, MASKED_FILL_TENSOR, functions=("masked_fill",), methods=("masked_fill",),
         inplace=OWN_IN_PLACE)  # (masked_fill_ in inplace.py: its checks come in another order)
def masked_fill(a, mask, value):
    m, value_array = masked_fill_operands(mask, value)
    if m.shape != a.array.shape:  # (torch expands both first: its tensor a is the mask)
        check_broadcast(m.shape, a.array.shape, a.array.dtype)
    check_masked_fill(m, value_array)
    if value_array is None:
        out = np.where(m, value, a.array).astype(a.array.dtype, copy=False)
        return record(MASKED_FILL, out, (a,), {"mask": m, "value": value})
    out = np.where(m, value_array, a.array).astype(a.array.dtype, copy=False)
    return record(MASKED_FILL_TENSOR, out, (a, value), {"mask": m})


def _scattered(a, dim, index, src, add=False):
    if not np.size(index):  # (an empty index of any dtype writes nothing)
        return np.array(a, copy=True)
    if np.ndim(a) == 0:  # (torch's 0-d tensor is one element along dim 0)
        return _scattered(np.reshape(a, 1), 0, np.reshape(index, 1), np.reshape(src, -1)[:1],
                          add).reshape(())
    out = np.array(a, copy=True)
    if add:
        indices = list(np.indices(index.shape, sparse=True))
        indices[dim] = index
        np.add.at(out, tuple(indices), src[tuple(slice(0, n) for n in index.shape)])
    else:
        np.put_along_axis(out, index, src[tuple(slice(0, n) for n in index.shape)], axis=dim)
    return out


SCATTER = op("ScatterBackward0",
             lambda F, g, out, a, src, dim, index: F.scatter(g, dim, index, 0.0),
             lambda F, g, out, a, src, dim, index: F.gather(g, dim, index),
             explain="scatter writes src's values at index: they get g from there, a the rest",
             formulas=("g where not written", "g gathered at index"),
             check=Check(lambda a, s: a.scatter(1, _index(a, [[0], [2]]), s), (any_(2, 3), any_(2, 1))),
             saves="p")
SCATTER_VALUE = op("ScatterBackward1",
                   lambda F, g, out, a, dim, index, value: F.scatter(g, dim, index, 0.0),
                   explain="scatter of a number: the written places get no gradient",
                   formulas=("g where not written",),
                   check=Check(lambda a: a.scatter(1, _index(a, [[0], [2]]), 0.5), (any_(2, 3),)),
                   saves="p")
GATHER = op("GatherBackward0",
            lambda F, g, out, a, dim, index, shape:
            F.scatter_add(F.zeros(shape, array_dtype(g)), dim, index, g),
            explain="gather picks elements at index: g is added back where they came from",
            formulas=("g scattered (repeats add up)",),
            check=Check(lambda a: a.gather(1, _index(a, [[0, 0], [2, 1]])), (any_(2, 3),)),
            saves="p")
SCATTER_ADD = op("ScatterAddBackward0", lambda F, g, out, a, src, dim, index: g,
                 lambda F, g, out, a, src, dim, index: F.gather(g, dim, index),
                 explain="scatter_add adds src at index: a gets g, src gets g gathered",
                 formulas=("g", "g gathered at index"),
                 check=Check(lambda a, s: a.scatter_add(1, _index(a, [[0, 0], [2, 2]]), s),
                             (any_(2, 3), any_(2, 2))), saves="p")


def _index(like, values):
    # (through the public API, so that the same check runs on torch's tensors too)
    return like.new_tensor(values).long()


def _scatter_arrays(a, dim, index, src):
    src = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else src
    return _scattered(a, dim, _mask_free(index), src)


def _mask_free(index):
    array = _tensor_array(index)
    return index if array is None else array


def _size(array, d: int) -> int:
    """torch's ensure_nonempty_size: a 0-d tensor has size 1 at dim 0."""
    if array.ndim == 0:
        return 1
    dims(d, array.ndim)  # (torch's range error for a dim the tensor lacks)
    return array.shape[d]


def _checked_index(name: str, a, d: int, idx, src=None) -> None:
    """torch's checks of a gather (`name` "gather") or scatter ("scatter", also for
    scatter_add) before it runs: the index's dtype, src's dtype, the number of dims, the
    sizes (ScatterGatherChecks), then each index within its dim."""
    if not isinstance(idx, (np.ndarray, np.generic)):
        return  # (not a tensor: the parser's error, worded elsewhere)
    x = a.array
    if idx.size and idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if src is not None and src.dtype != x.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if not idx.size:
        return
    rank = builtins.max(x.ndim, 1)
    if builtins.max(idx.ndim, 1) != rank:
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    wrong = any(_size(idx, k) > _size(x, k) for k in range(rank) if k != d)
    sizes = f"Expected index {list(idx.shape)} to be no larger than self {list(x.shape)} " \
            f"apart from dimension {d}"
    if name == "gather" and wrong:
        k = next(k for k in range(rank) if k != d and _size(idx, k) > _size(x, k))
        raise RuntimeError(f"Size does not match at dimension {k} e{sizes[1:]}")
    if src is not None:
        wrong = wrong or any(_size(idx, k) > _size(src, k) for k in range(rank))
        if builtins.max(src.ndim, 1) != builtins.max(idx.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        if wrong:
            raise RuntimeError(f"{sizes} and to be no larger size than src {list(src.shape)}")
    elif wrong:
        raise RuntimeError(sizes)
    bound = _size(x, d)
    outside = (idx < 0) | (idx >= bound)
    if outside.any():
        raise RuntimeError(f"index {np.asarray(idx)[outside].flat[0]} is out of bounds for dimension {d} "
                           f"with size {bound}")


@word("scatter", _scatter_arrays)
@exposes(SCATTER, SCATTER_VALUE, functions=("scatter",), methods=("scatter",),
         params=("input", "dim", "index", ("src", "value")), inplace=METHOD_IN_PLACE)
def scatter(a, dim, index, src=None, value=None):
    d = dims(dim, a.array.ndim)[0]
    idx = _mask_free(index)
    source = value if src is None else src
    array = _tensor_array(source)
    _checked_index("scatter", a, d, idx, array)
    if array is None:
        out = _scattered(a.array, d, idx, np.broadcast_to(np.asarray(source, a.array.dtype),
                                                          idx.shape))
        return record(SCATTER_VALUE, out, (a,), {"dim": d, "index": idx, "value": source})
    out = _scattered(a.array, d, idx, array.astype(a.array.dtype, copy=False))
    return record(SCATTER, out, (a, source), {"dim": d, "index": idx})


@word("scatter_add", lambda a, dim, index, src: _scattered(a, dim, _mask_free(index), src, add=True))
@exposes(SCATTER_ADD, functions=("scatter_add",), methods=("scatter_add",), inplace=METHOD_IN_PLACE)
def scatter_add(a, dim, index, src):
    d = dims(dim, a.array.ndim)[0]
    idx = _mask_free(index)
    _checked_index("scatter", a, d, idx, _tensor_array(src))
    out = _scattered(a.array, d, idx, src.array.astype(a.array.dtype, copy=False), add=True)
    return record(SCATTER_ADD, out, (a, src), {"dim": d, "index": idx})


def _gathered(a, dim, index):
    if not np.size(index):
        return np.empty(np.shape(index), np.result_type(a))
    if np.ndim(a) == 0:  # (torch's 0-d tensor is one element along dim 0)
        return np.reshape(a, 1)[np.reshape(index, -1)].reshape(np.shape(index))
    return np.take_along_axis(a, index, axis=dim)


@word("gather", lambda a, dim, index: _gathered(a, dim, _mask_free(index)))
@exposes(GATHER, functions=("gather",), methods=("gather",))
def gather(a, dim, index):
    d = dims(dim, a.array.ndim)[0]
    idx = _mask_free(index)
    _checked_index("gather", a, d, idx)
    return record(GATHER, _gathered(a.array, d, idx), (a,),
                  {"dim": d, "index": idx, "shape": a.array.shape})


@exposes(nn=("one_hot",), params=("input", "num_classes"))
def one_hot(tensor, num_classes=-1):
    """F.one_hot: int64 indices to an int64 tensor with one more dim of `num_classes` (the
    largest index + 1 when -1); not differentiable, as in torch."""
    values = tensor.array
    if values.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if values.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(values.max()) + 1
    if values.size and values.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if values.size and values.max() >= num_classes or num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (values[..., None] == np.arange(num_classes)).astype(np.int64)
    return type(tensor)._wrap(out)
