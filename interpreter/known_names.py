"""Names PyTorch (or NumPy) has that autodiff does not: they stop a program with
`X is not supported by autodiff` where it uses them, while a misspelt name gets Python's own
ImportError or AttributeError. The lists (torch_names.py) load on the first such question.
"""

from __future__ import annotations

from typing import Any

from autodiff.engine.core.unsupported import Unsupported

# The modules a program may import; each is the engine's namespace, or a stand-in below
# while the engine lacks it.
MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.optim",
           "torch.optim.lr_scheduler",
           "torch.autograd", "torch.autograd.functional", "torch.autograd.graph", "torch.func", "functorch",
           "torch.linalg", "torch.utils",
           "torch.utils.data", "math", "numpy", "numpy.random", "os", "os.path",
           "sys", "time", "random", "collections", "itertools", "functools", "warnings",
           "typing", "re", "copy", "string")  # (the last line: stdlib/__init__.STD_MODULES)

_lists: dict[str, frozenset] = {}


def known(owner: str, name: str) -> bool:
    """Does PyTorch's (NumPy's, Python's) `owner` (a module, `torch.Tensor` or
    `numpy.ndarray`, a class of torch_names.OWNERS) have the public attribute `name`?"""
    return name in catalog(owner)


def catalog(owner: str) -> frozenset:
    """Every public name of `owner`: its own list, and a class's base's (torch_names.BASES)."""
    names = _lists.get(owner)
    if names is None:
        from .files import HOST_NAMES  # noqa: PLC0415 - only on this error path
        from .stdlib.names import NAMES as STD_NAMES  # noqa: PLC0415 - only on this error path
        from .torch_names import BASES, NAMES  # noqa: PLC0415 - 33 kB, only on this error path

        names = frozenset(NAMES.get(owner, STD_NAMES.get(owner, "")).split()) | \
            HOST_NAMES.get(owner, frozenset())
        if owner in BASES:
            names |= catalog(BASES[owner])
        _lists[owner] = names
    return names


def unsupported(path: str) -> Unsupported:
    """The error for using `path` (NumPy's wording is the language's: data only)."""
    if path.split(".")[0] == "numpy":
        return Unsupported(path, "in .tg programs")
    return Unsupported(path)


class NotSupportedName:
    """A name PyTorch has and autodiff does not: importing it works, using it stops the
    program. Its attributes are its own known names (`optim.SGD`), so the error names what
    the program used."""

    __slots__ = ("_path",)

    def __init__(self, path: str) -> None:
        self._path = path

    def _tg_readable(self, name: str) -> bool:
        return not name.startswith("_")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if known(self._path, name):
            return NotSupportedName(f"{self._path}.{name}")
        if self._path in MODULES:
            raise AttributeError(f"module '{self._path}' has no attribute '{name}'")
        raise unsupported(self._path)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise unsupported(self._path)

    def __str__(self) -> str:
        raise unsupported(self._path)

    def __iter__(self):
        raise unsupported(self._path)

    def __instancecheck__(self, obj: Any) -> bool:  # isinstance(x, nn.Linear)
        raise unsupported(self._path)

    def __subclasscheck__(self, cls: Any) -> bool:
        raise unsupported(self._path)

    def __repr__(self) -> str:  # for tools that show values (the repl), never the program
        return f"<{self._path}: not supported by autodiff>"


def stand_in(obj: Any, name: str) -> NotSupportedName | None:
    """For `torch.optim` and the like on a namespace of the engine that lacks them."""
    module = getattr(type(obj), "_tg_module_name", None)
    if module is None or name.startswith("_") or not known(module, name):
        return None
    return NotSupportedName(f"{module}.{name}")


def _owner(obj: Any) -> str | None:
    """The PyTorch (NumPy) class whose names `obj` answers for: its class's own
    `_tg_known_as`, or the PyTorch class the nearest engine class in its MRO stands for (a
    program's nn.Module subclass answers for nn.Module's names)."""
    kind = obj if isinstance(obj, type) else type(obj)  # (a class answers for its own names)
    owner = getattr(kind, "_tg_known_as", None)
    if owner is not None:
        return owner
    from autodiff.engine.core.torch_class_paths import CLASS_PATHS  # noqa: PLC0415
    from .torch_names import OWNERS  # noqa: PLC0415 - only on this error path

    for cls in kind.__mro__:
        module = vars(cls).get("__module__")
        if isinstance(module, str) and module.startswith("autodiff."):
            path = f"{module}.{cls.__qualname__}"
            found = CLASS_PATHS.get(path) or OWNERS.get(path)
            if found is not None:
                return found
    return None


def unsupported_attribute(obj: Any, name: str) -> Unsupported | None:
    """`t.register_hook`, `model.register_forward_hook`: a name PyTorch's object (NumPy's
    array) has and ours lacks."""
    owner = _owner(obj)
    if owner is None or name.startswith("_") or not known(owner, name):
        return None
    if owner == "torch.Tensor":
        return unsupported(f"Tensor.{name}")
    if owner.startswith("torch.") and owner != "torch.dtype":  # `Module.register_forward_hook`
        return unsupported(f"{owner.rsplit('.', 1)[-1]}.{name}")
    return unsupported(f"{owner}.{name}")
