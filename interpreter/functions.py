""".tg functions: `def` (with decorators), `lambda`, and Python's argument binding.

A .tg function is a real Python function (it prints as `<function f at 0x...>`, binds as a
method in a class) whose body is compiled closures. A call binds the arguments into a new
locals dict; the plain case (as many positional arguments as parameters, no keywords) is
one `dict(zip(...))`, everything else goes through `bind`, which follows CPython's rules and
error messages. A function defined inside another scope keeps that scope's dict (`OUTER`).
"""

from __future__ import annotations

from typing import Any, Callable

from autodiff.parser import ast

from .expressions import _DISPATCH as EXPRESSIONS, Context, compile_expr, runtime_error
from .generators import generator_body, is_generator
from .runtime import MAX_CALL_DEPTH, RETURN, RETURN_SLOT, Runtime
from .scopes import CLASS, OUTER, function_scope
from .statements import _DISPATCH as STATEMENTS, compile_block, compile_store


class Signature:
    """A parameter list: `positional` names (the last `len(defaults)` have defaults; the
    first `posonly` of them are positional-only), `kwonly` names, the `*args` and `**kwargs`
    names (or None)."""

    __slots__ = ("positional", "posonly", "kwonly", "varargs", "varkw", "names", "simple")

    def __init__(self, params: tuple) -> None:
        self.positional = tuple(p.name for p in params if p.kind in ("pos", ""))
        self.posonly = sum(1 for p in params if p.kind == "pos")
        self.kwonly = tuple(p.name for p in params if p.kind == "kw")
        self.varargs = next((p.name for p in params if p.kind == "*"), None)
        self.varkw = next((p.name for p in params if p.kind == "**"), None)
        # those a keyword can name
        self.names = frozenset(self.positional[self.posonly:] + self.kwonly)
        self.simple = not (self.kwonly or self.varargs or self.varkw)

    def all_names(self) -> tuple:
        extra = tuple(n for n in (self.varargs, self.varkw) if n is not None)
        return self.positional + self.kwonly + extra


def make_function(rt: Runtime, name: str, qualname: str, sig: Signature, defaults: tuple,
                  kwdefaults: dict, body: Callable[[dict], Any], env: dict | None) -> Callable:
    """A .tg function; `env` is the locals dict of the scope it was made in (None at module
    level or when nothing inside needs it)."""
    params = sig.positional
    nparams = len(params) if sig.simple else -1  # -1: every call goes through `bind`

    def bound(args: tuple, kwargs: dict) -> dict:
        return bind(qualname, sig, defaults, kwdefaults, args, kwargs)

    # two copies, not one with `if env is not None:` inside: a call is the interpreter's
    # hottest path, and most functions close over nothing
    if env is None:
        def tg_function(*args: Any, **kwargs: Any) -> Any:
            if len(args) == nparams and not kwargs:
                local = dict(zip(params, args))
            else:
                local = bound(args, kwargs)
            rt.depth += 1
            try:
                if rt.depth > MAX_CALL_DEPTH:
                    raise RecursionError("maximum recursion depth exceeded")
                if body(local) is RETURN:
                    # popped: a generator (or an inner function) holding these locals would
                    # otherwise keep the result alive, and a generator itself in a cycle
                    return local.pop(RETURN_SLOT)
                return None
            finally:
                rt.depth -= 1
    else:
        def tg_function(*args: Any, **kwargs: Any) -> Any:
            if len(args) == nparams and not kwargs:
                local = dict(zip(params, args))
            else:
                local = bound(args, kwargs)
            local[OUTER] = env
            rt.depth += 1
            try:
                if rt.depth > MAX_CALL_DEPTH:
                    raise RecursionError("maximum recursion depth exceeded")
                if body(local) is RETURN:
                    return local.pop(RETURN_SLOT)
                return None
            finally:
                rt.depth -= 1

    tg_function.__name__ = name
    tg_function.__qualname__ = qualname
    if getattr(body, "tg_generator", False):
        tg_function.tg_generator = True  # torch's grad-mode decorators wrap each of its steps
    tg_function.__module__ = "__main__"  # as Python names a script's functions in its errors
    return tg_function


def bind(qualname: str, sig: Signature, defaults: tuple, kwdefaults: dict, args: tuple,
         kwargs: dict) -> dict:
    """The locals of a call, in CPython's order of checks and with its messages."""
    params = sig.positional
    n = len(params)
    local = dict(zip(params, args))
    if sig.varargs is not None:
        local[sig.varargs] = tuple(args[n:])
    extra: dict | None = {} if sig.varkw is not None else None
    for key, value in kwargs.items():
        if key in sig.names:
            if key in local:
                raise TypeError(f"{qualname}() got multiple values for argument '{key}'")
            local[key] = value
        elif extra is not None:
            extra[key] = value  # (a positional-only name too: `def f(a, /, **kw)`)
        else:
            named = [p for p in params[:sig.posonly] if p in kwargs]
            if named:
                raise TypeError(f"{qualname}() got some positional-only arguments passed as "
                                f"keyword arguments: '{', '.join(named)}'")
            raise TypeError(f"{qualname}() got an unexpected keyword argument '{key}'")
    if len(args) > n and sig.varargs is None:
        raise TypeError(_too_many_positional(qualname, sig, defaults, len(args), local))
    first_default = n - len(defaults)
    missing = [p for p in params[:first_default] if p not in local]
    if missing:
        raise TypeError(_missing(qualname, missing, "positional"))
    for p, d in zip(params[first_default:], defaults):
        if p not in local:
            local[p] = d
    if sig.kwonly:
        missing = []
        for p in sig.kwonly:
            if p not in local:
                if p in kwdefaults:
                    local[p] = kwdefaults[p]
                else:
                    missing.append(p)
        if missing:
            raise TypeError(_missing(qualname, missing, "keyword-only"))
    if extra is not None:
        local[sig.varkw] = extra
    return local


def _too_many_positional(qualname: str, sig: Signature, defaults: tuple, given: int,
                         local: dict) -> str:
    n = len(sig.positional)
    kwonly_given = sum(1 for p in sig.kwonly if p in local)
    if defaults:
        takes, plural = f"from {n - len(defaults)} to {n}", True
    else:
        takes, plural = str(n), n != 1
    kwonly = ""
    if kwonly_given:
        kwonly = (f" positional argument{'s' if given != 1 else ''} (and {kwonly_given} "
                  f"keyword-only argument{'s' if kwonly_given != 1 else ''})")
    were = "was" if given == 1 and not kwonly_given else "were"
    return (f"{qualname}() takes {takes} positional argument{'s' if plural else ''} but "
            f"{given}{kwonly} {were} given")


def _missing(qualname: str, names: list, kind: str) -> str:
    quoted = [f"'{p}'" for p in names]
    if len(quoted) == 1:
        listed = quoted[0]
    elif len(quoted) == 2:
        listed = f"{quoted[0]} and {quoted[1]}"
    else:
        listed = ", ".join(quoted[:-1]) + ", and " + quoted[-1]
    plural = "s" if len(names) != 1 else ""
    return f"{qualname}() missing {len(names)} required {kind} argument{plural}: {listed}"


# ---- compiling `def` and `lambda` ----

def _function_parts(node: ast.Node, params: tuple, cx: Context, name: str):
    """The scope, signature and default-value closures of a def or lambda."""
    sig = Signature(params)
    scope = function_scope(node, sig.all_names(), node.body if type(node) is ast.FunctionDef
                           else (), cx.scope, name, cx.filename)
    if cx.scope.kind == CLASS and sig.positional:
        scope.first_param = sig.positional[0]
    defaults = [compile_expr(p.default, cx) for p in params
                if p.default is not None and p.kind in ("pos", "")]
    kwdefaults = [(p.name, compile_expr(p.default, cx)) for p in params
                  if p.default is not None and p.kind == "kw"]
    return scope, sig, defaults, kwdefaults


def _annotations(node: ast.FunctionDef, cx: Context) -> list:
    """(name, closure) of each annotation, in the order CPython 3.11 evaluates them at def
    time: the positional-or-keyword parameters', the positional-only ones', *args, the
    keyword-only ones', **kwargs, the return annotation."""
    order = {"": 0, "pos": 1, "*": 2, "kw": 3, "**": 4}
    params = sorted((p for p in node.params if p.annotation is not None), key=lambda p: order[p.kind])
    found = [(p.name, compile_expr(p.annotation, cx)) for p in params]
    if node.returns is not None:
        found.append(("return", compile_expr(node.returns, cx)))
    return found


def compile_FunctionDef(node: ast.FunctionDef, cx: Context) -> Callable[[dict], None]:
    decorators = [_decorator(d, cx) for d in node.decorators]
    scope, sig, defaults, kwdefaults = _function_parts(node, node.params, cx, node.name)
    annotations = _annotations(node, cx)
    inner = cx.inner(scope)
    body = generator_body(node.body, inner, scope.qualname) if is_generator(node.body) \
        else compile_block(node.body, inner)
    store, rt, name, qualname = compile_store(ast.Name(node.name), cx), cx.rt, node.name, scope.qualname
    nested, filename = scope.nested, cx.filename

    def run(L: dict) -> None:
        applied = [(d(L), where) for d, where in decorators]
        f = make_function(rt, name, qualname, sig, tuple(d(L) for d in defaults),
                          {k: v(L) for k, v in kwdefaults}, body, L if nested else None)
        if annotations:  # (kept as Python keeps them; no program reads a dunder)
            f.__annotations__ = {k: v(L) for k, v in annotations}
        for decorator, where in reversed(applied):
            try:
                f = decorator(f)
            except Exception as exc:
                raise runtime_error(exc, where, filename) from None
        store(L, f)
    return run


def _decorator(node: ast.Node, cx: Context):
    """(closure giving the decorator, node for its errors); `@staticmethod` in a class body is
    Python's own, which the class then holds (nowhere else can a program reach it)."""
    if cx.scope.kind == CLASS and type(node) is ast.Name and node.id == "staticmethod" \
            and cx.scope.resolve("staticmethod")[0] == "global":
        return (lambda L: staticmethod), node
    return compile_expr(node, cx), node


def compile_Lambda(node: ast.Lambda, cx: Context) -> Callable[[dict], Any]:
    scope, sig, defaults, kwdefaults = _function_parts(node, node.params, cx, "<lambda>")
    value = compile_expr(node.body, cx.inner(scope))
    rt, qualname, nested = cx.rt, scope.qualname, scope.nested

    def body(L: dict) -> str:
        L[RETURN_SLOT] = value(L)
        return RETURN

    def ev(L: dict) -> Callable:
        return make_function(rt, "<lambda>", qualname, sig, tuple(d(L) for d in defaults),
                             {k: v(L) for k, v in kwdefaults}, body, L if nested else None)
    return ev


STATEMENTS[ast.FunctionDef] = compile_FunctionDef
EXPRESSIONS[ast.Lambda] = compile_Lambda
