"""Python-level operations that could exhaust the machine: huge integers, long strings and
lists.

`10**10**10`, `[0] * 10**10`, `f"{'':>1000000000}"` or `s.replace("", s)` would run for
hours or eat all memory in plain Python; a .tg program gets a clear error instead, checked
before the result is made. Each kind of producer of a big result is checked here: `*`, `**`,
`<<`, `+` and `+=` of sequences, `%` and format specs (widths, precisions), and `round` of
an integer to a huge negative number of digits; a list or tuple made from an iterable
(`collected`: `list()`, `sorted()`, `l.extend(x)`, `l += x`, `f(*x)`, `[*x]`, `(*x,)`,
`{*x}`, `a, *rest = x`); the text of a value
(`check_text`: `str()`, `repr()`, `print`, f-strings, `%s`, `str.format` of a list that holds
one long string many times). bounded_builtins.py applies them to the builtins and methods.
What grows one item at a time (`append` in a loop, a comprehension) meets the time and
memory limits instead.

`10**10**10` or `[0] * 10**10` would run for hours or eat all memory in plain Python; a
.tg program gets a clear error instead. Only `*`, `**` and `<<` can blow up like that.
`map(f, map(f, ...))` nested 100,000 deep crashes CPython itself: `map filter zip
enumerate` here count how deep their arguments nest (a .tg generator expression counts
as it runs, see comprehensions.py).
"""

from __future__ import annotations

import operator
import re
from collections import OrderedDict
from itertools import islice

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


def too_many(what: str, kind: str = "list") -> MemoryError:
    """For an iterable of unknown length, refused once one item past the bound was taken."""
    return MemoryError(f"{what} would make a {kind} of more than {MAX_ITEMS:,} items, over "
                       f"the limit of {MAX_ITEMS:,}")


# iterables whose len() is their count and costs nothing (no program code runs)
_SIZED = frozenset({list, tuple, str, dict, set, frozenset, range, OrderedDict, type({}.keys()),
                    type({}.values()), type({}.items())})


def collected(iterable, what: str, already: int = 0, kind: str = "list"):
    """The items of `iterable`, for a list or tuple of `already` items more: refused when
    their count is over the bound, before any is taken when the count is known, else once
    one past the bound is (lazily: a generator runs that far, and no further)."""
    room = MAX_ITEMS - already
    if type(iterable) in _SIZED:
        if len(iterable) > room:
            raise too_long(what, already + len(iterable), kind)
        return iterable
    items = list(islice(iterable, room + 1))
    if len(items) > room:
        raise too_many(what, kind)
    return items


_CONTAINERS = frozenset({list, tuple, dict, set, frozenset, OrderedDict})
_PATH_END = object()


def _least_text(value, budget: int) -> int:
    """At least len(repr(value)) of a container (each string counts its length, anything
    else one character, brackets and commas theirs), counted until it passes `budget`: a
    list holding one long string eight times, or itself nested by a loop, passes it at once
    without building its text. A container inside itself counts as Python shows it, `[...]`."""
    total, path, todo = 0, set(), [value]
    while todo:
        item = todo.pop()
        if item is _PATH_END:
            path.discard(todo.pop())
            continue
        kind = type(item)
        if kind is str:
            total += len(item) + 2
        elif kind in _CONTAINERS or isinstance(item, BaseException):
            if id(item) in path:
                total += 5
                continue
            path.add(id(item))
            todo += (id(item), _PATH_END)
            if kind is dict or kind is OrderedDict:
                todo += item.keys()
                todo += item.values()
                total += 4 * len(item)
            else:
                parts = item.args if isinstance(item, BaseException) else item
                todo += parts
                total += 2 * len(parts)
            total += 2
        else:
            total += 1
        if total > budget:
            break
    return total


def check_text(value, what: str) -> None:
    """Before str()/repr()/format() of `value`: a container whose text must be over the
    bound is refused (nothing else can be: strings are bounded where they are made, and a
    number's or a tensor's text is short)."""
    if type(value) in _CONTAINERS or isinstance(value, BaseException):
        size = _least_text(value, MAX_ITEMS)
        if size > MAX_ITEMS:  # (counted no further than that)
            raise MemoryError(f"{what} would make a string of at least {size:,} characters, "
                              f"over the limit of {MAX_ITEMS:,}")


def checked_text(text: str, what: str) -> str:
    """A text already made (its least length was within the bound): the bound all the same
    (repr() escapes, a tensor printed without summary)."""
    if len(text) > MAX_ITEMS:
        raise too_long(what, len(text))
    return text


_SHORT_TEXT = frozenset({int, float, bool, complex, type(None)})  # (integers are bounded)


def text(value, what: str = "str()", convert=str) -> str:
    """str(value) (or `convert`'s text) within the bound."""
    kind = type(value)
    if kind in _SHORT_TEXT or (kind is str and convert is str):
        return convert(value)
    check_text(value, what)
    return checked_text(convert(value), what)


def formatted(value, spec: str, what: str = "format()") -> str:
    """format(value, spec) within the bound: its width and precision, and its text."""
    check_format_spec(value, spec)
    check_text(value, what)
    return checked_text(format(value, spec), what)


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


_PRINTF = re.compile(r"%(?:\(([^)]*)\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.DOTALL)


def check_printf(template: str, args) -> None:
    """`template % args`: the widths and precisions of its fields, `*` ones taken from args,
    and the text of what `%s`, `%r` and `%a` convert."""
    if "%" not in template:
        return
    stars = iter(args if type(args) is tuple else (args,))
    total = len(template)
    for match in _PRINTF.finditer(template):
        for size in match.group(2, 3):
            if size == "*":
                size = next(stars, 0)
                if type(size) is not int:
                    break  # Python's own error ("* wants int") follows
            elif size:
                size = int(size)
            else:
                continue
            total += abs(size)
        conversion = match.group(4)
        if conversion != "%":
            key = match.group(1)
            value = args.get(key) if key is not None and type(args) is dict else \
                next(stars, None)
            if conversion in "sra":
                total += len(value) if type(value) is str else _least_text(value, MAX_ITEMS)
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
        items = collected(iterable, "str.join")
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
    if type(a) is list:  # `l += x` extends l by any iterable
        b = collected(b, "+=", len(a))
    elif type(a) in SEQUENCES:
        check_concat(a, b)
    return operator.iadd(a, b)


def imod(a, b):
    return mod(a, b) if type(a) is str else operator.imod(a, b)


def imul(a, b):
    if type(a) is list:  # in place: every name of the list sees it repeated
        _repeat_check(a, b)
        return operator.imul(a, b)
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
