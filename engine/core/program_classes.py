"""How a program's `class` statement subclasses an engine class (nn.Module, autograd.Function,
data.Dataset) or makes a plain class (`class Accumulator:`, whose base is `ProgramObject`).

The interpreter compiles the class body's methods to Python functions and calls
`Base.tg_subclass(name, members)`; the class made here is an ordinary Python subclass whose
public names (the base's, plus the program's own members) are its `_tg_public`, the
sandbox's allow-list. No member name may start with `__` but those of PROTOCOL_METHODS; one
with a single `_` is the program's own (`program_private`) unless the engine's class has it.
"""

from __future__ import annotations

import inspect

from .classes import TorchClass
from .unsupported import Unsupported


def program_private(obj, name: str) -> bool:
    """Whether `name`, with one leading '_', is the program's own on `obj` (`self._count`):
    ordinary Python on an instance of a class the program wrote, as long as it is no dunder
    and none of the engine's internals (the attributes of the engine classes it derives from
    and what their constructors set: `_modules`, `_parameters`...)."""
    if name[:1] != "_" or name[:2] == "__" or name[:3] == "_tg":
        return False
    cls = obj if isinstance(obj, type) and vars(obj).get("__module__") == "__main__" else type(obj)
    if vars(cls).get("__module__") != "__main__":
        return False
    if name in vars(cls).get("_tg_program_private", ()):
        return True  # a member of the program's class (`def _helper(self)`)
    return not _engine_name(cls, name)


def own_attribute(obj, name: str) -> bool:
    """The sandbox's `_tg_readable` for instances of a program's class: what the program (or
    the class's constructor) set on this instance; the class's API is its `_tg_public`."""
    if not name.startswith("_"):
        return name in obj.__dict__
    return program_private(obj, name) and (name in obj.__dict__ or any(
        name in vars(c) for c in type(obj).__mro__ if vars(c).get("__module__") == "__main__"))


def settable_attribute(obj, name: str) -> bool:
    """The sandbox's `_tg_writable` for those instances: any public name but a method's (a
    property's setter runs, or Python says it has none)."""
    return (not name.startswith("_") or program_private(obj, name)) and (
        not class_callable(type(obj), name)
        or isinstance(inspect.getattr_static(type(obj), name, None), property))


def class_callable(cls: type, name: str) -> bool:
    """A method (or property) of the class: programs may not replace those on instances."""
    found = inspect.getattr_static(cls, name, None)
    return found is not None and (callable(found) or isinstance(
        found, (staticmethod, classmethod, property)))


# The special methods a program's class may define: Python's machinery calls them (len(obj),
# obj[i], obj[i] = v, obj(...), iter(obj), `in`, print(obj)); no program can name one.
PROTOCOL_METHODS = frozenset({"__init__", "__len__", "__getitem__", "__setitem__", "__call__",
                              "__iter__", "__contains__", "__repr__", "__str__"}) | {
    # operators and comparisons (micrograd's Value): Python calls them for `a + b`, `a < b`;
    # each is the program's own function, run in the sandbox like any method
    f"__{name}__" for name in (
        "add radd iadd sub rsub isub mul rmul imul truediv rtruediv itruediv floordiv rfloordiv "
        "mod rmod pow rpow matmul rmatmul neg pos abs invert eq ne lt le gt ge hash bool "
        "float int index").split()}


class ProgramIndexError(IndexError):
    """An IndexError the program's `__getitem__` raised (as a positioned error, `placed`):
    an IndexError for Python's machinery, which ends `for x in obj` over an object with
    only `__getitem__` there, as Python's sequence protocol does; the interpreter reports
    `placed` itself when it escapes."""

    def __init__(self, placed) -> None:
        super().__init__(*placed.exception.args)
        self.placed = placed


def _ending_iteration(getitem):
    def __getitem__(self, index):
        try:
            return getitem(self, index)
        except Exception as error:
            if isinstance(getattr(error, "exception", None), IndexError):
                raise ProgramIndexError(error) from None
            raise
    return __getitem__


def _engine_name(base: type, name: str) -> bool:
    return any(name in vars(c) or name in vars(c).get("_tg_internal", ())
                        for c in base.__mro__ if vars(c).get("__module__") != "__main__")


def class_body(base: type, name: str, members: dict) -> dict:
    """The class dict of a program's subclass of `base` (Module, Function, Dataset, object)."""
    for key in members:
        if not isinstance(key, str) or not key.isidentifier():
            raise TypeError(f"class {name}: a member name must be an identifier, not {key!r}")
        if key.startswith("__") and key not in PROTOCOL_METHODS:
            raise TypeError(f"class {name}: member '{key}' starts with '__' (only "
                            f"{', '.join(sorted(PROTOCOL_METHODS))} may)")
        if key.startswith("_tg") or (key.startswith("_") and not key.startswith("__") and
                                     _engine_name(base, key)):
            raise Unsupported(key, message=f"class {name}: the member name '{key}' is not "
                              f"supported by autodiff (its {base.__name__} uses it)")
    body = dict(members)
    for key, value in members.items():
        if inspect.isfunction(value) and value.__module__.startswith("autodiff."):
            # an engine function as a class attribute (`act = torch.relu`) stays unbound, as
            # torch's builtins do: only the program's own functions become methods
            body[key] = staticmethod(value)
    if callable(body.get("__getitem__")):
        body["__getitem__"] = _ending_iteration(body["__getitem__"])
    body["__module__"] = "__main__"
    body["__qualname__"] = name
    body["_tg_public"] = base._tg_public | {k for k in members if not k.startswith("_")}
    body["_tg_program_private"] = frozenset(k for k in members
                                            if k.startswith("_") and not k.startswith("__"))
    return body


class ProgramObject(metaclass=TorchClass):
    """Python's `object` as the base of a program's plain class (`class Accumulator:`): its
    instances hold the attributes the program sets and answer for its own methods; a class
    without one of the language's bases is made from this one."""

    _tg_public = frozenset()

    @classmethod
    def tg_subclass(cls, name: str, members: dict) -> type:
        return type(name, (cls,), class_body(cls, name, members))

    @staticmethod
    def tg_super_init(instance, *args, **kwargs) -> None:
        """`super().__init__()` in a plain class: object's, which takes no argument."""
        if args or kwargs:
            raise TypeError("object.__init__() takes exactly one argument (the instance to "
                            "initialize)")

    _tg_readable = staticmethod(own_attribute)
    _tg_writable = staticmethod(settable_attribute)
