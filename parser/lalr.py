"""The LALR(1) loop over the tables Lark built from tg.lark (see tables.py), with tokens and
parse errors of our own.

Lark's own loop costs two Python-level Rule comparisons a reduction and a call for every
`?rule` that only hands its child on; this one does neither (issue 5). What each reduction
builds is ToAst's business: `reducers` turns the rules' shapes into one callable each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


class Token(str):
    """A terminal: its text, its grammar name (`type`) and its 1-based span."""

    __slots__ = ("type", "value", "line", "column", "end_line", "end_column")

    def __new__(cls, type, value, line, column, end_line, end_column):
        token = str.__new__(cls, value)
        token.type = type
        token.value = value  # a plain str, for the AST
        token.line = line
        token.column = column
        token.end_line = end_line
        token.end_column = end_column
        return token

    def borrow(self, type: str, value: str) -> "Token":
        """A new token (INDENT, DEDENT, $END) at this one's place."""
        return Token(type, value, self.line, self.column, self.end_line, self.end_column)


class UnexpectedCharacters(Exception):
    """No terminal matches the text at this place."""

    def __init__(self, pos_in_stream: int, line: int, column: int) -> None:
        super().__init__(f"no terminal matches at line {line} column {column}")
        self.pos_in_stream, self.line, self.column = pos_in_stream, line, column


class UnexpectedToken(Exception):
    """The token cannot follow what came before; `expected` names the terminals that could."""

    def __init__(self, token: Token, expected: set[str]) -> None:
        super().__init__(f"unexpected {token.type} at line {token.line} column {token.column}")
        self.token, self.expected = token, expected


def reducers(rules: list, builder) -> list[tuple[int, str, Callable | None]]:
    """(size, origin, build) per rule; `build` gets the children list, None keeps the lone child."""
    out = []
    for origin, size, callback, keep, splice, expand1 in rules:
        shaped = keep is not None or bool(splice)
        if origin.startswith("_"):
            build = None if shaped else list  # Lark's inlined rule: its children join the parent's
        elif expand1 and size == 1 and not shaped:
            out.append((size, origin, None))
            continue
        else:
            build = getattr(builder, callback)
            if expand1:
                build = _single_or(build)
        if shaped:
            build = _shaped(build, range(size) if keep is None else keep, frozenset(splice))
        out.append((size, origin, build))
    return out


def _single_or(build: Callable) -> Callable:
    return lambda children: children[0] if len(children) == 1 else build(children)


def _shaped(build: Callable | None, keep, splice: frozenset) -> Callable:
    """Drop the children Lark would filter out and inline the spliced ones, then build."""
    plan = tuple((i, i in splice) for i in keep)
    if plan and plan[0] == (0, True) and build is None:
        # `x*` lists are left-recursive: the list so far comes first and grows in place, so
        # a long `elif` chain costs one append per clause, not a copy of all before it
        rest = plan[1:]

        def grown(children):
            out = children[0]
            for i, inline in rest:
                if inline:
                    out.extend(children[i])
                else:
                    out.append(children[i])
            return out
        return grown

    def shaped(children):
        out = []
        for i, inline in plan:
            if inline:
                out.extend(children[i])
            else:
                out.append(children[i])
        return out if build is None else build(out)
    return shaped


def parse(tokens: Iterable[Token], actions: list, reducers: list, start_state: int):
    """Shift and reduce until the `$END` token that closes `tokens` is shifted."""
    stack = [start_state]
    values: list = []
    for token in tokens:
        kind = token.type
        while True:
            action = actions[stack[-1]].get(kind)
            if action is None:
                raise UnexpectedToken(token, {s for s in actions[stack[-1]] if s.isupper()})
            if action >= 0:
                stack.append(action)
                values.append(token)
                break
            size, origin, build = reducers[~action]
            if build is None:  # `?rule: child` hands the child on unchanged
                stack[-1] = actions[stack[-2]][origin]
                continue
            if size:
                children = values[-size:]
                del values[-size:]
                del stack[-size:]
            else:
                children = []
            values.append(build(children))
            stack.append(actions[stack[-1]][origin])
    return values[-2]  # the last value is the `$END` token
