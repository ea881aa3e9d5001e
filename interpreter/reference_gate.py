"""What the torch reference checks in autodiff's own process, and what it tells the child.

`autodiff test --reference torch` (and tests/make_goldens.py) run the program text as real
Python with PyTorch: that is the option's purpose, and teachers run it on files they did not
write. Here, before any process starts, autodiff's own parser and compiler must accept the
text (an `import os` is refused at compile time) and no identifier may start with `_`.
`language_surface()` is the allow-list the child (torch_child.py) enforces on CPython's own
reading of the text and on every attribute access while it runs: the language's builtins,
modules and, per module, the names autodiff has there; the attribute names any of its
objects answers; the names a program may set. All of it is read from the tables the sandbox
itself uses (`_tg_public` of each class and namespace, sandbox.BUILTIN_PUBLIC, ...), so the
two cannot drift apart.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from autodiff.engine.core.program_classes import PROTOCOL_METHODS
from autodiff.parser import TgError, parse
from autodiff.parser import ast as tg_ast

from .sandbox import READABLE_DUNDERS, private

REFUSED = "refused"  # the error class of a refusal's diagnostic
STOPPED = "stopped"  # ... and of a program stopped while it ran under torch


@lru_cache(maxsize=1)
def language_surface() -> dict[str, list[str]]:
    """The language's builtins, modules, readable and writable attribute names (for the child)."""
    from autodiff.engine import api
    from autodiff.engine.numpy import namespace as numpy_namespace  # noqa: F401 - registers every class with `_tg_public`

    from .known_names import MODULES
    from .pybuiltins import UNSUPPORTED_BUILTINS
    from .runtime import Runtime, make_builtins
    from .sandbox import (_NUMPY_SCALAR_PUBLIC, _OS_ERROR_PUBLIC, _STOP_ITERATION_PUBLIC,
                          BUILTIN_PUBLIC)

    readable: set[str] = set().union(*BUILTIN_PUBLIC.values(), _STOP_ITERATION_PUBLIC,
                                     _OS_ERROR_PUBLIC, _NUMPY_SCALAR_PUBLIC, READABLE_DUNDERS)
    writable: set[str] = set()
    classes = _engine_classes()
    for kind in classes:
        own = vars(kind)
        readable |= own.get("_tg_public", frozenset())
        names = own.get("_tg_writable", frozenset())
        if isinstance(names, frozenset):  # (a function decides per instance)
            writable |= names
    runtime = Runtime()
    builtins = set(make_builtins(runtime)) - set(UNSUPPORTED_BUILTINS)
    return {"builtins": sorted(builtins), "modules": sorted(MODULES),
            "module_names": _module_names(runtime), "type_names": _type_names(classes),
            "bases": sorted(_torch_path(kind) for kind in classes if "tg_subclass" in vars(kind)),
            "readable": sorted(readable), "writable": sorted(writable),
            "readable_dunders": sorted(READABLE_DUNDERS),
            "protocol_methods": sorted(PROTOCOL_METHODS), "saved_names": saved_names()}


def saved_names() -> dict[str, list[str]]:
    """Per grad_fn class torch has (`MulBackward0`), its catalogued `_saved_*` names
    (engine/graph/saved_names.py): the one kind of '_' name a program may read, and only
    from such a node (the child checks the object)."""
    from autodiff.engine.graph.saved import PREFIX
    from autodiff.engine.graph.saved_names import SAVED

    return {node: sorted(PREFIX + key for key in keys) for node, keys in SAVED.items() if keys}


@lru_cache(maxsize=1)
def _saved_name_set() -> frozenset[str]:
    return frozenset(name for names in saved_names().values() for name in names)


def _engine_classes() -> list[type]:
    """Every class of the engine and the interpreter (some classes elsewhere make
    `__module__` a descriptor: only a string one counts)."""
    found, stack, seen = [], [object], set()
    while stack:
        for kind in type.__subclasses__(stack.pop()):
            if kind in seen:
                continue
            seen.add(kind)
            stack.append(kind)
            module = vars(kind).get("__module__")
            if isinstance(module, str) and module.startswith("autodiff."):
                found.append(kind)
    return found


# the real class each engine class stands for where its printed path does not say it
_STANDS_FOR = {"autodiff.engine.tensors.tensor.Tensor": "torch.Tensor",
               "autodiff.engine.tensors.tensor.Size": "torch.Size",
               "autodiff.engine.core.dtypes.dtype": "torch.dtype",
               "autodiff.engine.graph.nodes.Node": "torch.autograd.graph.Node",
               "autodiff.engine.graph.nodes.AccumulateGrad": "torch.autograd.graph.Node",
               "autodiff.engine.autograd.function.FunctionCtx": "torch.autograd.function.FunctionCtx",
               "autodiff.engine.tensors.hooks.RemovableHandle": "torch.utils.hooks.RemovableHandle",
               # (values, indices) of max, min, sort, topk...: every class of the module
               "autodiff.engine.ops.reduce.ReturnType": "torch.return_types.*",
               "autodiff.engine.numpy.data.ndarray": "numpy.ndarray",
               "autodiff.engine.core.program_classes.ProgramObject": "builtins.object"}


def _torch_path(kind: type) -> str | None:
    from autodiff.engine.core.torch_class_paths import CLASS_PATHS

    name = f"{kind.__module__}.{kind.__qualname__}"
    return _STANDS_FOR.get(name) or CLASS_PATHS.get(name) or vars(kind).get("_tg_path")


def _type_names(classes: list[type]) -> dict[str, list[str]]:
    """For each real class an engine class stands for (`torch.nn.modules.linear.Linear`),
    the names the engine class answers, its bases' included; and Python's own values."""
    from .sandbox import _EXCEPTION_PUBLIC, _NUMPY_SCALAR_PUBLIC, _OS_ERROR_PUBLIC, BUILTIN_PUBLIC

    found = {f"{kind.__module__}.{kind.__qualname__}": sorted(names)
             for kind, names in BUILTIN_PUBLIC.items()}
    found |= {"builtins.BaseException": sorted(_EXCEPTION_PUBLIC),
              "builtins.OSError": sorted(_OS_ERROR_PUBLIC),
              "numpy.generic": sorted(_NUMPY_SCALAR_PUBLIC)}
    for kind in classes:
        path = _torch_path(kind)
        names = getattr(kind, "_tg_public", None)
        # (every object is an object: a plain class's names are the program's, not object's)
        if path and path != "builtins.object" and isinstance(names, frozenset):
            found[path] = sorted(set(found.get(path, ())) | names)
    return dict(sorted(found.items()))


def _module_names(runtime) -> dict[str, list[str]]:
    """For each module of the language, and each namespace inside one (`torch.nn.init`),
    the names autodiff has in it: all that the torch child lets a program read there."""
    from . import default_modules
    from .imports import resolve_module
    from .known_names import MODULES, NotSupportedName
    from .sandbox import public_names

    found: dict[str, list[str]] = {}
    modules = default_modules()
    stack = [(path, resolve_module(path, modules, runtime.policy)) for path in MODULES]
    while stack:
        path, namespace = stack.pop()
        if path in found or isinstance(namespace, NotSupportedName):
            continue
        names = public_names(namespace) or frozenset()
        found[path] = sorted(names)
        for name in names:
            member = getattr(namespace, name, None)
            inner = getattr(type(member), "_tg_module_name", None)
            if isinstance(inner, str):
                stack.append((inner, member))
    return dict(sorted(found.items()))


def check_program(source: str, filename: str) -> TgError | None:
    """Layer 1: autodiff's own parser and compiler, and no identifier starting with `_`."""
    from . import compile_program

    try:
        module = parse(source, filename)
        compile_program(module, filename, source)
    except TgError as exc:
        return exc
    allowed, targets = _init_methods(module), _targets(module)
    for node in tg_ast.walk(module):
        if id(node) in allowed:
            continue
        for name, col in _identifiers(node):
            read = unicodedata.normalize("NFKC", name)  # (as CPython reads it)
            if private(read) and not (
                    type(node) in _VARIABLE_NODES and not name.startswith("__")) and not (
                    type(node) is tg_ast.Attribute and id(node) not in targets
                    and read in _saved_name_set()):  # read, never set: the child checks the node
                return TgError(REFUSED, f"'{name}' starts with '_': no .tg name does",
                               filename=filename, line=node.line, col=col,
                               end_col=col + len(name))
    return None


# nodes that bind or read a program's own variable: `_` or `_total` there is an ordinary name
# (`for _ in range(3)`), as in the language; only a dunder could mean something to CPython
_VARIABLE_NODES = (tg_ast.Name, tg_ast.Param, tg_ast.FunctionDef, tg_ast.ExceptHandler,
                   tg_ast.With, tg_ast.Global, tg_ast.Nonlocal)


def _targets(module) -> set[int]:
    """The attribute nodes a program sets or deletes (`a.b = 1`, `del a.b`, `for a.b in`)."""
    found: set[int] = set()

    def add(target) -> None:
        kind = type(target)
        if kind is tg_ast.Attribute:
            found.add(id(target))
        elif kind in (tg_ast.Tuple, tg_ast.List):
            for element in target.elts:
                add(element)
        elif kind is tg_ast.Starred:
            add(target.value)

    for node in tg_ast.walk(module):
        kind = type(node)
        if kind is tg_ast.Assign or kind is tg_ast.Delete:
            for target in node.targets:
                add(target)
        elif kind in (tg_ast.AugAssign, tg_ast.AnnAssign, tg_ast.For, tg_ast.Comprehension):
            add(node.target)
    return found


def _init_methods(module) -> set[int]:
    """The nodes whose dunder the language allows: a method of a class named in
    PROTOCOL_METHODS (`__init__`, `__getitem__`, ...), `super().__init__`."""
    allowed: set[int] = set()
    for node in tg_ast.walk(module):
        if type(node) is tg_ast.ClassDef:
            allowed.update(id(s) for s in node.body
                           if type(s) is tg_ast.FunctionDef and s.name in PROTOCOL_METHODS)
        elif (type(node) is tg_ast.Attribute and node.attr == "__init__"
              and type(node.value) is tg_ast.Call and type(node.value.func) is tg_ast.Name
              and node.value.func.id == "super"):
            allowed.add(id(node))
    return allowed


def _identifiers(node) -> list[tuple[str, int]]:
    """(identifier, its column) for each name a node introduces or reads."""
    kind = type(node)
    if kind is tg_ast.Name:
        return [(node.id, node.col)]
    if kind is tg_ast.Attribute:  # the attribute ends the node's span
        return [(node.attr, max(node.end_col - len(node.attr), node.col))]
    if kind is tg_ast.Keyword or kind is tg_ast.Param:
        name = node.arg if kind is tg_ast.Keyword else node.name
        return [(name, node.col)] if name else []
    if kind in (tg_ast.FunctionDef, tg_ast.ClassDef, tg_ast.With, tg_ast.ExceptHandler):
        return [(node.name, node.col)] if node.name else []
    if kind is tg_ast.Import:
        return [(part, node.col) for part in node.module.split(".") + [node.asname or ""]]
    if kind is tg_ast.ImportFrom:
        return [(part, node.col) for part in node.module.split(".")] + [
            (part, node.col) for name, asname in node.names for part in (name, asname or "")]
    if kind is tg_ast.Global or kind is tg_ast.Nonlocal:
        return [(name, node.col) for name in node.names]
    return []

