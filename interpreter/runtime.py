"""Run-time support: control-flow signals, builtins, the math namespace, .tg functions."""

from __future__ import annotations

import builtins as _py
import math as _math
import sys
from typing import Any, Callable, TextIO

from . import bounds
from .sandbox import AttributePolicy, default_policy

# A statement returns None to continue, or one of these signals (cheaper than exceptions).
BREAK = "break"
CONTINUE = "continue"
RETURN = "return"
RETURN_SLOT = " return"  # not an identifier, so no program variable can collide
MAX_CALL_DEPTH = 1000


class Runtime:
    """Per-run state the compiled closures share."""

    __slots__ = ("out", "policy", "depth")

    def __init__(self) -> None:
        self.out: TextIO = sys.stdout
        self.policy: AttributePolicy = default_policy
        self.depth = 0


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

    table = {name: getattr(_py, name) for name in (
        "range", "len", "abs", "min", "max", "sum", "float", "int", "bool", "str", "round",
        "enumerate", "zip", "list", "tuple", "isinstance")}
    table["print"] = print
    table["round"] = bounds.safe_round
    return table


def make_function(rt: Runtime, name: str, params: tuple[str, ...], defaults: tuple,
                  body: Callable[[dict], Any]) -> Callable[..., Any]:
    """A .tg `def` as a real Python function (so it prints as `<function f at 0x...>`)."""
    nparams = len(params)
    first_default = nparams - len(defaults)

    def tg_function(*args: Any, **kwargs: Any) -> Any:
        if len(args) == nparams and not kwargs:
            local = dict(zip(params, args))
        else:
            local = _bind(name, params, defaults, first_default, args, kwargs)
        rt.depth += 1
        try:
            if rt.depth > MAX_CALL_DEPTH:
                raise RecursionError("maximum recursion depth exceeded")
            if body(local) is RETURN:
                return local[RETURN_SLOT]
            return None
        finally:
            rt.depth -= 1

    tg_function.__name__ = tg_function.__qualname__ = name
    return tg_function


def _bind(name: str, params: tuple, defaults: tuple, first_default: int, args: tuple, kwargs: dict) -> dict:
    """Python's argument binding and its error messages."""
    if len(args) > len(params):
        given = len(args)
        if defaults:
            takes = f"from {first_default} to {len(params)} positional arguments"
        else:
            takes = f"{len(params)} positional argument{'s' if len(params) != 1 else ''}"
        were = "was" if given == 1 else "were"
        raise TypeError(f"{name}() takes {takes} but {given} {were} given")
    local = dict(zip(params, args))
    for key, value in kwargs.items():
        if key not in params:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if key in local:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        local[key] = value
    missing = [p for p in params[:first_default] if p not in local]
    if missing:
        quoted = [f"'{p}'" for p in missing]
        listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
        plural = "argument" if len(missing) == 1 else "arguments"
        raise TypeError(f"{name}() missing {len(missing)} required positional {plural}: {listed}")
    for p, d in zip(params[first_default:], defaults):
        if p not in local:
            local[p] = d
    return local
