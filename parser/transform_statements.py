"""ToAst's rules for statements (ToAst in transform.py adds the expressions and the
positions these use: `span`, `error`, `error_at`, `end`, `outer`)."""

from __future__ import annotations

from . import ast
from .lalr import Token

ASSIGNABLE = (ast.Name, ast.Attribute, ast.Subscript)


class StatementRules:
    """One method per statement rule of tg.lark; each takes the list of children."""

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

    def ann_assign(self, c):
        target, annotation = c[0], c[2]
        value = c[4] if len(c) > 3 else None
        kind = type(target)
        if kind is ast.Tuple or kind is ast.List:
            # (CPython points at a bare tuple's first item, at a list or parenthesized tuple whole)
            bare = kind is ast.Tuple and id(target) not in self.outer
            message = f"only single target (not {'tuple' if kind is ast.Tuple else 'list'}) can be annotated"
            raise self.error_at(message, target.elts[0]) if bare else self.error(message, target)
        if not isinstance(target, ASSIGNABLE):
            raise self.error_at("illegal target for annotation", target)
        simple = kind is ast.Name and id(target) not in self.outer
        return ast.AnnAssign(target, annotation, value, simple, **self.span(target, c[-1]))

    def aug_assign(self, c):
        target, op, value = c
        if not isinstance(target, ASSIGNABLE):
            raise self.error_at(f"'{describe(target)}' is an illegal expression for augmented assignment",
                                target)
        return ast.AugAssign(target, op.value[:-1], value, **self.span(target, value))

    def check_target(self, target, inside: bool = False, starred: bool = False) -> None:
        """Python's checks of an assignment (or `for`) target; `inside`: within a tuple or list,
        `starred`: under a `*` (CPython then gives no '==' hint)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            starred = False
            for elt in target.elts:
                if type(elt) is ast.Starred:
                    if starred:
                        raise self.error_at("multiple starred expressions in assignment", target)
                    starred = True
                self.check_target(elt, True)
        elif type(target) is ast.Starred:
            if not inside:
                raise self.error_at("starred assignment target must be in a list or tuple", target)
            self.check_target(target.value, True, True)
        elif starred and not isinstance(target, ASSIGNABLE):
            raise self.error_at(f"cannot assign to {describe(target)}", target)
        elif not isinstance(target, ASSIGNABLE):
            raise self.error_at(f"cannot assign to {describe(target)} here. "
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
        if len(c) == 4 and isinstance(c[3], Token):  # `import *`
            return ast.ImportFrom(module, (("*", None),), **self.span(c[0], c[3]))
        items = next(item for item in c[3:] if not isinstance(item, Token))
        last = c[-1] if isinstance(c[-1], Token) else items[-1][2]
        return ast.ImportFrom(module, tuple((name, asname) for name, asname, _ in items),
                              **self.span(c[0], last))

    def relative_import(self, c):
        before = c[[i for i, x in enumerate(c) if isinstance(x, Token) and x.value == "import"][0] - 1]
        raise self.error("relative imports are not supported by autodiff: a .tg program is one file",
                         c[1], before[-1] if type(before) is list else before)

    def import_names(self, c):
        if len(c) == 1:
            return [c[0]]
        c[0].append(c[2])
        return c[0]

    def import_as(self, c):
        return (c[0].value, c[2].value if len(c) > 1 else None, c[-1])  # the token ends the span

    def del_stmt(self, c):
        target = c[1]
        targets = target.elts if type(target) is ast.Tuple and id(target) not in self.outer else (target,)
        for t in targets:
            self.check_deletable(t)
        return ast.Delete(tuple(targets), **self.span(c[0], c[-1]))

    def check_deletable(self, target) -> None:
        if type(target) is ast.Starred:
            raise self.error_at("cannot delete starred", target)
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.check_deletable(elt)
        elif not isinstance(target, ASSIGNABLE):
            raise self.error_at(f"cannot delete {describe(target)}", target)

    def global_stmt(self, c):
        names = tuple(tok.value for tok in c[1::2])
        kind = ast.Global if c[0].value == "global" else ast.Nonlocal
        return kind(names, **self.span(c[0], c[-1]))

    def yield_stmt(self, c):
        if len(c) == 3:  # "yield" "from" test
            return ast.Yield(c[2], True, **self.span(c[0], c[-1]))
        return ast.Yield(c[1] if len(c) > 1 else None, False, **self.span(c[0], c[-1]))

    def raise_stmt(self, c):
        exc = c[1] if len(c) > 1 else None
        cause = c[3] if len(c) > 3 else None
        return ast.Raise(exc, cause, **self.span(c[0], c[-1]))

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
            raise self.error("'while ... else' is not supported by autodiff", c[0], c[-1][1])
        return ast.While(c[1], body, **self.span(c[0], last))

    def for_stmt(self, c):
        target, iterable, (body, last) = c[1], c[3], c[5]
        if len(c) > 6:
            raise self.error("'for ... else' is not supported by autodiff", c[0], c[-1][1])
        self.check_target(target)
        return ast.For(target, iterable, body, **self.span(c[0], last))

    def funcdef(self, c):
        params = () if isinstance(c[3], Token) else c[3]
        after = 4 if isinstance(c[3], Token) else 5  # just after ')'
        returns = c[after + 1] if c[after].value == "->" else None
        body, last = c[-1]
        return ast.FunctionDef(c[1].value, params, body, (), returns, **self.span(c[0], last))

    def lambda_parameters(self, c):
        if isinstance(c[0], ast.Param) and c[0].kind == "/":
            raise self.error_at("invalid syntax", c[0])  # (CPython's words for `lambda /:`)
        return self.parameters(c)

    def parameters(self, c):
        """Python's rules for a parameter list; parameters after `*` become keyword-only."""
        params, seen = [], set()
        defaults = star = dstar = slash = False
        for p in c:
            if isinstance(p, Token):
                continue
            if dstar:
                raise self.error_at("arguments cannot follow var-keyword argument", p)
            if p.kind == "/":
                if slash:
                    raise self.error_at("/ may appear only once", p)
                if star:
                    raise self.error_at("/ must be ahead of *", p)
                if not params:
                    raise self.error_at("at least one argument must precede /", p)
                slash = True
                for q in params:
                    q.kind = "pos"
                continue
            if p.kind == "*":
                if star:
                    raise self.error_at("* argument may appear only once", p)
                star = p
            elif p.kind == "**":
                dstar = True
            elif star:
                p.kind = "kw"
            elif p.default is None and defaults:
                raise self.error_at("non-default argument follows default argument", p)
            else:
                defaults = defaults or p.default is not None
            if p.name is not None:
                if p.name in seen:
                    raise self.error_at(f"duplicate argument '{p.name}' in function definition", p)
                seen.add(p.name)
                params.append(p)
        if star and star.name is None and all(q.kind != "kw" for q in params):
            raise self.error_at("named arguments must follow bare *", star)
        return tuple(params)

    # a parameter's annotation comes as the child after its name (`annotation` gives the expression)
    def param(self, c):
        return ast.Param(c[0].value, None, "", c[1] if len(c) > 1 else None, **self.span(c[0], c[-1]))

    def param_default(self, c):
        return ast.Param(c[0].value, c[-1], "", c[1] if len(c) > 3 else None, **self.span(c[0], c[-1]))

    def star_param(self, c):
        return ast.Param(c[1].value if len(c) > 1 else None, None, "*", c[2] if len(c) > 2 else None,
                         **self.span(c[0], c[-1]))

    def dstar_param(self, c):
        return ast.Param(c[1].value, None, "**", c[2] if len(c) > 2 else None, **self.span(c[0], c[-1]))

    def slash_param(self, c):
        return ast.Param(None, None, "/", None, **self.span(c[0], c[0]))

    def annotation(self, c):
        return c[1]

    def lambdef(self, c):
        params = c[1] if len(c) > 3 else ()
        return ast.Lambda(params, c[-1], **self.span(c[0], c[-1]))

    def classdef(self, c):
        args = c[3] if len(c) > 6 and not isinstance(c[3], Token) else ()
        bases, keywords = self.split_arguments(args) if args else ((), ())
        body, last = c[-1]
        return ast.ClassDef(c[1].value, tuple(bases), tuple(keywords), body, (), **self.span(c[0], last))

    def decorated(self, c):
        decorators, node = c
        node.decorators = tuple(decorators)
        return node

    def decorators(self, c):
        if len(c) == 3:
            return [c[1]]
        c[0].append(c[2])
        return c[0]

    def try_stmt(self, c):
        body, last = c[2]
        handlers, orelse, finalbody = (), (), ()
        i = 3
        if type(c[i]) is list:
            handlers = tuple(c[i])
            i += 1
        while i < len(c):
            block, last = c[i + 2]
            if c[i].value == "else":
                orelse = block
            else:
                finalbody = block
            i += 3
        for handler in handlers[:-1]:
            if handler.type is None:
                raise self.error_at("default 'except:' must be last", handler)
        return ast.Try(body, handlers, orelse, finalbody, **self.span(c[0], last))

    def except_clauses(self, c):
        if len(c) == 1:
            return [c[0]]
        c[0].append(c[1])
        return c[0]

    def except_star(self, c):
        raise self.error("except* is not supported by autodiff", c[0], c[1])

    def except_clause(self, c):
        body, last = c[-1]
        kind = c[1] if len(c) > 3 else None
        name = c[3].value if len(c) > 5 else None
        return ast.ExceptHandler(kind, name, body, **self.span(c[0], last))

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


_DESCRIBE = {ast.Call: "function call", ast.Constant: "literal", ast.BinOp: "expression",
             ast.UnaryOp: "expression", ast.BoolOp: "expression", ast.Compare: "comparison",
             ast.IfExp: "conditional expression", ast.FString: "f-string expression",
             ast.Starred: "starred"}


def describe(node) -> str:
    return _DESCRIBE.get(type(node), "expression")
