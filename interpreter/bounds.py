"""Python-level operations that could exhaust the machine: huge integers and repetitions.

`10**10**10` or `[0] * 10**10` would run for hours or eat all memory in plain Python; a
.tg program gets a clear error instead. Only `*`, `**` and `<<` can blow up like that.
"""

from __future__ import annotations

import operator

MAX_INT_BITS = 100_000  # about 30,000 decimal digits
MAX_ITEMS = 10_000_000  # items in a list, tuple or string built by repetition

_REPEATABLE = (list, tuple, str)


def _too_big_int(bits: int) -> OverflowError:
    return OverflowError(f"integer result would have about {int(bits * 0.30103):,} digits; "
                         f".tg programs are limited to {int(MAX_INT_BITS * 0.30103):,}")


def _repeat_check(seq, times) -> None:
    if type(times) is int and len(seq) * times > MAX_ITEMS:
        raise MemoryError(f"repeating a {type(seq).__name__} of {len(seq):,} items {times:,} "
                          f"times is over the limit of {MAX_ITEMS:,} items")


def mul(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise _too_big_int(a.bit_length() + b.bit_length())
    elif ta in _REPEATABLE:
        _repeat_check(a, b)
    elif tb in _REPEATABLE:
        _repeat_check(b, a)
    return a * b


def power(a, b):
    if type(a) is int and type(b) is int and b > 0 and a not in (0, 1, -1):
        if b > MAX_INT_BITS or (a.bit_length() - 1) * b > MAX_INT_BITS:
            raise _too_big_int(max(b, (a.bit_length() - 1) * b))
    return a ** b


def lshift(a, b):
    if type(a) is int and type(b) is int and a and b > MAX_INT_BITS:
        raise _too_big_int(b)
    return a << b


def imul(a, b):
    return mul(a, b) if type(a) in _REPEATABLE or type(a) is int else operator.imul(a, b)


def ipow(a, b):
    return power(a, b) if type(a) is int else operator.ipow(a, b)


def ilshift(a, b):
    return lshift(a, b) if type(a) is int else operator.ilshift(a, b)
