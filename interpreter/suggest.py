""""Did you mean": the names a misspelt name, attribute or keyword argument was close to.

Candidates come from what the program can really reach: the names its source binds and
the builtins, the public names of torch's namespaces and of a tensor (the sandbox's
allow-lists), the parameters of the function that was called. difflib does the matching.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Iterable

from autodiff.parser import ast

# Where a learner's name usually comes from when it is missing: the import that binds it.
MISSING_IMPORTS = {
    "torch": "import torch", "nn": "import torch.nn as nn",
    "F": "import torch.nn.functional as F", "optim": "import torch.optim as optim",
    "math": "import math",
}


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate nearest to `word`, if one is near enough to be a typo of it."""
    pool = {c for c in candidates if c and c != word and not c.startswith("_")}
    lowered = {c.lower(): c for c in pool}
    if word.lower() in lowered:  # `X.Grad` for `x.grad`, `nn.linear` for `nn.Linear`
        return lowered[word.lower()]
    found = difflib.get_close_matches(word, sorted(pool), n=1, cutoff=0.75)
    if not found and len(word) >= 4:
        found = difflib.get_close_matches(word, sorted(pool), n=1, cutoff=0.6)
    return found[0] if found else None


def bound_names(tree: ast.Node | None) -> set[str]:
    """Every name the program binds anywhere: assignments, defs, parameters, imports."""
    names: set[str] = set()
    if tree is None:
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Import):
            names.add(node.asname or node.module.split(".")[0])
        else:
            name = getattr(node, "name", None)  # def, parameter, `with ... as name`, class
            if isinstance(name, str):
                names.add(name)
    return names


def builtin_names() -> set[str]:
    from autodiff.interpreter.runtime import make_builtins  # the interpreter's own table

    return set(make_builtins(None)) | {"torch", "True", "False", "None"}


def modules() -> dict[str, Any]:
    from autodiff.interpreter import default_modules

    return default_modules()


def public_names(obj: Any) -> frozenset[str]:
    from autodiff.interpreter.sandbox import public_names as listed

    return listed(obj) or frozenset()


def module_names(module: str) -> frozenset[str]:
    """Public names of the torch namespace (or math) a `module 'X'` message names."""
    found = modules().get(module)
    return public_names(found) if found is not None else frozenset()


def class_names(type_name: str) -> frozenset[str]:
    """Public names of the engine class a `'X' object` message names (Tensor, Linear, ...)."""
    from autodiff.engine.tensors.tensor import Tensor

    if type_name in ("Tensor", "Parameter"):
        return public_names_of_class(Tensor)
    for namespace in modules().values():
        cls = getattr(namespace, type_name, None) if type_name in public_names(namespace) else None
        if isinstance(cls, type):
            return public_names_of_class(cls)
    return frozenset()


def public_names_of_class(cls: type) -> frozenset[str]:
    return frozenset(getattr(cls, "_tg_public", ()) or ())


def elsewhere(name: str, skip: str | None = None) -> str | None:
    """The torch namespace that does have `name` (torch.nn for `torch.Linear`)."""
    for module, namespace in modules().items():
        if module != skip and module != "math" and name in public_names(namespace):
            return module
    return None


def callable_named(qualified: str, tree: ast.Node | None) -> Any:
    """The function a `NAME() got an unexpected keyword argument` message names: a def of
    the program (its ast.FunctionDef), `Tensor.method`, `Class.__init__`, or a torch function."""
    owner, _, name = qualified.rpartition(".")
    if tree is not None and not owner:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return node
    if owner:
        from autodiff.engine.tensors.tensor import Tensor

        cls = Tensor if owner == "Tensor" else None
        for namespace in modules().values():
            if cls is None and owner in public_names(namespace):
                cls = getattr(namespace, owner, None)
        return getattr(cls, name, None) if cls is not None else None
    for namespace in modules().values():
        if name in public_names(namespace):
            return getattr(namespace, name, None)
    return None


def keyword_names(function: Any) -> set[str]:
    """The keyword arguments `function` takes (a program's def or an engine callable)."""
    if isinstance(function, ast.FunctionDef):
        return {p.name for p in function.params if p.kind in ("", "kw")}  # (not positional-only)
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return set()
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name != "self"}


# Keywords of torch's API a learner types most; the fallback when the callee is not known.
COMMON_KEYWORDS = frozenset({
    "requires_grad", "dtype", "device", "dim", "keepdim", "retain_graph", "create_graph",
    "gradient", "inputs", "grad_outputs", "allow_unused", "out", "bias", "in_features",
    "out_features", "lr", "momentum", "weight_decay", "reduction", "params", "size"})
