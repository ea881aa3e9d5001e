"""`collections` (OrderedDict, defaultdict, Counter, deque, namedtuple) and `copy`.

The classes are Python's own, so their values print, compare and iterate as Python's; what a
program reads of their instances is listed in INSTANCE_PUBLIC (the sandbox's table of
Python's values). `deque` is Python's with its sizes bounded as a list's are. A namedtuple
class is made as the program's own (module `__main__`, as CPython names a script's).
`copy` copies the language's plain values and the program's own objects; copying an engine
object (a tensor, a module) is not supported yet."""

from __future__ import annotations

import collections as _collections
import copy as _copy
import types
from typing import Any

from .. import bounds
from .module import StdModule, function, public

_DICT = public("items keys values get pop update setdefault copy clear popitem")


class deque(_collections.deque):  # noqa: N801 - the name Python shows
    """Python's deque; what it is made or extended from, and its repetition, are bounded."""

    __module__ = "collections"
    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            args = (bounds.collected(args[0], "deque()"), *args[1:])
        super().__init__(*args, **kwargs)

    def extend(self, iterable: Any) -> None:
        super().extend(bounds.collected(iterable, "deque.extend", len(self)))

    def extendleft(self, iterable: Any) -> None:
        super().extendleft(bounds.collected(iterable, "deque.extendleft", len(self)))

    def __iadd__(self, other: Any) -> "deque":
        self.extend(other)
        return self

    def __add__(self, other: Any) -> "deque":
        if isinstance(other, _collections.deque) and len(self) + len(other) > bounds.MAX_ITEMS:
            raise bounds.too_long("deque +", len(self) + len(other), "deque")
        return super().__add__(other)

    def __mul__(self, times: Any) -> "deque":
        if type(times) is int and len(self) * times > bounds.MAX_ITEMS:
            raise bounds.too_long("deque *", len(self) * times, "deque")
        return super().__mul__(times)

    __rmul__ = __mul__

    def __imul__(self, times: Any) -> "deque":
        if type(times) is int and len(self) * times > bounds.MAX_ITEMS:
            raise bounds.too_long("deque *=", len(self) * times, "deque")
        return super().__imul__(times)


def namedtuple(typename: Any, field_names: Any, *, rename: bool = False, defaults: Any = None,
               module: Any = None) -> type:
    """Python's namedtuple, made as a class of the program's (`<class '__main__.P'>`); its
    fields, `count`, `index` and the `_asdict`-style helpers are what a program reads."""
    if defaults is not None:
        defaults = bounds.collected(defaults, "namedtuple(defaults=...)")
    if not isinstance(field_names, str):
        field_names = bounds.collected(field_names, "namedtuple()")
    cls = _collections.namedtuple(typename, field_names, rename=rename, defaults=defaults,
                                  module="__main__")
    cls._tg_public = frozenset(cls._fields) | {"count", "index"}
    return cls


class CollectionsModule(StdModule):
    _tg_module_name = "collections"
    _tg_public = public("OrderedDict defaultdict Counter deque namedtuple")
    shown = ""
    OrderedDict = _collections.OrderedDict
    defaultdict = _collections.defaultdict
    Counter = _collections.Counter
    deque = deque
    namedtuple = staticmethod(function("namedtuple", namedtuple))


# --- copy ----------------------------------------------------------------------------------

# what copy and deepcopy hand back as it is (functions and classes included, as Python does)
_ATOMIC = (type(None), bool, int, float, complex, str, bytes, range, type(Ellipsis), type,
           types.FunctionType, types.BuiltinFunctionType, types.MethodType)
_CONTAINERS = (list, tuple, dict, set, frozenset, _collections.OrderedDict,
               _collections.defaultdict, _collections.Counter, _collections.deque)


def _check_copyable(value: Any, what: str) -> None:
    """Everything `value` holds is a plain value, a container of the language's or an object
    of a class the program wrote; an engine object stops the copy before it starts."""
    from autodiff.interpreter.pybuiltins import python_type  # noqa: PLC0415

    seen, stack = set(), [value]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, _ATOMIC):
            continue
        seen.add(id(item))
        if len(seen) > bounds.MAX_ITEMS:
            raise bounds.too_many(what, "copy")
        kind = type(item)
        if isinstance(item, _CONTAINERS):
            if isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            else:
                stack.extend(item)
            continue
        if vars(kind).get("__module__") == "__main__" or kind.__module__ == "__main__":
            stack.extend(getattr(item, "__dict__", {}).values())  # (a namedtuple has none)
            if isinstance(item, tuple):
                stack.extend(item)
            continue
        shown = python_type(item)
        name = getattr(shown, "display", None) or getattr(shown, "__qualname__", str(shown))
        from autodiff.engine.core.unsupported import Unsupported  # noqa: PLC0415

        raise Unsupported(f"{what} of a {name}")


def copy(x: Any) -> Any:
    _check_copyable(x, "copy.copy")
    return _copy.copy(x)


def deepcopy(x: Any, memo: Any = None) -> Any:
    _check_copyable(x, "copy.deepcopy")
    if memo is not None and type(memo) is not dict:
        raise TypeError("copy.deepcopy(x, memo): memo must be a dict")
    return _copy.deepcopy(x, memo)


class CopyModule(StdModule):
    _tg_module_name = "copy"
    _tg_public = public("copy deepcopy")
    shown = ""
    copy = staticmethod(function("copy", copy))
    deepcopy = staticmethod(function("deepcopy", deepcopy))


INSTANCE_PUBLIC = {
    _collections.defaultdict: _DICT,  # (its default_factory stays out, as an optimizer's state's)
    _collections.Counter: _DICT | {"most_common", "elements", "subtract", "total"},
    deque: public("append appendleft clear copy count extend extendleft index insert maxlen",
                  "pop popleft remove reverse rotate"),
}
