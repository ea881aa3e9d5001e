"""`class Name(Base):` for the bases the language has, and `super()` in their methods.

The base is `nn.Module`, `torch.autograd.Function` or `torch.utils.data.Dataset` (the engine
classes that define `tg_subclass` themselves), none or `object` (a plain class, made from
ProgramObject), or a class an earlier class statement of the program made. The
class body runs in a namespace dict of its own, like a function body (its names are not
visible inside its methods, as in Python). It may hold only `def` (decorated or not,
`@staticmethod` among them), class attributes (`lr = 0.1`), a docstring and `pass`; no method
or attribute name starting with `_` but
`__init__` and the few special methods Python's machinery calls (PROTOCOL_METHODS: `__len__`,
`__getitem__`, ...). The base then makes the class:

    Base.tg_subclass(name: str, members: dict) -> type

where `members` holds the body's methods (plain .tg functions, or staticmethod objects).
Base is what the program wrote, so `tg_subclass` must never be in any `_tg_public`: a
program could otherwise make a class of members of its choosing. Instances answer for the
attributes a program gives them (`self.fc = ...`) through `_tg_readable`/`_tg_writable`
(see sandbox.py); calling `Name(...)` and `obj(...)` is the class's own business
(`nn.Module.__call__` runs `forward`).

`super().NAME(...)` and `super(Name, self).NAME(...)` are compiled here: `__init__` is the one
name starting with `_` they reach (the engine base's `tg_super_init`, or the `__init__` of
the program's class in between), other names only those the instance lets a program read.
"""

from __future__ import annotations

from types import FunctionType
from typing import Any, Callable

from autodiff.engine.core.program_classes import PROTOCOL_METHODS, ProgramObject
from autodiff.engine.core.unsupported import Unsupported
from autodiff.parser import ast
from autodiff.text.diagnostics import EXIT_SYNTAX, TgError

from .expressions import Context, call_hooks, compile_call_to, compile_expr, runtime_error
from .sandbox import Refused, refuse, unbound_method
from .scopes import CLASS, FUNCTION, OUTER, class_scope
from .statements import _DISPATCH as STATEMENTS, compile_block, compile_store

NEEDS_BASE = ("a class whose base is not object, nn.Module, torch.autograd.Function or "
              "torch.utils.data.Dataset is not supported by autodiff")
_KINDS = {ast.If: "'if' statements", ast.For: "'for' loops", ast.While: "'while' loops",
          ast.With: "'with' statements", ast.Try: "'try' statements", ast.ClassDef: "nested classes",
          ast.Import: "imports", ast.ImportFrom: "imports", ast.AugAssign: "augmented assignments",
          ast.ExprStmt: "expression statements", ast.Return: "'return'", ast.Delete: "'del'",
          ast.Global: "'global'", ast.Nonlocal: "'nonlocal'", ast.Raise: "'raise'",
          ast.Assert: "'assert'", ast.Break: "'break'", ast.Continue: "'continue'",
          ast.Assign: "assignments", ast.AnnAssign: "annotated assignments"}


def _refuse(message: str, node: ast.Node, filename: str) -> TgError:
    return TgError("SyntaxError", message, filename=filename, line=node.line, col=node.col,
                   end_line=node.end_line, end_col=node.end_col, exit_code=EXIT_SYNTAX)


def _check_body(body: tuple, filename: str) -> None:
    for stmt in body:
        kind = type(stmt)
        if kind is ast.FunctionDef:
            if stmt.name.startswith("__") and stmt.name not in PROTOCOL_METHODS:
                raise _refuse(f"the method name '{stmt.name}' is not supported in a class body by "
                              "autodiff (no name starting with '__' but "
                              f"{', '.join(sorted(PROTOCOL_METHODS))})", stmt, filename)
            if stmt.name.startswith(("tg_", "_tg")):  # the engine's class interface
                raise _refuse(f"the method name '{stmt.name}' is not supported in a class body by "
                              "autodiff (names starting with 'tg_' or '_tg' are autodiff's own)", stmt,
                              filename)
        elif kind is ast.ExprStmt and type(stmt.value) is ast.Constant and type(stmt.value.value) is str:
            continue  # a docstring
        elif kind is ast.Assign and all(type(t) is ast.Name for t in stmt.targets) or (
                kind is ast.AnnAssign and type(stmt.target) is ast.Name):
            for target in stmt.targets if kind is ast.Assign else (stmt.target,):
                # a class attribute (`lr = 0.1`, `lr: float = 0.1`, `hidden: int`)
                if target.id.startswith(("__", "_tg", "tg_")):
                    raise _refuse(f"the class attribute name '{target.id}' is not supported by "
                                  "autodiff (names starting with '__', '_tg' or 'tg_')", target,
                                  filename)
        elif kind is not ast.Pass:
            raise _refuse(f"{_KINDS.get(kind, type(stmt).__name__)} are not supported in a class body "
                          "by autodiff", stmt, filename)


def _makes_classes(base: Any, rt: Any) -> bool:
    """nn.Module and autograd.Function themselves, or a class the program made from them."""
    return (isinstance(base, type) and "tg_subclass" in vars(base)
            and base.__module__.startswith("autodiff.")) or any(
        base is made for made in rt.classes)


def compile_ClassDef(node: ast.ClassDef, cx: Context) -> Callable[[dict], None]:
    filename = cx.filename
    if node.decorators:
        raise _refuse("class decorators are not supported by autodiff", node.decorators[0], filename)
    if node.keywords:
        raise _refuse("class keyword arguments are not supported by autodiff", node.keywords[0],
                      filename)
    if len(node.bases) > 1 or node.bases and type(node.bases[0]) is ast.Starred:
        raise _refuse(NEEDS_BASE, node, filename)
    _check_body(node.body, filename)
    scope = class_scope(node.name, node.body, cx.scope)
    cell: list = [None]
    scope.class_cell = cell
    base_node = node.bases[0] if node.bases else node
    base = _plain_base(node, cx) or compile_expr(base_node, cx)
    body = compile_block(node.body, cx.inner(scope))
    store, name, rt, nested = compile_store(ast.Name(node.name), cx), node.name, cx.rt, scope.nested

    def run(L: dict) -> None:
        made_by = base(L)
        if not _makes_classes(made_by, rt):
            raise runtime_error(Unsupported("", message=NEEDS_BASE), base_node, filename)
        namespace: dict = {OUTER: L} if nested else {}
        body(namespace)  # (methods keep this dict as their enclosing scope's)
        members = {k: v for k, v in namespace.items() if k != OUTER}
        try:
            cls = made_by.tg_subclass(name, members)
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
        cell[0] = cls
        rt.classes.append(cls)
        store(L, cls)
    return run


def _plain_base(node: ast.ClassDef, cx: Context) -> Callable[[dict], Any] | None:
    """`class A:` and `class A(object):` (while the program has no `object` of its own): a
    plain class, made from ProgramObject."""
    if not node.bases:
        return lambda L: ProgramObject
    base = node.bases[0]
    if type(base) is ast.Name and base.id == "object" and cx.scope.resolve("object")[0] == "global":
        G = cx.G
        return lambda L: G.get("object", ProgramObject)
    return None


def _super_init(cls: type, obj: Any) -> Callable:
    """`super().__init__` from `cls`: the engine base's setup, or the program's own class's
    `__init__` in between."""
    following = cls.__mro__[1]
    if "tg_super_init" in vars(following) and following.__module__.startswith("autodiff."):
        return lambda *args, **kwargs: following.tg_super_init(obj, *args, **kwargs)
    return getattr(super(cls, obj), "__init__")


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
            if attr == "__init__":
                if isinstance(obj, type):
                    raise TypeError("descriptor '__init__' requires an instance")
                return _super_init(cls, obj)
            if attr.startswith("_") or not rt.policy(obj, attr):
                raise refuse(obj, attr) if not attr.startswith("_") else \
                    Refused(f"'super' object has no attribute '{attr}'")
            found = getattr(super(cls, obj), attr)
            if isinstance(obj, type) and isinstance(found, FunctionType):  # `super(C, C).f`
                return unbound_method(obj.__mro__[obj.__mro__.index(cls) + 1:], attr, found)
            return found
        except TgError:
            raise
        except Exception as exc:
            raise runtime_error(exc, inner, filename) from None
    return compile_call_to(bound_method, node, cx)


STATEMENTS[ast.ClassDef] = compile_ClassDef
call_hooks[ast.Attribute] = compile_super_call
