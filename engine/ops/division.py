"""Rounded division and remainders: `//`, `%`, floor_divide, remainder, fmod, and div's
rounding modes, with torch's results and torch's graph.

torch's remainder is fmod moved into the divisor's sign, so `-2. % 2` is -0. (NumPy's mod
gives 0.). A remainder is differentiable (RemainderBackward0/1, FmodBackward0/1: the
dividend gets g, a tensor divisor -g times the rounded quotient, DivBackward2 under
create_graph); rounded division has a zero gradient (DivBackward2), except that `//` and a
number's `%` by a tensor record torch's NotImplemented node, whose backward fails.
"""

from __future__ import annotations

import numpy as np

from ..graph.nodes import NUMBERS, record
from .operands import NotAnOperand, binary, finish
from .registry import METHOD_IN_PLACE, Check, Family, any_, away_from_zero, positive

family = Family("Rounded division and remainders", inplace=METHOD_IN_PLACE)
op, exposes, word = family.op, family.exposes, family.word


def _floor_quotient(x, y):
    return np.floor_divide(x, y)


def _trunc_quotient(x, y):
    if np.result_type(x, y).kind == "f":
        return np.trunc(np.true_divide(x, y))
    q = np.floor_divide(x, y)  # integers: floor, then one up where the signs differ
    return q + ((np.remainder(x, y) != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0)))


def _remainder(x, y):
    """NumPy's mod but for a zero result, which keeps the dividend's sign as fmod's does
    (NumPy's takes the divisor's: 5 % -1. is -0. there, 0. in torch)."""
    r = np.asarray(np.remainder(x, y))
    # only a zero result can have the wrong sign, and only where dividend and divisor differ
    # in sign: nonnegative data (arange % k) skips the masked pass
    if r.dtype.kind == "f" and (np.signbit(y).any() or np.signbit(x).any()) \
            and np.count_nonzero(r) != r.size:
        np.copysign(r, x, out=r, where=r == 0)
    return r


def _refuse_zero_divisor(y, dt) -> None:
    if dt.kind in "iub" and np.any(np.asarray(y) == 0):
        raise RuntimeError("ZeroDivisionError")


def _operands(a, b, kernel: str, reflected: bool = False):
    """(x, y, dtype) for `a op b` (`b op a` when reflected): torch's `kernel` refuses two
    bools, then an integer 0 divisor."""
    x, y, dt = binary(a, b)
    if dt == np.bool_:
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for 'Bool'")
    if reflected:
        x, y = y, x
    _refuse_zero_divisor(y, dt)
    return x, y, dt


# --- div's rounding modes: a zero gradient ---------------------------------------------------------

DIV_ROUNDED = op("DivBackward2", lambda F, g, out, a, b, rounding_mode: F.zeros_like(g),
                 lambda F, g, out, a, b, rounding_mode: F.zeros_like(g),
                 explain="a rounded quotient is a step function: its gradient is 0 everywhere",
                 formulas=("∂/∂a = 0", "∂/∂b = 0"),
                 check=Check(lambda a, b: a.div(b, rounding_mode="floor") * a,
                             (away_from_zero(3), positive(3))))

_QUOTIENTS = {"floor": _floor_quotient, "trunc": _trunc_quotient}


def divide_rounded(a, b, rounding_mode: str):
    """torch.div(a, b, rounding_mode='floor' | 'trunc') of a tensor `a`."""
    quotient = _QUOTIENTS.get(rounding_mode) if type(rounding_mode) is str else None
    if quotient is None:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    x, y, dt = _operands(a, b, "div_" + rounding_mode)
    return record(DIV_ROUNDED, finish(quotient(x, y), dt), (a, b),
                  {"rounding_mode": rounding_mode})


@word("div_floor", _floor_quotient)
def _div_floor(a, b):
    return divide_rounded(a, b, "floor")


@word("div_trunc", _trunc_quotient)
def _div_trunc(a, b):
    return divide_rounded(a, b, "trunc")


# --- remainders ----------------------------------------------------------------------------------

REMAINDER_SCALAR = op("RemainderBackward0", lambda F, g, out, a: g,
                      explain="a remainder by a number: a steps by whole divisors, so g passes",
                      formulas=("∂(a mod c)/∂a = 1: g",),
                      check=Check(lambda a: a % 2.5, (away_from_zero(3),)))
REMAINDER = op("RemainderBackward1", lambda F, g, out, a, b: g,
               lambda F, g, out, a, b: -g * F.div_floor(a, b), saves="i", reads=((), (0, 1)),
               explain="a remainder a - b·floor(a/b): a gets g, b gets -g·floor(a/b)",
               formulas=("∂/∂a = 1: g", "∂/∂b = -floor(a/b): -g·floor(a/b)"),
               check=Check(lambda a, b: a % (b + 3), (away_from_zero(3), positive(3))))
FMOD_SCALAR = op("FmodBackward0", lambda F, g, out, a: g,
                 explain="fmod by a number: a steps by whole divisors, so g passes",
                 formulas=("∂fmod(a, c)/∂a = 1: g",),
                 check=Check(lambda a: fmod(a, 2.5), (away_from_zero(3),)))
FMOD = op("FmodBackward1", lambda F, g, out, a, b: g,
          lambda F, g, out, a, b: -g * F.div_trunc(a, b), saves="i", reads=((), (0, 1)),
          explain="fmod a - b·trunc(a/b): a gets g, b gets -g·trunc(a/b)",
          formulas=("∂/∂a = 1: g", "∂/∂b = -trunc(a/b): -g·trunc(a/b)"),
          check=Check(lambda a, b: fmod(a, b + 3), (away_from_zero(3), positive(3))))


def _not_differentiable(F, g, out, *inputs, position, aten):
    raise RuntimeError(f"derivative for aten::{aten} is not implemented")


NOT_IMPLEMENTED = op("NotImplemented", _not_differentiable, variadic=True, engine_node=True,
                     differentiable=False,
                     explain="torch has no derivative for this op (floor division, a number's "
                             "remainder by a tensor): a backward that reaches it fails",
                     check=Check(lambda a: (a // 2) * 0 + a, (any_(3),)))


def record_not_implemented(aten: str, a, b, out):
    """torch's NotImplemented node over the tensors among a, b (b may be None) that require
    grad: the result of an op torch has no derivative for."""
    cls = type(a) if type(a) not in NUMBERS else type(b)
    needing = tuple(t for t in (a, b) if type(t) is cls and t.requires_grad)
    if not needing:
        return cls._wrap(out)
    return record(NOT_IMPLEMENTED, out, needing, {"aten": aten})


def _recorded(scalar_entry, tensor_entry, compute, kernel: str):
    """The forward of a remainder (torch's `kernel`): `scalar_entry` for a number divisor."""
    def forward(a, b):
        if type(a) in NUMBERS and scalar_entry is REMAINDER_SCALAR:  # torch.remainder(2.0, t)
            if type(b) in NUMBERS or not hasattr(b, "array"):
                raise TypeError("remainder(): argument 'input' (position 1) must be Tensor, not "
                                f"{type(a).__name__}")
            return rmod(b, a)
        try:
            x, y, dt = _operands(a, b, kernel)
        except NotAnOperand:
            return NotImplemented
        out = finish(compute(x, y), dt)
        if type(b) in NUMBERS:
            return record(scalar_entry, out, (a,))
        return record(tensor_entry, out, (a, b))
    return forward


remainder = exposes(REMAINDER_SCALAR, REMAINDER, functions=("remainder",),
                    methods=("remainder", "__mod__"))(
    _recorded(REMAINDER_SCALAR, REMAINDER, _remainder, "remainder"))
fmod = exposes(FMOD_SCALAR, FMOD, functions=("fmod",), methods=("fmod",))(
    _recorded(FMOD_SCALAR, FMOD, np.fmod, "fmod"))


def _without_derivative(aten: str, compute, kernel: str, reflected: bool):
    """The forward of an op torch records as NotImplemented (`reflected`: `number op t`),
    computed by torch's `kernel`."""
    def forward(a, b):
        try:
            x, y, dt = _operands(a, b, kernel, reflected)
        except NotAnOperand:
            return NotImplemented
        first, second = (b, a) if reflected else (a, b)
        return record_not_implemented(aten, first, second, finish(compute(x, y), dt))
    forward.__name__ = forward.__qualname__ = aten
    return forward


rmod = exposes(NOT_IMPLEMENTED, methods=("__rmod__",))(
    _without_derivative("remainder", _remainder, "remainder", reflected=True))
floor_divide = exposes(NOT_IMPLEMENTED, functions=("floor_divide",),
                       methods=("floor_divide", "__floordiv__"))(
    _without_derivative("floor_divide", _floor_quotient, "div_floor", reflected=False))
rfloordiv = exposes(NOT_IMPLEMENTED, methods=("__rfloordiv__",))(
    _without_derivative("floor_divide", _floor_quotient, "div_floor", reflected=True))
