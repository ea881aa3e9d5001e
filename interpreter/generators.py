"""Generator functions: a `def` whose body holds a `yield` statement.

The body is compiled by `compile_block`, as every function's is, and runs in a greenlet of
its own: a host stack that can be left and resumed. `yield` is then a statement like the
others: it hands its value to whoever resumed the generator and waits there, so a `yield`
inside a loop, `with` or `try` needs no second compilation of those statements. Calling the
function binds its arguments and returns a `generator` that runs nothing until it is first
resumed, so a program's prints and a training loop's updates interleave as in Python.

The greenlet never reaches the program: it sees a `generator` with `send`, `throw` and
`close`. Each resume runs in the resumer's contextvars context (the engine session), as
Python's generators do, and counts as a call for the recursion bound; the deadline and
Ctrl-C raise inside whichever stack is running and leave through the resumer.

`yield` is a statement here (`yield v`, a bare `yield`, `yield from values`); a `yield`
inside an expression is refused by the parser, so a value sent in is dropped as Python
drops it at a `yield` statement.
"""

from __future__ import annotations

import signal
import sys
import threading
import weakref
from typing import Any, Callable

from autodiff.parser import ast
from autodiff.text.diagnostics import EXIT_SYNTAX, TgError

from .deadline import ProgramStopped
from .expressions import Context, compile_expr, runtime_error
from .runtime import MAX_CALL_DEPTH, RETURN, RETURN_SLOT, Runtime
from .scopes import FUNCTION, statements_of
from .statements import _DISPATCH as STATEMENTS, compile_block


greenlet = getcurrent = GreenletExit = greenlet_error = None  # bound by _load_greenlet


def _load_greenlet() -> None:
    """Import greenlet when a program first defines a generator function: loading it costs
    start-up time that programs without one need not pay."""
    global greenlet, getcurrent, GreenletExit, greenlet_error
    if greenlet is None:
        from greenlet import GreenletExit, getcurrent, greenlet  # noqa: PLC0415
        from greenlet import error as greenlet_error  # noqa: PLC0415


def is_generator(body: tuple) -> bool:
    """Whether a function body holds a `yield` of its own (not one of a nested def)."""
    return any(type(s) is ast.Yield for s in statements_of(body))


class _Thrown:
    """What `throw()` and `close()` resume a generator with: the exception to raise at the
    `yield` it waits in (no program value can be one)."""

    __slots__ = ("exception",)

    def __init__(self, exception: BaseException) -> None:
        self.exception = exception


class ProgramGenerator:
    """What calling a generator function returns: Python's `generator` as a program sees it
    (it prints as `<generator object f at 0x...>`, its type as `<class 'generator'>`)."""

    __slots__ = ("_body", "_locals", "_greenlet", "_rt", "_qualname", "_state", "__weakref__")
    _tg_public = frozenset({"send", "throw", "close"})

    def __init__(self, body: Callable, L: dict, rt: Runtime, qualname: str) -> None:
        self._body, self._locals, self._rt, self._qualname = body, L, rt, qualname
        self._greenlet: Any = None  # (a greenlet, once started)
        self._state = _CREATED

    def __iter__(self) -> "ProgramGenerator":
        return self

    def __next__(self) -> Any:
        return self._resume(None)

    def send(self, value: Any) -> Any:
        if self._state is _CREATED and value is not None:
            raise TypeError("can't send non-None value to a just-started generator")
        return self._resume(value)

    def throw(self, kind: Any, value: Any = None, traceback: Any = None) -> Any:
        exc = _exception_of(kind, value)
        if self._state is not _SUSPENDED and self._state is not _RUNNING:
            self._finish()  # (a generator that never ran ends without running)
            raise exc
        return self._resume(_Thrown(exc))

    def close(self) -> None:
        if self._state is not _SUSPENDED:
            if self._state is not _RUNNING:
                self._finish()
                return None
        try:
            self._resume(_Thrown(GeneratorExit()))
        except TgError as error:
            if isinstance(error.exception, GeneratorExit):
                return None
            raise
        except StopIteration:
            return None
        raise RuntimeError("generator ignored GeneratorExit")

    def _resume(self, sent: Any) -> Any:
        """One step: run the body until its next `yield` (its value returned) or its end
        (StopIteration, with the return value), resumed with `sent`."""
        if self._state is not _SUSPENDED:
            sent = self._start(sent)  # (the first step, or none: running, finished)
        rt = self._rt
        if rt.depth >= MAX_CALL_DEPTH:  # as CPython's: raised in the generator, which ends
            self._finish()
            raise RecursionError("maximum recursion depth exceeded")
        gr, caller = self._greenlet, getcurrent()
        if gr.parent is not caller:
            gr.parent = caller
        context = caller.gr_context  # the resumer's contextvars: its engine session
        if gr.gr_context is not context:
            gr.gr_context = context
        rt.depth += 1
        self._state = _RUNNING
        try:
            value = gr.switch(sent)
        except TgError as error:
            self._finish(gr)
            if isinstance(error.exception, StopIteration):
                raise _escaped_stop(error) from None
            raise
        except greenlet_error:  # (resumed in another thread than its own: it stays as it was)
            self._state = _SUSPENDED
            raise
        except BaseException:
            self._finish(gr)
            raise
        finally:
            rt.depth -= 1
        if type(value) is _Returned:
            self._finish(gr)
            value = value.value
            raise StopIteration if value is None else StopIteration(value)
        self._state = _SUSPENDED
        return value

    def _start(self, sent: Any) -> Any:
        """What a resume of a generator not suspended does: the first one takes a worker
        greenlet, which is sent the body; a finished generator raises as Python's does."""
        state = self._state
        if state is _RUNNING:
            raise ValueError("generator already executing")
        if state is _FINISHED:
            if type(sent) is _Thrown:
                raise sent.exception
            raise StopIteration
        self._greenlet = _worker(self._rt.depth)
        task, self._locals, self._body = (self._body, self._locals), None, None
        # closed at the program's end if left suspended (a plain dict of weak references,
        # each entry dropped by _finish: cheaper than a WeakValueDictionary's callbacks)
        self._rt.generators[id(self)] = weakref.ref(self)
        return task

    def _finish(self, worker: Any = None) -> None:
        """No more steps. A worker that ended the body waits for the next one; one that
        did not (its stack left by a stop) is dropped, and greenlet unwinds it."""
        self._rt.generators.pop(id(self), None)
        self._state, self._greenlet, self._locals, self._body = _FINISHED, None, None, None
        if worker is not None and worker.__dict__.get("idle") and worker.shallow \
                and not worker.dead:
            _idle(worker)

    def _abandon(self) -> None:
        """Drop a suspended generator without running more of it (the program was stopped):
        its stack unwinds with no `finally` of the program run."""
        self._finish()

    def __del__(self) -> None:
        # Python closes a generator dropped unfinished (its `finally` and `with` exits run)
        if self._state is not _SUSPENDED or sys.is_finalizing():
            return
        try:
            self.close()
        except Exception:  # noqa: BLE001 - Python reports it as "ignored" and goes on
            pass
        except BaseException as stop:  # a stop can't leave __del__: it is raised again
            _raise_later(stop, self._rt)

    def __repr__(self) -> str:
        return f"<generator object {self._qualname} at 0x{id(self):x}>"

    def tg_type_name(self) -> str:
        return "generator"


_CREATED, _SUSPENDED, _RUNNING, _FINISHED = "created", "suspended", "running", "finished"

# Python's own messages name the class ("object of type 'generator' has no len()")
ProgramGenerator.__name__ = ProgramGenerator.__qualname__ = "generator"


class _Returned:
    """A worker's word that the body ended, with its `return` value (StopIteration's)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _work(task: tuple) -> None:
    """A worker greenlet's life: run one generator's body after another (making a greenlet
    costs more than running a small generator). An error of the body is raised in the
    resumer, the worker waiting for its next body; a kill (GreenletExit) ends it. `idle`
    says the worker is between bodies, so that it may run another."""
    me = getcurrent()
    while True:
        me.idle = False
        body, L = task
        task = None
        try:
            value = L.pop(RETURN_SLOT, None) if body(L) is RETURN else None
        except GreenletExit:
            raise
        except BaseException as exc:
            body = L = None
            me.idle = True
            task = me.parent.throw(type(exc), exc, exc.__traceback__)
            continue
        body = L = None
        me.idle = True
        task = me.parent.switch(_Returned(value))


_pool = threading.local()  # each thread's idle workers (a greenlet runs in its own thread)
_IDLE_MAX = 8
# A new greenlet keeps, for its life, the Python recursion depth of its first switch: one
# started under deep recursion would give every later generator that little headroom (and
# CPython aborts a stack overflow met while it raises RecursionError), so only workers
# started this few calls deep go back to the pool.
_SHALLOW = 20


def _worker(depth: int) -> Any:
    """An idle worker, or a new one (its first switch follows, at `depth` program calls)."""
    idle = getattr(_pool, "idle", None)
    if idle:
        return idle.pop()
    worker = greenlet(_work)
    worker.shallow = depth <= _SHALLOW
    return worker


def _idle(worker: Any) -> None:
    idle = getattr(_pool, "idle", None)
    if idle is None:
        idle = _pool.idle = []
    if len(idle) < _IDLE_MAX:
        idle.append(worker)


def _exception_of(kind: Any, value: Any) -> BaseException:
    """What `throw(kind[, value])` raises, by Python's rules."""
    if isinstance(kind, BaseException):
        if value is not None:
            raise TypeError("instance exception may not have a separate value")
        return kind
    if isinstance(kind, type) and issubclass(kind, BaseException):
        if isinstance(value, kind):
            return value
        return kind() if value is None else kind(*value) if type(value) is tuple else kind(value)
    raise TypeError("exceptions must be classes or instances deriving from BaseException, "
                    f"not {type(kind).__name__}")


def _raise_later(stop: BaseException, rt: Runtime) -> None:
    """A timeout or Ctrl-C met while a dropped generator closed can't leave __del__: the run
    raises it when the program ends, and a timeout's alarm rings again at once, so the
    program stops at its next step."""
    rt.stopped = stop
    if isinstance(stop, ProgramStopped) and threading.current_thread() is threading.main_thread() \
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0 \
            and signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None):
        signal.setitimer(signal.ITIMER_REAL, 1e-3)


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
    a generator that will run the compiled body on the call's locals."""
    _load_greenlet()
    block, rt = compile_block(body, cx), cx.rt

    def start(L: dict) -> str:
        L[RETURN_SLOT] = ProgramGenerator(block, L, rt, qualname)
        return RETURN
    start.tg_generator = True  # (make_function marks the function: decorators look for it)
    return start


def close_generators(rt: Runtime, names: dict) -> None:
    """The program's end: each generator it left suspended is closed, as CPython 3.11 closes
    them when a script ends (run without site hooks, which can reorder it): first those a
    global names itself, in the globals' order; then, again in the globals' order, those a
    global holds: a list's or tuple's last item first, a dict's or an object's (of the
    program's classes) attributes in their order; then the rest, oldest first. An error of
    one is ignored, as Python's is."""
    direct: list = []
    held: list = []
    for value in list(names.values()):
        if type(value) is ProgramGenerator:
            direct.append(value)
        elif type(value) in (list, tuple):
            held.extend(v for v in reversed(value) if type(v) is ProgramGenerator)
        elif type(value) is dict:
            held.extend(v for v in value.values() if type(v) is ProgramGenerator)
        elif any(type(value) is made for made in rt.classes):
            attributes = getattr(value, "__dict__", None)
            if type(attributes) is dict:
                held.extend(v for v in attributes.values() if type(v) is ProgramGenerator)
    started = [ref() for ref in list(rt.generators.values())]
    for generator in direct + held + [g for g in started if g is not None]:
        try:
            generator.close()  # (once closed, a generator's close does nothing)
        except Exception:  # noqa: BLE001 - Python reports it as "ignored" and goes on
            pass
    rt.generators.clear()


def abandon_generators(rt: Runtime) -> None:
    """A stopped program's generators: none of them runs again (not even when dropped)."""
    for ref in list(rt.generators.values()):
        generator = ref()
        if generator is not None:
            generator._abandon()
    rt.generators.clear()


def _suspend(value: Any) -> Any:
    """Leave the generator's stack with `value`; what it is resumed with comes back (None,
    a value sent, or a _Thrown). A kill of the greenlet itself (dropped abandoned) passes
    every `except` and `finally` of the program."""
    return getcurrent().parent.switch(value)


def compile_Yield(node: ast.Yield, cx: Context) -> Callable[[dict], Any]:
    if cx.scope.kind != FUNCTION:
        raise TgError("SyntaxError", "'yield' outside function", filename=cx.filename,
                      line=node.line, col=node.col, end_line=node.end_line,
                      end_col=node.end_col, exit_code=EXIT_SYNTAX)
    filename = cx.filename
    value = compile_expr(node.value, cx) if node.value is not None else (lambda L: None)
    if not node.delegate:
        def run(L: dict) -> None:
            sent = getcurrent().parent.switch(value(L))  # (_suspend, inlined: the hot path)
            if type(sent) is _Thrown:
                raise runtime_error(sent.exception, node, filename)
        return run
    source_node = node.value

    def delegate(L: dict) -> None:
        source = value(L)
        try:
            items = iter(source)
        except Exception as exc:
            raise runtime_error(exc, source_node, filename) from None
        sent = None
        while True:
            try:
                if sent is None:
                    item = next(items)
                elif type(sent) is _Thrown:
                    item = _throw_into(items, sent.exception, node, filename)
                else:
                    item = items.send(sent)
            except StopIteration:
                return None
            except TgError:
                raise
            except Exception as exc:
                raise runtime_error(exc, source_node, filename) from None
            sent = _suspend(item)
    return delegate


def _throw_into(items: Any, exc: BaseException, node: ast.Node, filename: str) -> Any:
    """`yield from`'s part of a throw() or close() (PEP 380): an inner generator gets it
    first (close() closes it); an iterator that can't take it leaves it to the delegating
    generator, raised at its `yield from`."""
    inner = type(items) is ProgramGenerator or type(items).__name__ == "generator"
    if inner and not isinstance(exc, GeneratorExit):
        return items.throw(exc)
    if inner:
        items.close()
    raise runtime_error(exc, node, filename)


STATEMENTS[ast.Yield] = compile_Yield
