"""Calls with `*iterable` and `**mapping` arguments, with CPython's checks and messages."""

from __future__ import annotations

from typing import Any

from autodiff.parser import ast

from . import bounds
from .expressions import Context, Eval, compile_expr, compile_items


def unpacking_call(node: ast.Call, func: Eval, cx: Context) -> Eval:
    """A call with `*iterable` or `**mapping` arguments, with Python's checks and messages."""
    args = compile_items(node.args, cx)
    kwargs = [(k.arg, compile_expr(k.value, cx)) for k in node.keywords]

    def call(L: dict) -> Any:
        f = func(L)
        positional: list = []
        for starred, arg in args:
            value = arg(L)
            if not starred:
                positional.append(value)
                continue
            try:
                positional.extend(bounds.collected(value, "f(*args)", len(positional), "tuple"))
            except TypeError:
                if hasattr(type(value), "__iter__"):
                    raise
                raise TypeError(f"{callable_name(f)}() argument after * must be an iterable, "
                                f"not {type(value).__name__}") from None
        keywords: dict = {}
        for name, arg in kwargs:
            value = arg(L)
            items = [(name, value)]
            if name is None:
                if not isinstance(value, dict):
                    raise TypeError(f"{callable_name(f)}() argument after ** must be a mapping, "
                                    f"not {type(value).__name__}")
                items = value.items()
            for key, item in items:
                if type(key) is not str:
                    raise TypeError("keywords must be strings")
                if key in keywords:
                    raise TypeError(f"{callable_name(f)}() got multiple values for keyword "
                                    f"argument '{key}'")
                keywords[key] = item
        return f(*positional, **keywords)
    return call


def callable_name(f: Any) -> str:
    """How Python names a callable in a call's error: a .tg function by its module and qualified
    name (`__main__.f`), a builtin by its name."""
    name = getattr(f, "__qualname__", None) or type(f).__name__
    module = getattr(f, "__module__", None)
    return f"{module}.{name}" if module == "__main__" else name
