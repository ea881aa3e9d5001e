"""Lark parse tree -> .tg AST. Builds nodes only; all evaluation lives in the interpreter."""

from __future__ import annotations

import re
from typing import Callable

from lark import Token, Transformer_NonRecursive, v_args

from . import ast
from .diagnostics import TgError

_ASSIGNABLE = (ast.Name, ast.Attribute, ast.Subscript)


def _pos(meta) -> dict:
    return {"line": meta.line, "col": meta.column,
            "end_line": meta.end_line, "end_col": meta.end_column}


def _tok_pos(tok: Token) -> dict:
    return {"line": tok.line, "col": tok.column,
            "end_line": tok.end_line, "end_col": tok.end_column}


def _binop(op: str):
    def build(self, meta, left, right):
        return ast.BinOp(left, op, right, **_pos(meta))
    return build


def _unary(op: str):
    def build(self, meta, operand):
        return ast.UnaryOp(op, operand, **_pos(meta))
    return build


def _unsupported(what: str):
    def build(self, meta, *children):
        raise self.error(f"{what} not supported in .tg programs", meta)
    return build


def _flatten(items) -> tuple:
    out = []
    for item in items:
        if isinstance(item, list):
            out.extend(item)
        elif item is not None:
            out.append(item)
    return tuple(out)


_ESCAPES = re.compile(r"\\(N\{[^}]*\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.S)
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


@v_args(inline=True, meta=True)
class ToAst(Transformer_NonRecursive):
    """One method per grammar rule or alias; see tg.lark."""

    def __init__(self, filename: str, parse_fexpr: Callable[[str, int, int], ast.Node]):
        super().__init__()
        self.filename = filename
        self.parse_fexpr = parse_fexpr  # parses an f-string field at a (line, col)

    def error(self, message: str, meta, cls: str = "SyntaxError") -> TgError:
        return TgError(cls, message, filename=self.filename, **_pos(meta))

    # ---- statements ----
    def module(self, meta, *stmts):
        return ast.Module(_flatten(stmts), line=1, col=1)

    def fexpr(self, meta, expr):
        return expr

    def simple_stmt(self, meta, *stmts):
        return list(stmts)

    def suite(self, meta, *stmts):
        return _flatten(stmts)

    def expr_stmt(self, meta, value):
        return ast.ExprStmt(value, **_pos(meta))

    def assign(self, meta, *items):
        for target in items[:-1]:
            self.check_target(target)
        return ast.Assign(tuple(items[:-1]), items[-1], **_pos(meta))

    def aug_assign(self, meta, target, op, value):
        if not isinstance(target, _ASSIGNABLE):
            raise self.error(f"'{_describe(target)}' is an illegal expression for augmented assignment", target_meta(target))
        return ast.AugAssign(target, str(op)[:-1], value, **_pos(meta))

    def check_target(self, target) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.check_target(elt)
        elif not isinstance(target, _ASSIGNABLE):
            raise self.error(f"cannot assign to {_describe(target)} here. "
                             "Maybe you meant '==' instead of '='?", target_meta(target))

    def pass_stmt(self, meta):
        return ast.Pass(**_pos(meta))

    def break_stmt(self, meta):
        return ast.Break(**_pos(meta))

    def continue_stmt(self, meta):
        return ast.Continue(**_pos(meta))

    def return_stmt(self, meta, value):
        return ast.Return(value, **_pos(meta))

    def assert_stmt(self, meta, test, msg):
        return ast.Assert(test, msg, **_pos(meta))

    def dotted_name(self, meta, *names):
        return ".".join(names)

    def import_stmt(self, meta, module, asname):
        return ast.Import(module, None if asname is None else str(asname), **_pos(meta))

    def from_import(self, meta, module, *names):
        raise self.error(f"'from {module} import ...' is not supported in .tg programs; "
                         "use 'import torch', 'import torch.nn as nn', "
                         "'import torch.nn.functional as F' or 'import math'", meta)

    del_stmt = _unsupported("'del' statements are")
    global_stmt = _unsupported("'global' and 'nonlocal' statements are")
    raise_stmt = _unsupported("'raise' statements are")
    star_param = _unsupported("*args and **kwargs parameters are")
    star_arg = _unsupported("*args and **kwargs arguments are")

    def if_stmt(self, meta, test, body, *rest):
        *elifs, orelse = rest
        orelse = orelse or ()
        for clause in reversed(elifs):  # elif chains become nested Ifs, as in Python's ast
            orelse = (ast.If(clause.test, clause.body, orelse, line=clause.line, col=clause.col,
                             end_line=meta.end_line, end_col=meta.end_column),)
        return ast.If(test, body, orelse, **_pos(meta))

    def elif_clause(self, meta, test, body):
        return ast.If(test, body, (), **_pos(meta))

    def while_stmt(self, meta, test, body, orelse):
        if orelse is not None:
            raise self.error("'while ... else' is not supported in .tg programs", meta)
        return ast.While(test, body, **_pos(meta))

    def for_stmt(self, meta, target, iterable, body, orelse):
        if orelse is not None:
            raise self.error("'for ... else' is not supported in .tg programs", meta)
        self.check_target(target)
        return ast.For(target, iterable, body, **_pos(meta))

    def funcdef(self, meta, name, params, body):
        params = params or ()
        seen, defaults = set(), False
        for p in params:
            if p.name in seen:
                raise self.error(f"duplicate argument '{p.name}' in function definition", target_meta(p))
            seen.add(p.name)
            if p.default is None and defaults:
                raise self.error("non-default argument follows default argument", target_meta(p))
            defaults = defaults or p.default is not None
        return ast.FunctionDef(str(name), params, body, **_pos(meta))

    def parameters(self, meta, *params):
        return tuple(params)

    def param(self, meta, name):
        return ast.Param(str(name), None, **_pos(meta))

    def param_default(self, meta, name, default):
        return ast.Param(str(name), default, **_pos(meta))

    def with_stmt(self, meta, context, name, body):
        return ast.With(context, None if name is None else str(name), body, **_pos(meta))

    # ---- expressions ----
    def tuple(self, meta, *elts):
        return ast.Tuple(tuple(elts), **_pos(meta))

    def list_(self, meta, *elts):
        return ast.List(tuple(elts), **_pos(meta))

    def ifexp(self, meta, body, test, orelse):
        return ast.IfExp(test, body, orelse, **_pos(meta))

    def or_(self, meta, *values):
        return ast.BoolOp("or", tuple(values), **_pos(meta))

    def and_(self, meta, *values):
        return ast.BoolOp("and", tuple(values), **_pos(meta))

    not_ = _unary("not")
    neg = _unary("-")
    pos = _unary("+")
    invert = _unary("~")

    def compare(self, meta, left, *rest):
        ops = tuple(rest[0::2])
        return ast.Compare(left, ops, tuple(rest[1::2]), **_pos(meta))

    def comp_op(self, meta, *words):
        return " ".join(str(w) for w in words)  # 'not' 'in' -> 'not in'

    bitor, bitxor, bitand = _binop("|"), _binop("^"), _binop("&")
    lshift, rshift = _binop("<<"), _binop(">>")
    add, sub, mul, div = _binop("+"), _binop("-"), _binop("*"), _binop("/")
    floordiv, mod, matmul, pow = _binop("//"), _binop("%"), _binop("@"), _binop("**")

    def attribute(self, meta, value, name):
        return ast.Attribute(value, str(name), **_pos(meta))

    def call(self, meta, func, arguments):
        args, keywords, names = [], [], set()
        for arg in arguments or ():
            if isinstance(arg, ast.Keyword):
                if arg.arg in names:
                    raise self.error(f"keyword argument repeated: {arg.arg}", target_meta(arg))
                names.add(arg.arg)
                keywords.append(arg)
            elif keywords:
                raise self.error("positional argument follows keyword argument", target_meta(arg))
            else:
                args.append(arg)
        return ast.Call(func, tuple(args), tuple(keywords), **_pos(meta))

    def arguments(self, meta, *args):
        return args

    def kwarg(self, meta, name, value):
        return ast.Keyword(str(name), value, **_pos(meta))

    def subscript(self, meta, value, index):
        return ast.Subscript(value, index, **_pos(meta))

    def slice(self, meta, lower, upper, step):
        return ast.Slice(lower, upper, step, **_pos(meta))

    def name(self, meta, tok):
        return ast.Name(str(tok), **_pos(meta))

    def int_(self, meta, tok):
        return ast.Constant(int(tok.replace("_", ""), 0) if tok[:2].lower() in ("0x", "0b", "0o")
                            else _decimal_int(self, tok, meta), **_pos(meta))

    def float_(self, meta, tok):
        return ast.Constant(float(tok.replace("_", "")), **_pos(meta))

    def true(self, meta):
        return ast.Constant(True, **_pos(meta))

    def false(self, meta):
        return ast.Constant(False, **_pos(meta))

    def none(self, meta):
        return ast.Constant(None, **_pos(meta))

    def ellipsis(self, meta):
        return ast.Constant(..., **_pos(meta))

    def string(self, meta, *toks):
        parts: list = []
        for tok in toks:
            parts.extend(self.string_parts(tok))
        if all(isinstance(p, str) for p in parts):
            return ast.Constant("".join(parts), **_pos(meta))
        return ast.FString(_merge(parts), **_pos(meta))

    def string_parts(self, tok: Token) -> list:
        """Split one STRING token into literal text and FormattedValue fields."""
        text = str(tok)
        prefix = text[: len(text) - len(text.lstrip("rRfFuUbB"))].lower()
        if "b" in prefix:
            raise TgError("SyntaxError", "bytes literals are not supported in .tg programs",
                          filename=self.filename, **_tok_pos(tok))
        quote = 3 if text[len(prefix):].startswith(('"""', "'''")) else 1
        body = text[len(prefix) + quote: len(text) - quote]
        start = tok.column + len(prefix) + quote  # column of body[0] (first line only)
        if "f" not in prefix:
            return [body if "r" in prefix else _unescape(body)]
        from .fstrings import split_fstring  # noqa: PLC0415  (keeps this module short)
        return split_fstring(body, raw="r" in prefix, line=tok.line, col=start, tok=tok,
                             unescape=_unescape, parse_fexpr=self.parse_fexpr, filename=self.filename)


def _decimal_int(tr: ToAst, tok: str, meta) -> int:
    digits = tok.replace("_", "")
    if len(digits) > 1 and digits[0] == "0" and digits.strip("0"):
        raise tr.error("leading zeros in decimal integer literals are not permitted; "
                       "use an 0o prefix for octal integers", meta)
    return int(digits)


def _merge(parts: list) -> tuple:
    out: list = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return tuple(out)


def target_meta(node):
    """Nodes expose the same position attributes as Lark's meta (line/column/end_*)."""
    class _M:
        line, column, end_line, end_column = node.line, node.col, node.end_line, node.end_col
    return _M


_DESCRIBE = {ast.Call: "function call", ast.Constant: "literal", ast.BinOp: "expression",
             ast.UnaryOp: "expression", ast.BoolOp: "expression", ast.Compare: "comparison",
             ast.IfExp: "conditional expression", ast.FString: "f-string expression"}


def _describe(node) -> str:
    return _DESCRIBE.get(type(node), "expression")
