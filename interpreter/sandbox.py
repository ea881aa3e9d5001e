"""What a .tg program may reach through attributes.

A name starting with '_' is always refused (but the few of READABLE_DUNDERS, plain data
such as `__version__`, where an object lists them). Engine classes (and namespace objects) list their public names in
`_tg_public`; Python's own values get a small fixed table.

A class whose instances carry attributes of the program's own (an `nn.Module` subclass:
`self.fc = nn.Linear(...)`) adds two hooks, called as `type(obj)._tg_readable(obj, name)`
and `type(obj)._tg_writable(obj, name)` (plain methods do), each returning a bool; they
are asked only for names outside `_tg_public` (readable) or in any case (writable), and
never for a name starting with '_'. `_tg_writable` may instead be a set of names.
"""

from __future__ import annotations

import string
from collections import OrderedDict
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, Callable

from autodiff.engine.core.classes import TorchClass
from autodiff.engine.core.program_classes import program_private

from . import bounds
from .bounded_builtins import LIST_METHODS, STR_METHODS
from .files import FILE_PUBLIC
from .pybuiltins import python_type

AttributePolicy = Callable[[Any, str], bool]

# the only names starting with '_' a program may read, where an object lists them as public
# (plain data: a version string, a version counter; nn.Module's registries, plain dicts that
# d2l's own Sequential fills, as PyTorch's are)
READABLE_DUNDERS = frozenset({"__version__", "_version", "__name__", "_modules", "_parameters",
                              "_buffers", "__class__"})
# names whose value the sandbox computes (never the object's own attribute of that name):
# `x.__class__` is `type(x)`, the class as the program sees it
COMPUTED_NAMES = frozenset({"__name__", "__class__", "__module__"})


# private attributes of PyTorch's objects that tutorials and answers read (nn.Module's
# registries, a node's saved tensors, a tensor's internals): refused as unsupported
TORCH_PRIVATE_NAMES = frozenset({
    "_forward_hooks", "_backward_hooks",
    "_forward_pre_hooks", "_non_persistent_buffers_set", "_state_dict_hooks",
    "_saved_self", "_saved_other", "_saved_result", "_saved_tensors", "_saved_mat2",
    "_saved_exponent", "_saved_dim", "_raw_saved_self", "_raw_saved_other",
    "_raw_saved_result", "_base", "_grad", "_grad_fn", "_cdata", "_is_view", "_register_hook_dict", "_sequence_nr"})


def private(name: str) -> bool:
    """Never reachable: a name starting with '_' (and not a readable dunder)."""
    return name.startswith("_") and name not in READABLE_DUNDERS


# Methods of plain Python values that tensor programs need; nothing else is reachable.
BUILTIN_PUBLIC: dict[type, frozenset[str]] = {
    list: frozenset({"append", "pop", "extend", "insert", "remove", "index", "count", "reverse",
                     "sort", "copy", "clear"}),
    str: frozenset({"format", "join", "upper", "lower", "strip", "split", "replace",
                    "startswith", "endswith", "lstrip", "rstrip", "ljust", "rjust", "center",
                    "zfill", "count", "find", "title", "capitalize", "isdigit",
                    # the rest of str's own pure methods: str, list, bool or int results
                    "splitlines", "rsplit", "partition", "rpartition", "isalpha", "isalnum",
                    "isspace", "islower", "isupper", "isnumeric", "isdecimal", "isidentifier",
                    "istitle", "isascii", "isprintable", "swapcase", "casefold", "index",
                    "rfind", "rindex", "expandtabs", "removeprefix", "removesuffix"}),
    tuple: frozenset({"index", "count"}),
    int: frozenset(),
    float: frozenset(),
    bool: frozenset(),
    dict: frozenset({"items", "keys", "values", "get", "pop", "update", "setdefault", "copy",
                     "clear"}),
    set: frozenset({"add", "remove", "discard", "update", "union", "intersection",
                    "difference", "copy", "clear", "pop", "issubset", "issuperset",
                    "isdisjoint", "symmetric_difference", "difference_update",
                    "intersection_update", "symmetric_difference_update"}),
}
BUILTIN_PUBLIC[slice] = frozenset({"start", "stop", "step", "indices"})  # `slice(1, None, 2)`
BUILTIN_PUBLIC[property] = frozenset({"setter", "getter", "deleter"})  # `@v.setter`
BUILTIN_PUBLIC[OrderedDict] = BUILTIN_PUBLIC[dict] | {"move_to_end", "popitem"}
BUILTIN_PUBLIC.update(FILE_PUBLIC)  # the file objects `open` returns
_EXCEPTION_PUBLIC = frozenset({"args"})
_STOP_ITERATION_PUBLIC = _EXCEPTION_PUBLIC | {"value"}  # a generator's return value
_OS_ERROR_PUBLIC = _EXCEPTION_PUBLIC | {"errno", "strerror", "filename", "filename2"}
_NUMPY_SCALAR_PUBLIC = frozenset({"item", "tolist", "dtype"})  # np.float64(1.5).item()


class Refused(AttributeError):
    """An attribute Python has but the language keeps out: no `except` of the program
    catches it (in PyTorch the attribute would have been there)."""

    tg_error_class = "AttributeError"  # what the diagnostic says
    not_supported = False  # "... is not supported by autodiff": PyTorch's, ours missing


def public_names(obj: Any) -> frozenset[str] | None:
    names = BUILTIN_PUBLIC.get(type(obj))
    if names is not None:
        return names
    names = getattr(type(obj), "_tg_public", None)
    if names is None:  # a module or namespace object may carry its own list, a class the
        # list of its instances, its bases' with it (`optim.SGD.step`, an unbound method)
        names = getattr(obj, "_tg_public", None) if isinstance(obj, type) else \
            getattr(obj, "__dict__", {}).get("_tg_public")
    if names is None:
        if isinstance(obj, BaseException):
            names = _STOP_ITERATION_PUBLIC if isinstance(obj, StopIteration) else \
                _OS_ERROR_PUBLIC if isinstance(obj, OSError) else _EXCEPTION_PUBLIC
        elif type(obj).__module__ == "numpy":  # a NumPy scalar (arrays come wrapped)
            names = _NUMPY_SCALAR_PUBLIC
    return names


def default_policy(obj: Any, name: str) -> bool:
    names = public_names(obj)
    if names is not None and name in names:
        return True
    readable = getattr(type(obj), "_tg_readable", None)
    return readable is not None and readable(obj, name)


def permissive_policy(obj: Any, name: str) -> bool:
    """For tests that inject real torch: everything public, still no '_' names."""
    return True


def _owner(obj: Any) -> str:
    if isinstance(obj, ModuleType):
        return f"module '{obj.__name__}'"
    if isinstance(obj, type):
        return f"type object '{obj.__name__}'"
    shown = getattr(type(obj), "tg_type_name", None)  # what torch's class is called
    if shown is not None:
        return f"'{shown(obj)}' object"
    shown_as = getattr(type(obj), "_tg_owner", None)  # `type(t)`: "type object 'Tensor'"
    if shown_as is not None:
        return shown_as(obj)
    module = getattr(type(obj), "_tg_module_name", None)  # our stand-ins for torch, math, ...
    if module is not None:
        return f"module '{module}'"
    return f"'{type(obj).__name__}' object"


def refuse(obj: Any, name: str, writing: bool = False) -> Exception:
    """The error for an attribute the program may not read (or write): Python's own when
    nothing has it, `X is not supported` when PyTorch has it and autodiff does not."""
    if name == "__dict__" and not writing and (  # Python's and torch's objects have one
            hasattr(obj, "__dict__") or type(obj).__module__.startswith("autodiff.")):
        error = Refused(f"{_owner(obj)} attribute '__dict__' is not supported by autodiff")
        error.not_supported = True
        return error
    if private(name):
        if writing or name not in TORCH_PRIVATE_NAMES:
            return Refused(f"{_owner(obj)} has no attribute '{name}'")
        # PyTorch's own private names a tutorial reaches for (`self._modules`): outside the
        # language, and said so, rather than reading as the learner's typo
        from autodiff.engine.core.unsupported import Unsupported  # noqa: PLC0415 - error path only

        return Unsupported(name, message=f"{_owner(obj)} attribute '{name}' is not supported "
                           "by autodiff (names starting with '_' are private)")
    if not writing:
        from .known_names import unsupported_attribute  # noqa: PLC0415 - the error path only

        missing = unsupported_attribute(obj, name)
        if missing is not None:
            return missing
    if not hasattr(obj, name):
        return AttributeError(f"{_owner(obj)} has no attribute '{name}'")
    if getattr(type(obj), "_tg_known_as", None) and not writing:  # ours alone, not PyTorch's
        return Refused(f"{_owner(obj)} has no attribute '{name}'")
    verb = "setting" if writing else "attribute"
    error = Refused(f"{_owner(obj)} {verb} '{name}' is not supported by autodiff")
    error.not_supported = True
    return error


def _name_of(obj: Any) -> str | None:
    """`x.__name__` where Python has it and it names nothing of the host: a class (as `type(x)`
    shows it: `type(model).__name__` is the program's class name), a function or method, a
    module; None for anything else."""
    shown = getattr(type(obj), "_tg_shown_name", None)  # type(x) of an engine object
    if shown is not None:
        return shown(obj)
    if isinstance(obj, (type, FunctionType, MethodType, BuiltinFunctionType)):
        return obj.__name__
    return getattr(type(obj), "_tg_module_name", None) or \
        getattr(obj, "__dict__", {}).get("_tg_module_name")


def _names_main(obj: Any) -> bool:
    """A function or class the program wrote, whose `__module__` is '__main__' in Python."""
    if isinstance(obj, FunctionType):
        return obj.__module__ == "__main__"
    return isinstance(obj, type) and vars(obj).get("__module__") == "__main__"


def _computed(obj: Any, name: str) -> Any:
    """What the sandbox answers for a COMPUTED_NAMES name, or None to read it as any other."""
    if name == "__class__":  # the object `type(x)` gives, never Python's own class of ours
        return python_type(obj)
    if name == "__name__":
        return _name_of(obj)
    return "__main__" if _names_main(obj) else None  # a script's own functions and classes


def get_attribute(obj: Any, name: str, policy: AttributePolicy) -> Any:
    if name in COMPUTED_NAMES:  # (one test on the path of every other read)
        computed = _computed(obj, name)
        if computed is not None:
            return computed
    if not program_private(obj, name) and (private(name) or not policy(obj, name)):
        from .known_names import stand_in  # noqa: PLC0415 - the error path only

        found = stand_in(obj, name)
        if found is not None:
            return found
        if name.startswith(("_saved_", "_raw_saved_")) and hasattr(obj, "next_functions"):
            from autodiff.engine.graph import saved  # noqa: PLC0415 - the error path only
            from autodiff.engine.graph.nodes import AccumulateGrad, Node  # noqa: PLC0415

            if type(obj) is AccumulateGrad or isinstance(obj, Node):  # torch's catalogued names
                return saved.saved_attribute(obj, name)
        raise refuse(obj, name)
    bounded = BOUNDED_METHODS.get(type(obj))
    if bounded is not None and name in bounded:
        return bounded[name](obj)
    value = getattr(obj, name)
    if isinstance(obj, type) and isinstance(value, FunctionType):
        return unbound_method(obj.__mro__, name, value)
    return value


def unbound_method(mro: tuple, name: str, function: Callable) -> Callable:
    """`C.name` of a class (`super(C, D).name`), `function` what Python finds first in `mro`
    (the classes searched, in order). A program's own function is
    itself; an engine's method is wrapped: with a `self` of another type it must not run on
    that object (a plain Python function would take any object and reach the engine's
    internals with it). Where torch's class is C code (`torch.Tensor.add(5, 1)`) that is
    torch's descriptor TypeError; where it is Python (`nn.Module.parameters(5)`) torch's
    method runs and fails at the first attribute it reads of `self`, so the engine's runs on
    a stand-in that has none."""
    owner = next((c for c in mro if name in vars(c)), None)
    if function.__module__ == "__main__" or owner is None or not isinstance(
            vars(owner)[name], FunctionType):  # (a staticmethod is no method)
        return function
    python_class = isinstance(owner, TorchClass)
    shown = getattr(owner, "_tg_type_name", owner.__name__)
    code = function.__code__
    first = code.co_varnames[0] if code.co_argcount else None

    def method(*args: Any, **kwargs: Any) -> Any:
        if not args and first in kwargs:  # `C.f(self=obj)`
            args = (kwargs.pop(first),)
        if args and not isinstance(args[0], owner):
            if not python_class:
                raise TypeError(f"descriptor '{name}' for '{shown}' objects doesn't apply to "
                                f"a '{type(args[0]).__name__}' object")
            foreign = args[0]
            stand_in = _stand_in_self(foreign)
            result = function(stand_in, *args[1:], **kwargs)
            return foreign if result is stand_in else result  # (`return self`)
        elif not args and not python_class:
            raise TypeError(f"unbound method {shown.rsplit('.', 1)[-1]}.{name}() needs an "
                            "argument")
        return function(*args, **kwargs)  # (no self: Python's own missing-argument error)
    method.__name__, method.__qualname__ = function.__name__, function.__qualname__
    method.__module__ = function.__module__  # so it prints as the function it stands for
    return method


class _ForeignSelf:
    """The `self` an engine method gets for an object of another type: it has no attribute
    (reading or setting one is Python's AttributeError for that object's type), so the
    method fails where torch's fails, and never touches the object itself."""

    __slots__ = ("_tg_foreign",)

    def __repr__(self) -> str:  # (a generator may yield `self` before it fails)
        return repr(object.__getattribute__(self, "_tg_foreign"))

    def __getattribute__(self, name: str) -> Any:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    __delattr__ = __setattr__


_FOREIGN: dict[type, type] = {}


def _stand_in_self(obj: Any) -> _ForeignSelf:
    """A _ForeignSelf named as `obj`'s class (`type(self).__name__` in a message is 'int')."""
    kind = type(obj)
    stand_in = _FOREIGN.get(kind)
    if stand_in is None:
        stand_in = _FOREIGN[kind] = type(kind.__name__, (_ForeignSelf,), {"__slots__": ()})
    self = stand_in()
    object.__setattr__(self, "_tg_foreign", obj)
    return self


def attribute_reader(name: str) -> Callable[[Any, AttributePolicy], Any]:
    """`get_attribute` for one attribute name, remembering the last type it allowed.

    An attribute expression in a loop sees the same type again and again: the sandbox
    decision, which depends only on the type, is then made once (an inline cache)."""
    cached: list = [None, None]  # [type, policy] of the last allowed read
    checked = {kind for kind, methods in BOUNDED_METHODS.items() if name in methods}
    cacheable = name not in COMPUTED_NAMES

    def read(obj: Any, policy: AttributePolicy) -> Any:
        kind = type(obj)
        if kind is cached[0] and policy is cached[1]:
            return getattr(obj, name)
        value = get_attribute(obj, name, policy)
        # only a type-wide answer is cached: not a program's own attribute, not a stand-in,
        # not a method given with a length check
        if cacheable and kind not in checked and (kind in BUILTIN_PUBLIC or
                                                  name in getattr(kind, "_tg_public", ())):
            cached[0], cached[1] = kind, policy
        return value
    read.cached = cached  # for a caller that checks the cache inline, saving a call
    return read


def set_attribute(obj: Any, name: str, value: Any, policy: AttributePolicy) -> None:
    """Writes are rarer than reads: only names a class lists in `_tg_writable` (a tensor's
    `requires_grad`, `grad`, `data`), or that its `_tg_writable(obj, name)` allows (what a
    program sets on its own module). Namespaces such as `torch` stay read-only, so one
    program cannot change what the next one sees."""
    if (name.startswith("_") and not program_private(obj, name)) or (
            policy is not permissive_policy and not _may_write(obj, name, policy)):
        raise refuse(obj, name, writing=True)
    assign = getattr(type(obj), "_tg_assign", None)  # a class's own checks of what is written
    if assign is not None:
        assign(obj, name, value)
    else:
        setattr(obj, name, value)


def _may_write(obj: Any, name: str, policy: AttributePolicy) -> bool:
    writable = getattr(type(obj), "_tg_writable", None)
    if callable(writable):
        return writable(obj, name)
    return writable is not None and name in writable and policy(obj, name)


def _attribute_name(builtin: str, args: tuple, least: int, most: int, kwargs: dict) -> str:
    """The name argument of getattr/setattr/hasattr, with CPython's errors for the call."""
    if kwargs:
        raise TypeError(f"{builtin}() takes no keyword arguments")
    if len(args) < least:
        raise TypeError(f"{builtin} expected {'at least ' if least < most else ''}{least} "
                        f"arguments, got {len(args)}")
    if len(args) > most:
        raise TypeError(f"{builtin} expected {'at most ' if least < most else ''}{most} "
                        f"arguments, got {len(args)}")
    name = args[1]
    if type(name) is not str:  # (a str subclass could answer startswith as it likes)
        raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
    return name


def _answered(error: AttributeError) -> bool:
    """An AttributeError the syntax gives as Python's own (nothing has the name, or the
    language keeps it out as if nothing had it), not as autodiff's missing support."""
    return not getattr(error, "not_supported", False)


def get_named(policy: AttributePolicy, *args: Any, **kwargs: Any) -> Any:
    """`getattr(obj, name[, default])`: `obj.name` as the syntax reads it."""
    name = _attribute_name("getattr", args, 2, 3, kwargs)
    try:
        return get_attribute(args[0], name, policy)
    except AttributeError as error:
        if len(args) == 2 or not _answered(error):
            raise
        return args[2]


def has_named(policy: AttributePolicy, *args: Any, **kwargs: Any) -> bool:
    """`hasattr(obj, name)`: whether `obj.name` reads, False where it raises AttributeError
    (a name kept out included: hasattr reveals nothing the syntax does not)."""
    name = _attribute_name("hasattr", args, 2, 2, kwargs)
    try:
        get_attribute(args[0], name, policy)
    except AttributeError as error:
        if not _answered(error):
            raise
        return False
    return True


def set_named(policy: AttributePolicy, *args: Any, **kwargs: Any) -> None:
    """`setattr(obj, name, value)`: `obj.name = value` as the syntax writes it."""
    name = _attribute_name("setattr", args, 3, 3, kwargs)
    set_attribute(args[0], name, args[2], policy)


class SafeFormatter(string.Formatter):
    """str.format without `{0.attr}` or `{0[key]}`, which would reach past the sandbox, and
    within the length bound of every string a program makes (interpreter/bounds.py)."""

    def bound(self, template: str) -> Callable[..., str]:
        def format(*args: Any, **kwargs: Any) -> str:  # noqa: A001 - shows as str.format's name
            self.total = len(template)
            return self.vformat(template, args, kwargs)
        return format

    def get_field(self, field_name: str, args, kwargs):
        if "." in field_name or "[" in field_name:
            raise ValueError(f"format field '{field_name}': attribute and index lookups "
                             "are not supported by autodiff")
        return super().get_field(field_name, args, kwargs)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion in _CONVERSIONS:
            return bounds.text(value, "str.format", _CONVERSIONS[conversion])
        return super().convert_field(value, conversion)  # (None, or Python's own error)

    def format_field(self, value: Any, format_spec: str) -> str:
        text = bounds.formatted(value, format_spec, "str.format")
        self.total += len(text)
        if self.total > bounds.MAX_ITEMS:
            raise bounds.too_long("str.format", self.total)
        return text


_CONVERSIONS = {"s": str, "r": repr, "a": ascii}

# methods whose result can be far longer than their object: given with a length check
# (type -> name -> a function of the object that returns the method)
BOUNDED_METHODS = {str: {"format": lambda text: SafeFormatter().bound(text), **STR_METHODS},
                   list: LIST_METHODS}
