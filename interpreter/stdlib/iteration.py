"""`itertools` and `functools`: Python's own tools, held so that no program can make them
run unbounded in C code. Every itertools iterator a program holds is a `Steps`, whose items
are taken by Python code (so the run's deadline stops `sum(itertools.count())`) and which
nests no deeper than `map` and `zip` do; the tools that first store all of their input
(`product`, `permutations`, `combinations`, `cycle`) take it as a bounded list.
`functools.wraps` copies a function's name and docstring only."""

from __future__ import annotations

import functools as _functools
import itertools as _itertools
from typing import Any

from .. import bounds
from ..pybuiltins import builtin
from .module import StdModule, function, public


class Steps:
    """An iterator of itertools as a program holds it: prints as Python's, `type()` shows
    Python's class."""

    __slots__ = ("_it", "_depth", "_name")

    def __init__(self, it: Any, name: str, inputs: tuple = ()) -> None:
        depth = 1 + max((_depth(a) for a in inputs), default=0)
        if depth > bounds.MAX_NESTING:
            raise bounds.NestingLimit(f"iterators nested more than {bounds.MAX_NESTING:,} deep "
                                      "(a limit of .tg programs)")
        self._it, self._depth, self._name = it, depth, name

    def __iter__(self) -> "Steps":
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def __repr__(self) -> str:
        if type(self._it).__module__ == "itertools":  # count(0), repeat(1, 3) and the rest
            return repr(self._it)
        return f"<itertools.{self._name} object at {id(self):#x}>"

    def tg_type_name(self) -> str:
        return f"itertools.{self._name}"


def _depth(value: Any) -> int:
    return getattr(value, "_depth", 0) if type(value) is Steps or \
        type(value) in bounds._NESTED else 0


def _bounded_input(iterable: Any, what: str) -> Any:
    return tuple(bounds.collected(iterable, what, kind="tuple"))


def _size_check(size: Any, what: str) -> None:
    if type(size) is int and size > bounds.MAX_ITEMS:
        raise bounds.too_long(what, size, "tuple")


def _lazy(name: str):
    """A lazy tool of itertools (its C code takes one input item per item it gives)."""
    tool = getattr(_itertools, name)

    def make(*args: Any, **kwargs: Any) -> Steps:
        return Steps(tool(*args, **kwargs), name, args)
    return function(name, make)


def _product(*iterables: Any, repeat: Any = 1) -> Steps:
    pools = [_bounded_input(p, "itertools.product()") for p in iterables]
    if type(repeat) is int:
        _size_check(len(pools) * repeat, "itertools.product()")
    return Steps(_itertools.product(*pools, repeat=repeat), "product", iterables)


def _choosing(name: str):
    """permutations, combinations: the pool stored, the length of each result bounded."""
    tool = getattr(_itertools, name)

    def make(iterable: Any, *args: Any, **kwargs: Any) -> Steps:
        pool = _bounded_input(iterable, f"itertools.{name}()")
        for size in (*args, *kwargs.values()):
            _size_check(size, f"itertools.{name}()")
        return Steps(tool(pool, *args, **kwargs), name, (iterable,))
    return function(name, make)


def _cycling(iterable: Any):
    saved = []
    for item in iterable:
        yield item
        saved.append(item)
        if len(saved) > bounds.MAX_ITEMS:
            raise bounds.too_many("itertools.cycle()")
    while saved:
        yield from saved


def _cycle(iterable: Any) -> Steps:
    return Steps(_cycling(iter(iterable)), "cycle", (iterable,))


def _accumulate(iterable: Any, func: Any = None, *, initial: Any = None) -> Steps:
    # (`+` of lists and strings meets the bound `+` meets in the language)
    made = _itertools.accumulate(iterable, bounds.add if func is None else func, initial=initial)
    return Steps(made, "accumulate", (iterable,))


def _tee(iterable: Any, n: Any = 2) -> tuple:
    _size_check(n, "itertools.tee()")
    return tuple(Steps(it, "_tee", (iterable,)) for it in _itertools.tee(iterable, n))


class Tool:
    """An itertools class as a program names it: calling it makes a Steps; it prints as the
    class (`<class 'itertools.count'>`) and `isinstance` asks for its iterators."""

    _tg_public = frozenset()
    __slots__ = ("name", "make")

    def __init__(self, name: str, make: Any) -> None:
        self.name, self.make = name, make

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.make(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<class 'itertools.{self.name}'>"

    def __instancecheck__(self, obj: Any) -> bool:
        return type(obj) is Steps and obj._name == self.name


class Chain(Tool):
    """`itertools.chain`, and `chain.from_iterable`."""

    _tg_public = frozenset({"from_iterable"})
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("chain", lambda *iterables: Steps(_itertools.chain(*iterables),
                                                           "chain", iterables))

    def from_iterable(self, iterable: Any) -> Steps:
        return Steps(_itertools.chain.from_iterable(iterable), "chain", (iterable,))


_LAZY = ("count repeat islice starmap takewhile dropwhile filterfalse compress zip_longest "
         "groupby pairwise").split()


class ItertoolsModule(StdModule):
    _tg_module_name = "itertools"
    _tg_public = public(*_LAZY, "chain product permutations combinations",
                        "combinations_with_replacement cycle accumulate tee")

    def __init__(self) -> None:
        for name in _LAZY:
            setattr(self, name, Tool(name, _lazy(name)))
        for name in ("permutations", "combinations", "combinations_with_replacement"):
            setattr(self, name, Tool(name, _choosing(name)))
        self.chain = Chain()
        for name, make in (("product", _product), ("cycle", _cycle), ("accumulate", _accumulate)):
            setattr(self, name, Tool(name, function(name, make)))
        self.tee = builtin("tee", _tee)


# --- functools -----------------------------------------------------------------------------

def _wraps(wrapped: Any, *args: Any, **kwargs: Any):
    """`@functools.wraps(f)`: the wrapper takes f's name, qualified name and docstring."""
    def decorate(wrapper: Any) -> Any:
        for name in ("__name__", "__qualname__", "__doc__"):
            value = getattr(wrapped, name, None)
            if value is None or isinstance(value, str):
                try:
                    setattr(wrapper, name, value if value is not None or name == "__doc__"
                            else getattr(wrapper, name))
                except (AttributeError, TypeError):
                    pass  # (Python skips what it cannot set too)
        return wrapper
    return function("decorating_function", decorate, "wraps.<locals>.decorating_function")


class FunctoolsModule(StdModule):
    _tg_module_name = "functools"
    _tg_public = public("reduce partial lru_cache cache wraps cmp_to_key")
    shown = ""
    reduce = staticmethod(_functools.reduce)
    partial = _functools.partial
    lru_cache = staticmethod(_functools.lru_cache)
    cache = staticmethod(_functools.cache)
    wraps = staticmethod(function("wraps", _wraps))
    cmp_to_key = staticmethod(_functools.cmp_to_key)


INSTANCE_PUBLIC = {
    _functools.partial: frozenset({"func", "args", "keywords"}),
    type(_functools.lru_cache(None)(len)): frozenset({"cache_info", "cache_clear",
                                                      "cache_parameters"}),
    _functools._CacheInfo: frozenset({"hits", "misses", "maxsize", "currsize", "count", "index"}),
}
