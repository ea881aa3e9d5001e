"""compile_<Node> for statements: each returns a closure `run(L)` that returns None to go
on, or BREAK / CONTINUE / RETURN (the return value waits in L[RETURN_SLOT])."""

from __future__ import annotations

from itertools import islice
from typing import Any, Callable

from autodiff.engine.core.unsupported import Unsupported
from autodiff.parser import ast
from autodiff.text.diagnostics import EXIT_SYNTAX, TgError

from . import bounds
from .expressions import INPLACE, Context, compile_expr, guarded, load_compiler, runtime_error
from .runtime import BREAK, CONTINUE, RETURN, RETURN_SLOT
from .sandbox import get_attribute, set_attribute
from .scopes import COMPREHENSION, FUNCTION, OUTER

Run = Callable[[dict], Any]

def compile_block(body: tuple, cx: Context) -> Run:
    stmts = tuple((_DISPATCH.get(type(s)) or load_compiler(type(s), _DISPATCH))(s, cx) for s in body)
    if len(stmts) == 1:
        return stmts[0]

    def run(L: dict) -> Any:
        for stmt in stmts:
            signal = stmt(L)
            if signal is not None:
                return signal
        return None
    return run


# ---- assignment targets: closures `store(L, value)` ----

def compile_store(target: ast.Node, cx: Context) -> Callable[[dict, Any], None]:
    filename = cx.filename
    if isinstance(target, ast.Name):
        name, G = target.id, cx.G
        where, hops = cx.scope.resolve(name)
        if where == "global":
            def store_global(L: dict, value: Any) -> None:
                G[name] = value
            return store_global
        if where == "free":
            def store_free(L: dict, value: Any) -> None:
                env = L
                for _ in range(hops):
                    env = env[OUTER]
                env[name] = value
            return store_free

        def store_local(L: dict, value: Any) -> None:
            L[name] = value
        return store_local
    if isinstance(target, ast.Attribute):
        obj, attr, rt = compile_expr(target.value, cx), target.attr, cx.rt

        def store_attr(L: dict, value: Any) -> None:
            o = obj(L)
            try:
                set_attribute(o, attr, value, rt.policy)
            except Exception as exc:
                raise runtime_error(exc, target, filename) from None
        return store_attr
    if isinstance(target, ast.Subscript):
        obj, index = compile_expr(target.value, cx), compile_expr(target.index, cx)

        def store_item(L: dict, value: Any) -> None:
            o = obj(L)
            key = index(L)
            try:
                o[key] = value
            except Exception as exc:
                raise runtime_error(exc, target, filename) from None
        return store_item
    if any(type(e) is ast.Starred for e in target.elts):
        return _starred_unpack(target, cx)
    stores = [compile_store(e, cx) for e in target.elts]  # Tuple or List
    n = len(stores)

    def unpack(L: dict, value: Any) -> None:
        it = _unpacked(value, target, filename)
        try:  # one item past the count, as CPython takes: an endless iterator ends there
            items = list(islice(it, n + 1))
        except Exception as exc:
            raise runtime_error(exc, target, filename) from None
        if len(items) != n:
            msg = (f"too many values to unpack (expected {n})" if len(items) > n
                   else f"not enough values to unpack (expected {n}, got {len(items)})")
            raise runtime_error(ValueError(msg), target, filename)
        for store, item in zip(stores, items):
            store(L, item)
    return unpack


def _unpacked(value: Any, target: ast.Node, filename: str):
    try:
        return iter(value)
    except TypeError:
        raise runtime_error(TypeError(f"cannot unpack non-iterable {type(value).__name__} object"),
                            target, filename) from None


def _starred_unpack(target: ast.Node, cx: Context) -> Callable[[dict, Any], None]:
    """`a, *rest, z = value`: the starred target takes a list of what the others leave (the
    parser allows one starred target); that list is bounded as other list-building is."""
    star = next(i for i, e in enumerate(target.elts) if type(e) is ast.Starred)
    before = [compile_store(e, cx) for e in target.elts[:star]]
    rest = compile_store(target.elts[star].value, cx)
    after = [compile_store(e, cx) for e in target.elts[star + 1:]]
    need, filename = len(before) + len(after), cx.filename

    def unpack(L: dict, value: Any) -> None:
        it = _unpacked(value, target, filename)
        try:
            items = list(islice(it, len(before)))
            if len(items) == len(before):
                items.extend(bounds.collected(it, "starred assignment", len(items)))
        except Exception as exc:
            raise runtime_error(exc, target, filename) from None
        if len(items) < need:
            raise runtime_error(ValueError(f"not enough values to unpack (expected at least {need}, "
                                           f"got {len(items)})"), target, filename)
        for store, item in zip(before, items):
            store(L, item)
        end = len(items) - len(after)
        rest(L, items[len(before):end])
        for store, item in zip(after, items[end:]):
            store(L, item)
    return unpack


def compile_delete(target: ast.Node, cx: Context, quiet: bool = False) -> Callable[[dict], None]:
    """`del target`: a closure `delete(L)`; `quiet` deletes a name that may be unbound."""
    filename = cx.filename
    if isinstance(target, ast.Name):
        name, G = target.id, cx.G
        where, hops = cx.scope.resolve(name)
        missing: BaseException = NameError(f"name '{name}' is not defined")
        if where == "local":
            missing = UnboundLocalError(f"cannot access local variable '{name}' where it is not "
                                        "associated with a value")
        elif where == "free":
            missing = NameError(f"cannot access free variable '{name}' where it is not associated "
                                "with a value in enclosing scope")

        def delete_name(L: dict) -> None:
            env = G if where == "global" else L
            for _ in range(hops):
                env = env[OUTER]
            if name in env:
                del env[name]
            elif not quiet:
                raise runtime_error(missing, target, filename)
        return delete_name
    if isinstance(target, ast.Subscript):
        obj, index = compile_expr(target.value, cx), compile_expr(target.index, cx)

        def delete_item(L: dict) -> None:
            o = obj(L)
            key = index(L)
            try:
                del o[key]
            except Exception as exc:
                raise runtime_error(exc, target, filename) from None
        return delete_item
    if isinstance(target, ast.Attribute):
        def delete_attribute(L: dict) -> None:
            raise runtime_error(Unsupported("deleting an attribute ('del x.name')"), target, filename)
        return delete_attribute
    deletes = [compile_delete(e, cx) for e in target.elts]  # Tuple or List

    def delete_each(L: dict) -> None:
        for delete in deletes:
            delete(L)
    return delete_each


def compile_Delete(node: ast.Delete, cx: Context) -> Run:
    deletes = [compile_delete(t, cx) for t in node.targets]
    if len(deletes) == 1:
        return deletes[0]

    def run(L: dict) -> None:
        for delete in deletes:
            delete(L)
    return run


# ---- simple statements ----

def compile_ExprStmt(node: ast.ExprStmt, cx: Context) -> Run:
    value = compile_expr(node.value, cx)

    def run(L: dict) -> None:
        value(L)
    return run


def compile_Assign(node: ast.Assign, cx: Context) -> Run:
    value = compile_expr(node.value, cx)
    stores = [compile_store(t, cx) for t in node.targets]
    if len(stores) == 1:
        store, = stores
        if isinstance(node.targets[0], ast.Name) and cx.scope.resolve(node.targets[0].id)[0] == "global":
            G, name = cx.G, node.targets[0].id

            def run_global(L: dict) -> None:
                G[name] = value(L)
            return run_global

        def run1(L: dict) -> None:
            store(L, value(L))
        return run1

    def run(L: dict) -> None:
        v = value(L)
        for store in stores:
            store(L, v)
    return run


def compile_AnnAssign(node: ast.AnnAssign, cx: Context) -> Run:
    """`target: annotation [= value]` as CPython runs it: the assignment first; then, at module
    and class level only, the annotation is evaluated (not kept: no program reads
    `__annotations__`). Without a value a name binds nothing, and an attribute's object or a
    subscript's object and index are evaluated."""
    target = node.target
    steps = []
    if node.value is not None:
        value, store = compile_expr(node.value, cx), compile_store(target, cx)
        steps.append(lambda L: store(L, value(L)))
    elif type(target) is ast.Attribute:
        steps.append(compile_expr(target.value, cx))
    elif type(target) is ast.Subscript:
        steps += [compile_expr(target.value, cx), compile_expr(target.index, cx)]
    if cx.scope.kind not in (FUNCTION, COMPREHENSION):
        steps.append(compile_expr(node.annotation, cx))

    def run(L: dict) -> None:
        for step in steps:
            step(L)
    return run


def compile_AugAssign(node: ast.AugAssign, cx: Context) -> Run:
    op, value, target, filename = INPLACE[node.op], compile_expr(node.value, cx), node.target, cx.filename
    if isinstance(target, ast.Name):
        load, store = compile_expr(target, cx), compile_store(target, cx)

        def run_name(L: dict) -> None:
            current = load(L)
            v = value(L)
            try:
                result = op(current, v)
            except Exception as exc:
                raise runtime_error(exc, node, filename) from None
            store(L, result)
        return run_name
    obj = compile_expr(target.value, cx)
    if isinstance(target, ast.Attribute):
        attr, rt = target.attr, cx.rt
        key_of: Callable[[dict], Any] = lambda L: attr  # noqa: E731
        get = lambda o, k: get_attribute(o, k, rt.policy)  # noqa: E731
        put = lambda o, k, v: set_attribute(o, k, v, rt.policy)  # noqa: E731
    else:
        key_of = compile_expr(target.index, cx)
        get = lambda o, k: o[k]  # noqa: E731
        put = lambda o, k, v: o.__setitem__(k, v)  # noqa: E731

    def run(L: dict) -> None:
        o = obj(L)
        k = key_of(L)
        v = value(L)
        try:
            put(o, k, op(get(o, k), v))
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
    return run


def compile_Pass(node: ast.Pass, cx: Context) -> Run:
    return lambda L: None


compile_Global = compile_Nonlocal = compile_Pass  # declarations: the scope analysis used them


def _outside_loop(node: ast.Node, cx: Context, word: str) -> None:
    if cx.loops == 0:
        raise TgError("SyntaxError", f"'{word}' outside loop", filename=cx.filename, line=node.line,
                      col=node.col, end_col=node.end_col, exit_code=EXIT_SYNTAX)


def compile_Break(node: ast.Break, cx: Context) -> Run:
    _outside_loop(node, cx, "break")
    return lambda L: BREAK


def compile_Continue(node: ast.Continue, cx: Context) -> Run:
    _outside_loop(node, cx, "continue")
    return lambda L: CONTINUE


def compile_loop_body(body: tuple, cx: Context) -> Run:
    cx.loops += 1
    try:
        return compile_block(body, cx)
    finally:
        cx.loops -= 1


def compile_Return(node: ast.Return, cx: Context) -> Run:
    if cx.scope.kind not in (FUNCTION, COMPREHENSION):
        raise TgError("SyntaxError", "'return' outside function", filename=cx.filename, line=node.line,
                      col=node.col, end_col=node.end_col, exit_code=EXIT_SYNTAX)
    value = compile_expr(node.value, cx) if node.value is not None else (lambda L: None)

    def run(L: dict) -> str:
        L[RETURN_SLOT] = value(L)
        return RETURN
    return run


def compile_Assert(node: ast.Assert, cx: Context) -> Run:
    test = compile_expr(node.test, cx)
    msg = compile_expr(node.msg, cx) if node.msg is not None else None
    filename = cx.filename

    def run(L: dict) -> None:
        if not test(L):
            exc = AssertionError(msg(L)) if msg is not None else AssertionError()
            raise runtime_error(exc, node.test, filename)
    return guarded(node.test, cx, run)


# ---- compound statements ----

def _truth(test: ast.Node, cx: Context) -> Callable[[dict], bool]:
    """`test`'s truth; the truth test itself can fail (a tensor of several elements)."""
    value, filename = compile_expr(test, cx), cx.filename

    def truth(L: dict) -> bool:
        try:
            return True if value(L) else False
        except TgError:
            raise
        except Exception as exc:
            raise runtime_error(exc, test, filename) from None
    return truth


def compile_If(node: ast.If, cx: Context) -> Run:
    # an `elif` chain is If nodes nested in `orelse`: compiled as one flat list of branches,
    # so a chain of any length costs no recursion
    branches = []
    while True:
        branches.append((_truth(node.test, cx), compile_block(node.body, cx)))
        orelse = node.orelse
        if len(orelse) == 1 and type(orelse[0]) is ast.If:
            node = orelse[0]
            continue
        break
    final = compile_block(orelse, cx) if orelse else (lambda L: None)
    if len(branches) == 1:
        (test, body), = branches
        return lambda L: body(L) if test(L) else final(L)

    def run(L: dict) -> Any:
        for test, body in branches:
            if test(L):
                return body(L)
        return final(L)
    return run


def compile_While(node: ast.While, cx: Context) -> Run:
    test, body = compile_expr(node.test, cx), compile_loop_body(node.body, cx)

    def run(L: dict) -> Any:
        while test(L):
            signal = body(L)
            if signal is not None:
                if signal is BREAK:
                    break
                if signal is RETURN:
                    return signal
        return None
    return guarded(node.test, cx, run)


def compile_For(node: ast.For, cx: Context) -> Run:
    iterable, body, filename = compile_expr(node.iter, cx), compile_loop_body(node.body, cx), cx.filename
    store = compile_store(node.target, cx)

    def run(L: dict) -> Any:
        seq = iterable(L)
        try:
            it = iter(seq)
        except Exception as exc:
            raise runtime_error(exc, node.iter, filename) from None
        for item in it:
            store(L, item)
            signal = body(L)
            if signal is not None:
                if signal is BREAK:
                    break
                if signal is RETURN:
                    return signal
        return None
    return guarded(node.iter, cx, run)


def enter_context(manager: Any, node: ast.With, filename: str) -> tuple[Any, Callable]:
    """`with manager:` entered: (what `as` binds, the manager's __exit__), or Python's error."""
    try:
        entered = manager.__enter__()  # only the interpreter calls dunders, never the program
        return entered, manager.__exit__
    except AttributeError:
        raise runtime_error(TypeError(f"'{type(manager).__name__}' object does not support the "
                                      "context manager protocol"), node.context, filename) from None
    except Exception as exc:
        raise runtime_error(exc, node.context, filename) from None


def compile_With(node: ast.With, cx: Context) -> Run:
    context, body, filename = compile_expr(node.context, cx), compile_block(node.body, cx), cx.filename
    store = compile_store(ast.Name(node.name), cx) if node.name else None

    def run(L: dict) -> Any:
        entered, exit_ = enter_context(context(L), node, filename)
        try:
            if store is not None:
                store(L, entered)
            signal = body(L)
        except BaseException as exc:
            if not exit_(type(exc), exc, exc.__traceback__):
                raise
            return None
        exit_(None, None, None)
        return signal
    return run


_DISPATCH = {cls: globals()[f"compile_{cls.__name__}"] for cls in (
    ast.ExprStmt, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass, ast.Break, ast.Continue, ast.Return,
    ast.Assert, ast.If, ast.While, ast.For, ast.With, ast.Global, ast.Nonlocal, ast.Delete)}
