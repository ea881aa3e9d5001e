"""Python-level operations that could exhaust the machine: huge integers, long strings and
lists.

`10**10**10`, `[0] * 10**10`, `f"{'':>1000000000}"` or `s.replace("", s)` would run for
hours or eat all memory in plain Python; a .tg program gets a clear error instead, checked
before the result is made. Each producer of a big result is here: `*`, `**`, `<<`, `+` of
sequences, `%` and format specs (widths, precisions), `str.join`, `str.replace`, f-strings,
and `round` of an integer to a huge negative number of digits. Whatever else can grow (a
`str()` of a list nested by a loop, C-level loops) meets the process limits instead.

`10**10**10` or `[0] * 10**10` would run for hours or eat all memory in plain Python; a
.tg program gets a clear error instead. Only `*`, `**` and `<<` can blow up like that.
`map(f, map(f, ...))` nested 100,000 deep crashes CPython itself: `map filter zip
enumerate` here count how deep their arguments nest (a .tg generator expression counts
as it runs, see comprehensions.py).
"""

from __future__ import annotations

import operator
import re

MAX_INT_BITS = 100_000  # about 30,000 decimal digits
MAX_ITEMS = 10_000_000  # items in a list or tuple, characters in a string

_REPEATABLE = (list, tuple, str)
SEQUENCES = frozenset(_REPEATABLE)


class LimitReached:
    """Mixed into the errors of a limit of autodiff's (not a mistake of the program's): the
    diagnostic shows the Python class, the exit status is the one for a limit."""


class IntegerLimit(LimitReached, OverflowError):
    pass


IntegerLimit.__name__ = IntegerLimit.__qualname__ = "OverflowError"


def _too_big_int(bits: int) -> OverflowError:
    return IntegerLimit(f"integer result would have about {int(bits * 0.30103):,} digits; "
                        f".tg programs are limited to {int(MAX_INT_BITS * 0.30103):,}")


def too_long(what: str, size: int, kind: str = "str") -> MemoryError:
    made = f"a string of {size:,} characters" if kind == "str" else f"a {kind} of {size:,} items"
    return MemoryError(f"{what} would make {made}, over the limit of {MAX_ITEMS:,}")


def _repeat_check(seq, times) -> None:
    if type(times) is int and len(seq) * times > MAX_ITEMS:
        raise MemoryError(f"repeating a {type(seq).__name__} of {len(seq):,} items {times:,} "
                          f"times is over the limit of {MAX_ITEMS:,} items")


def check_concat(a, b) -> None:
    """`a + b` of two sequences (the caller checks `type(a) in SEQUENCES`)."""
    if type(b) is type(a) and len(a) + len(b) > MAX_ITEMS:
        raise too_long("+", len(a) + len(b), type(a).__name__)


_SPEC_SIZES = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?[a-zA-Z%]?")


def check_format_spec(value, spec: str) -> None:
    """format(value, spec): the width (and, for a number, the precision) makes the length."""
    if not spec:
        return
    match = _SPEC_SIZES.fullmatch(spec)
    if match is None:
        return  # format() itself refuses it, with Python's words
    width, precision = match.group(1), match.group(2)
    if width and int(width) > MAX_ITEMS:
        raise too_long(f"formatting with width {width}", int(width))
    if precision and type(value) is not str and int(precision) > MAX_ITEMS:
        raise too_long(f"formatting with precision {precision}", int(precision))


_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.DOTALL)


def check_printf(template: str, args) -> None:
    """`template % args`: the widths and precisions of its fields, `*` ones taken from args."""
    if "%" not in template:
        return
    stars = iter(args if type(args) is tuple else (args,))
    total = len(template)
    for match in _PRINTF.finditer(template):
        for size in match.group(1, 2):
            if size == "*":
                size = next(stars, 0)
                if type(size) is not int:
                    break  # Python's own error ("* wants int") follows
            elif size:
                size = int(size)
            else:
                continue
            total += abs(size)
        if match.group(3) != "%":
            next(stars, None)
        if total > MAX_ITEMS:
            raise too_long("formatting with %", total)


def check_join(sep: str, items: list) -> None:
    total = len(sep) * max(len(items) - 1, 0)
    for item in items:
        if type(item) is str:
            total += len(item)
    if total > MAX_ITEMS:
        raise too_long("str.join", total)


def safe_join(sep: str):
    def join(iterable):
        items = list(iterable)
        check_join(sep, items)
        return sep.join(items)
    return join


def safe_replace(text: str):
    def replace(old, new, count=-1):
        if type(old) is str and type(new) is str and type(count) is int and len(new) > len(old):
            found = len(text) + 1 if old == "" else text.count(old)
            if count >= 0:
                found = min(found, count)
            size = len(text) + found * (len(new) - len(old))
            if size > MAX_ITEMS:
                raise too_long("str.replace", size)
        return text.replace(old, new, count)
    return replace


def check_pieces(pieces: list) -> None:
    """The parts of an f-string, before they are joined."""
    total = 0
    for piece in pieces:
        total += len(piece)
    if total > MAX_ITEMS:
        raise too_long("an f-string", total)


def safe_round(number, ndigits=None):
    """round(): an integer rounded to -n digits computes 10**n first, however large n is."""
    if type(number) is int and type(ndigits) is int and ndigits < 0 and \
            -ndigits > number.bit_length() * 0.30103 + 2:
        return 0  # every digit rounds away, as round() would find after the huge power
    if ndigits is None:
        return round(number)
    return round(number, ndigits)


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


def add(a, b):
    if type(a) in SEQUENCES:
        check_concat(a, b)
    return a + b


def mod(a, b):
    if type(a) is str:
        check_printf(a, b)
    return a % b


def iadd(a, b):
    if type(a) in SEQUENCES:
        check_concat(a, b)
    return operator.iadd(a, b)


def imod(a, b):
    return mod(a, b) if type(a) is str else operator.imod(a, b)


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
