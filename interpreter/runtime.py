"""Run-time support: control-flow signals, builtins, the math namespace, .tg functions
(the other standard modules: stdlib/)."""

from __future__ import annotations

import builtins as _py
import math as _math
import sys
from typing import Any, TextIO

from . import bounds
from .bounded_builtins import BUILTINS as BOUNDED_BUILTINS
from .files import OPEN
from .pybuiltins import PYTHON_BUILTINS, BuiltinFunction
from .sandbox import (AttributePolicy, default_policy, get_attribute, get_named, has_named,
                      set_named)

# A statement returns None to continue, or one of these signals (cheaper than exceptions).
BREAK = "break"
CONTINUE = "continue"
RETURN = "return"
RETURN_SLOT = " return"  # not an identifier, so no program variable can collide
MAX_CALL_DEPTH = 1000


class Runtime:
    """Per-run state the compiled closures share."""

    __slots__ = ("out", "err", "filename", "policy", "depth", "handling", "classes", "generators",
                 "stopped")

    def __init__(self) -> None:
        self.out: TextIO = sys.stdout
        self.err: TextIO | None = None  # (None: the process's stderr)
        self.filename = "<stdin>"
        self.policy: AttributePolicy = default_policy
        self.depth = 0
        self.handling: list = []  # the errors whose `except` clauses are running (for `raise`)
        self.classes: list = []  # the classes the program's class statements made
        self.generators: dict = {}  # id -> weak reference of each suspended one, oldest first
        self.stopped: BaseException | None = None  # a stop met where it couldn't be raised


class MathNamespace:
    """Python's `math`: its numbers and pure functions (the ones whose work grows with an
    argument are bounded as the language's integers are)."""

    _tg_public = frozenset(
        "pi e tau inf nan sqrt exp exp2 expm1 log log2 log10 log1p pow sin cos tan asin acos "
        "atan atan2 sinh cosh tanh asinh acosh atanh hypot degrees radians floor ceil trunc "
        "fabs fmod remainder copysign modf frexp ldexp isclose isfinite isinf isnan erf erfc "
        "gamma lgamma gcd lcm isqrt factorial comb perm cbrt".split())
    _tg_module_name = "math"

    def __init__(self) -> None:
        for name in self._tg_public:
            if hasattr(_math, name):  # (exp2, cbrt: Python 3.11 on)
                setattr(self, name, getattr(_math, name))
        self.factorial = _bounded(_math.factorial, "factorial")
        self.comb = _bounded(_math.comb, "comb")
        self.perm = _bounded(_math.perm, "perm")

    def __repr__(self) -> str:
        return "<module 'math' (built-in)>"


_COMBINATORIAL_LIMIT = 20_000  # (factorial(20000) takes about 10 ms)


def _bounded(function, name: str):
    """factorial, comb and perm of a huge number run for minutes in C: refused first; a
    result past the language's integers is refused after (as `**` refuses one)."""
    def bounded(*args):
        if args and type(args[0]) is int and args[0] > _COMBINATORIAL_LIMIT:
            raise bounds.IntegerLimit(f"math.{name}() of a number over {_COMBINATORIAL_LIMIT:,} "
                                      "is over the limit of .tg programs' integers")
        result = function(*args)
        if result.bit_length() > bounds.MAX_INT_BITS:
            raise bounds.IntegerLimit(f"math.{name}() would have about "
                                      f"{int(result.bit_length() * 0.30103):,} digits; .tg "
                                      "programs are limited to "
                                      f"{int(bounds.MAX_INT_BITS * 0.30103):,}")
        return result
    bounded.__name__ = bounded.__qualname__ = name
    return bounded


class _Print(BuiltinFunction):
    """`print`, writing to its run's output."""

    __slots__ = ("rt",)

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def __call__(self, *args: Any, sep: str | None = " ", end: str | None = "\n",
                 file: Any = None, flush: bool = False) -> None:
        if sep is not None and not isinstance(sep, str):
            raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is not None and not isinstance(end, str):
            raise TypeError(f"end must be None or a string, not {type(end).__name__}")
        text = bounds.text
        line = (" " if sep is None else sep).join([text(a) for a in args]) + \
            ("\n" if end is None else end)
        if file is None:
            self.rt.out.write(line)
            return
        # a file of the run's (or anything with a `write` the program may call)
        get_attribute(file, "write", self.rt.policy)(line)
        if flush:
            get_attribute(file, "flush", self.rt.policy)()


_Print.__name__ = _Print.__qualname__ = _Print.__call__.__qualname__ = "print"  # (its errors)


class _Attribute(BuiltinFunction):
    """getattr, hasattr, setattr: the attribute syntax's reads and writes, under its run's
    policy (sandbox.py)."""

    __slots__ = ("rt",)
    function: Any = None

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return type(self).function(self.rt.policy, *args, **kwargs)


_ATTRIBUTE_BUILTINS = [type(name, (_Attribute,), {"__slots__": (), "function": staticmethod(f)})
                       for name, f in (("getattr", get_named), ("hasattr", has_named),
                                       ("setattr", set_named))]


def make_builtins(rt: Runtime) -> dict[str, Any]:
    table = {name: getattr(_py, name) for name in (
        "range", "len", "abs", "min", "max", "sum", "float", "int", "bool", "str", "round",
        "list", "tuple", "isinstance")}
    table["print"] = _Print(rt)
    table.update((kind.__name__, kind(rt)) for kind in _ATTRIBUTE_BUILTINS)
    table.update(PYTHON_BUILTINS)
    table.update(BOUNDED_BUILTINS)
    table["open"] = OPEN  # on the run's in-memory files (files.py)
    table["__name__"] = "__main__"  # a program always runs as the main module
    return table
