"""What each corpus program uses beyond the v1 language, read with CPython's `ast`.

autodiff stops at a program's first unsupported construct, so the first error alone hides
the rest of what a program needs. This inventory lists, per program, every construct and
API family of the spec's v2 surface (and beyond) that it uses, so corpus/STATUS.md can count
them over the programs that do not pass yet. It also derives the corpus's coverage figures
(programs that train an nn.Module subclass with an optimiser, custom autograd Functions or
functional autograd, Chinese sources). Test tooling only: it never runs a program.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

# builtins the v1 language offers; any other builtin a program calls is listed by name
V1_BUILTINS = {"print", "range", "len", "abs", "min", "max", "sum", "float", "int", "bool",
               "str", "round", "enumerate", "zip", "list", "tuple", "isinstance"}
_CJK = re.compile(r"[\u4e00-\u9fff]")
_OPTIMISER = re.compile(r"\b(?:optim|torch\.optim)\.[A-Z]\w*\(|\b(?:SGD|Adam|RMSprop)\(")


def _dotted(node: ast.AST) -> str:
    """`a.b.c` for an attribute chain rooted at a name ('' otherwise)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return ""


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the full module path or object it stands for."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _resolve(dotted: str, aliases: dict[str, str]) -> str:
    head, _, rest = dotted.partition(".")
    full = aliases.get(head, head)
    return f"{full}.{rest}" if rest else full


def _class_kind(base: str) -> str:
    if base.endswith("Module"):
        return "class statement (nn.Module subclass)"
    if base.endswith("Function"):
        return "class statement (torch.autograd.Function subclass)"
    return "class statement (other base)"


def constructs(source: str) -> set[str]:
    """The v2-or-beyond constructs and API families this program uses."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found: set[str] = set()
    if ";" in "".join(line.split("#")[0] for line in source.splitlines()):
        found.add("several statements on one line (;)")
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.ImportFrom:
            found.add(f"from {node.module} import ...")
        elif kind is ast.Import:
            for alias in node.names:
                if alias.name.split(".")[0] != "torch" and alias.name != "math":
                    found.add(f"import {alias.name}")
                elif alias.name not in ("torch", "torch.nn", "torch.nn.functional", "math"):
                    found.add(f"import {alias.name}")
        elif kind is ast.ClassDef:
            bases = [_resolve(_dotted(b), aliases) for b in node.bases] or ["object"]
            found.update(_class_kind(b) for b in bases)
        elif kind in (ast.FunctionDef, ast.Lambda):
            if kind is ast.FunctionDef and node.decorator_list:
                found.add("decorator")
            if kind is ast.Lambda:
                found.add("lambda")
            if node.args.vararg or node.args.kwarg:
                found.add("*args / **kwargs in a def")
        elif kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp):
            found.add("comprehension or generator expression")
        elif kind in (ast.Dict, ast.DictComp):
            found.add("dict literal or comprehension")
        elif kind is ast.Try:
            found.add("try / except")
        elif kind in (ast.Yield, ast.YieldFrom):
            found.add("generator function (yield)")
        elif kind is ast.Delete:
            found.add("del")
        elif kind is ast.Starred or (kind is ast.keyword and node.arg is None):
            found.add("*args / **kwargs in a call")
        elif kind is ast.BinOp and isinstance(node.op, ast.Mod) and isinstance(
                node.left, ast.Constant) and isinstance(node.left.value, str):
            found.add("% string formatting")
        elif kind is ast.Call:
            found.update(_call_constructs(node, aliases))
    return found


def _call_constructs(node: ast.Call, aliases: dict[str, str]) -> set[str]:
    found = set()
    func = node.func
    if isinstance(func, ast.Name) and func.id not in V1_BUILTINS and func.id not in aliases \
            and hasattr(builtins, func.id):
        found.add(f"builtin {func.id}()")
    method = func.attr if isinstance(func, ast.Attribute) else ""
    if method == "format" and isinstance(func.value, ast.Constant):
        found.add("str.format")
    if method == "register_hook":
        found.add("Tensor.register_hook")
    if method == "numpy":
        found.add("Tensor.numpy / torch.from_numpy")
    name = _resolve(_dotted(func), aliases)
    families = [
        ("torch.nn.", lambda n: n.split(".")[2][:1].isupper(), "nn layers / losses / containers"),
        ("torch.nn.init.", None, "torch.nn.init"),
        ("torch.optim.", None, "torch.optim optimisers"),
        ("torch.autograd.functional.", None, "torch.autograd.functional"),
        ("torch.func.", None, "torch.func"),
        ("torch.utils.", None, "torch.utils.data"),
    ]
    for prefix, test, label in families:
        if name.startswith(prefix) and (test is None or test(name)):
            found.add(label)
    if name in ("torch.Tensor", "torch.FloatTensor", "torch.LongTensor",
                "torch.autograd.Variable"):
        found.add("legacy constructors (torch.Tensor, FloatTensor, LongTensor, Variable)")
    if name == "torch.from_numpy":
        found.add("Tensor.numpy / torch.from_numpy")
    return found


def coverage(program: Path) -> set[str]:
    """Which of the corpus's required kinds this program is."""
    source = program.read_text(encoding="utf-8")
    used = constructs(source)
    kinds = set()
    if "class statement (nn.Module subclass)" in used and _OPTIMISER.search(source) and (
            ".step()" in source and "zero_grad(" in source):
        kinds.add("trains an nn.Module subclass with an optimiser")
    if used & {"class statement (torch.autograd.Function subclass)",
               "torch.autograd.functional", "torch.func"}:
        kinds.add("custom autograd.Function or functional autograd")
    if _CJK.search(source.splitlines()[0]):
        kinds.add("follows a Chinese source")
    return kinds
