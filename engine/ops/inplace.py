"""In-place changes: `add_` and friends, `+=`, `fill_`, `zero_`, `copy_`, `a[key] = v`.

An in-place op writes into the tensor's storage, bumps its version counter (so a backward
that needs the old value fails with torch's message), and, when grad mode records it,
gives the tensor the node of the op it ran (AddBackward0 for `add_`, CopySlices for an
indexed write through a view, FillBackward3 or CopyBackwards for a whole-tensor write).
"""

from __future__ import annotations

import builtins
import inspect

import numpy as np

from ..graph.nodes import (
    LEGACY_TYPE_NAMES,
    NO_ACCUMULATOR,
    NUMBERS,
    MultiNode,
    Node,
    apply_rule,
    edge_to,
    record,
    short_name,
)
from ..core import inference
from ..numerics.layout import dense
from .operands import NotAnOperand, binary, check_broadcast, type_word
from .shape import expand, expanded_shape, view
from . import math as ops_math  # noqa: F401 - (its family comes before this one in the registry's order)
from .arith import add, div, mul, refuse_bool_sub, sub
from .index import (
    advanced_key,
    basic_index,
    check_index_tensors,
    check_item,
    check_masked_fill,
    check_zero_dim_key,
    check_masks,
    getitem,
    is_advanced,
    is_bool_item,
    makes_view,
    masked_fill,
    masked_fill_operands,
    split_key,
    whole,
)
from .registry import FAMILIES, IN_PLACE, METHOD_IN_PLACE, Check, Family, any_
from ..core.session import check_fill_value, current

family = Family("In-place changes")
op, exposes, word = family.op, family.exposes, family.word

_MULTI_VIEW = ("Output {nr} of {op} is a view and is being modified inplace. This view is the "
               "output of a function that returns multiple views. Such functions do not allow "
               "the output views to be modified inplace. You should replace the inplace "
               "operation by an out-of-place one.")


def _refuse_no_grad_view(view, modified: str):
    """torch's error for an in-place change seen by a view made under no_grad (or by a view of
    one): `modified` says whether the view itself is being changed."""
    node = view._grad_fn
    made = "A view was created" if node is None else (
        f"Output 0 of {short_name(node.op.name)} is a view of a view which was created")
    raise RuntimeError(
        f"{made} in no_grad mode and {modified} modified inplace with grad mode enabled. Given "
        "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
        "code by moving both the view and the inplace either both inside the no_grad block (if "
        "you don't want the inplace to be tracked) or both outside (if you want the inplace to "
        "be tracked).")


def check_inplace(a, through_view: bool = False, view_op: str | None = None) -> None:
    """torch's refusals of an in-place change in grad mode; `view_op` names the view an
    indexed write goes through (`Select` for `a[0] = v`)."""
    if not current().grad_enabled:
        return
    node = a._grad_fn  # (the node the view was made with: a remade one says less)
    if type(node) is MultiNode:
        raise RuntimeError(_MULTI_VIEW.format(nr=node.output_nr(a) if view_op is None else 0,
                                              op=view_op or short_name(node.op.name)))
    base = a._base
    if base is not None and a._accumulator is NO_ACCUMULATOR and a.requires_grad:
        _refuse_no_grad_view(a, "is being")
    if a.requires_grad and a.grad_fn is None:
        # a leaf made from a view (`t.reshape(2, 2).requires_grad_()`) is a view too in torch
        view = through_view or base is not None
        raise RuntimeError(
            f"a {'view of a ' if view else ''}leaf Variable that requires grad is being "
            "used in an in-place operation.")
    # torch asks whether the view requires grad and its base is a leaf: the base need not
    # require grad itself (a view of `t.reshape(2, 2).requires_grad_()` has base t)
    if base is not None and a.requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


_SHARED_ELEMENTS = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")


def has_internal_overlap(array) -> bool:
    """Whether some elements share memory (torch's check: a zero stride over 2+ elements)."""
    return type(array) is np.ndarray and 0 in array.strides and array.size > 1 and builtins.any(
        stride == 0 and n > 1 for stride, n in zip(array.strides, array.shape))


def check_internal_overlap(a) -> None:
    """torch refuses to compute into a tensor whose elements share memory (an expand's view);
    only fill_ with a number, zero_ and index_put_ may write there."""
    if has_internal_overlap(a.array):
        raise RuntimeError(_SHARED_ELEMENTS)


# --- in place through a view: the base's history is rewritten, as torch rewrites it ----------

def _region(base_array, view_array) -> tuple:
    """The index (into the base, any dense layout) of each element of a view of it: the
    view's byte offsets decomposed along the base's own strides."""
    base_array = np.asarray(base_array)
    view_array = np.asarray(view_array)
    if not base_array.ndim:  # the one element of a 0-d base, in the view's shape
        return (None,) * view_array.ndim
    start = view_array.__array_interface__["data"][0] - base_array.__array_interface__["data"][0]
    offsets = np.full(view_array.shape, start, dtype=np.int64)
    for axis, (n, stride) in enumerate(zip(view_array.shape, view_array.strides)):
        step = np.arange(n, dtype=np.int64) * stride
        offsets += step.reshape((n,) + (1,) * (view_array.ndim - axis - 1))
    return tuple((offsets // stride) % n if stride else np.zeros_like(offsets)
                 for n, stride in zip(base_array.shape, base_array.strides))


def _copy_slices_of_view(F, g, out, *inputs, position, inner, region, shape, shared=False):
    """The base's gradient: g, with the view's part replaced by what the in-place op sends
    to the view's old values; the op's other inputs get what it sends them. (`shared`: the
    view repeats elements, an expand's: torch copies into that part of g, and refuses.)"""
    part = F.region_take(g, region)
    sent = apply_rule(inner, part, F, hasattr(g, "_grad_fn"))
    if position:
        return sent[position]
    if shared and sent[0] is not None:
        raise RuntimeError(_SHARED_ELEMENTS)
    if not hasattr(g, "_grad_fn"):  # arrays: an exact copy (keeps the signs of zeros)
        result = np.array(g, copy=True)
        result[region] = 0 if sent[0] is None else sent[0]
        return result
    kept = g - F.region_place(part, region, shape)
    return kept if sent[0] is None else kept + F.region_place(sent[0], region, shape)


def _take_region(g, region):
    return np.array(np.asarray(g)[region], copy=True)


def _place_region(part, region, shape):
    z = np.zeros(shape, dtype=np.result_type(part))
    z[region] = part
    return z


@word("region_take", _take_region)
def region_take(g, region):
    return record(AS_STRIDED, _take_region(g.array, region), (g,),
                  {"region": region, "shape": g.array.shape})


@word("region_place", _place_region)
def region_place(part, region, shape):
    return record(AS_STRIDED_SCATTER, _place_region(part.array, region, shape), (part,),
                  {"region": region})


def _as_strided_vjp(F, g, out, base, region, shape):
    return F.region_place(g, region, shape)


# saves="p": torch's CopySlices drops the op it wraps after a backward without retain_graph,
# so a second backward through it fails even when nothing else was saved
COPY_SLICES = op("CopySlices", _copy_slices_of_view, variadic=True, engine_node=True, saves="p",
                         explain="an in-place change of a view: the base gets g with the view's "
                                 "part sent through the change", formulas=("",),
                         check=Check(lambda a: _scale_middle(a), (any_(4),)))
# (the same node records `y[key] = value`: a fill_ or copy_ of the view y[key])
AS_STRIDED = op("AsStridedBackward0", _as_strided_vjp, views=True,
                explain="a view after its base changed in place: g placed in the base",
                formulas=("g placed, zeros elsewhere",),
                check=Check(lambda a: _scale_middle(a, keep_view=True), (any_(4),)))
AS_STRIDED_SCATTER = op("AsStridedScatterBackward0",
                        lambda F, g, out, part, region: F.region_take(g, region),
                        explain="a part placed into zeros: the part gets g's part",
                        formulas=("g's part",),
                        check=Check(lambda a: _scale_middle(a, keep_view=True), (any_(4),)))


def _scale_middle(a, keep_view=False):
    y = a * 1
    v = y[1:3]
    v.mul_(a[0])
    return v * 1 if keep_view else y


def rebase_view(view) -> None:
    """After an in-place op recorded on `view` (a view whose base requires grad, or whose
    new value does), make the base's node torch's CopySlices around that op, and the view's
    AsStridedBackward0 below it."""
    inner = view.grad_fn
    base = view._base
    region = _region(base.array, view.array)
    base_edge = edge_to(base) if base.requires_grad else (None, 0)
    edges = (base_edge,) + inner.next_functions[1:]
    meta = ((base.array.shape, base.array.dtype),) + inner.meta[1:]
    node = Node(COPY_SLICES, edges, None, None,
                {"inner": inner, "region": region, "shape": base.array.shape,
                 "shared": has_internal_overlap(view.array)}, meta)
    base.grad_fn = node
    base.requires_grad = True
    view.grad_fn = Node(AS_STRIDED, ((node, 0),), None, None,
                        {"region": region, "shape": base.array.shape},
                        ((base.array.shape, base.array.dtype),))


def view_history(view):
    """A view's grad_fn after its storage changed in place other than through the view's own
    recorded op, as torch remakes it: AsStridedBackward0 over the base's history (nothing for
    a view without history of a base that needs none); torch's errors for views that may not
    see such a change (made under no_grad, or one of several outputs)."""
    base = view._base
    node = view._grad_fn
    if node is None and not base.requires_grad:
        view._view_version = view._vc[0]
        return None
    if view._accumulator is NO_ACCUMULATOR:
        _refuse_no_grad_view(view, "its base or another view of its base has been")
    if type(node) is MultiNode:
        raise RuntimeError(_MULTI_VIEW.format(nr=node.output_nr(view), op=short_name(
            node.op.name)).replace("is being", "its base or another view of its base has been"))
    view.requires_grad = True
    view.grad_fn = Node(AS_STRIDED, (edge_to(base),), None, None,
                        {"region": _region(base.array, view.array), "shape": base.array.shape},
                        ((base.array.shape, base.array.dtype),))
    return view._grad_fn


def recorded_write(a, entry, inputs, params=None):
    """After a write into `a`'s storage: bump its version and, when autograd watches any of
    `inputs` (a first; numbers among them), make `entry` a's new history."""
    if inference.TENSORS:
        inference.check_in_place(a)
    vc = a._vc
    if vc is None:
        a._vc = [1]
    else:
        vc[0] += 1  # (a._bump_version(), written out: every zero_ and fill_ comes here)
    if current().grad_enabled and (a.requires_grad or len(inputs) > 1 and any(
            getattr(t, "requires_grad", False) for t in inputs[1:])):
        a.grad_fn = record(entry, a.array, inputs, params).grad_fn
        a.requires_grad = True
        after_write(a)
    return a


def after_write(a) -> None:
    """An in-place op that recorded a node on a view carries it over to the view's base."""
    if a._base is not None and a.grad_fn is not None and current().grad_enabled:
        rebase_view(a)


def check_result_fits(a, operands) -> None:
    """Before computing `a.op_(...)`: torch's refusals (autograd's, the written-to tensor's
    layout, then the output's shape), so a write that cannot happen never computes a
    broadcast result (which may be huge)."""
    check_inplace(a)
    check_internal_overlap(a)
    shape = a.array.shape
    shapes = [b.array.shape for b in operands if type(b) is type(a) and b.array.shape != shape]
    if shapes:
        try:
            full = np.broadcast_shapes(shape, *shapes)
        except ValueError:
            return  # the op itself says which sizes differ
        if full != shape:
            raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                               f"shape {list(full)}")


def inplace(a, result, checked: bool = False):
    """Write `result` into `a`'s storage and bump its version, as torch's `op_` do
    (`checked`: check_result_fits already refused what torch refuses before computing)."""
    if result is NotImplemented:
        return NotImplemented
    if not checked:
        check_inplace(a)
        check_internal_overlap(a)
    node = result.grad_fn
    if node is not None and node.saved is not None:
        _keep_original(node, a)
    if result.array.shape != a.array.shape:
        raise RuntimeError(
            f"output with shape {list(a.array.shape)} doesn't match the broadcast shape "
            f"{list(result.array.shape)}")
    if not _can_cast(result.array.dtype, a.array.dtype):
        raise RuntimeError(
            f"result type {type_word(result.array.dtype)} can't be cast to the desired "
            f"output type {type_word(a.array.dtype)}")
    target = a.array
    if type(target) is not np.ndarray or not target.flags.writeable:
        a.array = np.asarray(result.array).astype(target.dtype)[()] if not target.shape else \
            np.array(result.array, dtype=target.dtype)
    else:
        np.copyto(target, result.array, casting="unsafe")
    a._bump_version()
    if result.grad_fn is not None:
        a.grad_fn = result.grad_fn
        a.requires_grad = True
        after_write(a)
    return a


def _first_byte(x) -> int:
    return x.__array_interface__["data"][0] + builtins.sum(
        st * (n - 1) for st, n in zip(x.strides, x.shape) if st < 0)


def check_no_partial_overlap(a, b) -> None:
    """torch refuses an in-place write into `a` whose input `b` overlaps a's memory other than
    exactly (the same elements, same strides), when it can tell (both dense)."""
    if type(b) is not type(a) or b is a or a._vc is None or b._vc is not a._vc:
        return  # (only aliases share a version counter)
    target, source = np.asarray(a.array), np.asarray(b.array)
    if not target.size or not source.size or not (dense(target) and dense(source)):
        return
    t0, s0 = _first_byte(target), _first_byte(source)
    t1, s1 = t0 + target.nbytes, s0 + source.nbytes
    if (t0, t1) == (s0, s1) and target.strides == source.strides:
        return
    if t0 < s1 and s0 < t1:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.")


_INPLACE_UFUNCS = {add: np.add, sub: np.subtract, mul: np.multiply, div: np.divide}


def _computed(fn, a, b, options: dict, floating: bool):
    """fn(a, b, **options) for `a.fn_(b)`; where its kernel fails (an integer divided by
    zero), the result's dtype that cannot be written into a is torch's error, which it gives
    before running the kernel."""
    try:
        return fn(a, b, **options)
    except RuntimeError as exc:
        if str(exc) != "ZeroDivisionError":
            raise
        dt = binary(a, b, floating and options.get("rounding_mode") is None)[2]
        if not _can_cast(dt, a.array.dtype):
            raise RuntimeError(f"result type {type_word(dt)} can't be cast to the desired "
                               f"output type {type_word(a.array.dtype)}") from None
        raise


def inplace_method(fn, name):
    """`a.add_(b)`, `a -= b`, ...: `inplace(a, fn(a, b))`, or, when nothing is recorded, the
    ufunc straight into `a`'s storage (an SGD step's `w -= lr * w.grad`: no temporary)."""
    ufunc = _INPLACE_UFUNCS.get(fn)
    floating = fn is div
    mixed = refuse_bool_sub if fn is sub else None

    signature = inspect.signature(fn)
    operands = tuple(signature.parameters)[:2]  # (a, b), or pow's (a, exponent)
    keywords = frozenset(signature.parameters) - set(operands)

    def method(a, b=NotAnOperand, **options):
        if b is NotAnOperand and operands[1] in options:  # `pow_(exponent=2)`
            b = options.pop(operands[1])
        for key in options.keys() - keywords:  # (before b's absence: `add_(other=t)` is torch's)
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if b is NotAnOperand:
            raise TypeError(f"{name}() missing 1 required positional argument: '{operands[1]}'")
        target = a.array
        # an SGD step's `w -= lr * w.grad` under no_grad: the ufunc straight into the storage
        if ufunc is not None and not options and type(target) is np.ndarray \
                and not current().grad_enabled and target.flags.writeable \
                and 0 not in target.strides and (type(b) is not type(a) or b._vc is None):
            try:
                x, y, dt = binary(a, b, floating, mixed)
            except NotAnOperand:
                return NotImplemented
            if dt == target.dtype and dt.kind == "f" and (type(y) is not np.ndarray
                                                          or y.shape == target.shape):
                ufunc(target, y, out=target)
                a._bump_version()
                return a
        if type(b) is type(a) and b._vc is not None:  # (only an alias can overlap a)
            check_no_partial_overlap(a, b)
        if options:  # `add_(b, alpha=2)`: the op's own keywords, under this method's name
            check_result_fits(a, (b, *options.values()))
            return inplace(a, _computed(fn, a, b, options, floating), checked=True)
        if type(b) is type(a) or type(b) in NUMBERS:  # (else fn's argument error comes first)
            check_result_fits(a, (b,))
            return inplace(a, _computed(fn, a, b, {}, floating), checked=True)
        return inplace(a, fn(a, b))
    method.__name__ = method.__qualname__ = name
    # (the op's parameters, its options keyword-only as they are here: what keywords are placed by)
    method.__signature__ = signature.replace(parameters=[
        p if p.name in operands else p.replace(kind=p.KEYWORD_ONLY)
        for p in signature.parameters.values()])
    return method


def unary_inplace(fn, name, entry=None):
    """`a.sin_()` / `torch.sin_(a)`: the function's result written into a (recorded as the
    function itself, SinBackward0, as torch's in-place variants are, or as `entry`)."""
    def method(a, *args, **kwargs):
        given = (*args, *kwargs.values())
        # (an argument of another kind: the op's own argument error comes first, as torch's)
        checked = hasattr(a, "_grad_fn") and builtins.all(
            v is None or type(v) is type(a) or type(v) in NUMBERS for v in given)
        if checked:
            check_result_fits(a, given)
        result = fn(a, *args, **kwargs)
        if entry is not None and result.grad_fn is not None:
            result = record(entry, result.array, (a,))
        return inplace(a, result, checked=checked)
    method.__name__ = method.__qualname__ = name
    method.__wrapped__ = fn  # (its parameters are fn's: what argument errors are worded from)
    return method


def _is_binary(surface) -> bool:
    """Whether a surface's forward takes two operands, the second torch's required `other`
    (`exponent` for pow): its in-place variant is `inplace_method`'s, with an operator
    `op=` where the forward has one (`__iadd__` for `__add__`)."""
    parameters = list(inspect.signature(inspect.unwrap(surface.forward)).parameters.values())
    return surface.params is not None and len(surface.params) > 1 \
        and surface.params[1] in ("other", "exponent") \
        and parameters[1].default is inspect.Parameter.empty


def offer_in_place_variants() -> None:
    """Derive every in-place variant the surfaces decide on (run once, after all families):
    `x.X_()` for each method X of a surface decided IN_PLACE or METHOD_IN_PLACE, `torch.X_(x)`
    for each function X of one decided IN_PLACE, and for a binary op its in-place operator
    (`__iadd__` for `__add__`), which is the variant of the surface's first method."""
    for family in FAMILIES:
        for surface in list(family.surfaces):
            if surface.inplace not in (IN_PLACE, METHOD_IN_PLACE) or surface.variant_of:
                continue
            binary = _is_binary(surface)
            operators = tuple(f"__i{n[2:]}" for n in surface.methods
                              if n.startswith("__") and not n.startswith("__r") and binary)
            for k, name in enumerate(surface.decided_names()):
                variant = name + "_"
                functions = (variant,) if surface.inplace == IN_PLACE \
                    and name in surface.functions else ()
                methods = ((variant,) if name in surface.methods else ()) + (
                    operators if k == 0 else ())
                build = inplace_method(surface.forward, variant) if binary else \
                    unary_inplace(surface.forward, variant, surface.inplace_entry)
                family.exposes(functions=functions, methods=methods, params=surface.params,
                               variant_of=surface)(build)


def _can_cast(src: np.dtype, dst: np.dtype) -> bool:
    """torch's rule for writing a result in place: never a float into an integer tensor, nor
    a number into a bool tensor; a narrower float or integer is fine (float32 += float64)."""
    return not ((src.kind == "f" and dst.kind in "iub") or (src.kind != "b" and dst.kind == "b"))


def _keep_original(node, a) -> None:
    """The op's rules read `a` as it was before being overwritten: save a copy instead (as
    `self`, the first input, only: `a` as another input, `y.mul_(y)`, stays `a`, whose version
    then moved on, so a backward that reads it fails as torch's does)."""
    if node.saved[0] is not a:
        return
    original = type(a)._wrap(a.array.copy(), grad_fn=a.grad_fn, requires_grad=a.requires_grad)
    node.saved = (original,) + tuple(node.saved[1:])
    if node.versions is not None:
        node.versions = tuple(0 if v is original else n
                              for v, n in zip(node.saved, node.versions))


# === whole-tensor writes ===========================================================================

FILL = op("FillBackward2", lambda F, g, out, a: F.zeros_like(g),
          explain="fill_ overwrites every element: nothing flows back to the old values",
          formulas=("∂/∂a = 0",), check=Check(lambda a: (a * 1).fill_(2.0) + a, (any_(3),)))
FILL_TENSOR = op("FillBackward3", lambda F, g, out, a, value: F.zeros_like(g),
                 lambda F, g, out, a, value: F.sum_all(g),
                 explain="filling with a one-element tensor v: v gets the sum of g",
                 formulas=("∂/∂a = 0", "∂/∂v = Σg"),
                 check=Check(lambda a, v: (a * 1).fill_(v) * a, (any_(3), any_())))
ZERO = op("ZeroBackward0", lambda F, g, out, a: F.zeros_like(g),
          explain="zero_ overwrites every element: nothing flows back",
          formulas=("∂/∂a = 0",), check=Check(lambda a: (a * 1).zero_() + a, (any_(3),)))
# `t.copy_(src)`, and `t[:] = src` for a src of more than one element
COPY_INTO = op("CopyBackwards", lambda F, g, out, a, src: F.zeros_like(g),
               lambda F, g, out, a, src: g, engine_node=True,
               explain="copy_ overwrites a with src: src gets g, the old values nothing",
               formulas=("∂/∂a = 0", "∂/∂src = 1"),
               check=Check(lambda a, b: _assign_all(a, b) * a, (any_(2, 3), any_(3))))


def _assign_all(a, b):
    y = a * 1
    y[:] = b
    return y


@exposes(FILL, FILL_TENSOR, methods=("fill_",))
def fill_(a, value, entry=FILL):
    """`a.fill_(value)`: a 0-d tensor value is an input of torch's node (FillBackward3)."""
    check_inplace(a)
    if type(value) not in NUMBERS:
        if value.array.ndim:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.array.ndim} dimensions.")
        return _write_whole(a, value, FILL_TENSOR)
    check_fill_value(value, a.array.dtype)
    a.own_array()[...] = value
    return recorded_write(a, entry, (a,))


@exposes(ZERO, methods=("zero_",))
def zero_(a):
    array = a.array
    if not a.requires_grad and a._base is None and type(array) is np.ndarray \
            and array.flags.writeable:
        # `w.grad.zero_()` in a training loop: nothing to check, nothing recorded
        array.fill(0)
        a._bump_version()
        return a
    check_inplace(a)
    a.own_array().fill(0)  # (0 fits every dtype: fill_'s value checks are not needed)
    return recorded_write(a, ZERO, (a,))


@exposes(COPY_INTO, methods=("copy_",), params=("input", ("src", "other"), "non_blocking"))
def copy_(a, src):
    check_inplace(a)
    return _write_whole(a, src, COPY_INTO)


@exposes(methods=("masked_fill_",))
def masked_fill_(a, mask, value):
    """masked_fill written into a, after torch's checks in masked_fill_'s order: autograd's,
    the kernel's (value, mask), the layout, then the mask's broadcast to a (torch's tensor a
    is the one written to)."""
    m, value_array = masked_fill_operands(mask, value)
    check_inplace(a)
    check_masked_fill(m, value_array)
    check_internal_overlap(a)
    shape = a.array.shape
    if m.shape != shape:
        check_broadcast(shape, m.shape, a.array.dtype)
        full = np.broadcast_shapes(shape, m.shape)
        if full != shape:
            raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                               f"shape {list(full)}")
    return inplace(a, masked_fill(a, mask, value), checked=True)


def _write_whole(a, value, entry):
    """Overwrite all of `a` with `value` (a number or a tensor), recorded as `entry`."""
    source = value if type(value) in NUMBERS else value.array
    check_internal_overlap(a)
    if entry is COPY_INTO:
        check_no_partial_overlap(a, value)
        check_result_fits(a, (value,))  # (its shape error; the sizes that differ come below)
        check_broadcast(a.array.shape, np.shape(source), a.array.dtype)
    a.own_array()[...] = source
    return recorded_write(a, entry, (a, value))


# === indexed writes =================================================================================

def _index_put_self(F, g, out, a, value, key):
    """The old values under the index are overwritten: their gradient is zero there (+0.:
    torch puts zeros into g, g.index_put(index, 0), where g times a mask would give -0.)."""
    if type(g) is np.ndarray:
        g = g.copy()
        g[key] = 0
        return g
    zeroed = g.array.copy()
    zeroed[key] = 0
    return record(INDEX_PUT_INPLACE, zeroed, (g, type(g)._wrap(np.zeros((), zeroed.dtype))),
                  {"key": key})


def _index_put_value(F, g, out, a, value, key):
    return F.index(g, key)


INDEX_PUT_INPLACE = op("IndexPutBackward0", _index_put_self, _index_put_value,
                       explain="a write through a list or mask index", formulas=(
                           "g outside the indexed elements", "g[index]"),
                       check=Check(lambda a, b: _assign_row(a, b, [0, 2]), (any_(3, 2), any_(2))),
                       saves="p")


def _assign_row(a, b, rows):
    y = a * 1
    y[rows] = b
    return y


def _view_op_name(key) -> str:
    """The view torch takes last for a basic indexed write (its messages name it)."""
    items = key if isinstance(key, tuple) else (key,)
    last = next((i for i in reversed(items) if i is not Ellipsis and i is not None), None)
    return "Slice" if isinstance(last, slice) else "Select"


def _selects_all(shape, key) -> bool:
    """Whether a basic index takes all of every dimension (`:`, `...`, `0:`, `:, :`)."""
    items = key if isinstance(key, tuple) else (key,)
    if builtins.sum(1 for i in items if i is Ellipsis) > 1:
        return False
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += len(shape) - (len(items) - 1)
        elif isinstance(item, slice) and dim < len(shape) and whole(item, shape[dim]):
            dim += 1
        else:
            return False
    return True


@exposes(COPY_SLICES, INDEX_PUT_INPLACE, FILL_TENSOR, COPY_INTO, methods=("__setitem__",))
def setitem(a, key, value):
    """`a[key] = value`: written in place; with autograd, torch's CopySlices node (an
    index with lists or tensors is torch's index_put_ instead). A tensor value loses its
    leading size-1 dims first, through a view, as torch's indexing code does."""
    items = key if isinstance(key, tuple) else (key,)
    for item in items:
        check_item(item)
    check_zero_dim_key(a.array.ndim, key)
    check_index_tensors(a.array.ndim, items)
    if key is False:
        return None  # torch writes nothing, and records nothing
    if key is True:
        key = items = (None,)  # torch copies into a.unsqueeze(0), as for `a[None] = value`
    number = type(value) in NUMBERS
    if number:
        check_fill_value(value, a.array.dtype)  # (torch writes a number with fill_)
    elif not hasattr(value, "_grad_fn"):
        kind = getattr(type(value), "_tg_type_name", None) or type(value).__name__
        raise TypeError(f"can't assign a {kind} to a "
                        f"{LEGACY_TYPE_NAMES.get(a.array.dtype.name, 'torch.Tensor')}")
    if not builtins.any(is_advanced(k) or is_bool_item(k) for k in items):
        if not number:  # torch expands the value to the part before the write's own checks
            _check_value_fits(value, np.asarray(a.array)[key].shape)
        if _selects_all(a.array.shape, key):
            # no view is taken: torch fills or copies into the tensor itself
            check_inplace(a)
            return _copy_to(a, value, number)
        check_inplace(a, through_view=True, view_op=_view_op_name(key))
        return _write_through_view(a, lambda: getitem(a, key),
                                   lambda part: _copy_to(part, value, number))
    # torch takes the basic items as a view first, then index_put_s the rest into it
    basic, advanced = split_key(a.array.ndim, items)
    if makes_view(basic):
        check_inplace(a, through_view=True, view_op=_view_op_name(tuple(basic)))
        return _write_through_view(
            a, lambda: basic_index(a, basic, keep_whole=False),
            lambda part: _index_put(part, advanced_key(part.array.ndim, advanced), value, number))
    check_inplace(a)
    _index_put(a, advanced_key(a.array.ndim, advanced), value, number)


def _index_put(a, key, value, number):
    """torch's index_put_ with an index of arrays (and `:`) over a's own dims."""
    check_masks(a.array.shape, key)
    if not number:
        value = _without_leading_ones(value)
    if not number and value.array.dtype != a.array.dtype and value.array.size == 1 \
            and _one_mask(key):
        # torch's index_put_ fills through one mask with a one-element value's item(), in
        # a's dtype (the node recorded stays index_put's)
        source = value.array.astype(a.array.dtype)
    elif not number and value.array.dtype != a.array.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{type_word(a.array.dtype)} for the destination and "
            f"{type_word(value.array.dtype)} for the source.")
    else:
        source = value if number else value.array
    try:
        a.own_array()[key] = source
    except (IndexError, ValueError, TypeError) as exc:
        message = str(exc).replace("axis", "dimension")
        # (NumPy words a mask's mismatch its own way: torch checks every index kind alike)
        if message.startswith(("shape mismatch", "NumPy boolean array indexing assignment")):
            message = (f"shape mismatch: value tensor of shape {list(value.array.shape)} cannot "
                       "be broadcast to indexing result of shape "
                       f"{list(np.asarray(a.array)[key].shape)}")
        elif isinstance(exc, TypeError):
            raise
        raise (IndexError if isinstance(exc, IndexError) else RuntimeError)(message) from None
    recorded_write(a, INDEX_PUT_INPLACE, (a, value), {"key": key})
    return a


def _one_mask(key) -> bool:
    """Whether an advanced key is a single bool mask, every other item `:`."""
    arrays = [k for k in key if not (isinstance(k, slice) and k == slice(None))]
    return len(arrays) == 1 and getattr(arrays[0], "dtype", None) == np.bool_


def _write_through_view(a, take_part, write):
    """`a[key] = value` as torch's indexing does it: a write (fill_, copy_ or index_put_) into
    the view take_part() of a; the base then records CopySlices around that."""
    a.own_array()
    part = take_part()
    whole = write(part)
    if a._base is not None and a.grad_fn is not None and whole._base is a._base \
            and current().grad_enabled and a._base.grad_fn is not None:
        # `a` is itself a view of the rewritten base: it now reads through it too
        a.grad_fn = Node(AS_STRIDED, ((a._base.grad_fn, 0),), None, None,
                         {"region": _region(a._base.array, a.array),
                          "shape": a._base.array.shape},
                         ((a._base.array.shape, a._base.array.dtype),))


def _check_value_fits(value, shape) -> None:
    have = value.array.shape
    if have != shape and have:
        expanded_shape(_leading_ones_dropped(have), shape, value.array.dtype)


def _copy_to(dst, value, number):
    """torch's copy_to, which a write through basic indices runs on the part it names: a value
    of the part's shape is copied as it is (a number counts as 0-d), another 0-d value fills
    the part, any other value is viewed without its leading 1s and expanded to the part."""
    shape = dst.array.shape
    have = () if number else value.array.shape
    if have == shape:
        return _write_whole(dst, value, COPY_INTO)
    if not have:
        return _write_whole(dst, value, FILL_TENSOR)
    stripped = _leading_ones_dropped(have)
    expanded_shape(stripped, shape, value.array.dtype)  # torch's error for shapes that do not fit
    value = view(value, stripped)
    if value.array.shape != shape:
        value = expand(value, shape)
    return _write_whole(dst, value, COPY_INTO)


def _leading_ones_dropped(shape):
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return shape[lead:]


def _without_leading_ones(value):
    shape = value.array.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return view(value, shape[lead:]) if lead else value
