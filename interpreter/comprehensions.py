"""List, set and dict comprehensions and generator expressions, scoped as Python scopes them.

Each run gets a dict of its own for the loop variables (they never leak into the code
around it); every other name resolves as in a nested function. The first iterable is
evaluated outside, in the enclosing scope, when the comprehension starts (for a generator
expression too); the rest runs as a Python generator, lazily for a generator expression.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from autodiff.parser import ast
from autodiff.text.diagnostics import TgError

from .expressions import _DISPATCH as EXPRESSIONS, Context, compile_expr, guarded, runtime_error
from .runtime import MAX_CALL_DEPTH
from .scopes import OUTER, comprehension_scope
from .statements import compile_store

_NAMES = {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>", ast.DictComp: "<dictcomp>",
          ast.GeneratorExp: "<genexpr>"}


def _iterate(value: Any, node: ast.Node, filename: str) -> Iterator:
    try:
        return iter(value)
    except Exception as exc:
        raise runtime_error(exc, node, filename) from None


def _compile(node: ast.Node, cx: Context):
    """(first iterable, generator function of (dict, iterator) yielding each element, whether
    the dict must know the enclosing scope's)."""
    generators = node.generators
    scope = comprehension_scope([g.target for g in generators], cx.scope, _NAMES[type(node)])
    inner = cx.inner(scope)
    first = compile_expr(generators[0].iter, cx)
    clauses = [(compile_expr(g.iter, inner) if i else None, g.iter, compile_store(g.target, inner),
                tuple(compile_expr(c, inner) for c in g.ifs)) for i, g in enumerate(generators)]
    if type(node) is ast.DictComp:
        key, value = compile_expr(node.key, inner), compile_expr(node.value, inner)
        element: Callable[[dict], Any] = lambda C: (key(C), value(C))  # noqa: E731
    else:
        element = compile_expr(node.elt, inner)
    filename, rt = cx.filename, cx.rt

    def level(i: int) -> Callable[[dict, Iterator], Iterator]:
        _, source, store, ifs = clauses[i]
        deeper = level(i + 1) if i + 1 < len(clauses) else None
        following = clauses[i + 1][0] if deeper is not None else None
        following_node = clauses[i + 1][1] if deeper is not None else None

        def run(C: dict, items: Iterator) -> Iterator:
            while True:
                rt.depth += 1  # the items may come from a generator expression in turn
                try:
                    if rt.depth > MAX_CALL_DEPTH:
                        raise RecursionError("maximum recursion depth exceeded")
                    item = next(items)
                except StopIteration:
                    return
                except TgError:
                    raise
                except Exception as exc:
                    raise runtime_error(exc, source, filename) from None
                finally:
                    rt.depth -= 1
                store(C, item)
                if ifs and not all(cond(C) for cond in ifs):
                    continue
                if deeper is None:
                    yield element(C)
                else:
                    yield from deeper(C, _iterate(following(C), following_node, filename))
        return run

    values = level(0)
    values.__name__ = _NAMES[type(node)]
    values.__qualname__ = scope.qualname  # a generator object prints with it
    return first, values, scope.nested


def _comprehension(build: Callable[[Iterator], Any]):
    def compile_comprehension(node: ast.Node, cx: Context) -> Callable[[dict], Any]:
        first, values, nested = _compile(node, cx)
        source, filename = node.generators[0].iter, cx.filename

        def ev(L: dict) -> Any:
            items = _iterate(first(L), source, filename)
            return build(values({OUTER: L} if nested else {}, items))
        return guarded(node, cx, ev)  # a set or dict of unhashable values fails here
    return compile_comprehension


def _generator(items: Iterator) -> Iterator:
    return items


EXPRESSIONS[ast.ListComp] = _comprehension(list)
EXPRESSIONS[ast.SetComp] = _comprehension(set)
EXPRESSIONS[ast.DictComp] = _comprehension(dict)
EXPRESSIONS[ast.GeneratorExp] = _comprehension(_generator)
