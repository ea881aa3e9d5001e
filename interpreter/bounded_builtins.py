"""The builtins and methods whose result can be a string, list or tuple past the language's
bound (bounds.MAX_ITEMS) however short what they are given: `list(range(10**9))`,
`str(["x" * 9000000] * 8)`, `"a".ljust(10**9)`, `l.extend(l)` in a loop. Each is the
Python one behind the check of bounds.py that refuses such a result before it is made.

`list`, `tuple` and `str` stay the classes for the program: `isinstance(x, list)`, `type(x)
is list` and `print(list)` hold as in Python (a BoundedType stands for the class, as
pybuiltins.TypeView stands for an engine class); only calling one is checked.
"""

from __future__ import annotations

from typing import Any

from . import bounds
from .pybuiltins import SHOWN_TYPES, TypeView, builtin, python_type


class BoundedType(TypeView):
    """`list`, `tuple` or `str` as a program names it: the class, and a bounded constructor.
    Each has a class of its own (`_bounded_type`) whose special methods are the constructor
    and the class's own C checks: `isinstance(x, str)` costs what Python's does."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        # what the class has, for the sandbox to say "... is not supported" of `str.join`
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(object.__getattribute__(self, "cls"), name)


def _bounded_type(cls: type, make) -> BoundedType:
    kind = type(cls.__name__, (BoundedType,), {
        "__slots__": (), "__call__": staticmethod(make),
        "__instancecheck__": staticmethod(cls.__instancecheck__),
        "__subclasscheck__": staticmethod(cls.__subclasscheck__)})
    return kind(cls, cls.__name__)


def _sequence(cls: type):
    name = f"{cls.__name__}()"

    def make(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            items = bounds.collected(args[0], name, kind=cls.__name__)
            return items if type(items) is cls and items is not args[0] else cls(items)
        return cls(*args, **kwargs)  # (none, or Python's own error)
    return make


# Each checks the one argument it makes a result of, and leaves any other call to Python's
# own function (its errors are Python's).

def _str(*args: Any, **kwargs: Any) -> str:
    if len(args) == 1 and not kwargs:
        return bounds.text(args[0])
    return str(*args, **kwargs)


def _repr(*args: Any, **kwargs: Any) -> str:
    if len(args) == 1 and not kwargs:
        return bounds.text(args[0], "repr()", repr)
    return repr(*args, **kwargs)


def _format(*args: Any, **kwargs: Any) -> str:
    if 1 <= len(args) <= 2 and not kwargs and type(args[-1] if len(args) == 2 else "") is str:
        return bounds.formatted(args[0], args[1] if len(args) == 2 else "")
    return format(*args, **kwargs)


def _sorted(*args: Any, **kwargs: Any) -> list:
    if args:
        args = (bounds.collected(args[0], "sorted()"), *args[1:])
    return sorted(*args, **kwargs)


def _sum(*args: Any, **kwargs: Any) -> Any:
    if len(args) == 2 and not kwargs:
        iterable, start = args
    elif len(args) == 1 and set(kwargs) == {"start"}:
        iterable, start = args[0], kwargs["start"]
    else:
        return sum(*args, **kwargs)
    if type(start) is not list and type(start) is not tuple:
        return sum(iterable, start)
    total = start
    for item in iterable:  # `sum(lists, [])`: each `+` meets the bound, as `+` does
        total = bounds.add(total, item)
    return total


BOUNDED_TYPES = {cls: _bounded_type(cls, make) for cls, make in (
    (list, _sequence(list)), (tuple, _sequence(tuple)), (str, _str))}
SHOWN_TYPES.update(BOUNDED_TYPES)  # `type([])` is the program's `list`
SHOWN_TYPES.update((type(view), python_type(type)) for view in BOUNDED_TYPES.values())
BUILTINS = {"list": BOUNDED_TYPES[list], "tuple": BOUNDED_TYPES[tuple],
            "str": BOUNDED_TYPES[str],
            **{name: builtin(name, function) for name, function in (
                ("repr", _repr), ("format", _format), ("sorted", _sorted), ("sum", _sum),
                ("round", bounds.safe_round))}}


# --- methods -------------------------------------------------------------------------------

def _width(text: str, name: str):
    """ljust, rjust, center, zfill: the width is the result's length."""
    method = getattr(text, name)

    def padded(*args: Any) -> str:
        if args and type(args[0]) is int and args[0] > bounds.MAX_ITEMS:
            raise bounds.too_long(f"str.{name}", args[0])
        return method(*args)
    padded.__name__ = padded.__qualname__ = name
    return padded


def _case(text: str, name: str):
    """upper, lower, title, capitalize: one character may become three ('\ufb03'.upper())."""
    method = getattr(text, name)
    if len(text) <= bounds.MAX_ITEMS // 3:
        return method

    def cased(*args: Any) -> str:
        return bounds.checked_text(method(*args), f"str.{name}")
    cased.__name__ = cased.__qualname__ = name
    return cased


def _extend(items: list):
    def extend(*args: Any) -> None:
        if len(args) == 1:
            args = (bounds.collected(args[0], "list.extend", len(items)),)
        items.extend(*args)
    extend.__name__ = extend.__qualname__ = "extend"
    return extend


# the methods (of the language's tables in sandbox.py) given bounded: name -> (value -> method)
STR_METHODS = {**{name: (lambda text, name=name: _width(text, name))
                  for name in ("ljust", "rjust", "center", "zfill")},
               **{name: (lambda text, name=name: _case(text, name))
                  for name in ("upper", "lower", "title", "capitalize")},
               "join": bounds.safe_join, "replace": bounds.safe_replace}
LIST_METHODS = {"extend": _extend}
