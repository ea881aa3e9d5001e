"""Run .tg programs: compile the AST once into closures, then run them. `Program` is the one
runner: `autodiff run`, the views (with `watch_assignments`, reporting each top-level binding
to the session's observers), `test` and the REPL (interactive.py, one input at a time) all
run through its set-up and `execute`.

    result = run_source(text, "prog.tg")      # never raises TgError: see result.error
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from typing import Any, TextIO

from autodiff.parser import ast, parse
from autodiff.text.diagnostics import EXIT_RUNTIME, TgError

from .assignments import WatchedGlobals, bound_names, first_assignments, watched_body
from .expressions import Context
from .runtime import MathNamespace, Runtime, make_builtins
from .stdlib import std_modules
from .sandbox import AttributePolicy, default_policy, permissive_policy
from .scopes import check_module_declarations
from .statements import compile_block
from .deadline import Deadline, DeadlinePassed, ProgramStopped, node_of, timeout_message
from .stdlib.system import SystemExitStop
from .warnings_hook import ProgramWarnings

__all__ = ["Program", "RunResult", "compile_program", "run_source", "default_modules", "execute",
           "MathNamespace", "default_policy", "permissive_policy", "TgError", "bound_names",
           "first_assignments", "report_error"]

# A .tg call runs as a few nested Python calls of the compiled closures, so MAX_CALL_DEPTH
# program calls need far more than Python's default 1,000 frames. The limit is one per
# process and changing it while another thread compiles Python code makes CPython 3.11's
# compile() fail ("AST constructor recursion depth mismatch"), so it is raised once, when
# the interpreter is first imported, and never lowered (tests/test_interpreter.py runs
# programs in eight threads at once).
_RECURSION_LIMIT = 40_000
if sys.getrecursionlimit() < _RECURSION_LIMIT:
    sys.setrecursionlimit(_RECURSION_LIMIT)


class RunResult:
    """What a run left."""

    def __init__(self, globals: dict[str, Any], error: TgError | None = None,
                 assigned_lines: dict[str, int] | None = None) -> None:
        self.globals = globals  # top-level names in first-assignment order
        self.error = error
        # name -> line of its first assignment
        self.assigned_lines = {} if assigned_lines is None else assigned_lines


def default_modules(rt: Runtime | None = None) -> dict[str, Any]:
    """The engine's torch and its submodules, plus Python's math and the standard modules of
    stdlib/ (safe parts) for the run `rt`."""
    from autodiff.engine import api  # noqa: PLC0415 - imported on first run, not at import time
    return {"torch": api.torch, "torch.nn": api.nn, "torch.nn.functional": api.functional,
            "torch.nn.init": api.nn.init, "torch.optim": api.optim_namespace,
            "torch.autograd": api.autograd, "torch.autograd.functional": api.autograd.functional,
            "torch.autograd.graph": api.autograd.graph,
            "torch.func": api.func, "functorch": api.functorch, "torch.utils": api.utils, "torch.utils.data": api.utils.data,
            "torch.linalg": api.linalg,
            "math": MathNamespace(), **std_modules(Runtime() if rt is None else rt)}


def new_session(**settings: Any):
    """The engine session a run starts with: a new process's state (grad mode on, the
    default random stream), the limits and observers of the session around it."""
    from autodiff.engine.core.session import current  # noqa: PLC0415 - the engine loads on first run

    return current().for_run(**settings)


class Program:
    """A compiled program. Closures capture this program's globals, builtins and runtime.

    With `watch_assignments`, each top-level binding is reported to the run's observers
    (`Observer.assigned`, engine/core/observer.py); the program is still compiled once."""

    def __init__(self, module: ast.Module, filename: str = "<stdin>", source: str = "", *,
                 watch_assignments: bool = False) -> None:
        self.filename = filename
        self.source = source
        self.globals: dict[str, Any] = WatchedGlobals() if watch_assignments else {}
        self.builtins: dict[str, Any] = {}
        self.modules: dict[str, Any] = {}
        self.rt = Runtime()
        self.context = Context(filename, self.globals, self.builtins, self.rt, self.modules)
        check_module_declarations(module.body, filename)
        if watch_assignments:
            self.body = watched_body(module.body, lambda s: compile_block((s,), self.context),
                                     self.globals)
        else:
            self.body = compile_block(module.body, self.context)
        self.assigned_lines = first_assignments(module.body)

    def prepare(self, *, out: TextIO | None = None, modules: dict[str, Any] | None = None,
                attribute_policy: AttributePolicy | None = None) -> None:
        """A fresh program state: the modules, builtins and globals a run starts with."""
        self.rt.out = sys.stdout if out is None else out
        self.rt.policy = attribute_policy or default_policy
        self.rt.depth = 0
        self.rt.handling = []
        self.rt.classes = []
        self.rt.generators.clear()
        self.rt.stopped = None
        self.modules.clear()
        self.rt.filename = self.filename
        self.modules.update(default_modules(self.rt) if modules is None else modules)
        self.modules.setdefault("math", MathNamespace())
        for name, module in std_modules(self.rt).items() if modules is not None else ():
            self.modules.setdefault(name, module)
        self.builtins.clear()
        self.builtins.update(make_builtins(self.rt))
        if not self.filename.startswith("<"):  # a script's __file__: its absolute path (3.9+)
            self.builtins["__file__"] = os.path.abspath(self.filename)
        self.watch(None)
        self.globals.clear()
        self.globals["torch"] = self.modules.get("torch")  # the contract prepends `import torch`

    def watch(self, session: Any) -> None:
        """Report the program's bindings to `session`'s observers (None: to nobody)."""
        if isinstance(self.globals, WatchedGlobals):
            self.globals.observers = None if session is None else session.observers

    def run(self, *, out: TextIO | None = None, modules: dict[str, Any] | None = None,
            attribute_policy: AttributePolicy | None = None, err: TextIO | None = None,
            timeout: float | None = None, session: Any = None) -> RunResult:
        self.prepare(out=out, modules=modules, attribute_policy=attribute_policy)
        self.rt.err = err
        session = new_session(timeout=timeout) if session is None else session
        self.watch(session)
        try:
            _, error = execute(self._whole_program, session=session, timeout=timeout,
                               filename=self.filename, source=self.source, err=err)
        finally:
            self.watch(None)
        if self.rt.generators:  # stopped with generators suspended: they never run again
            from .generators import abandon_generators  # noqa: PLC0415

            abandon_generators(self.rt)
        result = RunResult(dict(self.globals), error, dict(self.assigned_lines))
        if error is not None:
            error.scope = result.globals  # the values a hint may name (interpreter/hints.py)
        return result


    def _whole_program(self) -> None:
        """The body, then what Python does at the end of a script, an error's end too: close
        the generators left suspended (their `finally` blocks run)."""
        try:
            self.body(self.globals)
        except SystemExitStop as stop:  # `sys.exit()`: the end of the program
            if stop.exit_code or stop.message:
                raise
        except TgError:
            self._close_generators()
            raise
        self._close_generators()
        if self.rt.stopped is not None:  # (a dropped generator's close was stopped)
            raise self.rt.stopped

    def _close_generators(self) -> None:
        if self.rt.generators:
            from .generators import close_generators  # noqa: PLC0415

            close_generators(self.rt, self.globals)


def execute(action, *, session: Any, timeout: float | None, filename: str, source: str,
            err: TextIO | None) -> tuple[Any, TgError | None]:
    """Run compiled program code, `action()`, as every run does (a whole program, or one
    REPL input against the globals it keeps): in `session`, under the deadline, with the
    program's warnings shown as Python shows them. Returns (its value, None) or (None, the
    program's error, positioned): a stop at a limit or the deadline, Python's own recursion
    limit and a TgError all end the same way whoever runs the code."""
    value, error = _stopped(action, session=session, timeout=timeout, filename=filename,
                            source=source, err=err)
    if error is not None:
        report_error(session, error)
    return value, error


def report_error(session: Any, error: TgError) -> None:
    """Tell the session's observers that the run (or one input) stopped with `error`."""
    observe = session.observers.error
    if observe is not None:
        observe(error)


def _stopped(action, *, session, timeout, filename, source, err) -> tuple[Any, TgError | None]:
    try:
        with session.active(), _gc_for_graphs(), Deadline(timeout), \
                ProgramWarnings(filename, source, err):
            return action(), None
    except TgError as exc:
        return None, exc
    except ProgramStopped as stop:
        node, message = stop.node, stop.message
        if isinstance(stop, DeadlinePassed):  # raised in this thread by a timer thread
            node = node_of(stop)  # (an enclosing deadline's, when this run has none)
            message = timeout_message(timeout) if timeout else stop.message
        error = TgError(stop.error_class, message, filename=filename,
                        line=node.line if node else 0, col=node.col if node else 0,
                        end_line=node.end_line if node else None,
                        end_col=node.end_col if node else None, exit_code=stop.exit_code)
        # the stopped program's frames live as long as the error: freeing gigabytes
        # would delay the diagnostic past the guard's grace
        error.__cause__ = stop
        return None, error
    except RecursionError:  # Python's own limit, outside any positioned node
        return None, TgError("RecursionError", "maximum recursion depth exceeded",
                             filename=filename, line=1, col=1, exit_code=EXIT_RUNTIME)


class _gc_for_graphs:
    """Autograd graphs are many small objects without cycles (refcounting frees them); the
    default GC threshold would rescan them every 700 allocations. Scan far less often while
    any run is going; the first run to start saves the host's setting, the last to end puts
    it back (runs in several threads overlap)."""

    _lock = threading.Lock()
    _running = 0
    _saved: tuple = ()

    def __enter__(self) -> None:
        cls = _gc_for_graphs
        with cls._lock:
            if cls._running == 0:
                cls._saved = gc.get_threshold()
                gc.set_threshold(50_000, 20, 100)
            cls._running += 1

    def __exit__(self, *exc: object) -> None:
        cls = _gc_for_graphs
        with cls._lock:
            cls._running -= 1
            if cls._running == 0:
                gc.set_threshold(*cls._saved)


def compile_program(module_ast: ast.Module, filename: str = "<stdin>",
                    source: str = "", *, watch_assignments: bool = False) -> Program:
    """Compile once; raises TgError (exit code 2) for constructs rejected at compile time."""
    return Program(module_ast, filename, source, watch_assignments=watch_assignments)


def run_source(source: str, filename: str = "<stdin>", *, out: TextIO | None = None,
               err: TextIO | None = None, modules: dict[str, Any] | None = None,
               attribute_policy: AttributePolicy | None = None,
               timeout: float | None = None, session: Any = None,
               watch_assignments: bool = False) -> RunResult:
    """Parse, compile and run. Program errors come back in RunResult.error, never raised
    (observers of `session` see a compile error too); warnings the program triggers are
    written to `err` (default stderr)."""
    try:
        program = compile_program(parse(source, filename), filename, source,
                                  watch_assignments=watch_assignments)
    except TgError as exc:
        if session is not None:
            report_error(session, exc)
        return RunResult({}, exc)
    return program.run(out=out, err=err, modules=modules, attribute_policy=attribute_policy,
                       timeout=timeout, session=session)
