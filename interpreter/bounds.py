"""Python-level operations that could exhaust the machine: huge integers, repetitions and
iterators nested so deep that taking one item overflows the C stack.

`10**10**10` or `[0] * 10**10` would run for hours or eat all memory in plain Python; a
.tg program gets a clear error instead. Only `*`, `**` and `<<` can blow up like that.
`map(f, map(f, ...))` nested 100,000 deep crashes CPython itself: `map filter zip
enumerate` here count how deep their arguments nest (a .tg generator expression counts
as it runs, see comprehensions.py).
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


MAX_NESTING = 1000  # iterators wrapping iterators; real programs nest a handful


class NestingLimit(RecursionError):
    """Deeper than MAX_NESTING: a limit of .tg programs, which no `except` catches."""

    tg_uncatchable = True
    tg_error_class = "RecursionError"


def _nested(name: str, base: type) -> type:
    """`base` (map, zip, ...) that knows how deep its iterator arguments nest. It prints,
    and `type()` shows it, as the builtin."""
    def __new__(cls, *args, **kwargs):
        self = base.__new__(cls, *args, **kwargs)
        depth = 1 + max((a._depth for a in args if type(a) in _NESTED), default=0)
        if depth > MAX_NESTING:
            raise NestingLimit(f"iterators nested more than {MAX_NESTING:,} deep "
                               "(a limit of .tg programs)")
        self._depth = depth
        return self
    return type(name, (base,), {"__slots__": ("_depth",), "__new__": __new__,
                                "__module__": "builtins", "__qualname__": name})


NESTING = {name: _nested(name, base) for name, base in
           (("map", map), ("filter", filter), ("zip", zip), ("enumerate", enumerate))}
_NESTED = frozenset(NESTING.values())
