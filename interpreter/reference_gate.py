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

from .sandbox import READABLE_DUNDERS, private

REFUSED = "refused"  # the error class of a refusal's diagnostic


@lru_cache(maxsize=1)
def language_surface() -> dict[str, list[str]]:
    """The language's builtins, modules, readable and writable attribute names (for the child)."""
    from autodiff.engine import api  # noqa: F401 - registers every class with `_tg_public`

    from .runtime import Runtime, make_builtins
    from .sandbox import BUILTIN_PUBLIC
    from .statements import MODULES

    readable: set[str] = set().union(*BUILTIN_PUBLIC.values())
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
    return {"builtins": sorted(make_builtins(Runtime())), "modules": sorted(MODULES),
            "readable": sorted(readable), "writable": sorted(writable),
            "readable_dunders": sorted(READABLE_DUNDERS)}


def check_program(source: str, filename: str) -> TgError | None:
    """Layer 1: autodiff's own parser and compiler, and no identifier starting with `_`."""
    from . import compile_program

    try:
        module = parse(source, filename)
        compile_program(module, filename, source)
    except TgError as exc:
        return exc
    for node in tg_ast.walk(module):
        for name, col in _identifiers(node):
            if private(unicodedata.normalize("NFKC", name)):
                return TgError(REFUSED, f"'{name}' starts with '_': no .tg name does",
                               filename=filename, line=node.line, col=col,
                               end_col=col + len(name))
    return None


def _identifiers(node) -> list[tuple[str, int]]:
    """(identifier, its column) for each name a node introduces or reads."""
    kind = type(node)
    if kind is tg_ast.Name:
        return [(node.id, node.col)]
    if kind is tg_ast.Attribute:  # the attribute ends the node's span
        return [(node.attr, max(node.end_col - len(node.attr), node.col))]
    if kind is tg_ast.Keyword or kind is tg_ast.Param:
        return [(node.arg if kind is tg_ast.Keyword else node.name, node.col)]
    if kind is tg_ast.FunctionDef or kind is tg_ast.With:
        return [(node.name, node.col)] if node.name else []
    if kind is tg_ast.Import:
        return [(part, node.col) for part in node.module.split(".") + [node.asname or ""]]
    return []


# Layer 2 and 3, run by the child before the program. Defines `_refusal(source, shown)`,
# a diagnostic dict or None, and `_run_namespace()`, the program's globals; needs
# `_SURFACE` (language_surface()) defined first. Python's `ast` positions are 1-based
# lines and 0-based UTF-8 byte columns.
CHILD_GATE = r'''
import ast as _ast, builtins as _builtins, re as _re, string as _string


def _private(name):
    return name.startswith("_") and name not in _SURFACE["readable_dunders"]

_NODES = tuple(getattr(_ast, _n) for _n in (
    "Module", "Expr", "Assign", "AugAssign", "If", "While", "For", "Break", "Continue", "Pass",
    "FunctionDef", "arguments", "arg", "Return", "Assert", "With", "withitem", "Import",
    "alias", "BinOp", "UnaryOp", "BoolOp", "Compare", "IfExp", "Call", "keyword", "Attribute",
    "Subscript", "Slice", "Name", "Constant", "List", "Tuple", "JoinedStr", "FormattedValue",
    "expr_context", "operator", "unaryop", "boolop", "cmpop"))


def _existing_attributes():
    """Every attribute name of what a .tg program can reach in real PyTorch and Python."""
    if _EXISTING:
        return _EXISTING[0]
    import math
    reach = [math, list, tuple, str, bytes, int, float, complex, bool, type, range, enumerate,
             zip, type(None), type(len), type(_existing_attributes), type("".join)]
    try:
        import torch
    except ImportError:  # then no program can reach torch either
        torch = None
    if torch is not None:
        with torch.enable_grad():  # a previous program of the batch may have turned it off
            node = torch.ones(1, requires_grad=True).sum().grad_fn
        reach += [torch, torch.nn, torch.nn.functional, torch.autograd, torch.Tensor,
                  torch.Size, torch.dtype, torch.Generator, type(node),
                  type(node.next_functions[0][0]), type(torch.ones(2).max(0)), torch.no_grad,
                  torch.enable_grad, torch.set_grad_enabled]
    _EXISTING.append(set().union(*(dir(o) for o in reach)))
    return _EXISTING[0]


_EXISTING = []


def _template_fields(template):
    for _, field, spec, _ in _string.Formatter().parse(template):
        if field is not None:
            yield field
            yield from _template_fields(spec or "")


def _refusal(source, shown):
    try:
        tree = _ast.parse(source, shown)
    except (SyntaxError, ValueError):
        return None  # compiling fails the same way: nothing runs
    lines = _re.split(r"\r\n|\r|\n", source)  # Python's line ends, no others
    readable, writable = set(_SURFACE["readable"]), set(_SURFACE["writable"])
    outside = set(dir(_builtins)) - set(_SURFACE["builtins"])
    bound = {n.id for n in _ast.walk(tree) if isinstance(n, _ast.Name)
             and not isinstance(n.ctx, _ast.Load)}
    bound |= {n.arg for n in _ast.walk(tree) if isinstance(n, _ast.arg)}
    bound |= {n.name for n in _ast.walk(tree) if isinstance(n, _ast.FunctionDef)}
    bound |= {(a.asname or a.name).split(".")[0] for a in _ast.walk(tree)
              if isinstance(a, _ast.alias)}

    def at(node, message, name=None):
        """The diagnostic at `node` (at its last `name` characters: an attribute)."""
        line = getattr(node, "end_lineno" if name else "lineno", None) or 1
        text = lines[line - 1].encode() if line <= len(lines) else b""

        def column(offset):  # a UTF-8 byte offset, as a 0-based character column
            return len(text[:offset].decode(errors="replace"))

        if name:
            end = column(node.end_col_offset)
            start = end - len(name)
        else:
            start = column(getattr(node, "col_offset", 0))
            one_line = getattr(node, "end_lineno", None) == line
            end = column(node.end_col_offset) if one_line else len(text)
        return {"line": line, "col": start + 1, "end_col": max(end, start + 1) + 1,
                "message": message}

    found = [problem for node in _ast.walk(tree)
             for problem in [_problem(node, at, readable, writable, outside, bound)] if problem]
    return min(found, key=lambda d: (d["line"], d["col"])) if found else None


def _problem(node, at, readable, writable, outside, bound):
    """What is wrong with one node of the program as CPython reads it (None: nothing)."""
    if not isinstance(node, _NODES):
        return at(node, f"Python reads this text as {type(node).__name__}, which is not a "
                        ".tg construct (autodiff's parser reads it otherwise)")
    if isinstance(node, _ast.Name):
        names = [node.id]
    elif isinstance(node, _ast.Attribute):
        names = [node.attr]
    elif isinstance(node, (_ast.keyword, _ast.arg)):
        names = [getattr(node, "arg", None) or ""]
    elif isinstance(node, _ast.FunctionDef):
        names = [node.name]
    elif isinstance(node, _ast.alias):
        if node.name not in _SURFACE["modules"]:
            return at(node, f"import of '{node.name}' is not part of .tg programs")
        names = node.name.split(".") + [node.asname or ""]
    else:
        names = []
    for name in names:
        if _private(name):
            return at(node, f"'{name}' starts with '_': no .tg name does",
                      name if isinstance(node, _ast.Attribute) else None)
    if isinstance(node, _ast.Name) and node.id in outside and node.id not in bound:
        return at(node, f"'{node.id}' is Python's own builtin, not part of the .tg language")
    if not isinstance(node, _ast.Attribute):
        return None
    attr = node.attr
    if not isinstance(node.ctx, _ast.Load) and attr not in writable:
        return at(node, f"setting attribute '{attr}' is not part of .tg programs", attr)
    if attr not in readable and attr in _existing_attributes():
        return at(node, f"attribute '{attr}' is not part of the .tg language", attr)
    if attr == "format":
        template = node.value
        if not (isinstance(template, _ast.Constant) and isinstance(template.value, str)):
            return at(node, "str.format is allowed only on a string literal here", attr)
        try:
            fields = list(_template_fields(template.value))
        except ValueError:
            fields = []  # a malformed template fails as it does in autodiff
        for field in fields:
            if "." in field or "[" in field:
                return at(template, f"format field '{field}': attribute and index "
                                    "lookups are not part of .tg programs")
    return None


def _run_namespace():
    """A fresh `__main__` whose builtins are the language's own, and `__import__`: the
    import statement needs it, and so does torch's C code, which imports through the
    builtins of the frame it runs in; the checks above limit the program's imports."""
    names = {n: getattr(_builtins, n) for n in _SURFACE["builtins"] + ["__import__"]}
    return {"__name__": "__main__", "__builtins__": names}
'''
