"""Every binding of a top-level name to a tensor, with the line that made it.

A program's globals live in one dict that its compiled statements store into; the views
run the program with that dict replaced by a `BindingLog`, which notes each tensor bound
and the line of the assignment doing it (`y = x*2` at line 3, then `y = y + 1` at line 4:
both, in order). Tensors are held weakly, except the last one each line bound to each name
(so an earlier binding can still be shown while its node is in the graph): memory stays
bounded by the program's size, not by how often a loop runs.

The program is compiled once more, statement by statement, so the log knows which
top-level statement runs; inside a compound statement the name's own assignment line is
used when that statement assigns the name once (a loop body `y = y * 2`), else the
statement's line.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple, TextIO

from autodiff.engine.graph.nodes import watched_grad_fn
from autodiff.engine.tensors.tensor import Tensor
from autodiff.interpreter import Program, RunResult, bound_names
from autodiff.interpreter.expressions import Context
from autodiff.interpreter.statements import compile_block
from autodiff.parser import ast, parse
from autodiff.text.diagnostics import TgError


class Binding(NamedTuple):
    name: str
    line: int
    tensor: weakref.ref  # -> Tensor, or None once the program dropped it
    node: weakref.ref | None  # -> its grad_fn (None: a leaf or no graph)


class BindingLog(dict):
    """The program's globals, noting each tensor stored (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[Binding] = []
        self.kept: dict[tuple, Tensor] = {}  # (name, line) -> the last tensor bound there
        self.lines: dict[str, int] = {}  # name -> line, for the statement running now
        self.statement_line = 0

    def __setitem__(self, name: str, value: Any) -> None:
        same = dict.get(self, name) is value  # `w -= lr * g` rebinds w to itself: not new
        dict.__setitem__(self, name, value)
        if isinstance(value, Tensor) and not same:
            line = self.lines.get(name, self.statement_line)
            node = watched_grad_fn(value)
            self.log.append(Binding(name, line, weakref.ref(value),
                                    None if node is None else weakref.ref(node)))
            self.kept[(name, line)] = value


def assignment_lines(stmt: ast.Node) -> dict[str, int]:
    """name -> the line assigning it within `stmt`, for names assigned exactly once there
    (function bodies are their own scope: skipped)."""
    found: dict[str, set[int]] = {}
    for name, line in bound_names((stmt,)):
        found.setdefault(name, set()).add(line)
    return {name: min(lines) for name, lines in found.items() if len(lines) == 1}


class WatchedProgram(Program):
    """A Program whose globals are a BindingLog (compiled against it, statement by
    statement); it runs exactly as Program does."""

    def __init__(self, module: ast.Module, filename: str, source: str) -> None:
        super().__init__(module, filename, source)
        log = BindingLog()
        cx = Context(filename, log, self.builtins, self.rt, self.modules)
        parts = [(compile_block((stmt,), cx), stmt.line, assignment_lines(stmt))
                 for stmt in module.body]

        def body(L: dict) -> Any:
            for run, line, lines in parts:
                log.statement_line, log.lines = line, lines
                signal = run(L)
                if signal is not None:
                    return signal
            return None

        self.globals = log
        self.body = body


def run_watched(text: str, filename: str, *, out: TextIO, err: TextIO | None,
                session: Any) -> tuple[RunResult, BindingLog | None]:
    """`run_source`, also returning the log of every tensor binding the program made."""
    try:
        program = WatchedProgram(parse(text, filename), filename, text)
    except TgError as exc:
        return RunResult({}, exc), None
    result = program.run(out=out, err=err, session=session)
    return result, program.globals
