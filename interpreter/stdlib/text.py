"""`re`, `string`, `typing` and `warnings`.

`re` is Python's own engine (CPython checks for signals while it matches, so the run's
deadline stops a pattern that backtracks for ever); `sub` refuses a result past the
language's bound before making it. `typing` gives Python's own hints, held in a `Hint` that
takes no string (a forward reference would compile program text). `warnings.warn` warns at
the program's line as Python does for a script; the filters a program sets last as long as
its run (interpreter/warnings_hook.py puts Python's back)."""

from __future__ import annotations

import re as _re
import string as _string
import typing as _typing
import warnings as _warnings
from typing import Any

from .. import bounds
from ..position import current_node
from .module import StdModule, function, public

# --- re --------------------------------------------------------------------------------------

_FLAGS = "I IGNORECASE M MULTILINE S DOTALL X VERBOSE A ASCII U UNICODE NOFLAG"


def _check_sub(pattern: Any, repl: Any, string: Any, count: Any, flags: Any = 0) -> None:
    """A string replacement makes at most (matches + 1) copies of the template, each group
    reference at most the whole string long: refused past the bound before it is made."""
    if type(repl) is not str or type(string) is not str:
        return
    worst = len(string) + (len(string) + 1) * len(repl) * (len(string) + 1 if "\\" in repl else 1)
    if worst <= bounds.MAX_ITEMS:
        return
    compiled = pattern if isinstance(pattern, _re.Pattern) else _re.compile(pattern, flags)
    matches = 0
    for _ in compiled.finditer(string):
        matches += 1
        if count and matches >= count:
            break
    size = len(string) + matches * len(repl) * (len(string) if "\\" in repl else 1)
    if size > bounds.MAX_ITEMS:
        raise bounds.too_long("re.sub", size)


def _sub(name: str):
    tool = getattr(_re, name)

    def sub(pattern: Any, repl: Any, string: Any, count: Any = 0, flags: Any = 0) -> Any:
        _check_sub(pattern, repl, string, count, flags)
        return tool(pattern, repl, string, count, flags)
    return function(name, sub)


class _CheckedPattern:
    """`Pattern.sub` and `Pattern.subn` with the same check (the rest is Python's Pattern)."""

    def __init__(self, compiled: _re.Pattern, name: str) -> None:
        self.compiled, self.name = compiled, name

    def __call__(self, repl: Any, string: Any, count: Any = 0) -> Any:
        _check_sub(self.compiled, repl, string, count)
        return getattr(self.compiled, self.name)(repl, string, count)


class ReModule(StdModule):
    _tg_module_name = "re"
    _tg_public = public("compile match search fullmatch findall finditer sub subn split escape",
                        "purge error", _FLAGS)
    shown = ""

    def __init__(self) -> None:
        for name in self._tg_public - {"sub", "subn"}:
            setattr(self, name, getattr(_re, name))
        self.sub, self.subn = _sub("sub"), _sub("subn")


PATTERN_PUBLIC = public("match search fullmatch findall finditer split sub subn pattern flags",
                        "groups groupindex")  # (sub and subn: BOUNDED_PATTERN_METHODS)
MATCH_PUBLIC = public("group groups groupdict start end span string re pos endpos lastindex",
                      "lastgroup expand")
BOUNDED_PATTERN_METHODS = {name: (lambda compiled, name=name: _CheckedPattern(compiled, name))
                           for name in ("sub", "subn")}

# --- string ----------------------------------------------------------------------------------


class StringModule(StdModule):
    _tg_module_name = "string"
    _tg_public = public("ascii_letters ascii_lowercase ascii_uppercase digits hexdigits",
                        "octdigits punctuation printable whitespace capwords")
    shown = ""

    def __init__(self) -> None:
        for name in self._tg_public:
            setattr(self, name, getattr(_string, name))


# --- typing ----------------------------------------------------------------------------------

class Hint:
    """A hint of Python's typing module (`List`, `Optional[int]`): prints, compares and
    subscripts as Python's."""

    __slots__ = ("hint",)
    _tg_public = frozenset()

    def __init__(self, hint: Any) -> None:
        self.hint = hint

    def __getitem__(self, args: Any) -> "Hint":
        return Hint(self.hint[_unwrapped(args)])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.hint(*args, **kwargs)  # (Python's TypeError: hints are not classes)

    def __repr__(self) -> str:
        return repr(self.hint)

    def __eq__(self, other: Any) -> bool:
        return self.hint == (other.hint if type(other) is Hint else other)

    def __hash__(self) -> int:
        return hash(self.hint)

    def __or__(self, other: Any) -> "Hint":
        return Hint(self.hint | _unwrapped(other))

    def __ror__(self, other: Any) -> "Hint":
        return Hint(_unwrapped(other) | self.hint)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self.hint)

    def tg_type_name(self) -> str:
        kind = type(self.hint)
        return f"{kind.__module__}.{kind.__qualname__}"


def _unwrapped(args: Any) -> Any:
    from ..bounded_builtins import BOUNDED_TYPES  # noqa: PLC0415

    if type(args) is Hint:
        return args.hint
    if type(args) is tuple:
        return tuple(_unwrapped(a) for a in args)
    if type(args) is list:
        return [_unwrapped(a) for a in args]
    if type(args) is str:
        from autodiff.engine.core.unsupported import Unsupported  # noqa: PLC0415

        raise Unsupported("a string in a typing hint (a forward reference)")
    shown = getattr(args, "cls", None)
    if shown is not None and any(args is v for v in BOUNDED_TYPES.values()):
        return shown  # the program's `list` is Python's list
    return args


_HINTS = ("Any List Dict Tuple Set FrozenSet Optional Union Callable Iterable Iterator "
          "Sequence Mapping MutableMapping Generator Type Deque DefaultDict OrderedDict Counter "
          "NoReturn ClassVar Final Literal").split()


def _cast(typ: Any, value: Any) -> Any:
    return value


class TypingModule(StdModule):
    _tg_module_name = "typing"
    _tg_public = public(*_HINTS, "TYPE_CHECKING cast")
    shown = ""
    TYPE_CHECKING = False
    cast = staticmethod(function("cast", _cast))

    def __init__(self) -> None:
        for name in _HINTS:
            setattr(self, name, Hint(getattr(_typing, name)))


# --- warnings --------------------------------------------------------------------------------

_CATEGORIES = ("Warning UserWarning DeprecationWarning PendingDeprecationWarning "
               "RuntimeWarning FutureWarning SyntaxWarning ImportWarning UnicodeWarning "
               "BytesWarning ResourceWarning").split()
CATEGORIES = {name: __builtins__[name] if isinstance(__builtins__, dict) else
              getattr(__builtins__, name) for name in _CATEGORIES}


def _warner(rt: Any):
    registry: dict = {}

    def warn(message: Any, category: Any = None, stacklevel: Any = 1, source: Any = None) -> None:
        if isinstance(message, Warning):
            category = type(message)
        if category is None:
            category = UserWarning
        if not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError(f"category must be a Warning subclass, not "
                            f"'{type(category).__name__}'")
        node = current_node()
        _warnings.warn_explicit(message, category, getattr(rt, "filename", "<stdin>"),
                                node.line if node is not None else 1, "__main__", registry)
    return function("warn", warn)


class WarningsModule(StdModule):
    _tg_module_name = "warnings"
    _tg_public = public("warn filterwarnings simplefilter resetwarnings")
    shown = ""

    def __init__(self, rt: Any) -> None:
        self.warn = _warner(rt)
        self.filterwarnings = _warnings.filterwarnings
        self.simplefilter = _warnings.simplefilter
        self.resetwarnings = _warnings.resetwarnings


INSTANCE_PUBLIC = {_re.Pattern: PATTERN_PUBLIC, _re.Match: MATCH_PUBLIC}
