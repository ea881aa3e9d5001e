"""The Python builtins of the language beyond `print`: iteration helpers, `type`, the
exception classes, and stand-ins that name what autodiff does not support.

Only what cannot reach past the sandbox is here: `type` has its one-argument form only,
`pow` keeps the integer-size limit of `**`, and `super`/`staticmethod` work only where the
interpreter compiles them itself (`super().__init__(...)` in a method, `@staticmethod` in a
class body).
"""

from __future__ import annotations

import builtins as _py
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import Any

from autodiff.engine.core.unsupported import Unsupported

from . import bounds

_PLAIN = ("sorted", "reversed", "any", "all", "divmod", "iter", "next", "dict", "set", "repr",
          "format")
# Builtins a program may name that stop it as unsupported (nowhere a valid .tg program)
UNSUPPORTED_BUILTINS = ("classmethod", "property")
# The exception classes a program can name, for `except` and `raise`.
EXCEPTIONS = {name: getattr(_py, name) for name in (
    "Exception", "ArithmeticError", "AssertionError", "AttributeError", "ImportError",
    "IndexError", "KeyError", "LookupError", "MemoryError", "NameError", "NotImplementedError",
    "OverflowError", "RecursionError", "RuntimeError", "StopIteration", "TypeError",
    "UnboundLocalError", "ValueError", "ZeroDivisionError",
    # the warning categories (`warnings.warn(..., DeprecationWarning)`)
    "Warning", "UserWarning", "DeprecationWarning", "PendingDeprecationWarning", "RuntimeWarning",
    "FutureWarning")}


class TypeView:
    """`type(x)` of an engine object: prints as PyTorch's class does (`<class 'torch.Tensor'>`,
    `<class 'MulBackward0'>`), equals the engine's class, and works in `isinstance`."""

    __slots__ = ("cls", "display")
    _tg_public = frozenset()

    def __init__(self, cls: type, display: str) -> None:
        self.cls, self.display = cls, display

    def __repr__(self) -> str:
        return f"<class '{self.display}'>"

    def _tg_owner(self) -> str:  # how the sandbox's errors name it, as Python names a class
        return f"type object '{self._tg_shown_name()}'"

    def _tg_shown_name(self) -> str:  # its __name__: `type(t).__name__` is 'Tensor'
        return self.display.rsplit(".", 1)[-1]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TypeView):
            return other is self
        return other is self.cls

    def __hash__(self) -> int:
        return hash(self.cls)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self.cls)  # (a grad_fn view holds every node: one class here)

    def __subclasscheck__(self, cls: type) -> bool:
        return issubclass(cls, self.cls)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.cls is type:
            return python_type(*args, **kwargs)  # `type(type(x))(y)`: no classes made here
        raise Unsupported(f"calling the class {self.display}")


# How PyTorch names the class of engine objects that do not name it themselves (a class
# may define `tg_type_name(obj)`, as grad_fn nodes and torch.return_types do).
_DISPLAY = {
    "DType": "torch.dtype",
    "AccumulateGrad": "AccumulateGrad",
    "RemovableHandle": "torch.utils.hooks.RemovableHandle",
    "no_grad": "torch.autograd.grad_mode.no_grad",
    "enable_grad": "torch.autograd.grad_mode.enable_grad",
    "set_grad_enabled": "torch.autograd.grad_mode.set_grad_enabled",
    "inference_mode": "torch.autograd.grad_mode.inference_mode",
    "_TensorType": "torch._C._TensorMeta",  # type(torch.Tensor)
    "TorchClass": "type",  # type(nn.Linear), type(a program's nn.Module class)
    "TorchCClass": "type",  # type(torch.device)
}


# Python classes a program names by a stand-in (bounded_builtins.py fills it: `list`)
SHOWN_TYPES: dict[type, Any] = {}


def python_type(obj: Any, *rest: Any) -> Any:
    """`type(x)`: Python's class for Python values, the program's own classes and engine
    classes that print as PyTorch's (`torch.Tensor`); for other engine objects, a view
    printing as PyTorch's class."""
    if rest:
        if len(rest) == 2:
            raise Unsupported("type() with three arguments")
        raise TypeError("type() takes 1 or 3 arguments")
    cls = type(obj)
    shown = SHOWN_TYPES.get(cls)
    if shown is not None:
        return shown
    if isinstance(obj, TypeView):  # a class as the program sees it: the class's class
        return python_type(obj.cls) if isinstance(obj.cls, type) else python_type(type)
    module = cls.__module__
    if cls.__name__ == "Tensor":
        from autodiff.engine.tensors.parameter import Parameter, is_parameter  # noqa: PLC0415

        if is_parameter(obj):  # an engine Tensor marked as a parameter
            return Parameter
    if cls is BuiltinFunctionType or issubclass(cls, BuiltinFunction) or (
            cls is FunctionType and obj.__module__.startswith("autodiff.interpreter")) or (
            cls is MethodType and type(obj.__self__).__module__.startswith("autodiff.")):
        return _view(BUILTIN_KINDS, "builtin_function_or_method")  # `print`, `len`, `t.sum`
    if issubclass(cls, type):  # the class of a class: `type`, which must not make classes
        if cls.__name__ == "TorchClass" and any(
                f"{c.__module__}.{c.__name__}" == "autodiff.engine.autograd.function.Function"
                for c in obj.__mro__):
            return _view(cls, "torch.autograd.function.FunctionMeta")
        return _view(cls, "type" if cls is type else _DISPLAY.get(cls.__name__, cls.__qualname__))
    if not module.startswith("autodiff.") or type(cls).__repr__ is not type.__repr__:
        return cls  # (a metaclass of the engine's prints it as PyTorch's)
    named = getattr(cls, "tg_type_name", None)
    if named is not None:
        display = named(obj)
    elif getattr(cls, "_tg_module_name", None) is not None:
        display = "module"
    else:
        display = _DISPLAY.get(cls.__name__, cls.__name__)
    return _view(cls, display)


_VIEWS: dict[tuple, TypeView] = {}


def _view(cls: Any, display: str) -> TypeView:
    """One view per class shown, so that `type(a) is type(b)` holds as in Python."""
    key = (cls, display)
    view = _VIEWS.get(key)
    if view is None:
        view = _VIEWS[key] = TypeView(cls, display)
    return view


def power(base: Any, exp: Any, mod: Any = None) -> Any:
    return bounds.power(base, exp) if mod is None else _py.pow(base, exp, mod)


python_type.__name__ = python_type.__qualname__ = "type"


class BuiltinFunction:
    """A builtin of the language that is a function of ours, printing as Python's builtin
    does (`<built-in function sorted>`); each has a class of its own, named as the builtin,
    whose `__call__` is the function (a stateful one, `print`, keeps its run in a slot)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<built-in function {type(self).__name__}>"

    def _tg_shown_name(self) -> str:  # its __name__
        return type(self).__name__


# what `type(print)` stands for: every function of ours a program holds is a builtin to it
BUILTIN_KINDS = (FunctionType, MethodType, BuiltinFunctionType, BuiltinFunction)


def builtin(name: str, function) -> BuiltinFunction:
    return type(name, (BuiltinFunction,), {"__slots__": (), "__call__": staticmethod(function)})()


class StandInClass(TypeView):
    """A builtin class the program may name but not call (`super` outside a method):
    prints as Python's class, and stops the program as unsupported when called."""

    __slots__ = ("where",)

    def __init__(self, cls: type, where: str = "") -> None:
        super().__init__(cls, cls.__name__)
        self.where = where

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise Unsupported(f"{self.display}() {self.where}".rstrip())


def _python_builtins() -> dict[str, Any]:
    table = {name: getattr(_py, name) for name in _PLAIN}
    table.update(bounds.NESTING)  # map filter zip enumerate
    table.update(EXCEPTIONS)
    table["type"] = python_type(type)  # the class `type`, whose call is `python_type`
    table["pow"] = builtin("pow", power)
    table["id"], table["slice"] = _py.id, _py.slice  # (an address; a plain record)
    table["super"] = StandInClass(super, "outside super().NAME(...) in a method")
    table["staticmethod"] = StandInClass(staticmethod, "outside @staticmethod in a class body")
    table["classmethod"] = StandInClass(classmethod)
    table["property"] = StandInClass(property)
    return table


PYTHON_BUILTINS = _python_builtins()  # stateless: one table serves every run
