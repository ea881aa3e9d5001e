"""Split the body of an f-string into literal text and `{expr!conv:spec}` fields.

Field expressions are parsed with the same grammar (start rule `fexpr`), positioned at
their real line/column so runtime errors inside them point at the right place.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from . import ast
from autodiff.text.diagnostics import TgError

_BRACE = re.compile(r"[{}]")


def _field_end(body: str, i: int) -> tuple[int, int, int]:
    """From just after '{', find (conversion '!' index or -1, top-level ':' index or -1, '}' index)."""
    depth, bang, colon, quote = 0, -1, -1, ""
    while i < len(body):
        ch = body[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]" or (ch == "}" and depth > 0):
            depth -= 1
        elif ch == "}" and colon < 0:
            return bang, colon, i
        elif depth == 0 and colon < 0 and ch == "!" and body[i + 1: i + 2] != "=":
            bang = i
        elif depth == 0 and ch == ":" and colon < 0:
            colon = i
            nested = 0
            for j in range(i + 1, len(body)):  # the spec may hold nested {fields}
                if body[j] == "{":
                    nested += 1
                elif body[j] == "}":
                    if nested == 0:
                        return bang, colon, j
                    nested -= 1
            break
        i += 1
    return bang, colon, -1


def _named_escape_end(body: str, j: int, raw: bool) -> int:
    """If the '{' at j opens the name of a `\\N{...}` escape, the index after its '}'; else -1."""
    if raw or j < 2 or body[j - 2: j] != "\\N":
        return -1
    k = j - 2
    while k > 0 and body[k - 1] == "\\":
        k -= 1
    if (j - 2 - k) % 2:  # an even run of backslashes before the N: `\\\\N{` is a field
        return -1
    close = body.find("}", j)
    return -1 if close < 0 else close + 1


def split_fstring(body: str, *, raw: bool, line: int, col: int, tok, unescape: Callable[[str], str],
                  parse_fexpr: Callable[[str, int, int], ast.Node], filename: str,
                  depth: int = 0) -> list:
    """`depth` counts format specs: a spec's fields may have specs, theirs no fields (Python's
    "expressions nested too deeply")."""
    def fail(message: str, prefix: str = "f-string: ") -> TgError:
        return TgError("SyntaxError", f"{prefix}{message}", filename=filename, line=tok.line,
                       col=tok.column, end_line=tok.end_line, end_col=tok.end_column)

    def literal_text(text: str) -> str:
        if raw:
            return text
        try:
            return unescape(text)
        except ValueError as exc:  # a malformed escape, worded as Python words it
            raise fail(str(exc), "") from None

    newlines = [k for k, ch in enumerate(body) if ch == "\n"] if "\n" in body else []

    def where(index: int) -> tuple[int, int]:
        before = bisect.bisect_left(newlines, index)  # line breaks before `index`
        if before == 0:
            return line, col + index
        return line + before, index - newlines[before - 1]

    parts: list = []
    literal: list[str] = []
    i = 0
    while True:
        brace = _BRACE.search(body, i)  # jump over literal text: a loop per character is slow
        if brace is None:
            literal.append(body[i:])
            break
        j = brace.start()
        literal.append(body[i:j])
        i = j
        ch = body[i]
        named = _named_escape_end(body, i, raw) if ch == "{" else -1
        if named >= 0:
            literal.append(body[i:named])
            i = named
        elif ch == "{" and body[i + 1: i + 2] == "{":
            literal.append("{")
            i += 2
        elif ch == "}":
            if body[i + 1: i + 2] != "}":
                raise fail("single '}' is not allowed")
            literal.append("}")
            i += 2
        else:
            if depth >= 2:
                raise fail("expressions nested too deeply")
            text = "".join(literal)
            parts.append(literal_text(text))
            literal = []
            bang, colon, end = _field_end(body, i + 1)
            if end < 0:
                raise fail("expecting '}'")
            expr_end = min(k for k in (bang, colon, end) if k >= 0)
            expr_text = body[i + 1: expr_end]
            if not expr_text.strip():
                raise fail("valid expression required before '}'")
            if expr_text.rstrip().endswith("=") and not expr_text.rstrip().endswith(("==", "!=", "<=", ">=")):
                raise fail("the '=' specifier is not supported by autodiff")
            eline, ecol = where(i + 1)
            value = parse_fexpr(expr_text, eline, ecol)
            conversion = None
            if bang >= 0:
                conversion = body[bang + 1: colon if colon >= 0 else end].strip()
                if conversion not in ("r", "s", "a"):
                    raise fail("invalid conversion character: expected 's', 'r', or 'a'")
            spec = None
            if colon >= 0:
                sline, scol = where(colon + 1)
                spec_parts = split_fstring(body[colon + 1: end], raw=raw, line=sline, col=scol, tok=tok,
                                           unescape=unescape, parse_fexpr=parse_fexpr, filename=filename,
                                           depth=depth + 1)
                spec = ast.FString(tuple(p for p in spec_parts if p != ""), line=sline, col=scol,
                                   end_line=sline, end_col=scol + end - colon - 1)
            fline, fcol = where(i)
            eline2, ecol2 = where(end + 1)
            parts.append(ast.FormattedValue(value, conversion, spec, line=fline, col=fcol,
                                            end_line=eline2, end_col=ecol2))
            i = end + 1
    text = "".join(literal)
    parts.append(literal_text(text))
    return parts
