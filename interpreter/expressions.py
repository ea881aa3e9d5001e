"""compile_<Node> for expressions: each returns a closure `ev(L) -> value`.

`L` is the current locals dict (the globals dict at module level). Each closure that can
fail turns a Python exception into a TgError positioned at its own node; an error that is
already a TgError came from an inner node and passes through untouched.
"""

from __future__ import annotations

import io
import operator
from typing import Any, Callable

from autodiff.parser import ast
from autodiff.text.diagnostics import EXIT_LIMIT, EXIT_RUNTIME, EXIT_SYNTAX, TgError
from autodiff.parser.precedence import MAX_EXPR_DEPTH

from . import bounds, reserve
from .pybuiltins import missing_builtin
from .sandbox import Refused, attribute_reader
from .scopes import MODULE, OUTER, Scope, module_scope

Eval = Callable[[dict], Any]

BINOPS = {"+": operator.add, "-": operator.sub, "*": bounds.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": bounds.power, "@": operator.matmul,
          "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": bounds.lshift,
          ">>": operator.rshift}
INPLACE = {"+": bounds.iadd, "-": operator.isub, "*": bounds.imul, "/": operator.itruediv,
           "//": operator.ifloordiv, "%": bounds.imod, "**": bounds.ipow, "@": operator.imatmul,
           "&": operator.iand, "|": operator.ior, "^": operator.ixor, "<<": bounds.ilshift,
           ">>": operator.irshift}
UNARY = {"-": operator.neg, "+": operator.pos, "~": operator.invert, "not": operator.not_}
COMPARE = {"<": operator.lt, ">": operator.gt, "==": operator.eq, "!=": operator.ne,
           "<=": operator.le, ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
           "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}


# Python's classes its tracebacks name with their module (a file's `io.UnsupportedOperation`)
_PYTHON_QUALIFIED = {io.UnsupportedOperation: "io.UnsupportedOperation"}


def runtime_error(exc: BaseException, node: ast.Node, filename: str) -> TgError:
    """A Python exception as a TgError at `node`; `exception` keeps it for `except` clauses,
    unless it stands for a limit of autodiff rather than an error PyTorch would raise too.
    An error already placed in the program (raised by its code that Python's machinery ran:
    a class's `__getitem__` under `obj[i]`) keeps its place, the innermost, as Python's does."""
    if isinstance(exc, TgError):
        return exc
    if isinstance(exc, (MemoryError, SystemError)) and reserve.exhausted(exc):
        reserve.release()  # the limit is met: what follows (unwinding, diagnostic) needs room
        exc = exc if isinstance(exc, MemoryError) else MemoryError()
    placed = getattr(exc, "placed", None)  # (a program's IndexError, seen by Python's machinery)
    if isinstance(placed, TgError):
        return placed
    message = str(exc) if not isinstance(exc, KeyError) else repr(exc.args[0]) if exc.args else ""
    limit = isinstance(exc, (MemoryError, bounds.LimitReached))  # ours, not the program's mistake
    unsupported = getattr(exc, "tg_unsupported", False)
    error = TgError(getattr(exc, "tg_error_class", None) or _PYTHON_QUALIFIED.get(type(exc))
                    or type(exc).__name__, message,
                    filename=filename, line=node.line, col=node.col, end_line=node.end_line,
                    end_col=node.end_col,
                    exit_code=EXIT_SYNTAX if unsupported else EXIT_LIMIT if limit else EXIT_RUNTIME)
    if not (unsupported or limit or isinstance(exc, Refused)
            or getattr(exc, "tg_uncatchable", False)):
        error.exception = exc
    return error


class Context:
    """Compile-time facts: the scope being compiled, and the run-time objects closures capture."""

    def __init__(self, filename: str, G: dict, B: dict, rt: Any, modules: dict,
                 scope: Scope | None = None):
        self.filename, self.G, self.B, self.rt, self.modules = filename, G, B, rt, modules
        self.scope = scope if scope is not None else module_scope()
        self.depth = 0
        self.loops = 0  # how many loops enclose the code being compiled (for break/continue)

    @property
    def at_module_level(self) -> bool:
        return self.scope.kind == MODULE

    def inner(self, scope: Scope) -> "Context":
        """The context of a nested scope (a function, lambda, comprehension or class body)."""
        cx = Context(self.filename, self.G, self.B, self.rt, self.modules, scope)
        cx.depth = self.depth
        return cx


def compile_expr(node: ast.Node, cx: Context) -> Eval:
    cx.depth += 1
    try:
        if cx.depth > MAX_EXPR_DEPTH:
            raise TgError("SyntaxError", "expression nested too deeply", filename=cx.filename,
                          line=node.line, col=node.col, end_col=node.col + 1, exit_code=EXIT_SYNTAX)
        compiler = _DISPATCH.get(type(node)) or load_compiler(type(node), _DISPATCH)
        return compiler(node, cx)
    finally:
        cx.depth -= 1


# Constructs whose compilers load with their first use: a program without them pays nothing.
_LAZY = {"ClassDef": "classes", "Try": "exceptions", "Raise": "exceptions",
         "ListComp": "comprehensions", "SetComp": "comprehensions", "DictComp": "comprehensions",
         "GeneratorExp": "comprehensions", "FunctionDef": "functions", "Lambda": "functions",
         "Import": "imports", "ImportFrom": "imports", "Yield": "generators"}


def load_compiler(kind: type, table: dict) -> Callable:
    """Import the module that compiles `kind` (it registers itself in `table`)."""
    import importlib  # noqa: PLC0415

    importlib.import_module(f"{__package__}.{_LAZY[kind.__name__]}")
    return table[kind]


def guarded(node: ast.Node, cx: Context, fn: Eval) -> Eval:
    """Wrap a closure so a Python error becomes a TgError at `node` (zero cost when none)."""
    filename = cx.filename

    def ev(L: dict) -> Any:
        try:
            return fn(L)
        except TgError:
            raise
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
    return ev


def compile_Constant(node: ast.Constant, cx: Context) -> Eval:
    value = node.value
    return lambda L: value


def compile_Name(node: ast.Node, cx: Context) -> Eval:
    name, G, B, filename = node.id, cx.G, cx.B, cx.filename
    where, hops = cx.scope.resolve(name)
    if where == "local":
        def ev_local(L: dict) -> Any:
            try:
                return L[name]
            except KeyError:
                raise runtime_error(UnboundLocalError(
                    f"cannot access local variable '{name}' where it is not associated with a value"),
                    node, filename) from None
        return ev_local
    if where == "free":
        return _free_load(node, hops, filename)

    def ev_global(L: dict) -> Any:
        try:
            return G[name]
        except KeyError:
            try:
                return B[name]
            except KeyError:
                raise runtime_error(missing_builtin(name) or NameError(f"name '{name}' is not defined"),
                                    node, filename) from None
    if where != "class":
        return ev_global
    fallback = cx.scope.enclosing(name)  # a class body reads its own namespace first
    outer = _free_load(node, fallback[1], filename) if fallback[0] == "free" else ev_global

    def ev_class(L: dict) -> Any:
        try:
            return L[name]
        except KeyError:
            return outer(L)
    return ev_class


def _free_load(node: ast.Name, hops: int, filename: str) -> Eval:
    """A variable of an enclosing function, `hops` scopes out."""
    name = node.id

    def ev_free(L: dict) -> Any:
        env = L
        for _ in range(hops):
            env = env[OUTER]
        try:
            return env[name]
        except KeyError:
            raise runtime_error(NameError(
                f"cannot access free variable '{name}' where it is not associated with a value "
                "in enclosing scope"), node, filename) from None
    return ev_free


def _binary(node: ast.Node, op: Callable[[Any, Any], Any], left: Eval, right: Eval,
            filename: str) -> Eval:
    """`op(left, right)`, an error placed at `node` (a binary operator or one comparison)."""
    def ev(L: dict) -> Any:
        a = left(L)
        b = right(L)
        try:
            return op(a, b)
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
    return ev


def compile_BinOp(node: ast.BinOp, cx: Context) -> Eval:
    left, right, filename = compile_expr(node.left, cx), compile_expr(node.right, cx), cx.filename
    if node.op in SIZE_CHECKED:
        return _size_checked(node, left, right, filename, *SIZE_CHECKED[node.op])
    return _binary(node, BINOPS[node.op], left, right, filename)


# Operators whose result can be huge for some operand types (bounds.py checks them first):
# the left operand's types, the right one's, the checked operator, the plain one.
_INTS_AND_SEQUENCES = frozenset({int, list, tuple, str})
SIZE_CHECKED = {"+": (bounds.SEQUENCES, frozenset(), bounds.add, operator.add),
                "*": (_INTS_AND_SEQUENCES, _INTS_AND_SEQUENCES, bounds.mul, operator.mul),
                "%": (frozenset({str}), frozenset(), bounds.mod, operator.mod)}


def _size_checked(node: ast.Node, left: Eval, right: Eval, filename: str, left_types,
                  right_types, checked: Callable, plain: Callable) -> Eval:
    """`+`, `*` and `%`, the commonest operators: the checks run only for the operand types
    that need them (a tensor times a float goes straight to the tensor)."""
    def ev(L: dict) -> Any:
        a = left(L)
        b = right(L)
        try:
            if type(a) in left_types or type(b) in right_types:
                return checked(a, b)
            return plain(a, b)
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
    return ev


def compile_UnaryOp(node: ast.UnaryOp, cx: Context) -> Eval:
    op, operand, filename = UNARY[node.op], compile_expr(node.operand, cx), cx.filename

    def ev(L: dict) -> Any:
        v = operand(L)
        try:
            return op(v)
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
    return ev


def compile_BoolOp(node: ast.BoolOp, cx: Context) -> Eval:
    first, *rest = [compile_expr(v, cx) for v in node.values]
    want = node.op == "or"  # `or` stops at the first truthy value, `and` at the first falsy one

    def ev(L: dict) -> Any:
        v = first(L)
        for f in rest:
            if bool(v) is want:
                return v
            v = f(L)
        return v
    return guarded(node, cx, ev)


def compile_Compare(node: ast.Compare, cx: Context) -> Eval:
    left = compile_expr(node.left, cx)
    pairs = [(COMPARE[op], compile_expr(c, cx)) for op, c in zip(node.ops, node.comparators)]
    filename = cx.filename
    if len(pairs) == 1:
        (op, right), = pairs
        return _binary(node, op, left, right, filename)

    def ev(L: dict) -> Any:
        a = left(L)
        result: Any = True
        for op, right in pairs:
            b = right(L)
            result = op(a, b)
            if not result:
                return result
            a = b
        return result
    return guarded(node, cx, ev)


def compile_IfExp(node: ast.IfExp, cx: Context) -> Eval:
    test, body, orelse = (compile_expr(n, cx) for n in (node.test, node.body, node.orelse))
    return guarded(node.test, cx, lambda L: body(L) if test(L) else orelse(L))


def compile_List(node: ast.List, cx: Context) -> Eval:
    if any(type(e) is ast.Starred for e in node.elts):
        return guarded(node, cx, _unpacking_display(node, cx, "[*x]", "list", list))
    elts = [compile_expr(e, cx) for e in node.elts]
    return lambda L: [e(L) for e in elts]


def compile_Tuple(node: ast.Tuple, cx: Context) -> Eval:
    if any(type(e) is ast.Starred for e in node.elts):
        return guarded(node, cx, _unpacking_display(node, cx, "(*x,)", "tuple", tuple))
    elts = [compile_expr(e, cx) for e in node.elts]
    return lambda L: tuple([e(L) for e in elts])


def compile_items(nodes, cx: Context) -> list[tuple[bool, Eval]]:
    """(starred, closure) per item of a display or a call's positional arguments (`*xs`)."""
    return [(type(e) is ast.Starred, compile_expr(e.value if type(e) is ast.Starred else e, cx))
            for e in nodes]


def _unpacking_display(node: ast.Node, cx: Context, what: str, kind: str, make: type) -> Eval:
    """`[a, *b]`, `(*a, b)`, `{*a, b}`: the items in order, each `*iterable` bounded as
    other list-building is; a set's error for a non-iterable is CPython's own (SET_UPDATE)."""
    elts = compile_items(node.elts, cx)

    def ev(L: dict) -> Any:
        items: list = []
        for starred, elt in elts:
            value = elt(L)
            if not starred:
                items.append(value)
                continue
            try:
                it = iter(value)
            except TypeError:
                if kind == "set":
                    raise
                raise TypeError(f"Value after * must be an iterable, not {type(value).__name__}") \
                    from None
            items.extend(bounds.collected(it, what, len(items), kind))
        return make(items)
    return ev


def compile_Dict(node: ast.Dict, cx: Context) -> Eval:
    if any(k is None for k in node.keys):
        return guarded(node, cx, _unpacking_dict(node, cx))
    pairs = [(compile_expr(k, cx), compile_expr(v, cx)) for k, v in zip(node.keys, node.values)]
    return guarded(node, cx, lambda L: {k(L): v(L) for k, v in pairs})


def _unpacking_dict(node: ast.Dict, cx: Context) -> Eval:
    """`{**a, 'k': v}`: entries in order, later keys winning; `**` takes a dict, as in calls."""
    pairs = [(None if k is None else compile_expr(k, cx), compile_expr(v, cx))
             for k, v in zip(node.keys, node.values)]

    def ev(L: dict) -> dict:
        made: dict = {}
        for key, value in pairs:
            if key is not None:
                k = key(L)
                made[k] = value(L)
                continue
            mapping = value(L)
            if not isinstance(mapping, dict):
                raise TypeError(f"'{type(mapping).__name__}' object is not a mapping")
            made.update(mapping)
        return made
    return ev


def compile_Set(node: ast.Set, cx: Context) -> Eval:
    if any(type(e) is ast.Starred for e in node.elts):
        return guarded(node, cx, _unpacking_display(node, cx, "{*x}", "set", set))
    elts = [compile_expr(e, cx) for e in node.elts]
    return guarded(node, cx, lambda L: {e(L) for e in elts})


def compile_Starred(node: ast.Starred, cx: Context) -> Eval:
    """`*x` where only a display, a call or an assignment target may hold it."""
    raise TgError("SyntaxError", "can't use starred expression here", filename=cx.filename,
                  line=node.line, col=node.col, end_line=node.end_line, end_col=node.end_col,
                  exit_code=EXIT_SYNTAX)


def compile_Slice(node: ast.Slice, cx: Context) -> Eval:
    parts = [compile_expr(p, cx) if p is not None else (lambda L: None)
             for p in (node.lower, node.upper, node.step)]
    lower, upper, step = parts
    return lambda L: slice(lower(L), upper(L), step(L))


def compile_Attribute(node: ast.Attribute, cx: Context) -> Eval:
    value, rt, filename = compile_expr(node.value, cx), cx.rt, cx.filename
    name = node.attr
    read = attribute_reader(name)
    cached = read.cached

    def ev(L: dict) -> Any:
        obj = value(L)
        try:
            if type(obj) is cached[0] and rt.policy is cached[1]:
                return getattr(obj, name)
            return read(obj, rt.policy)
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
    return ev


def compile_Subscript(node: ast.Subscript, cx: Context) -> Eval:
    value, index, filename = compile_expr(node.value, cx), compile_expr(node.index, cx), cx.filename

    def ev(L: dict) -> Any:
        obj = value(L)
        key = index(L)
        try:
            return obj[key]
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
    return ev


def compile_Call(node: ast.Call, cx: Context) -> Eval:
    special = call_hooks.get(type(node.func))
    if special is not None:
        found = special(node, cx)
        if found is not None:
            return found
    return compile_call_to(compile_expr(node.func, cx), node, cx)


def compile_call_to(func: Eval, node: ast.Call, cx: Context) -> Eval:
    """The call `node` of what `func` evaluates to, with `node`'s arguments."""
    if any(type(a) is ast.Starred for a in node.args) or any(k.arg is None for k in node.keywords):
        from .calls import unpacking_call  # noqa: PLC0415 - loaded by the first `*`/`**` call

        return guarded(node, cx, unpacking_call(node, func, cx))
    args = [compile_expr(a, cx) for a in node.args]
    kwargs = [(k.arg, compile_expr(k.value, cx)) for k in node.keywords]
    refused = _refused_call(node, cx)  # (only a call that raised runs it: no cost otherwise)
    by_name = _positional_by_name(node, cx)
    # fixed-arity forms keep Python-to-Python calls cheap (and off the C stack)
    if not kwargs and len(args) == 0:
        def call(L: dict) -> Any:
            f = func(L)
            try:
                return f()
            except Exception as exc:
                refused(exc, f, L, (), {})
                raise
    elif not kwargs and len(args) == 1:
        a0, = args

        def call(L: dict) -> Any:
            f = func(L)
            x = a0(L)
            try:
                return f(x)
            except Exception as exc:
                refused(exc, f, L, (x,), {})
                raise
    elif not kwargs and len(args) == 2:
        a0, a1 = args

        def call(L: dict) -> Any:
            f = func(L)
            x = a0(L)
            y = a1(L)
            try:
                return f(x, y)
            except Exception as exc:
                refused(exc, f, L, (x, y), {})
                raise
    else:
        if _torch_keywords(kwargs):  # `axis=`, `keepdims=`, `out=`
            from autodiff.engine.tensors.torch_keywords import call as invoke  # noqa: PLC0415
        else:
            invoke = _invoke

        def call(L: dict) -> Any:
            f = func(L)
            pos, kw = [a(L) for a in args], {k: v(L) for k, v in kwargs}
            try:
                return invoke(f, pos, kw)
            except Exception as exc:
                placed = by_name(exc, f, L, pos, kw)  # torch's names of positional parameters
                if placed is None:
                    refused(exc, f, L, tuple(pos), kw)
                    raise
            given = tuple(pos), kw  # (torch's parser words its errors from the call as written)
            pos, kw = placed
            try:
                return invoke(f, pos, kw)
            except Exception as exc:
                refused(exc, f, L, *given)
                raise

    return guarded(node, cx, call)


def _invoke(f, pos: list, kw: dict) -> Any:
    return f(*pos, **kw)


def _call_owner(node: ast.Call, cx: Context):
    """(name, closure reading its owner) of a call `owner.name(...)`, for the error paths
    that word or mend a refused call as torch's parser would; (None, None) for other calls."""
    name = node.func.attr if type(node.func) is ast.Attribute else None
    owner = compile_expr(node.func.value, cx) if name and type(node.func.value) is ast.Name \
        else None

    def namespace(L: dict):
        try:
            return owner(L) if owner is not None else None
        except Exception:  # noqa: BLE001 - the name is read again only to word or place
            return None
    return name, namespace


def _refused_call(node: ast.Call, cx: Context) -> Callable:
    """A check for a call that raised: `torch.name(...)` or `tensor.name(...)` whose
    arguments torch's parser refuses raises torch's TypeError (engine/core/signatures.py) in
    place of the engine's error; any other error is left to propagate."""
    name, namespace = _call_owner(node, cx)

    def refused(exc: Exception, f, L: dict, pos: tuple, kw: dict) -> None:
        if name is None or isinstance(exc, TgError):
            return
        from autodiff.engine.core.signatures import call_error  # noqa: PLC0415 - an error path

        error = call_error(exc, f, name, namespace(L), pos, kw)
        if error is not exc:
            raise error from None
    return refused


def _positional_by_name(node: ast.Call, cx: Context) -> Callable:
    """For a call `owner.name(..., key=value)` that raised: the arguments with torch's names
    of positional parameters moved into place (engine/torch_keywords.by_position), or None."""
    name, namespace = _call_owner(node, cx)

    def by_name(exc: Exception, f, L: dict, pos: list, kw: dict):
        if name is None or isinstance(exc, TgError):
            return None
        from autodiff.engine.tensors.torch_keywords import by_position  # noqa: PLC0415 - an error path

        return by_position(exc, f, name, namespace(L), pos, kw)
    return by_name


def _torch_keywords(kwargs: list) -> bool:
    from autodiff.engine.tensors.torch_keywords import NAMES  # noqa: PLC0415 - the engine loads on first run

    return any(k in NAMES for k, _ in kwargs)


# Calls the interpreter compiles itself (`super().__init__(...)`), by the type of the called
# expression: a hook returns a closure, or None to compile the call as any other.
call_hooks: dict[type, Callable[[ast.Call, Context], Eval | None]] = {}


def compile_FString(node: ast.FString, cx: Context) -> Eval:
    parts = [(p, None) if isinstance(p, str) else ("", compile_FormattedValue(p, cx)) for p in node.parts]
    filename = cx.filename

    def ev(L: dict) -> str:
        pieces = [text if f is None else f(L) for text, f in parts]
        try:
            bounds.check_pieces(pieces)
        except MemoryError as exc:
            raise runtime_error(exc, node, filename) from None
        return "".join(pieces)
    return ev


def compile_FormattedValue(node: ast.FormattedValue, cx: Context) -> Eval:
    value = compile_expr(node.value, cx)
    spec = compile_FString(node.spec, cx) if node.spec is not None else (lambda L: "")
    convert = {None: None, "r": repr, "s": str, "a": ascii}[node.conversion]

    def ev(L: dict) -> str:
        v = value(L)
        if convert is not None:
            v = bounds.text(v, "an f-string", convert)
        return bounds.formatted(v, spec(L), "an f-string")
    return guarded(node, cx, ev)


_DISPATCH = {cls: globals()[f"compile_{cls.__name__}"] for cls in (
    ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.List,
    ast.Tuple, ast.Slice, ast.Attribute, ast.Subscript, ast.Call, ast.FString, ast.Dict, ast.Set,
    ast.Starred)}
