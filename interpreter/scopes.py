"""Python's scoping rules, decided when a program is compiled.

A function, lambda, comprehension or class body is a `Scope`. Each call of a function (each
run of a comprehension or class body) gets its own dict of local variables; a scope nested
in another one keeps the dict of the scope it was made in under the key `OUTER`, so a
variable of an enclosing function is `L[OUTER][name]` (one hop per scope in between, class
bodies included). Module-level code runs with the globals dict as `L` and needs no hops;
code that is not nested in a function pays nothing for closures.

Name resolution is Python's: a name bound anywhere in a function body is local to the
whole body unless declared `global` or `nonlocal`; a free name refers to the nearest
enclosing function (or comprehension) that binds it, class bodies skipped; otherwise it is
a global (then a builtin). A class body looks in its own namespace first.
"""

from __future__ import annotations

from autodiff.parser import ast
from autodiff.text.diagnostics import EXIT_SYNTAX, TgError

OUTER = " outer"  # not an identifier: no program variable can collide with it

MODULE, FUNCTION, CLASS, COMPREHENSION = "module", "function", "class", "comprehension"
_FUNCTION_LIKE = (FUNCTION, COMPREHENSION)


class Scope:
    """One scope's names: `local` (bound here), `declared_global`, `declared_nonlocal`."""

    __slots__ = ("kind", "local", "declared_global", "declared_nonlocal", "parent", "qualname",
                 "class_cell", "first_param")

    def __init__(self, kind: str, local: frozenset, parent: "Scope | None", qualname: str = "",
                 declared_global: frozenset = frozenset(), declared_nonlocal: frozenset = frozenset()):
        self.kind = kind
        self.local = local
        self.parent = parent
        self.qualname = qualname
        self.declared_global = declared_global
        self.declared_nonlocal = declared_nonlocal
        self.class_cell = None  # a class body: [the class], filled once the class exists
        self.first_param = None  # a method: the name of its first parameter (`self`)

    @property
    def nested(self) -> bool:
        """Does code here run in a dict that must know its enclosing scope's (`OUTER`)?"""
        scope = self.parent
        while scope is not None:
            if scope.kind in _FUNCTION_LIKE:
                return True
            scope = scope.parent
        return False

    def child_prefix(self) -> str:
        """The start of the qualified name of a function or class defined here."""
        if self.kind == MODULE:
            return ""
        if self.kind == CLASS or self.kind == COMPREHENSION:
            return self.qualname + "."
        return self.qualname + ".<locals>."

    def resolve(self, name: str) -> tuple[str, int]:
        """Where a name used in this scope lives: ("local", 0), ("global", 0), ("free", hops)
        for a variable of an enclosing function, or ("class", 0) for a name a class body
        binds (read from the class namespace, else as if the class body did not bind it)."""
        if self.kind == MODULE or name in self.declared_global:
            return "global", 0
        if name in self.local:
            return ("class" if self.kind == CLASS else "local"), 0
        return self.enclosing(name)

    def enclosing(self, name: str) -> tuple[str, int]:
        """The nearest enclosing function scope that binds `name`, else the globals."""
        hops, scope = 1, self.parent
        while scope is not None and scope.kind != MODULE:
            if scope.kind in _FUNCTION_LIKE:
                if name in scope.declared_global:
                    return "global", 0
                if name in scope.local:
                    return "free", hops
            hops += 1
            scope = scope.parent
        return "global", 0


def module_scope() -> Scope:
    return Scope(MODULE, frozenset(), None)


def function_scope(node: ast.Node, params: tuple, body: tuple, parent: Scope, name: str,
                   filename: str) -> Scope:
    """The scope of a `def` or lambda: its parameters and the names its body binds."""
    declared_global, declared_nonlocal = declarations(body, parent, filename, set(params))
    local = (frozenset(params) | bound_names(body)) - declared_global - declared_nonlocal
    scope = Scope(FUNCTION, local, parent, parent.child_prefix() + name,
                  frozenset(declared_global), frozenset(declared_nonlocal))
    for nonlocal_name in declared_nonlocal:
        if scope.enclosing(nonlocal_name)[0] != "free":
            raise _syntax_error(f"no binding for nonlocal '{nonlocal_name}' found",
                                _declaration(body, nonlocal_name) or node, filename)
    return scope


def comprehension_scope(targets: list, parent: Scope, kind_name: str) -> Scope:
    names: set[str] = set()
    for target in targets:
        _target_names(target, names)
    return Scope(COMPREHENSION, frozenset(names), parent, parent.child_prefix() + kind_name)


def class_scope(name: str, body: tuple, parent: Scope) -> Scope:
    return Scope(CLASS, bound_names(body), parent, parent.child_prefix() + name)


def bound_names(body: tuple) -> frozenset:
    """Names a body binds (assignments, loops, defs, classes, imports, `as` names, del),
    not looking into nested function, lambda, comprehension or class bodies."""
    found: set[str] = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Assign:
            for t in node.targets:
                _target_names(t, found)
        elif kind is ast.AugAssign or kind is ast.For:
            _target_names(node.target, found)
        elif kind is ast.AnnAssign:  # `x: int` makes x local even without a value, as in Python
            _target_names(node.target, found)
        elif kind is ast.FunctionDef or kind is ast.ClassDef:
            found.add(node.name)
            continue
        elif kind is ast.Import:
            found.add(node.asname or node.module.split(".")[0])
        elif kind is ast.ImportFrom:
            found.update(asname or name for name, asname in node.names if name != "*")
        elif kind is ast.With and node.name:
            found.add(node.name)
        elif kind is ast.Delete:
            for t in node.targets:
                _target_names(t, found)
        elif kind is ast.Try:
            for handler in node.handlers:
                if handler.name:
                    found.add(handler.name)
                stack.extend(handler.body)
            stack.extend(node.finalbody)
        for child in ("body", "orelse"):
            stack.extend(getattr(node, child, ()) or ())
    return frozenset(found)


def _target_names(target: ast.Node, found: set) -> None:
    if type(target) is ast.Name:
        found.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _target_names(elt, found)
    elif type(target) is ast.Starred:
        _target_names(target.value, found)


def declarations(body: tuple, parent: Scope, filename: str, params: set) -> tuple[set, set]:
    """The `global` and `nonlocal` names of a function body, with Python's checks."""
    declared_global: set[str] = set()
    declared_nonlocal: set[str] = set()
    for stmt in statements_of(body):
        kind = type(stmt)
        if kind is not ast.Global and kind is not ast.Nonlocal:
            continue
        for name in stmt.names:
            if name in params:
                which = "global" if kind is ast.Global else "nonlocal"
                raise _syntax_error(f"name '{name}' is parameter and {which}", stmt, filename)
            if kind is ast.Global:
                if name in declared_nonlocal:
                    raise _syntax_error(f"name '{name}' is nonlocal and global", stmt, filename)
                declared_global.add(name)
            else:
                if name in declared_global:
                    raise _syntax_error(f"name '{name}' is nonlocal and global", stmt, filename)
                declared_nonlocal.add(name)
    return declared_global, declared_nonlocal


def check_module_declarations(body: tuple, filename: str) -> None:
    """`nonlocal` cannot appear at module level (a `global` there is allowed and changes nothing)."""
    for stmt in statements_of(body):
        if type(stmt) is ast.Nonlocal:
            raise _syntax_error("nonlocal declaration not allowed at module level", stmt, filename)


def statements_of(body: tuple):
    """Every statement of a body, nested blocks included, not inside nested defs and classes."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        if type(node) is ast.FunctionDef or type(node) is ast.ClassDef:
            continue
        for child in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, child, ()) or ())
        if type(node) is ast.Try:
            for handler in node.handlers:
                stack.extend(handler.body)


def _declaration(body: tuple, name: str):
    for stmt in statements_of(body):
        if type(stmt) is ast.Nonlocal and name in stmt.names:
            return stmt
    return None


def _syntax_error(message: str, node: ast.Node, filename: str) -> TgError:
    return TgError("SyntaxError", message, filename=filename, line=node.line, col=node.col,
                   end_line=node.end_line, end_col=node.end_col, exit_code=EXIT_SYNTAX)
