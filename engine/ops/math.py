"""Elementwise math functions of one tensor: exp log sqrt, trigonometry, abs sign, erf,
rounding; each also in place (`x.sin_()`, `torch.sin_(x)`), as torch offers them; and atan2,
the angle of two.

Each rule uses the ops PyTorch's own derivative formula uses (see ops/arith.py), so a
gradient made with create_graph=True prints PyTorch's grad_fn names.
"""

from __future__ import annotations

import math

import numpy as np

from ..graph.nodes import record
from .operands import NotAnOperand, binary, elementwise_result, floating, not_implemented
from .registry import IN_PLACE, METHOD_IN_PLACE, Check, Family, any_, away_from_zero, positive, unit

family = Family("Elementwise math", inplace=IN_PLACE)
op, exposes, word = family.op, family.exposes, family.word

# === the functions =================================================================================

def _unary(entry, compute, *names, method=True, inplace_entry=None):
    """The forward of a float op of one tensor (integers compute in the default float)."""
    def forward(a):
        return record(entry, compute(floating(a)), (a,))
    forward.__name__ = forward.__qualname__ = names[0]
    exposes(entry, functions=names, methods=names if method else (),
            inplace_entry=inplace_entry)(forward)
    word(names[0], compute)(forward)
    return forward


EXP = op("ExpBackward0", lambda F, g, out, a: g * out, saves="o",
         explain="exp is its own derivative", formulas=("∂(eᵃ)/∂a = eᵃ: g·out",),
         check=Check(lambda a: a.exp(), (any_(3),)))
LOG = op("LogBackward0", lambda F, g, out, a: g / a, saves="i",
         explain="natural log", formulas=("∂(ln a)/∂a = 1/a: g/a",),
         check=Check(lambda a: a.log(), (positive(3),)))
SQRT = op("SqrtBackward0", lambda F, g, out, a: g / F.mul_scalar(out, 2), saves="o",
          explain="square root", formulas=("∂(√a)/∂a = 1/(2√a): g/(2·out)",),
          check=Check(lambda a: a.sqrt(), (positive(3),)))
SIN = op("SinBackward0", lambda F, g, out, a: g * F.cos(a), saves="i",
         explain="sine", formulas=("∂(sin a)/∂a = cos a: g·cos a",),
         check=Check(lambda a: a.sin(), (any_(3),)))
COS = op("CosBackward0", lambda F, g, out, a: g * -F.sin(a), saves="i",
         explain="cosine", formulas=("∂(cos a)/∂a = -sin a: -g·sin a",),
         check=Check(lambda a: a.cos(), (any_(3),)))
ABS = op("AbsBackward0", lambda F, g, out, a: g * F.sgn(a), saves="i",
         explain="absolute value", formulas=("∂|a|/∂a = sign(a): g·sign(a)",),
         check=Check(lambda a: a.abs(), (away_from_zero(3),)))
ATAN = op("AtanBackward0", lambda F, g, out, a: g / F.add_scalar(a * a, 1), saves="i",
          explain="arctangent", formulas=("∂(atan a)/∂a = 1/(1 + a²): g/(1 + a²)",),
          check=Check(lambda a: a.atan(), (any_(3),)))
SGN = op("SgnBackward0", lambda F, g, out, a: F.zeros_like(g),
         explain="sign is flat: its gradient is zero", formulas=("∂sgn(a)/∂a = 0",),
         check=Check(lambda a: a.sgn() * a, (away_from_zero(3),)))
SIGN = op("SignBackward0", lambda F, g, out, a: F.zeros_like(g),
          explain="sign is flat: its gradient is zero", formulas=("∂sign(a)/∂a = 0",),
          check=Check(lambda a: a.sign() * a, (away_from_zero(3),)))

TAN = op("TanBackward0", lambda F, g, out, a: g * F.add_scalar(out ** 2, 1), saves="o",
         explain="tangent", formulas=("∂(tan a)/∂a = 1 + tan²a: g·(1 + out²)",),
         check=Check(lambda a: a.tan(), (unit(3),)))
LOG1P = op("Log1PBackward0", lambda F, g, out, a: g / F.add_scalar(a, 1), saves="i",
           explain="ln(1 + a)", formulas=("∂ln(1+a)/∂a = 1/(1 + a): g/(1 + a)",),
           check=Check(lambda a: a.log1p(), (positive(3),)))
EXPM1 = op("Expm1Backward0", lambda F, g, out, a: g * F.add_scalar(out, 1), saves="o",
           explain="eᵃ - 1", formulas=("∂(eᵃ - 1)/∂a = eᵃ: g·(out + 1)",),
           check=Check(lambda a: a.expm1(), (any_(3),)))
EXP2 = op("Exp2Backward0", lambda F, g, out, a: F.mul_scalar(g * out, math.log(2)), saves="o",
          explain="2ᵃ", formulas=("∂(2ᵃ)/∂a = 2ᵃ·ln 2: g·out·ln 2",),
          check=Check(lambda a: a.exp2(), (any_(3),)))
RSQRT = op("RsqrtBackward0", lambda F, g, out, a: F.mul_scalar(g, -0.5) * out ** 3, saves="o",
           explain="1/√a", formulas=("∂(1/√a)/∂a = -1/(2·a√a): -g·out³/2",),
           check=Check(lambda a: a.rsqrt(), (positive(3),)))
ERF = op("ErfBackward0",
         lambda F, g, out, a: F.mul_scalar(F.exp(-(a ** 2)), 2 / math.sqrt(math.pi)) * g,
         saves="i", explain="the error function", formulas=("∂erf(a)/∂a = 2/√π·e^(-a²)",),
         check=Check(lambda a: a.erf(), (any_(3),)))
ASIN = op("AsinBackward0", lambda F, g, out, a: g * F.rsqrt(F.add_scalar(-a * a, 1)),
          saves="i", explain="arcsine", formulas=("∂(asin a)/∂a = 1/√(1 - a²): g/√(1 - a²)",),
          check=Check(lambda a: a.asin(), (unit(3),)))
ACOS = op("AcosBackward0", lambda F, g, out, a: g * -F.rsqrt(F.add_scalar(-a * a, 1)),
          saves="i", explain="arccosine", formulas=("∂(acos a)/∂a = -1/√(1 - a²): -g/√(1 - a²)",),
          check=Check(lambda a: a.acos(), (unit(3),)))
SINH = op("SinhBackward0", lambda F, g, out, a: g * F.cosh(a), saves="i",
          explain="hyperbolic sine", formulas=("∂(sinh a)/∂a = cosh a: g·cosh a",),
          check=Check(lambda a: a.sinh(), (any_(3),)))
ASINH = op("AsinhBackward0", lambda F, g, out, a: g * F.rsqrt(F.add_scalar(a ** 2, 1)), saves="i",
           explain="inverse hyperbolic sine",
           formulas=("∂(asinh a)/∂a = 1/√(a² + 1): g/√(a² + 1)",),
           check=Check(lambda a: a.asinh(), (any_(3),)))


def _inplace_has_no_derivative(F, g, out, a):
    raise NotImplementedError("the derivative for 'inplace version of asinh' is not implemented.")


# torch records its in-place asinh_ as a node of its own, without a derivative
ASINH_INPLACE = op("AsinhBackward1", _inplace_has_no_derivative, differentiable=False,
                   explain="asinh_ has no derivative in torch: a backward that reaches it fails",
                   formulas=("none: a backward through it fails",),
                   check=Check(lambda a: (a * 1).asinh_(), (any_(3),)))
COSH = op("CoshBackward0", lambda F, g, out, a: g * F.sinh(a), saves="i",
          explain="hyperbolic cosine", formulas=("∂(cosh a)/∂a = sinh a: g·sinh a",),
          check=Check(lambda a: a.cosh(), (any_(3),)))
LOG2 = op("Log2Backward0", lambda F, g, out, a: g / F.mul_scalar(a, math.log(2)), saves="i",
          explain="base-2 log", formulas=("∂log₂a/∂a = 1/(a·ln 2): g/(a·ln 2)",),
          check=Check(lambda a: a.log2(), (positive(3),)))
LOG10 = op("Log10Backward0", lambda F, g, out, a: g / F.mul_scalar(a, math.log(10)), saves="i",
           explain="base-10 log", formulas=("∂log₁₀a/∂a = 1/(a·ln 10): g/(a·ln 10)",),
           check=Check(lambda a: a.log10(), (positive(3),)))


def in_double(compute):
    """`compute` done in float64 for a float32 array, then rounded once to float32.

    torch's float kernels (MKL's vector math) give the correctly rounded float32 far more
    often than NumPy's float32 loops, whose exp, for one, is off in the last place for
    about 40 % of inputs; rounded from float64, 1 %. The last place shows in `.item()`, and
    in sums such as a softmax's, which print 1. or 1.0000."""
    def rounded(x):
        if x.dtype == np.float32:
            return compute(x, dtype=np.float64).astype(np.float32)
        return compute(x)
    rounded.__name__ = compute.__name__
    return rounded


def _erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


exp = _unary(EXP, in_double(np.exp), "exp")
log = _unary(LOG, in_double(np.log), "log")
sqrt = _unary(SQRT, np.sqrt, "sqrt")
sin = _unary(SIN, in_double(np.sin), "sin")
cos = _unary(COS, in_double(np.cos), "cos")
atan = _unary(ATAN, in_double(np.arctan), "atan", "arctan")
tan = _unary(TAN, in_double(np.tan), "tan")
log1p = _unary(LOG1P, in_double(np.log1p), "log1p")
expm1 = _unary(EXPM1, in_double(np.expm1), "expm1")
exp2 = _unary(EXP2, in_double(np.exp2), "exp2")
rsqrt = _unary(RSQRT, lambda x: 1 / np.sqrt(x), "rsqrt")
erf = _unary(ERF, _erf, "erf")
asin = _unary(ASIN, in_double(np.arcsin), "asin", "arcsin")
acos = _unary(ACOS, in_double(np.arccos), "acos", "arccos")
sinh = _unary(SINH, in_double(np.sinh), "sinh")
cosh = _unary(COSH, in_double(np.cosh), "cosh")
asinh = _unary(ASINH, in_double(np.arcsinh), "asinh", "arcsinh", inplace_entry=ASINH_INPLACE)
log2 = _unary(LOG2, in_double(np.log2), "log2")
log10 = _unary(LOG10, in_double(np.log10), "log10")


@word("abs", np.abs)
@exposes(ABS, functions=("absolute",), methods=("absolute", "__abs__"), inplace=METHOD_IN_PLACE)
@exposes(ABS, functions=("abs",), methods=("abs",))
def abs(a):
    if a.array.dtype == np.bool_:
        raise not_implemented("abs_cpu", np.bool_)
    return record(ABS, np.abs(a.array), (a,))


@exposes(SIGN, functions=("sign",), methods=("sign",), inplace=METHOD_IN_PLACE)
def sign(a):
    return record(SIGN, _sign_array(a.array), (a,))


def _sign_array(x):
    return x.copy() if x.dtype == np.bool_ else np.sign(x)  # a bool is its own sign in torch


@word("sgn", _sign_array)
@exposes(SGN, functions=("sgn",), methods=("sgn",), inplace=METHOD_IN_PLACE)
def sgn(a):
    return record(SGN, _sign_array(a.array), (a,))


def _rounding(name, compute):
    entry = op(f"{name.capitalize()}Backward0", lambda F, g, out, a: F.zeros_like(g),
               explain=f"{name} is flat between its steps: the gradient is zero",
               formulas=(f"∂{name}(a)/∂a = 0",),
               check=Check(lambda a: getattr(a, name)() * a, (away_from_zero(3),)))

    def forward(a):
        x = a.array
        if x.dtype.kind == "f":
            return record(entry, compute(x), (a,))
        if x.dtype == np.bool_:
            raise not_implemented(f"{name}_vml_cpu", np.bool_)
        return record(entry, x.copy(), (a,))
    forward.__name__ = forward.__qualname__ = name
    return exposes(entry, functions=(name,), methods=(name,))(forward)


floor = _rounding("floor", np.floor)
ceil = _rounding("ceil", np.ceil)
trunc = _rounding("trunc", np.trunc)
round = _rounding("round", np.round)  # (half to even, as torch rounds)

FRAC = op("FracBackward0", lambda F, g, out, a: g, explain="frac = a - trunc(a): g passes",
          formulas=("∂frac(a)/∂a = 1: g",), check=Check(lambda a: a.frac(), (away_from_zero(3),)))
def _frac(x):
    return x - np.trunc(x)


@word("frac", _frac)
@exposes(FRAC, functions=("frac",), methods=("frac",))
def frac(a):
    if a.array.dtype.kind != "f":  # (torch's kernel has float versions only)
        raise not_implemented("frac_cpu", a.array.dtype)
    return record(FRAC, _frac(a.array), (a,))


@exposes(functions=("square",), methods=("square",))
def square(a):
    """torch computes square as a power of 2 (PowBackward0)."""
    return a ** 2


# === the angle of two tensors ======================================================================

def _atan2_rule(sign: int):
    """torch's formula: with recip = 1/(a² + b²), 0 where that is infinite (at a = b = 0), a
    gets g·b·recip and b gets g·(-a)·recip."""
    def rule(F, g, out, a, b):
        recip = F.reciprocal(a * a + b * b)
        recip = F.masked_fill(recip, np.isinf(recip if type(recip) is np.ndarray else recip.array),
                              0.0)
        return g * b * recip if sign > 0 else g * -a * recip
    return rule


ATAN2 = op("Atan2Backward0", _atan2_rule(1), _atan2_rule(-1), saves="i",
           explain="atan2(a, b), the angle of the point (b, a)",
           formulas=("∂/∂a = b/(a²+b²): g·b·recip", "∂/∂b = -a/(a²+b²): g·(-a)·recip"),
           check=Check(lambda a, b: a.atan2(b), (any_(3), positive(3))))


@exposes(ATAN2, functions=("atan2", "arctan2"), methods=("atan2", "arctan2"),
         inplace=METHOD_IN_PLACE)
def atan2(a, b):
    if type(b) is not type(a):  # (torch takes no number here: its TypeError names `other`)
        return NotImplemented
    try:
        x, y, dt = binary(a, b, floating=True)
    except NotAnOperand:
        return NotImplemented
    if dt == np.float32:  # (as in_double: rounded once from float64, torch's more often)
        angle = np.arctan2(x, y, dtype=np.float64).astype(np.float32)
    else:
        angle = np.arctan2(x, y)
    return record(ATAN2, elementwise_result(angle, x, y, dt), (a, b))
