"""How a program's `class` statement subclasses an engine class (nn.Module, autograd.Function).

The interpreter compiles the class body's methods to Python functions and calls
`Base.tg_subclass(name, members)`; the class made here is an ordinary Python subclass whose
public names (the base's, plus the program's own members) are its `_tg_public`, the
sandbox's allow-list. No member name may start with `_` but `__init__`.
"""

from __future__ import annotations

import inspect


def class_callable(cls: type, name: str) -> bool:
    """A method (or property) of the class: programs may not replace those on instances."""
    found = inspect.getattr_static(cls, name, None)
    return found is not None and (callable(found) or isinstance(
        found, (staticmethod, classmethod, property)))


def class_body(base: type, name: str, members: dict) -> dict:
    """The class dict of a program's subclass of `base` (Module or Function)."""
    for key in members:
        if not isinstance(key, str) or not key.isidentifier():
            raise TypeError(f"class {name}: a member name must be an identifier, not {key!r}")
        if key.startswith("_") and key != "__init__":
            raise TypeError(f"class {name}: member '{key}' starts with '_' (only __init__ may)")
    body = dict(members)
    body["__module__"] = "__main__"
    body["__qualname__"] = name
    body["_tg_public"] = base._tg_public | {k for k in members if not k.startswith("_")}
    return body
