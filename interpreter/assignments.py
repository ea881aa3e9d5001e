"""Which top-level names a program binds, and where: first-assignment lines, and the
globals that tell a run's observers of each binding (a run that watches assignments).

A watched program is compiled statement by statement, once, against a `WatchedGlobals`;
each store reports (name, value, line): the name's own assignment line when the running
top-level statement assigns it once (a loop body `y = y * 2`), else the statement's line.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from autodiff.parser import ast


class WatchedGlobals(dict):
    """A program's globals that report each new binding to `observers.assigned` (rebinding a
    name to the object it holds, as `w -= lr * g` does in place, is no new binding)."""

    def __init__(self) -> None:
        super().__init__()
        self.observers = None  # the run's session observers, while the program runs
        self.lines: dict[str, int] = {}  # name -> line, for the statement running now
        self.statement_line = 0

    def __setitem__(self, name: str, value: Any) -> None:
        same = dict.get(self, name) is value
        dict.__setitem__(self, name, value)
        if not same and self.observers is not None:
            assigned = self.observers.assigned
            if assigned is not None:
                assigned(name, value, self.lines.get(name, self.statement_line))


def watched_body(statements: tuple, compile_statement: Callable, log: WatchedGlobals) -> Callable:
    """The module body as one callable that runs each compiled top-level statement in turn,
    telling `log` which one runs."""
    parts = [(compile_statement(stmt), stmt.line, assignment_lines(stmt)) for stmt in statements]

    def body(L: dict) -> Any:
        for run, line, lines in parts:
            log.statement_line, log.lines = line, lines
            signal = run(L)
            if signal is not None:
                return signal
        return None

    return body


def assignment_lines(stmt: ast.Node) -> dict[str, int]:
    """name -> the line assigning it within `stmt`, for names assigned exactly once there
    (function bodies are their own scope: skipped)."""
    found: dict[str, set[int]] = {}
    for name, line in bound_names((stmt,)):
        found.setdefault(name, set()).add(line)
    return {name: min(lines) for name, lines in found.items() if len(lines) == 1}


def first_assignments(body: tuple) -> dict[str, int]:
    """Line of the first assignment of each top-level name, in source order."""
    lines: dict[str, int] = {}
    for name, line in bound_names(body):
        lines.setdefault(name, line)
    return lines


def bound_names(body) -> Iterator[tuple[str, int]]:
    """(name, line) for each name a statement list binds (assignment, augmented assignment,
    for, def, class, import, with-as), in source order; a def's or class's body is its own
    scope and is skipped."""

    def targets(target: ast.Node) -> Iterator[tuple[str, int]]:
        if isinstance(target, ast.Name):
            yield target.id, target.line
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                yield from targets(elt)
        elif isinstance(target, ast.Starred):
            yield from targets(target.value)

    # an explicit stack in source order, not recursion: an `elif` chain nests If nodes
    pending = list(reversed(body))
    while pending:
        s = pending.pop()
        if isinstance(s, ast.Assign):
            for t in s.targets:
                yield from targets(t)
        elif isinstance(s, (ast.AugAssign, ast.For)) or isinstance(s, ast.AnnAssign) and s.value:
            yield from targets(s.target)
        elif isinstance(s, (ast.FunctionDef, ast.ClassDef)):
            yield s.name, s.line
        elif isinstance(s, ast.Import):
            yield s.asname or s.module.split(".")[0], s.line
        elif isinstance(s, ast.ImportFrom):
            for name, asname in s.names:
                if name != "*":
                    yield asname or name, s.line
        elif isinstance(s, ast.With) and s.name:
            yield s.name, s.line
        if not isinstance(s, (ast.FunctionDef, ast.ClassDef)):
            for handler in reversed(getattr(s, "handlers", ()) or ()):
                pending.extend(reversed(handler.body))
            pending.extend(reversed(getattr(s, "finalbody", ()) or ()))
            pending.extend(reversed(getattr(s, "orelse", ()) or ()))
            pending.extend(reversed(getattr(s, "body", ()) or ()))
