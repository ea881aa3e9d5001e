"""Run-time support: control-flow signals, builtins, the math namespace, .tg functions."""

from __future__ import annotations

import builtins as _py
import math as _math
import sys
from typing import Any, TextIO

from . import bounds
from .pybuiltins import PYTHON_BUILTINS
from .sandbox import AttributePolicy, default_policy

# A statement returns None to continue, or one of these signals (cheaper than exceptions).
BREAK = "break"
CONTINUE = "continue"
RETURN = "return"
RETURN_SLOT = " return"  # not an identifier, so no program variable can collide
MAX_CALL_DEPTH = 1000


class Runtime:
    """Per-run state the compiled closures share."""

    __slots__ = ("out", "policy", "depth", "handling", "classes")

    def __init__(self) -> None:
        self.out: TextIO = sys.stdout
        self.policy: AttributePolicy = default_policy
        self.depth = 0
        self.handling: list = []  # the errors whose `except` clauses are running (for `raise`)
        self.classes: list = []  # the classes the program's class statements made


class MathNamespace:
    """The part of `math` the contract offers."""

    _tg_public = frozenset({"pi", "e", "sqrt", "exp", "log", "sin", "cos"})
    _tg_module_name = "math"

    def __init__(self) -> None:
        for name in self._tg_public:
            setattr(self, name, getattr(_math, name))

    def __repr__(self) -> str:
        return "<module 'math' (built-in)>"


def make_builtins(rt: Runtime) -> dict[str, Any]:
    def print(*args: Any, sep: str | None = " ", end: str | None = "\n", flush: bool = False) -> None:  # noqa: A001
        if sep is not None and not isinstance(sep, str):
            raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is not None and not isinstance(end, str):
            raise TypeError(f"end must be None or a string, not {type(end).__name__}")
        rt.out.write((" " if sep is None else sep).join([str(a) for a in args])
                     + ("\n" if end is None else end))

    print.__qualname__ = "print"
    table = {name: getattr(_py, name) for name in (
        "range", "len", "abs", "min", "max", "sum", "float", "int", "bool", "str", "round",
        "list", "tuple", "isinstance")}
    table["print"] = print
    table.update(PYTHON_BUILTINS)
    table["round"] = bounds.safe_round
    return table
