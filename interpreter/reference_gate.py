"""What a program must pass before the torch reference runs it as real Python.

`autodiff test --reference torch` (and tests/make_goldens.py) run the program text under
CPython with PyTorch, outside autodiff's sandbox: that is the option's purpose. So a
program is refused unless it is valid .tg, in three layers:

1. here, before any Python process sees it: autodiff's parser and compiler must accept it
   (an `import os` is refused at compile time) and no identifier may start with `_`;
2. in the child, before anything runs: the same text as *CPython* parses it (our parser and
   Python's can disagree: Python ends a line at a lone carriage return and folds `ｅｘｅｃ`
   into `exec`) may use only .tg constructs, only the modules and builtins of the language,
   no `_` names, no attribute that real PyTorch or Python has outside the language's
   attribute list (a misspelt one, which nothing has, is left to fail as in autodiff), and
   `str.format` only on a literal template without `{0.attr}` or `{0[key]}` fields;
3. the program then runs with only the language's builtins (and `__import__`, which
   no program can name), so a name the checks miss still cannot reach `exec` or `open`.

This keeps out what the language keeps out; it is not a sandbox for hostile code (see
docs/security.md).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from autodiff.parser import TgError, parse
from autodiff.parser import ast as tg_ast

from autodiff.engine.program_classes import PROTOCOL_METHODS

from .sandbox import READABLE_DUNDERS, private

REFUSED = "refused"  # the error class of a refusal's diagnostic


@lru_cache(maxsize=1)
def language_surface() -> dict[str, list[str]]:
    """The language's builtins, modules, readable and writable attribute names (for the child)."""
    from autodiff.engine import api, numpy_namespace  # noqa: F401 - registers every class with `_tg_public`

    from .known_names import MODULES
    from .pybuiltins import UNSUPPORTED_BUILTINS
    from .runtime import Runtime, make_builtins
    from .sandbox import _NUMPY_SCALAR_PUBLIC, _STOP_ITERATION_PUBLIC, BUILTIN_PUBLIC

    readable: set[str] = set().union(*BUILTIN_PUBLIC.values(), _STOP_ITERATION_PUBLIC,
                                     _NUMPY_SCALAR_PUBLIC, READABLE_DUNDERS)
    writable: set[str] = set()
    stack, seen = [object], set()
    while stack:  # every autodiff class that lists its public names
        for kind in type.__subclasses__(stack.pop()):
            if kind in seen:
                continue
            seen.add(kind)
            stack.append(kind)
            own = vars(kind)  # some classes elsewhere make __module__ a descriptor
            if isinstance(own.get("__module__"), str) and own["__module__"].startswith("autodiff."):
                readable |= own.get("_tg_public", frozenset())
                names = own.get("_tg_writable", frozenset())
                if isinstance(names, frozenset):  # (a function decides per instance)
                    writable |= names
    builtins = set(make_builtins(Runtime())) - set(UNSUPPORTED_BUILTINS)
    return {"builtins": sorted(builtins), "modules": sorted(MODULES),
            "readable": sorted(readable), "writable": sorted(writable),
            "readable_dunders": sorted(READABLE_DUNDERS),
            "protocol_methods": sorted(PROTOCOL_METHODS)}


def check_program(source: str, filename: str) -> TgError | None:
    """Layer 1: autodiff's own parser and compiler, and no identifier starting with `_`."""
    from . import compile_program

    try:
        module = parse(source, filename)
        compile_program(module, filename, source)
    except TgError as exc:
        return exc
    allowed = _init_methods(module)
    for node in tg_ast.walk(module):
        if id(node) in allowed:
            continue
        for name, col in _identifiers(node):
            if private(unicodedata.normalize("NFKC", name)) and not (
                    type(node) in _VARIABLE_NODES and not name.startswith("__")):
                return TgError(REFUSED, f"'{name}' starts with '_': no .tg name does",
                               filename=filename, line=node.line, col=col,
                               end_col=col + len(name))
    return None


# nodes that bind or read a program's own variable: `_` or `_total` there is an ordinary name
# (`for _ in range(3)`), as in the language; only a dunder could mean something to CPython
_VARIABLE_NODES = (tg_ast.Name, tg_ast.Param, tg_ast.FunctionDef, tg_ast.ExceptHandler,
                   tg_ast.With, tg_ast.Global, tg_ast.Nonlocal)


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


from .reference_child import CHILD_GATE  # noqa: E402 - layers 2 and 3, in the child
