"""Builds the .tg AST while the LALR parser reduces (lalr.py calls a ToAst method a rule).

Each method gets the children of one reduction (rules marked `!` in tg.lark keep their
tokens) and only builds nodes; all evaluation lives in the interpreter. Positions follow
Lark's `propagate_positions` convention: a node spans its first to its last child, and a
parenthesized expression, as a child, spans its parentheses (`outer` holds those spans;
the node itself keeps its own). Operators arrive flat and go through `precedence.insert`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import ast
from .diagnostics import TgError
from .lalr import Token
from .precedence import insert

_ASSIGNABLE = (ast.Name, ast.Attribute, ast.Subscript)


def _unsupported(what: str):
    def build(self, c):
        raise self.error(f"{what} not supported in .tg programs", c[0], c[-1])
    return build


_ESCAPES = re.compile(r"\\(N\{[^}]*\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.DOTALL)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "\n": "",
           "a": "\a", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unescape(text: str) -> str:
    """Decode Python backslash escapes (never via eval)."""
    def one(m: re.Match) -> str:
        s = m.group(1)
        if s in _SIMPLE:
            return _SIMPLE[s]
        if s[0] in "xuU":
            return chr(int(s[1:], 16))
        if s[0].isdigit():
            return chr(int(s, 8))
        if s[0] == "N":
            import unicodedata
            return unicodedata.lookup(s[2:-1])
        return "\\" + s  # unknown escapes stay as written, as in Python
    return _ESCAPES.sub(one, text) if "\\" in text else text


class ToAst:
    """One method per grammar rule or alias of tg.lark; each takes the list of children."""

    def __init__(self) -> None:
        # Set by `parse` for each run: parses an f-string field at a (line, col), and the
        # spans with parentheses of the parenthesized nodes, by id (the node is kept alive).
        self.parse_fexpr: Callable[[str, int, int], ast.Node] | None = None
        self.outer: dict[int, tuple] = {}

    # ---- positions ----
    def start(self, x) -> tuple[int, int]:
        if isinstance(x, Token):
            return x.line, x.column
        span = self.outer.get(id(x))
        return (span[1], span[2]) if span else (x.line, x.col)

    def end(self, x) -> tuple[int, int]:
        if isinstance(x, Token):
            return x.end_line, x.end_column
        span = self.outer.get(id(x))
        return (span[3], span[4]) if span else (x.end_line, x.end_col)

    def span(self, first, last) -> dict:
        (line, col), (end_line, end_col) = self.start(first), self.end(last)
        return {"line": line, "col": col, "end_line": end_line, "end_col": end_col}

    def error(self, message: str, first, last=None, cls: str = "SyntaxError") -> TgError:
        return TgError(cls, message, **self.span(first, first if last is None else last))

    def error_at(self, message: str, node: ast.Node) -> TgError:
        """An error spanning the node itself (without its parentheses)."""
        return TgError("SyntaxError", message, line=node.line, col=node.col,
                       end_line=node.end_line, end_col=node.end_col)

    # ---- statements ----
    def module(self, c):
        return ast.Module(tuple(c[0]) if c else (), line=1, col=1)

    def fexpr(self, c):
        return c[0]

    def block(self, c):
        """Statement lists: a simple_stmt gives (statements, _NEWLINE); blank lines are tokens."""
        if len(c) == 1:
            body, item = [], c[0]
        else:
            body, item = c
        if type(item) is tuple:
            body.extend(item[0])
        elif not isinstance(item, Token):
            body.append(item)
        return body

    stmts = block

    def simple_stmt(self, c):
        if len(c) == 2:
            return [c[0]], c[1]
        return [s for s in c[:-1] if not isinstance(s, Token)], c[-1]

    def suite(self, c):
        """(statements, the token the suite ends with); the token gives the block's end."""
        if len(c) == 1:
            body, last = c[0]
            return tuple(body), last
        return tuple(c[2]), c[3]

    def expr_stmt(self, c):
        value = c[0]
        (line, col), (end_line, end_col) = self.start(value), self.end(value)
        return ast.ExprStmt(value, line=line, col=col, end_line=end_line, end_col=end_col)

    def assign(self, c):
        targets = c[0:-1:2]
        for target in targets:
            if type(target) is not ast.Name:
                self.check_target(target)
        (line, col), (end_line, end_col) = self.start(c[0]), self.end(c[-1])
        return ast.Assign(tuple(targets), c[-1], line=line, col=col, end_line=end_line, end_col=end_col)

    def aug_assign(self, c):
        target, op, value = c
        if not isinstance(target, _ASSIGNABLE):
            raise self.error_at(f"'{_describe(target)}' is an illegal expression for augmented assignment",
                                target)
        return ast.AugAssign(target, op.value[:-1], value, **self.span(target, value))

    def check_target(self, target) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.check_target(elt)
        elif not isinstance(target, _ASSIGNABLE):
            raise self.error_at(f"cannot assign to {_describe(target)} here. "
                                "Maybe you meant '==' instead of '='?", target)

    def pass_stmt(self, c):
        return ast.Pass(**self.span(c[0], c[0]))

    def break_stmt(self, c):
        return ast.Break(**self.span(c[0], c[0]))

    def continue_stmt(self, c):
        return ast.Continue(**self.span(c[0], c[0]))

    def return_stmt(self, c):
        return ast.Return(c[1] if len(c) > 1 else None, **self.span(c[0], c[-1]))

    def assert_stmt(self, c):
        return ast.Assert(c[1], c[3] if len(c) > 2 else None, **self.span(c[0], c[-1]))

    def dotted_name(self, c):
        return c  # the NAME and "." tokens

    def import_stmt(self, c):
        module = "".join(tok.value for tok in c[1])
        asname = c[3].value if len(c) > 2 else None
        return ast.Import(module, asname, **self.span(c[0], c[-1] if len(c) > 2 else c[1][-1]))

    def from_import(self, c):
        module = "".join(tok.value for tok in c[1])
        raise self.error(f"'from {module} import ...' is not supported in .tg programs; "
                         "use 'import torch', 'import torch.nn as nn', "
                         "'import torch.nn.functional as F' or 'import math'", c[0], c[-1])

    del_stmt = _unsupported("'del' statements are")
    global_stmt = _unsupported("'global' and 'nonlocal' statements are")
    raise_stmt = _unsupported("'raise' statements are")
    star_param = _unsupported("*args and **kwargs parameters are")
    star_arg = _unsupported("*args and **kwargs arguments are")

    def if_stmt(self, c):
        (body, _), rest, orelse = c[3], c[4:], ()
        if rest and type(rest[-1]) is tuple:  # "else" ":" suite
            orelse, rest = rest[-1][0], rest[:-3]
        last = c[-1]
        end_line, end_col = self.end(last[1] if type(last) is tuple else last)
        for clause in reversed(rest):  # elif chains become nested Ifs, as in Python's ast
            orelse = (ast.If(clause.test, clause.body, orelse, line=clause.line, col=clause.col,
                             end_line=end_line, end_col=end_col),)
        return ast.If(c[1], body, orelse, line=c[0].line, col=c[0].column, end_line=end_line, end_col=end_col)

    def elif_clause(self, c):
        body, last = c[3]
        return ast.If(c[1], body, (), **self.span(c[0], last))

    def while_stmt(self, c):
        body, last = c[3]
        if len(c) > 4:
            raise self.error("'while ... else' is not supported in .tg programs", c[0], c[-1][1])
        return ast.While(c[1], body, **self.span(c[0], last))

    def for_stmt(self, c):
        target, iterable, (body, last) = c[1], c[3], c[5]
        if len(c) > 6:
            raise self.error("'for ... else' is not supported in .tg programs", c[0], c[-1][1])
        self.check_target(target)
        return ast.For(target, iterable, body, **self.span(c[0], last))

    def funcdef(self, c):
        params = c[3] if len(c) > 6 else ()
        seen, defaults = set(), False
        for p in params:
            if p.name in seen:
                raise self.error_at(f"duplicate argument '{p.name}' in function definition", p)
            seen.add(p.name)
            if p.default is None and defaults:
                raise self.error_at("non-default argument follows default argument", p)
            defaults = defaults or p.default is not None
        body, last = c[-1]
        return ast.FunctionDef(c[1].value, params, body, **self.span(c[0], last))

    def parameters(self, c):
        return tuple(p for p in c if not isinstance(p, Token))

    def param(self, c):
        return ast.Param(c[0].value, None, **self.span(c[0], c[0]))

    def param_default(self, c):
        return ast.Param(c[0].value, c[2], **self.span(c[0], c[2]))

    def with_item(self, c):
        return c[0], (c[2].value if len(c) == 3 else None)

    def with_stmt(self, c):
        """`with a, b as n:` is `with a:` holding `with b as n:`, as in Python."""
        body, last = c[-1]
        items = [x for x in c[1:-2] if type(x) is tuple]
        for context, name in reversed(items):
            start = c[0] if context is items[0][0] else context
            body = [ast.With(context, name, body, **self.span(start, last))]
        return body[0]

    # ---- expressions ----
    def tests(self, c):
        """Comma lists, left-recursive: one list, appended to."""
        if len(c) == 1:
            return [c[0]]
        items = c[0]
        items.append(c[2])
        return items

    exprs = arguments = subscript_items = tests

    def tuple(self, c):
        elts = c[0]
        if len(c) > 2:
            elts.append(c[2])
        return ast.Tuple(tuple(elts), **self.span(elts[0], c[-1]))

    def empty_tuple(self, c):
        return ast.Tuple((), **self.span(c[0], c[1]))

    def paren(self, c):
        lpar, node, rpar = c
        self.outer[id(node)] = (node, lpar.line, lpar.column, rpar.end_line, rpar.end_column)
        return node

    def list_(self, c):
        return ast.List(tuple(c[1]) if len(c) > 2 else (), **self.span(c[0], c[-1]))

    def binop(self, c):
        if len(c) == 3:
            left, op, right = c
            op = op.value
        else:  # 'not' 'in', 'is' 'not'
            left, op, second, right = c
            op = f"{op.value} {second.value}"
        return insert(left, op, right, self.outer)

    def ifexp(self, c):
        body, _, test, _, orelse = c
        if type(test) is ast.IfExp and id(test) not in self.outer:
            raise self.error("expected 'else' after 'if' expression", body, orelse)
        return insert(body, "if", orelse, self.outer, test)

    def prefix(self, c):
        op, operand = c
        end_line, end_col = self.end(operand)
        return ast.UnaryOp(op.value, operand, line=op.line, col=op.column, end_line=end_line, end_col=end_col)

    def attribute(self, c):
        value, _, name = c
        line, col = self.start(value)
        return ast.Attribute(value, name.value, line=line, col=col, end_line=name.end_line,
                             end_col=name.end_column)

    def call(self, c):
        func, rpar = c[0], c[-1]
        args = c[2] if len(c) > 3 else ()
        keywords = [a for a in args if type(a) is ast.Keyword]
        if keywords:
            args, names = [], set()
            for arg in c[2]:
                if type(arg) is ast.Keyword:
                    if arg.arg in names:
                        raise self.error_at(f"keyword argument repeated: {arg.arg}", arg)
                    names.add(arg.arg)
                elif len(names):
                    raise self.error_at("positional argument follows keyword argument", arg)
                else:
                    args.append(arg)
        line, col = self.start(func)
        return ast.Call(func, tuple(args), tuple(keywords), line=line, col=col,
                        end_line=rpar.end_line, end_col=rpar.end_column)

    def kwarg(self, c):
        name, _, value = c
        end_line, end_col = self.end(value)
        return ast.Keyword(name.value, value, line=name.line, col=name.column, end_line=end_line, end_col=end_col)

    def subscript(self, c):
        value, _, index, rsqb = c
        line, col = self.start(value)
        return ast.Subscript(value, index, line=line, col=col, end_line=rsqb.end_line, end_col=rsqb.end_column)

    def slice(self, c):
        parts, i = [None, None, None], 0
        for item in c:
            if isinstance(item, Token):  # ':'
                i += 1
            else:
                parts[i] = item
        return ast.Slice(*parts, **self.span(c[0], c[-1]))

    def name(self, c):
        tok = c[0]
        return ast.Name(tok.value, line=tok.line, col=tok.column, end_line=tok.end_line, end_col=tok.end_column)

    def int_(self, c):
        tok = c[0]
        text = tok.value
        if text[0] != "0" or len(text) == 1:
            value = int(text)  # int() takes the underscores Python allows
        elif text[1] in "xXbBoO":
            value = int(text, 0)
        elif int(text):
            raise self.error("leading zeros in decimal integer literals are not permitted; "
                             "use an 0o prefix for octal integers", tok)
        else:
            value = 0
        return ast.Constant(value, line=tok.line, col=tok.column, end_line=tok.end_line, end_col=tok.end_column)

    def float_(self, c):
        tok = c[0]
        return ast.Constant(float(tok.value), line=tok.line, col=tok.column, end_line=tok.end_line,
                            end_col=tok.end_column)  # float() takes the underscores Python allows

    def true(self, c):
        return ast.Constant(True, **self.span(c[0], c[0]))

    def false(self, c):
        return ast.Constant(False, **self.span(c[0], c[0]))

    def none(self, c):
        return ast.Constant(None, **self.span(c[0], c[0]))

    def ellipsis(self, c):
        return ast.Constant(..., **self.span(c[0], c[0]))

    def string(self, c):
        parts: list = []
        for tok in c:
            parts.extend(self.string_parts(tok))
        if all(isinstance(p, str) for p in parts):
            return ast.Constant("".join(parts), **self.span(c[0], c[-1]))
        return ast.FString(_merge(parts), **self.span(c[0], c[-1]))

    def string_parts(self, tok: Token) -> list:
        """Split one STRING token into literal text and FormattedValue fields."""
        text = tok.value
        prefix = text[: len(text) - len(text.lstrip("rRfFuUbB"))].lower()
        if "b" in prefix:
            raise self.error("bytes literals are not supported in .tg programs", tok)
        quote = 3 if text[len(prefix):].startswith(('"""', "'''")) else 1
        body = text[len(prefix) + quote: len(text) - quote]
        start = tok.column + len(prefix) + quote  # column of body[0] (first line only)
        if "f" not in prefix:
            return [body if "r" in prefix else _unescape(body)]
        from .fstrings import split_fstring  # keeps this module short
        return split_fstring(body, raw="r" in prefix, line=tok.line, col=start, tok=tok,
                             unescape=_unescape, parse_fexpr=self.parse_fexpr, filename="<stdin>")


def _merge(parts: list) -> tuple:
    out: list = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return tuple(out)


_DESCRIBE = {ast.Call: "function call", ast.Constant: "literal", ast.BinOp: "expression",
             ast.UnaryOp: "expression", ast.BoolOp: "expression", ast.Compare: "comparison",
             ast.IfExp: "conditional expression", ast.FString: "f-string expression"}


def _describe(node) -> str:
    return _DESCRIBE.get(type(node), "expression")
