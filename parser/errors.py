"""Turn parse errors into TgErrors worded for a learner, not a grammar dump."""

from __future__ import annotations

import re

from autodiff.text.diagnostics import TgError, source_lines
from .lalr import UnexpectedCharacters, UnexpectedToken

# Terminals that can start an expression: when the parser accepts these, say "an expression".
_EXPR_START = {"NAME", "INT", "FLOAT", "STRING", "LPAR", "LSQB", "MINUS", "PLUS", "TILDE",
               "NOT", "TRUE", "FALSE", "NONE"}
# Punctuation worth naming, in the order a learner most likely forgot it.
_NAMED = [("COLON", "':'"), ("RPAR", "')'"), ("RSQB", "']'"), ("EQUAL", "'='"),
          ("IN", "'in'"), ("ELSE", "'else'"), ("NAME", "a name"), ("_INDENT", "an indented block"),
          ("_NEWLINE", "end of line")]
_UNSUPPORTED_WORDS = {
    "async": "'async' code is", "await": "'await' is",
    "match": "'match' statements are",
}
_WORD = re.compile(r"[rRfFuUbB]{0,2}('''|\"\"\"|'|\")|#.*|[A-Za-z_]\w*|\S")


def _describe_token(tok) -> str:
    kind = tok.type
    if kind == "$END":
        return "end of file"
    if kind == "_NEWLINE":
        return "end of line"
    if kind == "_INDENT":
        return "an indented block"
    if kind == "_DEDENT":
        return "end of the indented block"
    text = str(tok)
    return repr(text if len(text) <= 20 else text[:17] + "...")


def _expected_words(expected: set[str], opener: str | None, header: bool) -> str:
    """LALR merges lookaheads, so `expected` over-approximates; context picks the likely fix."""
    if "NAME" in expected and _EXPR_START & expected:
        return "an expression"
    if opener is not None:
        return "',' or '" + {"(": ")", "[": "]", "{": "}"}[opener] + "'"
    if header and "COLON" in expected:
        return "':'"
    if "_INDENT" in expected:
        return "an indented block"
    if "_NEWLINE" in expected:
        return "end of line"
    if "LESSTHAN" in expected:
        expected = expected - {"IN"}  # `in` is then just one more comparison, not `for ... in`
    words = [text for name, text in _NAMED if name in expected]
    return " or ".join(words[:2]) if words else "something else"


_SCAN = re.compile(r"""[rRfFuUbB]{0,2}("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|#[^\n]*|[()\[\]{}]""")


def _open_bracket(source: str, lines: list[str], line: int, col: int) -> str | None:
    """The innermost bracket still open at (line, col), ignoring strings and comments."""
    offset = sum(len(x) + 1 for x in lines[: line - 1]) + col - 1
    stack: list[str] = []
    for m in _SCAN.finditer(source, 0, offset):
        ch = m.group(0)
        if ch in "([{":
            stack.append(ch)
        elif ch in ")]}" and stack:
            stack.pop()
    return stack[-1] if stack else None


_HEADER = re.compile(r"\s*(if|elif|else|while|for|def|with|class|try|except|finally)\b")


def _unsupported_word(source_line: str, upto: int) -> str | None:
    """A word such as 'class' or 'lambda' before the error column explains most errors."""
    for m in _WORD.finditer(source_line):
        if m.start() >= upto:
            break
        word = m.group(0)
        if word in _UNSUPPORTED_WORDS:
            return f"{_UNSUPPORTED_WORDS[word]} not supported by autodiff"
        if m.group(1):  # skip over a string on this line
            end = source_line.find(m.group(1), m.end())
            if end < 0:
                break
    return None


def translate(exc: UnexpectedCharacters | UnexpectedToken, source: str, filename: str) -> TgError:
    lines = source_lines(source)

    def err(cls: str, message: str, line: int, col: int, width: int = 1) -> TgError:
        return TgError(cls, message, filename=filename, line=line, col=col, end_col=col + width)

    if isinstance(exc, UnexpectedCharacters):
        line, col = exc.line, exc.column
        ch = source[exc.pos_in_stream] if exc.pos_in_stream < len(source) else ""
        text = lines[line - 1] if line <= len(lines) else ""
        if ch in "'\"":
            rest = source[exc.pos_in_stream:]
            if rest.startswith(ch * 3) or re.match(r"[rRfFuUbB]{1,2}('''|\"\"\")", text[col - 3: col + 2]):
                return err("SyntaxError", f"unterminated triple-quoted string literal (detected at line "
                           f"{len(lines)})", line, col)
            return err("SyntaxError", f"unterminated string literal (detected at line {line})", line, col)
        if ch == "\\":
            return err("SyntaxError", "unexpected character after line continuation character", line, col)
        found = _unsupported_word(text, col - 1)
        if found:
            return err("SyntaxError", found, line, col)
        if ch and not ch.isprintable():  # Python's words for an ideographic space, a control byte
            return err("SyntaxError", f"invalid non-printable character U+{ord(ch):04X}", line, col)
        if ch and (ch in "$?`!" or ord(ch) > 127):
            return err("SyntaxError", f"invalid character {ch!r} (U+{ord(ch):04X})", line, col)
        return err("SyntaxError", "invalid syntax", line, col)

    tok = exc.token
    expected = set(exc.expected)
    if tok.type == "$END":
        last = len(lines)
        return err("SyntaxError", f"expected {_expected_words(expected, None, False)}, got end of file",
                   last, len(lines[-1]) + 1 if lines else 1)
    kind = tok.type
    if kind == "_INDENT":
        line, col = tok.end_line, tok.end_column
        return err("IndentationError", "unexpected indent", line, col)
    if "_INDENT" in expected and kind in ("_NEWLINE", "_DEDENT") or (
            "_INDENT" in expected and len(expected) <= 2):
        line = tok.end_line
        header = _header_line(lines, tok.line)
        col = max(tok.end_column, 1) if kind in ("_NEWLINE", "_DEDENT") else tok.column
        return err("IndentationError", f"expected an indented block after line {header}", line, col)
    line, col = tok.line, tok.column
    header = _empty_block_header(lines, line)
    if header:
        return err("IndentationError", f"expected an indented block after line {header}", line, col)
    text = lines[line - 1] if line <= len(lines) else ""
    found = _unsupported_word(text, col)
    if found is None:
        found = _special(kind, expected, text, col)
    if found:
        return err("SyntaxError", found, line, col, max(len(str(tok)), 1) if kind != "_NEWLINE" else 1)
    width = len(str(tok)) if kind not in ("_NEWLINE", "_DEDENT") else 1
    words = _expected_words(expected, _open_bracket(source, lines, line, col), bool(_HEADER.match(text)))
    return err("SyntaxError", f"expected {words}, got {_describe_token(tok)}", line, col, width)


def _special(kind: str, expected: set[str], text: str, col: int) -> str | None:
    if kind == "YIELD":  # (a yield statement parses: this one stands inside an expression)
        return "'yield' inside an expression is not supported by autodiff (the statements " \
               "'yield value' and 'yield from values' are)"
    if kind == "FOR" and "RPAR" in expected and "COMMA" in expected:
        return "Generator expression must be parenthesized"
    if kind == "COLON" and text[col - 1: col + 1] == ":=":
        return "assignment expressions (':=') are not supported by autodiff"
    if kind == "EQUAL" and "_NEWLINE" not in expected and "EQUAL" not in expected:
        return "invalid syntax. Maybe you meant '==' or ':=' instead of '='?"
    return None


def _empty_block_header(lines: list[str], line: int) -> int | None:
    """If `line` should have been indented under the `...:` line before it, that line's number."""
    if not 1 < line <= len(lines):
        return None
    for prev in range(line - 1, 0, -1):
        text = lines[prev - 1].split("#")[0].rstrip()
        if text:
            indent = len(lines[prev - 1]) - len(lines[prev - 1].lstrip())
            here = len(lines[line - 1]) - len(lines[line - 1].lstrip())
            return prev if text.endswith(":") and here <= indent else None
    return None


def _header_line(lines: list[str], upto: int) -> int:
    """The line of the block header (ending in ':') just before an empty block."""
    for i in range(min(upto, len(lines)), 0, -1):
        if lines[i - 1].rstrip().endswith(":"):
            return i
    return upto
