"""`try`/`except`/`else`/`finally` and `raise`, with Python's semantics.

A run-time error reaches a `try` as a TgError whose `exception` is the Python exception it
stands for (the engine's RuntimeError, a ValueError, ...); an `except` clause matches that
exception as Python would, and `except E as e` binds it, so `print(e)` prints its message.
Errors that stand for a limit of autodiff (an unsupported name, a sandbox refusal, a memory
limit, a timeout) have no `exception` and pass every `except`: PyTorch would not have
raised them, so no program may act on them.
"""

from __future__ import annotations

from typing import Any, Callable

from autodiff.parser import ast
from autodiff.text.diagnostics import TgError

from .expressions import Context, compile_expr, runtime_error
from .statements import _DISPATCH as STATEMENTS, compile_block, compile_delete, compile_store


def _is_exception_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


def _matches(exc: BaseException, classes: Any) -> bool:
    if _is_exception_class(classes) or (
            type(classes) is tuple and all(map(_is_exception_class, classes))):
        return isinstance(exc, classes)
    raise TypeError("catching classes that do not inherit from BaseException is not allowed")


def compile_Try(node: ast.Try, cx: Context) -> Callable[[dict], Any]:
    body, rt, filename = compile_block(node.body, cx), cx.rt, cx.filename
    handlers = []
    for h in node.handlers:
        match = compile_expr(h.type, cx) if h.type is not None else None
        bind = unbind = None
        if h.name is not None:
            name = ast.Name(h.name, line=h.line, col=h.col, end_line=h.line, end_col=h.col)
            bind, unbind = compile_store(name, cx), compile_delete(name, cx, quiet=True)
        handlers.append((match, h.type, bind, unbind, compile_block(h.body, cx)))
    orelse = compile_block(node.orelse, cx) if node.orelse else None
    final = compile_block(node.finalbody, cx) if node.finalbody else None

    def handle(L: dict, error: TgError) -> Any:
        exc = error.exception
        if exc is None:
            raise error
        for match, where, bind, unbind, handler in handlers:
            if match is not None:
                classes = match(L)
                try:
                    if not _matches(exc, classes):
                        continue
                except TypeError as bad:
                    raise runtime_error(bad, where, filename) from None
            rt.handling.append(error)
            try:
                if bind is not None:
                    bind(L, exc)
                return handler(L)
            finally:
                rt.handling.pop()
                if unbind is not None:
                    unbind(L)  # Python deletes the `as` name when the clause ends
        raise error

    def run_handlers(L: dict) -> Any:
        try:
            signal = body(L)
        except TgError as error:
            return handle(L, error)
        if signal is None and orelse is not None:
            return orelse(L)
        return signal

    if final is None:
        return run_handlers

    def run(L: dict) -> Any:
        try:
            signal = run_handlers(L)
        except TgError:
            final_signal = final(L)
            if final_signal is not None:
                return final_signal  # a return, break or continue in `finally` drops the error
            raise
        final_signal = final(L)
        return signal if final_signal is None else final_signal
    return run


def compile_Raise(node: ast.Raise, cx: Context) -> Callable[[dict], Any]:
    rt, filename = cx.rt, cx.filename
    if node.exc is None:
        def reraise(L: dict) -> Any:
            if not rt.handling:
                raise runtime_error(RuntimeError("No active exception to reraise"), node, filename)
            raise rt.handling[-1]
        return reraise
    exc = compile_expr(node.exc, cx)
    cause = compile_expr(node.cause, cx) if node.cause is not None else None

    def run(L: dict) -> Any:
        value = exc(L)
        try:
            if _is_exception_class(value):
                value = value()
            elif not isinstance(value, BaseException):
                raise TypeError("exceptions must derive from BaseException")
            if cause is not None:
                reason = cause(L)
                if not (reason is None or isinstance(reason, BaseException) or _is_exception_class(reason)):
                    raise TypeError("exception causes must derive from BaseException")
        except TgError:
            raise
        except Exception as problem:
            raise runtime_error(problem, node, filename) from None
        raise runtime_error(value, node, filename)
    return run


STATEMENTS[ast.Try] = compile_Try
STATEMENTS[ast.Raise] = compile_Raise
