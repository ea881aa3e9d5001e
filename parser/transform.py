"""Builds the .tg AST while the LALR parser reduces (lalr.py calls a ToAst method a rule).

Each method gets the children of one reduction (rules marked `!` in tg.lark keep their
tokens) and only builds nodes; all evaluation lives in the interpreter. Positions follow
Lark's `propagate_positions` convention: a node spans its first to its last child, and a
parenthesized expression, as a child, spans its parentheses (`outer` holds those spans;
the node itself keeps its own). Operators arrive flat and go through `precedence.insert`.
The statement rules are in transform_statements.py.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ast
from autodiff.text.diagnostics import TgError
from .lalr import Token
from .precedence import insert
from .strings import BadEscape, unescape

from .transform_statements import StatementRules


class ToAst(StatementRules):
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
        if type(node) is ast.Starred:
            raise self.error_at("cannot use starred expression here", node)
        self.outer[id(node)] = (node, lpar.line, lpar.column, rpar.end_line, rpar.end_column)
        return node

    def list_(self, c):
        return ast.List(tuple(c[1]) if len(c) > 2 else (), **self.span(c[0], c[-1]))

    def comp_clauses(self, c):
        """`for ... in ...` and `if ...` clauses, as a list of Comprehension nodes."""
        if isinstance(c[0], Token):  # the first `for`
            target, iterable = c[1], c[3]
            self.check_target(target)
            return [ast.Comprehension(target, iterable, (), **self.span(c[0], iterable))]
        clauses = c[0]
        if c[1].value == "for":
            self.check_target(c[2])
            clauses.append(ast.Comprehension(c[2], c[4], (), **self.span(c[1], c[4])))
        else:
            last = clauses[-1]
            last.ifs += (c[2],)
            last.end_line, last.end_col = self.end(c[2])
        return clauses

    def listcomp(self, c):
        return ast.ListComp(c[1], tuple(c[2]), **self.span(c[0], c[-1]))

    def genexp(self, c):
        return ast.GeneratorExp(c[1], tuple(c[2]), **self.span(c[0], c[-1]))

    def setcomp(self, c):
        return ast.SetComp(c[1], tuple(c[2]), **self.span(c[0], c[-1]))

    def dictcomp(self, c):
        return ast.DictComp(c[1], c[3], tuple(c[4]), **self.span(c[0], c[-1]))

    def starred_comp(self, c):
        """`[*a for a in b]`, `{**a for a in b}`: parsed to give CPython's words."""
        item = c[1]
        if type(item) is ast.Starred:
            raise self.error("iterable unpacking cannot be used in comprehension", item)
        raise self.error("dict unpacking cannot be used in dict comprehension", item)

    def dict_(self, c):
        items = c[1] if len(c) > 2 else ((), ())
        return ast.Dict(tuple(items[0]), tuple(items[1]), **self.span(c[0], c[-1]))

    def dict_items(self, c):
        """(keys, values); a `**mapping` entry has the key None, as in Python's ast."""
        if type(c[0]) is not tuple:
            return ([c[0]], [c[2]]) if len(c) == 3 else ([None], [c[1]])
        keys, values = c[0]
        if len(c) == 5:
            keys.append(c[2])
            values.append(c[4])
        else:
            keys.append(None)
            values.append(c[3])
        return keys, values

    def set_(self, c):
        return ast.Set(tuple(c[1]), **self.span(c[0], c[-1]))

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
        args, keywords = self.split_arguments(c[2]) if len(c) > 3 else ((), ())
        line, col = self.start(func)
        return ast.Call(func, args, keywords, line=line, col=col,
                        end_line=rpar.end_line, end_col=rpar.end_column)

    def split_arguments(self, items) -> tuple[tuple, tuple]:
        """(positional and *starred, keyword and **) arguments, with Python's order rules."""
        if not any(type(a) is ast.Keyword for a in items):
            return tuple(items), ()
        args, keywords, names, unpacked = [], [], set(), False
        for arg in items:
            if type(arg) is ast.Keyword:
                if arg.arg is None:
                    unpacked = True
                elif arg.arg in names:
                    raise self.error_at(f"keyword argument repeated: {arg.arg}", arg)
                else:
                    names.add(arg.arg)
                keywords.append(arg)
            elif type(arg) is ast.Starred:
                if unpacked:
                    raise self.error_at("iterable argument unpacking follows keyword argument "
                                        "unpacking", arg)
                args.append(arg)
            elif unpacked:
                raise self.error_at("positional argument follows keyword argument unpacking", arg)
            elif names:
                raise self.error_at("positional argument follows keyword argument", arg)
            else:
                args.append(arg)
        return tuple(args), tuple(keywords)

    def call_genexp(self, c):
        func, lpar, elt, clauses, rpar = c
        genexp = ast.GeneratorExp(elt, tuple(clauses), **self.span(lpar, rpar))
        line, col = self.start(func)
        return ast.Call(func, (genexp,), (), line=line, col=col, end_line=rpar.end_line,
                        end_col=rpar.end_column)

    def star_arg(self, c):
        return ast.Starred(c[1], **self.span(c[0], c[1]))

    def dstar_arg(self, c):
        return ast.Keyword(None, c[1], **self.span(c[0], c[1]))

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
            try:
                value = int(text)  # int() takes the underscores Python allows
            except ValueError as exc:  # over Python's limit on decimal digits, with its words
                raise self.error(f"{exc} - Consider hexadecimal for huge integer literals to "
                                 "avoid decimal conversion limits.", tok) from None
        elif text[1] in "xXbBoO":
            value = int(text, 0)
        elif int(text):
            raise self.error("leading zeros in decimal integer literals are not permitted; "
                             "use an 0o prefix for octal integers", tok)
        else:
            value = 0
        return ast.Constant(value, line=tok.line, col=tok.column, end_line=tok.end_line, end_col=tok.end_column)

    def imag(self, c):
        raise self.error("complex numbers are not supported by autodiff", c[0])

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
            raise self.error("bytes literals are not supported by autodiff", tok)
        quote = 3 if text[len(prefix):].startswith(('"""', "'''")) else 1
        body = text[len(prefix) + quote: len(text) - quote]
        start = tok.column + len(prefix) + quote  # column of body[0] (first line only)
        if "f" not in prefix:
            try:
                return [body if "r" in prefix else unescape(body)]
            except BadEscape as exc:
                raise self.error(str(exc), tok) from None
        from .fstrings import split_fstring  # keeps this module short
        return split_fstring(body, raw="r" in prefix, line=tok.line, col=start, tok=tok,
                             unescape=unescape, parse_fexpr=self.parse_fexpr, filename="<stdin>")


def _merge(parts: list) -> tuple:
    """Adjacent literal texts joined once (not one `+=` each: many adjacent strings)."""
    out: list = []
    run: list[str] = []
    for p in parts:
        if isinstance(p, str):
            run.append(p)
            continue
        if run:
            out.append("".join(run))
            run = []
        out.append(p)
    if run:
        out.append("".join(run))
    return tuple(p for p in out if p != "")


_DESCRIBE = {ast.Call: "function call", ast.Constant: "literal", ast.BinOp: "expression",
             ast.UnaryOp: "expression", ast.BoolOp: "expression", ast.Compare: "comparison",
             ast.IfExp: "conditional expression", ast.FString: "f-string expression"}


def _describe(node) -> str:
    return _DESCRIBE.get(type(node), "expression")
