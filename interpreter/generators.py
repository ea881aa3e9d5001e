"""Generator functions: a `def` whose body holds a `yield` statement.

Such a body is compiled a second way: each statement that holds a `yield` becomes a Python
generator function `run(L)` that yields the program's values and returns the statement's
signal (None, BREAK, CONTINUE or RETURN), the signal its ordinary closure would return.
Statements without a `yield` keep their ordinary closures. Calling the function binds its
arguments and returns a `generator` that runs nothing until it is first iterated, so a
program's prints and a training loop's updates interleave as they do in Python.

`yield` is a statement here (`yield v`, a bare `yield`, `yield from values`); a `yield`
inside an expression is refused by the parser, and one inside `try` when it is reached.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from autodiff.engine.core.unsupported import Unsupported
from autodiff.parser import ast
from autodiff.text.diagnostics import EXIT_SYNTAX, TgError

from .expressions import Context, compile_expr, runtime_error
from .runtime import BREAK, MAX_CALL_DEPTH, RETURN, RETURN_SLOT, Runtime
from .scopes import statements_of
from .statements import _DISPATCH as STATEMENTS, _truth, compile_block, compile_store, enter_context

Steps = Callable[[dict], Iterator]  # a generator function of the locals


def is_generator(body: tuple) -> bool:
    """Whether a function body holds a `yield` of its own (not one of a nested def)."""
    return any(type(s) is ast.Yield for s in statements_of(body))


class ProgramGenerator:
    """What calling a generator function returns: Python's `generator` as a program sees it
    (it prints as `<generator object f at 0x...>`, its type as `<class 'generator'>`; it
    iterates and has no attribute). Each step counts as a call, so a generator that
    delegates to itself stops as Python's recursion does."""

    __slots__ = ("_steps", "_rt", "_qualname")

    def __init__(self, steps: Iterator, rt: Runtime, qualname: str) -> None:
        self._steps, self._rt, self._qualname = steps, rt, qualname

    def __iter__(self) -> "ProgramGenerator":
        return self

    def __next__(self) -> Any:
        rt = self._rt
        rt.depth += 1
        try:
            if rt.depth > MAX_CALL_DEPTH:
                raise RecursionError("maximum recursion depth exceeded")
            return next(self._steps)
        except TgError as error:
            if isinstance(error.exception, StopIteration):
                raise _escaped_stop(error) from None
            raise
        finally:
            rt.depth -= 1

    def __repr__(self) -> str:
        return f"<generator object {self._qualname} at 0x{id(self):x}>"

    def tg_type_name(self) -> str:
        return "generator"


# Python's own messages name the class ("object of type 'generator' has no len()")
ProgramGenerator.__name__ = ProgramGenerator.__qualname__ = "generator"


def _escaped_stop(error: TgError) -> TgError:
    """Python's error for a StopIteration leaving a generator's body (PEP 479), where it
    was raised."""
    message = "generator raised StopIteration"
    changed = TgError("RuntimeError", message, filename=error.filename, line=error.line,
                      col=error.col, end_line=error.end_line, end_col=error.end_col,
                      exit_code=error.exit_code)
    changed.exception = RuntimeError(message)
    return changed


def generator_body(body: tuple, cx: Context, qualname: str) -> Callable[[dict], str]:
    """The body of a generator function, as `make_function` runs one: it returns (RETURN)
    a generator over the compiled statements, which keeps the call's locals."""
    steps, rt = _block(body, cx, returns=True), cx.rt

    def start(L: dict) -> str:
        L[RETURN_SLOT] = ProgramGenerator(steps(L), rt, qualname)
        return RETURN
    start.tg_generator = True  # (make_function marks the function: decorators look for it)
    return start


def _block(body: tuple, cx: Context, returns: bool = False) -> Steps:
    """The steps of a statement list; `returns`: the function's own body, whose `return v`
    ends the generator with v (StopIteration's value), as Python's does."""
    parts = []
    for stmt in body:
        if _holds_yield(stmt):
            parts.append((True, _RESUMABLE[type(stmt)](stmt, cx)))
        else:
            parts.append((False, compile_block((stmt,), cx)))

    def run(L: dict) -> Iterator:
        for resumable, part in parts:
            signal = (yield from part(L)) if resumable else part(L)
            if signal is not None:
                # (a function body's only signal is RETURN: break/continue need a loop)
                return L.pop(RETURN_SLOT, None) if returns else signal
        return None
    return run


def _holds_yield(stmt: ast.Node) -> bool:
    return any(type(s) is ast.Yield for s in statements_of((stmt,)))


def _loop_block(body: tuple, cx: Context) -> Steps:
    cx.loops += 1
    try:
        return _block(body, cx)
    finally:
        cx.loops -= 1


def _python_errors_at(node: ast.Node, cx: Context, steps: Steps) -> Steps:
    """`guarded` for a generator: a Python error of its own code becomes a TgError at `node`."""
    filename = cx.filename

    def run(L: dict) -> Iterator:
        try:
            return (yield from steps(L))
        except TgError:
            raise
        except Exception as exc:
            raise runtime_error(exc, node, filename) from None
    return run


def _resumable_Yield(node: ast.Yield, cx: Context) -> Steps:
    value = compile_expr(node.value, cx) if node.value is not None else (lambda L: None)
    if not node.delegate:
        def run(L: dict) -> Iterator:
            yield value(L)
            return None
        return run
    filename = cx.filename

    def delegate(L: dict) -> Iterator:
        source = value(L)
        try:
            items = iter(source)
        except Exception as exc:
            raise runtime_error(exc, node.value, filename) from None
        while True:
            try:
                item = next(items)
            except StopIteration:
                return None
            except TgError:
                raise
            except Exception as exc:
                raise runtime_error(exc, node.value, filename) from None
            yield item
    return delegate


def _resumable_If(node: ast.If, cx: Context) -> Steps:
    branches = []
    while True:
        branches.append((_truth(node.test, cx), _block(node.body, cx)))
        orelse = node.orelse
        if len(orelse) == 1 and type(orelse[0]) is ast.If:
            node = orelse[0]
            continue
        break
    final = _block(orelse, cx)

    def run(L: dict) -> Iterator:
        for test, body in branches:
            if test(L):
                return (yield from body(L))
        return (yield from final(L))
    return run


def _resumable_loop(items: Callable[[dict], Iterator], store, body: Steps) -> Steps:
    """A loop's steps: the body once per item (stored first, when `store`), with the signals
    a loop body returns (break, continue, return) acted on as the ordinary loops do."""
    def run(L: dict) -> Iterator:
        for item in items(L):
            if store is not None:
                store(L, item)
            signal = yield from body(L)
            if signal is not None:
                if signal is BREAK:
                    break
                if signal is RETURN:
                    return signal
        return None
    return run


def _resumable_While(node: ast.While, cx: Context) -> Steps:
    test = compile_expr(node.test, cx)

    def rounds(L: dict) -> Iterator:
        while test(L):
            yield None
    return _python_errors_at(node.test, cx, _resumable_loop(rounds, None, _loop_block(node.body, cx)))


def _resumable_For(node: ast.For, cx: Context) -> Steps:
    iterable = compile_expr(node.iter, cx)
    loop = _resumable_loop(lambda L: iter(iterable(L)), compile_store(node.target, cx),
                           _loop_block(node.body, cx))
    return _python_errors_at(node.iter, cx, loop)


def _resumable_With(node: ast.With, cx: Context) -> Steps:
    context, body, filename = compile_expr(node.context, cx), _block(node.body, cx), cx.filename
    store = compile_store(ast.Name(node.name), cx) if node.name else None

    def run(L: dict) -> Iterator:
        entered, exit_ = enter_context(context(L), node, filename)
        try:
            if store is not None:
                store(L, entered)
            signal = yield from body(L)
        except BaseException as exc:  # (GeneratorExit too: an unfinished generator closed)
            if not exit_(type(exc), exc, exc.__traceback__):
                raise
            return None
        exit_(None, None, None)
        return signal
    return run


def _resumable_Try(node: ast.Try, cx: Context) -> Steps:
    filename = cx.filename

    def run(L: dict) -> Iterator:
        raise runtime_error(Unsupported("'yield' inside 'try'"), node, filename)
        yield  # (makes this a generator function)
    return run


_RESUMABLE = {ast.Yield: _resumable_Yield, ast.If: _resumable_If, ast.While: _resumable_While,
              ast.For: _resumable_For, ast.With: _resumable_With, ast.Try: _resumable_Try}


def compile_Yield(node: ast.Yield, cx: Context) -> Callable[[dict], Any]:
    """A `yield` outside a function body (a function's are compiled by `generator_body`)."""
    raise TgError("SyntaxError", "'yield' outside function", filename=cx.filename, line=node.line,
                  col=node.col, end_line=node.end_line, end_col=node.end_col, exit_code=EXIT_SYNTAX)


STATEMENTS[ast.Yield] = compile_Yield
