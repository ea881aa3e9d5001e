"""Elementwise arithmetic: + - * / **, where, clamp, comparisons and bitwise ops.

Each rule uses the ops PyTorch's own derivative formula uses, so a gradient made with
create_graph=True prints PyTorch's grad_fn names (`grad * 2` inside a formula is
`mul_scalar`, MulBackward1; a program's `t * 2` is MulBackward0 with a (None, 0) edge).
"""

from __future__ import annotations

import numpy as np

from ..numerics.fma import fma
from .division import divide_rounded
from ..graph.nodes import NUMBERS, record
from .operands import (
    NotAnOperand,
    binary,
    check_broadcast,
    elementwise_result,
    finish,
    floating,
    result_dtype,
    type_word,
)
from .registry import (
    IN_PLACE,
    METHOD_IN_PLACE,
    Check,
    Family,
    any_,
    away_from_zero,
    in_place_gap,
    no_in_place,
    positive,
    unit,
)
from ..core.session import check_allocation

family = Family("Elementwise arithmetic", inplace=METHOD_IN_PLACE)
op, exposes, word = family.op, family.exposes, family.word
_CHOICE = no_in_place("a choice between two tensors, as torch's where")
_PREDICATE = no_in_place("a predicate: its result is a new bool tensor or a Python bool")
_BOOL_WRITE = in_place_gap("a comparison or bitwise op written into its tensor (`x.eq_(y)`) "
                           "is not offered")

# === binary arithmetic =========================================================================

ADD = op("AddBackward0", lambda F, g, out, a, b, alpha=1: g,
         lambda F, g, out, a, b, alpha=1: g if alpha == 1 else F.mul_scalar(g, alpha),
         explain="a sum passes the gradient through",
         formulas=("∂(a+b)/∂a = 1: g", "∂(a+b)/∂b = 1: g·alpha"),
         check=Check(lambda a, b: a + b, (any_(2, 3), any_(3))))


@exposes(ADD, functions=("add",), methods=("add", "__add__", "__radd__"))
def add(a, b, *, alpha=1):
    if alpha != 1:
        return _add_scaled(ADD, a, b, alpha, 1)
    try:  # (the common case inline: `+` is the hottest op of most programs)
        x, y, dt = binary(a, b)
    except NotAnOperand:
        return NotImplemented
    return record(ADD, elementwise_result(x + y, x, y, dt), (a, b))


def _add_scaled(entry, a, b, alpha, sign: int):
    """a + sign·alpha·b, one rounding for floats: torch's kernel is a fused multiply-add."""
    try:
        x, y, dt = binary(a, b)
    except NotAnOperand:
        return NotImplemented
    if sign < 0:
        refuse_bool_sub(a, b)
    if dt.kind == "f":
        y, x = np.broadcast_arrays(np.asarray(y, dt), x)
        out = fma(y, dt.type(sign * alpha), x)
    else:
        out = x + y * (sign * alpha)
    return record(entry, finish(out, dt), (a, b), {"alpha": alpha})


SUB = op("SubBackward0", lambda F, g, out, a, b, alpha=1: g,
         lambda F, g, out, a, b, alpha=1: -g if alpha == 1 else F.mul_scalar(-g, alpha),
         explain="a difference: +g to a, -g to b",
         formulas=("∂(a-b)/∂a = 1: g", "∂(a-b)/∂b = -1: -g·alpha"),
         check=Check(lambda a, b: a - b, (any_(2, 1), any_(2, 3))))
RSUB = op("RsubBackward1", lambda F, g, out, a, alpha=1: -g,
          explain="c - a sends -g", formulas=("∂(c-a)/∂a = -1: -g",),
          check=Check(lambda a: 2 - a, (any_(3),)))


def refuse_bool_sub(a, b) -> None:
    """torch's sub_check: no bool operand (a Python bool is one)."""
    bools = sum(type(v) is bool or getattr(getattr(v, "array", None), "dtype", None) == np.bool_
                for v in (a, b))
    if bools == 2:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if bools:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@exposes(SUB, functions=("sub", "subtract"), methods=("sub", "subtract", "__sub__"))
def sub(a, b, *, alpha=1):
    if type(a) in NUMBERS:
        return rsub(b, a, alpha=alpha)
    if alpha != 1:
        return _add_scaled(SUB, a, b, alpha, -1)
    try:
        x, y, dt = binary(a, b, mixed=refuse_bool_sub)
        out = x - y
    except NotAnOperand:
        return NotImplemented
    except TypeError:  # (NumPy's for two bool arrays)
        refuse_bool_sub(a, b)
        raise
    return record(SUB, elementwise_result(out, x, y, dt), (a, b))


@exposes(RSUB, methods=("__rsub__",))
def rsub(a, number, alpha=1):
    """`number - a`: torch records only the tensor as an input."""
    if type(number) is type(a):
        return sub(number, a, alpha=alpha)
    try:
        x, y, dt = binary(a, number, mixed=refuse_bool_sub)
    except NotAnOperand:
        return NotImplemented
    return record(RSUB, finish(y - x * alpha, dt), (a,))


_CROSSED = ((1,), (0,))  # each input's gradient reads only the other input

MUL = op("MulBackward0", lambda F, g, out, a, b: g * b, lambda F, g, out, a, b: g * a,
         saves="i", reads=_CROSSED,
         explain="a product: each factor gets g times the other",
         formulas=("∂(a·b)/∂a = b: g·b", "∂(a·b)/∂b = a: g·a"),
         check=Check(lambda a, b: a * b, (any_(2, 3), any_(1, 3))))


@exposes(MUL, functions=("mul", "multiply"), methods=("mul", "multiply", "__mul__", "__rmul__"))
def mul(a, b):
    try:
        x, y, dt = binary(a, b)
    except NotAnOperand:
        return NotImplemented
    return record(MUL, elementwise_result(x * y, x, y, dt), (a, b))


DIV = op("DivBackward0", lambda F, g, out, a, b: g / b,
         lambda F, g, out, a, b: -g * ((a / b) / b), saves="i", reads=((1,), (0, 1)),
         explain="a quotient", formulas=("∂(a/b)/∂a = 1/b: g/b", "∂(a/b)/∂b = -a/b²: -g·a/b²"),
         check=Check(lambda a, b: a / b, (any_(2, 3), away_from_zero(3))))
RECIPROCAL = op("ReciprocalBackward0", lambda F, g, out, a: -g * (out * out), saves="o",
                explain="a reciprocal", formulas=("∂(1/a)/∂a = -1/a²: -g·out²",),
                check=Check(lambda a: 1 / a, (away_from_zero(4),)))


@exposes(DIV, functions=("div", "divide", "true_divide"),
         methods=("div", "divide", "true_divide", "__truediv__"))
def div(a, b, rounding_mode=None):
    if rounding_mode is not None:
        return divide_rounded(a, b, rounding_mode)
    if type(a) in NUMBERS:
        return mul(reciprocal(b), a)  # torch computes `2 / t` as reciprocal(t) * 2
    try:
        x, y, dt = binary(a, b, floating=True)
    except NotAnOperand:
        return NotImplemented
    return record(DIV, elementwise_result(x / y, x, y, dt), (a, b))


@exposes(RECIPROCAL, MUL, methods=("__rtruediv__",))
def rdiv(a, number):
    if type(number) not in NUMBERS:
        return NotImplemented
    return div(number, a)


@word("reciprocal", np.reciprocal)
@exposes(RECIPROCAL, functions=("reciprocal",), methods=("reciprocal",), inplace=IN_PLACE)
def reciprocal(a):
    return record(RECIPROCAL, np.reciprocal(floating(a)), (a,))


NEG = op("NegBackward0", lambda F, g, out, a: -g, explain="negation flips the sign",
         formulas=("∂(-a)/∂a = -1: -g",), check=Check(lambda a: -a, (any_(2, 2),)))


@exposes(NEG, functions=("neg", "negative"), methods=("neg", "negative", "__neg__"),
         inplace=IN_PLACE)
def neg(a):
    if a.array.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")
    return record(NEG, -a.array, (a,))


@exposes(functions=("positive",), methods=("positive", "__pos__"),
         inplace=no_in_place("the input itself is the result"))
def unary_plus(a):
    """`+t`: `t` itself, as torch returns it (no node, the same object)."""
    if a.array.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return a


# --- the scalar forms PyTorch's formulas use inside backward (mul.Scalar, div.Scalar, ...) ---

MUL_SCALAR = op("MulBackward1", lambda F, g, out, a, other: F.mul_scalar(g, other),
                explain="a product with a constant c", formulas=("∂(c·a)/∂a = c: g·c",),
                check=Check(lambda a: a.pow(2).sum() * 1, (any_(3),)))
DIV_SCALAR = op("DivBackward1", lambda F, g, out, a, other: F.div_scalar(g, other),
                explain="a quotient by a constant c", formulas=("∂(a/c)/∂a = 1/c: g/c",),
                check=Check(lambda a: a.mean(0).pow(2).sum(), (any_(2, 3),)))
SUB_SCALAR = op("SubBackward1", lambda F, g, out, a, other: g,
                explain="a difference with a constant", formulas=("∂(a-c)/∂a = 1: g",),
                check=Check(lambda a, b: a ** b, (positive(3), any_(3))))
ADD_SCALAR = op("AddBackward1", lambda F, g, out, a, other: g,
                explain="a sum with a constant", formulas=("∂(a+c)/∂a = 1: g",),
                check=Check(lambda a: a.sigmoid(), (any_(3),)))


def _scalar_word(entry, compute):
    def tensor_version(t, number):
        return record(entry, finish(compute(t.array, number), t.array.dtype), (t,),
                      {"other": number})
    return tensor_version


mul_scalar = word("mul_scalar", lambda t, c: t * c)(_scalar_word(MUL_SCALAR, np.multiply))
div_scalar = word("div_scalar", lambda t, c: t / c)(_scalar_word(DIV_SCALAR, np.true_divide))
sub_scalar = word("sub_scalar", lambda t, c: t - c)(_scalar_word(SUB_SCALAR, np.subtract))
add_scalar = word("add_scalar", lambda t, c: t + c)(_scalar_word(ADD_SCALAR, np.add))


# === powers ====================================================================================

def scalar_power(x, exponent):
    """x ** exponent (a Python number) on an array, as torch's kernel computes it: 2, 3, -1,
    -2 and -0.5 by multiplications, division and sqrt (so 3 is x·x·x, to the last place);
    any other float32 power rounded once from float64 (torch's pow is within an ulp)."""
    if x.dtype.kind != "f":
        return np.power(x, exponent)
    if exponent == 2:
        return x * x
    if exponent == 3:
        return x * x * x
    if exponent == -1:
        return 1 / x
    if exponent == -2:
        return 1 / (x * x)
    if exponent == -0.5:
        return 1 / np.sqrt(x)
    if exponent == 0.5:
        return np.sqrt(x)
    return _array_power(x, exponent)


def _array_power(x, y, dtype=None):
    dt = np.result_type(x, y) if dtype is None else dtype
    if dt == np.float32:
        return np.power(x, y, dtype=np.float64).astype(np.float32)
    if dt.kind in "iu" and np.any(np.less(y, 0)):
        return _integer_power(np.asarray(x, dt), np.asarray(y, dt))
    return np.power(x, y)


def _integer_power(x, y):
    """torch's integer pow for negative exponents (tensor ones; a negative number exponent is
    refused): 1 for a base of 1, ±1 for -1 by the exponent's parity, 0 for every other base."""
    out = np.power(x, np.maximum(y, 0))
    negative = np.broadcast_to(y < 0, out.shape)
    odd = np.broadcast_to(y % 2 != 0, out.shape)
    base = np.broadcast_to(x, out.shape)
    fixed = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, fixed, out).astype(out.dtype, copy=False)


def _pow_scalar_exponent(F, g, out, a, exponent):
    if exponent == 0:
        return F.zeros_like(g)
    if exponent == 2 and not hasattr(a, "_grad_fn"):
        return g * (2 * a)  # on arrays a ** 1 is a itself: one array op fewer per backward
    # (torch's pow_backward: the same pow kernel, one power lower)
    lower = a ** (exponent - 1) if hasattr(a, "_grad_fn") else scalar_power(a, exponent - 1)
    return g * F.mul_scalar(lower, exponent)


def _pow_tensor_base(F, g, out, a, b):
    return F.where(b == 0, 0.0, g * (b * a ** F.sub_scalar(b, 1)))


def _pow_tensor_exponent(F, g, out, a, b):
    return g * F.where((a == 0) & (b >= 0), 0.0, out * F.log(a))


POW_SCALAR = op("PowBackward0", _pow_scalar_exponent, saves="i",
                explain="a power with a constant exponent n", formulas=("∂(aⁿ)/∂a = n·aⁿ⁻¹: g·n·aⁿ⁻¹",),
                check=Check(lambda a: a ** 3, (any_(3),)))
POW_TENSOR = op("PowBackward1", _pow_tensor_base, _pow_tensor_exponent, saves="io",
                explain="a power with a tensor exponent",
                formulas=("∂(aᵇ)/∂a = b·aᵇ⁻¹: g·b·aᵇ⁻¹", "∂(aᵇ)/∂b = aᵇ·ln a: g·aᵇ·ln a"),
                check=Check(lambda a, b: a ** b, (positive(3), any_(3))))
POW_BASE = op("PowBackward2", lambda F, g, out, b, base: g * F.mul_scalar(out, float(np.log(base))),
              saves="o", explain="a constant base c raised to a", formulas=("∂(cᵃ)/∂a = cᵃ·ln c: g·cᵃ·ln c",),
              check=Check(lambda a: 2 ** a, (any_(3),)))


@exposes(POW_SCALAR, POW_TENSOR, functions=("pow",), methods=("pow", "__pow__"))
def pow(a, exponent):
    if type(a) in NUMBERS:
        return rpow(exponent, a)
    try:
        x, y, dt = binary(a, exponent)
    except NotAnOperand:
        return NotImplemented
    if type(exponent) is type(a):
        return record(POW_TENSOR, elementwise_result(_array_power(x, y, dt), x, y, dt),
                      (a, exponent))
    if dt.kind in "iu" and y < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return record(POW_SCALAR, finish(scalar_power(x, y), dt), (a,), {"exponent": exponent})


@exposes(POW_BASE, methods=("__rpow__",))
def rpow(a, base):
    """`base ** a` for a Python number base."""
    if type(base) is type(a):
        return pow(base, a)
    try:
        x, y, dt = binary(a, base)
    except NotAnOperand:
        return NotImplemented
    return record(POW_BASE, finish(_array_power(y, x, dt), dt), (a,), {"base": base})


# === where, clamp ===============================================================================

# the condition is not an input of torch's node (next_functions lists self and other only)
WHERE = op("WhereBackward0", lambda F, g, out, a, b, condition: F.where(condition, g, 0.0),
           lambda F, g, out, a, b, condition: F.where(condition, 0.0, g),
           explain="where(c, a, b): g goes where each element came from",
           formulas=("g where c", "g where not c"),
           check=Check(lambda a, b: a.where(a > 0, b), (away_from_zero(4), any_(4))), saves="p")


def _condition(condition):
    if type(condition) is np.ndarray:
        return condition.astype(bool, copy=False)
    if hasattr(condition, "array"):
        return np.asarray(condition.array).astype(bool, copy=False)
    return np.asarray(condition, dtype=bool)


def _where_arrays(condition, a, b):
    return np.where(_condition(condition), a, b)


@word("where", _where_arrays)
@exposes(WHERE, functions=("where",), inplace=_CHOICE)
def where(condition, a=None, b=None):
    if a is None and b is None:  # torch.where(condition): the indices where it holds
        from .logical import nonzero  # noqa: PLC0415 - ops_logical builds on this module

        return nonzero(condition, as_tuple=True)
    cond = _condition(condition)
    tensor = a if type(a) not in NUMBERS else b
    if type(tensor) in NUMBERS:
        raise TypeError("where() received an invalid combination of arguments")
    dt = result_dtype(*(v for v in (a, b)))
    x = a if type(a) in NUMBERS else a.array.astype(dt, copy=False)
    y = b if type(b) in NUMBERS else b.array.astype(dt, copy=False)
    shapes = (np.shape(cond), np.shape(x), np.shape(y))
    if shapes[0] != shapes[1] or shapes[0] != shapes[2]:  # the result takes all three's
        try:
            check_allocation(np.broadcast_shapes(*shapes), dt)
        except ValueError:
            pass  # shapes that do not broadcast: np.where says so below
    return record(WHERE, finish(np.where(cond, x, y), dt), (a, b), {"condition": cond})


@exposes(WHERE, methods=("where",), inplace=_CHOICE)
def where_method(a, condition, other):
    """`a.where(condition, other)` is `torch.where(condition, a, other)`."""
    return where(condition, a, other)


def _clamp_vjp(F, g, out, a, low, high):
    keep = True
    if low is not None:
        keep = a >= low
    if high is not None:
        keep = (a <= high) if keep is True else keep & (a <= high)
    return F.where(keep, g, 0.0)


CLAMP = op("ClampBackward1", _clamp_vjp, saves="i",
           explain="clamp passes the gradient where min ≤ a ≤ max",
           formulas=("∂clamp(a)/∂a = [min ≤ a ≤ max]",),
           check=Check(lambda a: a.clamp(-0.5, 0.5), (away_from_zero(4),)))


def _clamp_low_vjp(F, g, out, a, low, high):
    """min gets g where a fell below it (and min < max: a min above max loses to max)."""
    below = a < low
    return F.where(below if high is None else below & (low < high), g, 0.0)


def _clamp_high_vjp(F, g, out, a, low, high):
    """max gets g where a rose above it, or where it undercuts min (and so wins)."""
    above = a > high
    return F.where(above if low is None else above | (high < low), g, 0.0)


CLAMP_TENSORS = op("ClampBackward0", _clamp_vjp, _clamp_low_vjp, _clamp_high_vjp, saves="i",
                   explain="clamp between tensors: a gets g where min ≤ a ≤ max, each bound "
                           "where it is the value taken",
                   formulas=("∂/∂a = [min ≤ a ≤ max]", "∂/∂min = [a < min < max]",
                             "∂/∂max = [a > max or max < min]"),
                   check=Check(lambda a, lo, hi: a.clamp(lo - 1.5, hi + 1.5),
                               (any_(2, 3), unit(3), unit(2, 1))))


@exposes(CLAMP, CLAMP_TENSORS, functions=("clamp", "clip"), methods=("clamp", "clip"),
         inplace=IN_PLACE)
def clamp(a, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [v for v in (min, max) if v is not None]
    if any(type(v) is type(a) for v in bounds):
        if not all(type(v) is type(a) for v in bounds):
            raise TypeError(
                "clamp() received an invalid combination of arguments - got (Tensor, "
                f"{_argument_word(min)}, {_argument_word(max)}), but expected one of:\n"
                " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
        dt = result_dtype(a, *bounds)
        shape = a.array.shape
        for bound in bounds:  # (torch broadcasts the three together, in order)
            check_broadcast(shape, bound.array.shape, dt)
            shape = np.broadcast_shapes(shape, bound.array.shape)
        out = a.array
        if min is not None:
            out = np.maximum(min.array, out)
        if max is not None:
            out = np.minimum(max.array, out)
        return record(CLAMP_TENSORS, finish(np.asarray(out), dt), (a, min, max))
    out = a.array
    if min is not None:
        out = np.maximum(min, out)  # (the input on a tie, as torch: -0. stays -0.)
    if max is not None:
        out = np.minimum(max, out)
    dt = result_dtype(a, *(v for v in (min, max) if v is not None))
    return record(CLAMP, finish(out, dt), (a,), {"low": min, "high": max})


CLAMP_MIN = op("ClampMinBackward0", lambda F, g, out, a, low: F.where(a >= low, g, 0.0),
               saves="i", explain="clamp_min passes the gradient where a ≥ min",
               formulas=("∂clamp_min(a)/∂a = [a ≥ min]",),
               check=Check(lambda a: a.clamp_min(0.25), (away_from_zero(4),)))
CLAMP_MAX = op("ClampMaxBackward0", lambda F, g, out, a, high: F.where(a <= high, g, 0.0),
               saves="i", explain="clamp_max passes the gradient where a ≤ max",
               formulas=("∂clamp_max(a)/∂a = [a ≤ max]",),
               check=Check(lambda a: a.clamp_max(0.25), (away_from_zero(4),)))


CLAMP_MIN_TENSOR = op(
    "ClampMinBackward1", lambda F, g, out, a, low: F.where(a >= low, g, 0.0),
    lambda F, g, out, a, low: F.where(a < low, g, 0.0), saves="i",
    explain="clamp_min by a tensor: a gets g where a ≥ min, min where a < min",
    formulas=("∂/∂a = [a ≥ min]", "∂/∂min = [a < min]"),
    check=Check(lambda a, low: a.clamp_min(low), (any_(2, 3), any_(3))))
CLAMP_MAX_TENSOR = op(
    "ClampMaxBackward1", lambda F, g, out, a, high: F.where(a <= high, g, 0.0),
    lambda F, g, out, a, high: F.where(a > high, g, 0.0), saves="i",
    explain="clamp_max by a tensor: a gets g where a ≤ max, max where a > max",
    formulas=("∂/∂a = [a ≤ max]", "∂/∂max = [a > max]"),
    check=Check(lambda a, high: a.clamp_max(high), (any_(2, 3), any_(3))))


def _one_bound(entry, a, bound, name, compute):
    if type(bound) is type(a):  # torch's Tensor-bound overload: broadcast, promoted
        tensor_entry = CLAMP_MIN_TENSOR if entry is CLAMP_MIN else CLAMP_MAX_TENSOR
        dt = result_dtype(a, bound)
        check_broadcast(a.array.shape, bound.array.shape, dt)
        return record(tensor_entry, finish(np.asarray(compute(bound.array, a.array)), dt),
                      (a, bound))
    if type(bound) not in NUMBERS:
        param = "min" if entry is CLAMP_MIN else "max"
        raise TypeError(f"{name}(): argument '{param}' must be Number, "
                        f"not {type(bound).__name__}")
    dt = result_dtype(a, bound)
    key = "low" if entry is CLAMP_MIN else "high"
    return record(entry, finish(compute(bound, a.array), dt), (a,), {key: bound})


@exposes(CLAMP_MIN, CLAMP_MIN_TENSOR, functions=("clamp_min",), methods=("clamp_min",), inplace=IN_PLACE)
def clamp_min(a, min):
    return _one_bound(CLAMP_MIN, a, min, "clamp_min", np.maximum)  # (a tie keeps a's -0.)


@exposes(CLAMP_MAX, CLAMP_MAX_TENSOR, functions=("clamp_max",), methods=("clamp_max",), inplace=IN_PLACE)
def clamp_max(a, max):
    return _one_bound(CLAMP_MAX, a, max, "clamp_max", np.minimum)


def _argument_word(value) -> str:
    """A value as torch's "invalid combination of arguments" lists it."""
    return {type(None): "NoneType"}.get(type(value), "Tensor" if hasattr(value, "array")
                                        else type(value).__name__)


# === comparisons and bitwise ops (no gradient) ==================================================

_BOOL = np.dtype(bool)


def _comparison(compute, *names):
    def compare(a, b):
        try:
            x, y, _ = binary(a, b)
        except NotAnOperand:
            return NotImplemented
        return type(a)._wrap(elementwise_result(np.asarray(compute(x, y)), x, y, _BOOL))
    compare.__name__ = compare.__qualname__ = names[0]
    return exposes(functions=[n for n in names if not n.startswith("_")], methods=names,
                   inplace=_BOOL_WRITE)(compare)


eq = _comparison(np.equal, "eq", "__eq__")
ne = _comparison(np.not_equal, "ne", "__ne__")
lt = _comparison(np.less, "lt", "less", "__lt__")
le = _comparison(np.less_equal, "le", "less_equal", "__le__")
gt = _comparison(np.greater, "gt", "greater", "__gt__")
ge = _comparison(np.greater_equal, "ge", "greater_equal", "__ge__")


def _logical(compute, *names):
    def combine(a, b):
        number_first = type(a) in NUMBERS  # torch.bitwise_and(1, t): (Number self, Tensor other)
        try:
            if number_first:  # (binary reads its first operand as the tensor)
                y, x, dt = binary(b, a)
            else:
                x, y, dt = binary(a, b)
        except NotAnOperand:
            return NotImplemented
        if dt.kind == "f":
            raise NotImplementedError(
                f"\"{compute.__name__}_cpu\" not implemented for '{type_word(dt)}'")
        return type(b if number_first else a)._wrap(
            elementwise_result(compute(x, y), x, y, dt))
    combine.__name__ = combine.__qualname__ = names[0]
    return exposes(functions=names[:1], methods=names, inplace=_BOOL_WRITE)(combine)


bitwise_and = _logical(np.bitwise_and, "bitwise_and", "__and__", "__rand__")
bitwise_or = _logical(np.bitwise_or, "bitwise_or", "__or__", "__ror__")
bitwise_xor = _logical(np.bitwise_xor, "bitwise_xor", "__xor__", "__rxor__")


@exposes(functions=("bitwise_not",), methods=("bitwise_not",), inplace=_BOOL_WRITE)
def bitwise_not(a):
    if a.array.dtype.kind == "f":
        raise NotImplementedError(
            f"\"bitwise_not_cpu\" not implemented for '{type_word(a.array.dtype)}'")
    return type(a)._wrap(np.invert(a.array))


@exposes(methods=("__invert__",), inplace=_BOOL_WRITE)
def invert(a):
    """`~a`: torch's Tensor.__invert__ refuses a float tensor itself, before bitwise_not."""
    if a.array.dtype.kind == "f":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(a)


# --- words with no op of their own --------------------------------------------------------------

def _zeros_like_tensor(t):
    """torch's `zeros_like(grad)` in a formula: a constant, never recorded (so never -0.)."""
    return type(t)._wrap(np.zeros_like(t.array))


word("zeros_like", np.zeros_like)(_zeros_like_tensor)


# === closeness (no gradient) ======================================================================

@exposes(functions=("isclose",), methods=("isclose",), inplace=_PREDICATE)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    x, y, _ = binary(a, b)
    return type(a)._wrap(np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))


@exposes(functions=("allclose",), methods=("allclose",), inplace=_PREDICATE)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.all(isclose(a, b, rtol, atol, equal_nan).array))


@exposes(functions=("equal",), methods=("equal",), inplace=_PREDICATE)
def equal(a, b):
    """Same shape and same values (torch's answer for tensors of other shapes: False)."""
    return a.array.shape == b.array.shape and bool(np.array_equal(a.array, b.array))
