"""`import M [as A]`, `import M.sub` and `from M import N [as A]` for the language's modules.

A module is the engine's namespace object (`torch`, `torch.nn`, ...), found in the run's
module table or as a public attribute of its parent; a module or name PyTorch has and the
engine lacks yet (`torch.optim`, `from torch.autograd import Function`) imports as a
stand-in that stops the program where it is used; a name nothing has fails as Python fails
(`ImportError: cannot import name ...`). Any other module is refused before the program
runs.
"""

from __future__ import annotations

from typing import Any, Callable

from autodiff.parser import ast
from autodiff.text.diagnostics import EXIT_SYNTAX, TgError

from .expressions import Context, runtime_error
from .known_names import MODULES, NotSupportedName, known
from .sandbox import private, public_names
from .statements import _DISPATCH as STATEMENTS, compile_store


def resolve_module(dotted: str, modules: dict, policy: Callable) -> Any:
    """The object `import dotted` stands for (kept in the run's module table)."""
    if dotted in modules:
        return modules[dotted]
    head, _, last = dotted.rpartition(".")
    if not head:  # numpy (with a random state of this run's own), os: made on first import
        if dotted == "os":
            from .files import OsNamespace  # noqa: PLC0415 - only when imported

            found = modules[dotted] = OsNamespace()
            return found
        from autodiff.engine.numpy.namespace import namespace  # noqa: PLC0415 - only when imported

        found = modules[dotted] = namespace()
        return found
    parent = resolve_module(head, modules, policy)
    if not isinstance(parent, NotSupportedName) and policy(parent, last):
        found = getattr(parent, last)
    else:
        found = NotSupportedName(dotted)  # every module of MODULES is one of PyTorch's
    modules[dotted] = found
    return found


def import_name(module: Any, path: str, name: str, modules: dict, policy: Callable) -> Any:
    """`from path import name`."""
    if isinstance(module, NotSupportedName):
        if known(path, name):
            return NotSupportedName(f"{path}.{name}")
    elif not private(name) and policy(module, name):
        return getattr(module, name)
    elif f"{path}.{name}" in MODULES:
        return resolve_module(f"{path}.{name}", modules, policy)
    elif known(path, name):
        return NotSupportedName(f"{path}.{name}")
    raise ImportError(f"cannot import name '{name}' from '{path}' (unknown location)")


def _check_module(node: ast.Node, module: str, cx: Context) -> None:
    if module not in MODULES:
        raise TgError("ImportError", f"import of '{module}' is not supported by autodiff "
                      f"(the modules are {', '.join(MODULES)})", filename=cx.filename,
                      line=node.line, col=node.col, end_col=node.end_col, exit_code=EXIT_SYNTAX)


def compile_Import(node: ast.Import, cx: Context) -> Callable[[dict], None]:
    _check_module(node, node.module, cx)
    # `import torch.nn` binds `torch`, as in Python; `import torch.nn as nn` binds the submodule
    key = node.module if node.asname else node.module.split(".")[0]
    bound = compile_store(ast.Name(node.asname or key, line=node.line, col=node.col), cx)
    modules, rt, filename = cx.modules, cx.rt, cx.filename
    whole = node.module

    def run(L: dict) -> None:
        if whole != key:
            resolve_module(whole, modules, rt.policy)  # `import torch.optim` checks torch.optim
        bound(L, resolve_module(key, modules, rt.policy))
    return run


def compile_ImportFrom(node: ast.ImportFrom, cx: Context) -> Callable[[dict], None]:
    _check_module(node, node.module, cx)
    modules, rt, filename, path = cx.modules, cx.rt, cx.filename, node.module
    if node.names == (("*", None),):
        if not cx.at_module_level:
            raise TgError("SyntaxError", "import * only allowed at module level", filename=filename,
                          line=node.line, col=node.col, end_col=node.end_col, exit_code=EXIT_SYNTAX)
        if path != "math":  # torch's and NumPy's * hold far more than the language has
            raise TgError("ImportError", f"'from {path} import *' is not supported by autodiff "
                          "(only 'from math import *')", filename=filename, line=node.line,
                          col=node.col, end_col=node.end_col, exit_code=EXIT_SYNTAX)
        G = cx.G

        def run_star(L: dict) -> None:
            module = resolve_module(path, modules, rt.policy)
            for name in sorted(public_names(module) or ()):
                G[name] = getattr(module, name)
        return run_star
    stores = [(name, compile_store(ast.Name(asname or name, line=node.line, col=node.col), cx))
              for name, asname in node.names]

    def run(L: dict) -> None:
        module = resolve_module(path, modules, rt.policy)
        for name, store in stores:
            try:
                value = import_name(module, path, name, modules, rt.policy)
            except ImportError as exc:
                raise runtime_error(exc, node, filename) from None
            store(L, value)
    return run


STATEMENTS[ast.Import] = compile_Import
STATEMENTS[ast.ImportFrom] = compile_ImportFrom
