"""`class Name(Base):` for the bases the language has, and `super()` in their methods.

The class body runs in a namespace dict of its own, like a function body (its names are
not visible inside its methods, as in Python). It may hold only `def` (decorated or not,
`@staticmethod` among them), assignments to names, docstrings and `pass`; no name starting
with `_` but the method `__init__`. The base then makes the class:

    Base.tg_subclass(name: str, members: dict) -> type

where `members` holds the body's names (methods are plain .tg functions, or staticmethod
objects) plus `__module__` ('__main__'), `__qualname__` and, given a docstring, `__doc__`.
Base is what the program wrote, so `tg_subclass` must never be in any `_tg_public`: a
program could otherwise make a class of members of its choosing. The class it returns
should list in its own `_tg_public` the base's public names and the members' (names
starting with '_' aside): that lets a program read `Net.scale`, `MyFn.apply` and
`model.forward`, as the sandbox reads a class's own `_tg_public` for the class object too.
Instances answer for the attributes a program gives them (`self.fc = ...`) through
`_tg_readable`/`_tg_writable` (see sandbox.py); calling `Name(...)` and `obj(...)` is the
class's own business (`nn.Module.__call__` runs `forward`).

`super().NAME(...)` and `super(Name, self).NAME(...)` are compiled here: `__init__` is the one
name starting with `_` they reach, other names only those the instance lets a program read.
"""

from __future__ import annotations

from typing import Any, Callable

from autodiff.engine.unsupported import Unsupported
from autodiff.parser import ast
from autodiff.parser.diagnostics import EXIT_SYNTAX, TgError

from .expressions import Context, call_hooks, compile_call_to, compile_expr, runtime_error
from .sandbox import Refused, refuse
from .scopes import CLASS, FUNCTION, OUTER, class_scope
from .statements import _DISPATCH as STATEMENTS, compile_block, compile_store

NEEDS_BASE = "class statements need base nn.Module or torch.autograd.Function in autodiff"
_KINDS = {ast.If: "'if' statements", ast.For: "'for' loops", ast.While: "'while' loops",
          ast.With: "'with' statements", ast.Try: "'try' statements", ast.ClassDef: "nested classes",
          ast.Import: "imports", ast.ImportFrom: "imports", ast.AugAssign: "augmented assignments",
          ast.ExprStmt: "expression statements", ast.Return: "'return'", ast.Delete: "'del'",
          ast.Global: "'global'", ast.Nonlocal: "'nonlocal'", ast.Raise: "'raise'",
          ast.Assert: "'assert'", ast.Break: "'break'", ast.Continue: "'continue'"}


def _refuse(message: str, node: ast.Node, filename: str) -> TgError:
    return TgError("SyntaxError", message, filename=filename, line=node.line, col=node.col,
                   end_line=node.end_line, end_col=node.end_col, exit_code=EXIT_SYNTAX)


def _check_body(body: tuple, filename: str) -> None:
    for stmt in body:
        kind = type(stmt)
        if kind is ast.FunctionDef:
            if stmt.name.startswith("_") and stmt.name != "__init__":
                raise _refuse(f"the method name '{stmt.name}' is not supported in a class body by "
                              "autodiff (no name starting with '_' but __init__)", stmt, filename)
        elif kind is ast.Assign:
            for target in stmt.targets:
                if type(target) is not ast.Name:
                    raise _refuse("assignments to anything but a name are not supported in a class "
                                  "body by autodiff", target, filename)
                if target.id.startswith("_"):
                    raise _refuse(f"the name '{target.id}' is not supported in a class body by "
                                  "autodiff (no name starting with '_')", target, filename)
        elif kind is ast.ExprStmt and type(stmt.value) is ast.Constant and type(stmt.value.value) is str:
            continue  # a docstring
        elif kind is not ast.Pass:
            raise _refuse(f"{_KINDS.get(kind, type(stmt).__name__)} are not supported in a class body "
                          "by autodiff", stmt, filename)


def compile_ClassDef(node: ast.ClassDef, cx: Context) -> Callable[[dict], None]:
    filename = cx.filename
    if node.decorators:
        raise _refuse("class decorators are not supported by autodiff", node.decorators[0], filename)
    if node.keywords:
        raise _refuse("class keyword arguments are not supported by autodiff", node.keywords[0],
                      filename)
    if len(node.bases) != 1 or type(node.bases[0]) is ast.Starred or (
            type(node.bases[0]) is ast.Name and node.bases[0].id == "object"):
        raise _refuse(NEEDS_BASE, node, filename)
    _check_body(node.body, filename)
    scope = class_scope(node.name, node.body, cx.scope)
    cell: list = [None]
    scope.class_cell = cell
    base_node = node.bases[0]
    base = compile_expr(base_node, cx)
    body = compile_block(node.body, cx.inner(scope))
    store, name, rt, nested = compile_store(ast.Name(node.name), cx), node.name, cx.rt, scope.nested
    first = node.body[0] if node.body else None
    doc = first.value.value if type(first) is ast.ExprStmt and type(first.value) is ast.Constant else None
    identity = {"__module__": "__main__", "__qualname__": scope.qualname}
    if doc is not None:
        identity["__doc__"] = doc

    def run(L: dict) -> None:
        made_by = base(L)
        try:
            maker = getattr(made_by, "tg_subclass", None)
        except Exception as exc:  # a stand-in for a name the engine lacks says so
            raise runtime_error(exc, base_node, filename) from None
        if not callable(maker):
            raise runtime_error(Unsupported("", message=NEEDS_BASE), base_node, filename)
        namespace: dict = {OUTER: L} if nested else {}
        body(namespace)  # (methods keep this dict as their enclosing scope's)
        members = {**identity, **{k: v for k, v in namespace.items() if k != OUTER}}
        try:
            cls = maker(name, members)
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
        cell[0] = cls
        rt.classes.append(cls)
        store(L, cls)
    return run


def compile_super_call(node: ast.Call, cx: Context) -> Callable[[dict], Any] | None:
    """`super().NAME(...)` or `super(C, obj).NAME(...)`; None for any other call."""
    inner, attr, filename = node.func.value, node.func.attr, cx.filename
    if not (type(inner) is ast.Call and type(inner.func) is ast.Name and inner.func.id == "super"
            and cx.scope.resolve("super")[0] == "global" and not inner.keywords
            and len(inner.args) in (0, 2) and not any(type(a) is ast.Starred for a in inner.args)):
        return None
    rt = cx.rt
    if inner.args:
        cls_of, obj_of = (compile_expr(a, cx) for a in inner.args)
        zero_args = False
    else:
        scope = cx.scope
        method = scope.kind == FUNCTION and scope.parent is not None and scope.parent.kind == CLASS
        cell = scope.parent.class_cell if method else None
        obj_of = compile_expr(ast.Name(scope.first_param, line=inner.line, col=inner.col,
                                       end_line=inner.end_line, end_col=inner.end_col), cx) \
            if method and scope.first_param else None
        zero_args = True

    def bound_method(L: dict) -> Any:
        try:
            if zero_args:
                if cell is None:
                    raise RuntimeError("super(): __class__ cell not found")
                if obj_of is None:
                    raise RuntimeError("super(): no arguments")
                if cell[0] is None:
                    raise RuntimeError("super(): empty __class__ cell")
                cls, obj = cell[0], obj_of(L)
            else:
                cls, obj = cls_of(L), obj_of(L)
                if not any(cls is made for made in rt.classes):
                    raise Unsupported("super() of a class not made by a class statement")
            if not (isinstance(obj, cls) or (isinstance(obj, type) and issubclass(obj, cls))):
                raise TypeError("super(type, obj): obj must be an instance or subtype of type")
            if attr != "__init__" and (attr.startswith("_") or not rt.policy(obj, attr)):
                raise refuse(obj, attr) if not attr.startswith("_") else \
                    Refused(f"'super' object has no attribute '{attr}'")
            return getattr(super(cls, obj), attr)
        except TgError:
            raise
        except Exception as exc:
            raise runtime_error(exc, inner, filename) from None
    return compile_call_to(bound_method, node, cx)


STATEMENTS[ast.ClassDef] = compile_ClassDef
call_hooks[ast.Attribute] = compile_super_call
