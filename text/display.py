"""What a terminal shows of a text: its control characters made visible, and the columns it
takes, so a caret sits under the character it points at.

A program's text (its output, an error message, a file name) may hold control characters:
`ESC[2J` clears a terminal, OSC 52 writes its clipboard, a bidi override reorders the line.
`visible` shows each as an escape (`\\x1b`, `\\u202e`), as does a lone surrogate, which no
encoding can write. East Asian Wide and Fullwidth characters take two columns; combining
marks and zero-width format characters none; an escaped character the width of its escape.
"""

from __future__ import annotations

import re
import unicodedata

# C0 and C1 controls, DEL, the bidi controls (embeddings, overrides, isolates, marks) and
# lone surrogates; \t and \n are left to `keep`
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def escape_char(ch: str) -> str:
    """The escape `visible` writes for one character: \\n, \\x1b, \\u202e."""
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str, keep: str = "\n\t") -> str:
    """`text` with every control character but those in `keep` shown as its escape."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else escape_char(m.group()),
                       text)


def char_width(ch: str) -> int:
    if ch != "\t" and _UNSAFE.match(ch):  # shown as its escape (a tab stays a tab)
        return len(escape_char(ch))
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_width(text: str) -> int:
    return sum(char_width(ch) for ch in text)


def caret_line(text: str, col: int, width: int) -> str:
    """Spaces up to 1-based column `col` of `text`, then carets under `width` characters.
    Tabs are kept so the caret lines up under tab-indented code."""
    pad = "".join(ch if ch == "\t" else " " * char_width(ch) for ch in text[: col - 1])
    return pad + "^" * max(text_width(text[col - 1: col - 1 + width]), 1)


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` terminal columns: breaks at spaces, and between
    two characters of CJK text (which has no spaces), never inside a word of ASCII."""
    lines: list[str] = []
    line, used = "", 0
    for piece in _pieces(text):
        size = text_width(piece)
        if piece == " ":
            if line:
                line, used = line + " ", used + 1
            continue
        if used + size > width and line.strip():
            lines.append(line.rstrip())
            line, used = "", 0
        line, used = line + piece, used + size
    if line.strip():
        lines.append(line.rstrip())
    return lines


_CLOSING = "，。；：、）》」』！？”"
_OPENING = "（《「『“"


def _pieces(text: str) -> list[str]:
    """Words, single spaces, and single wide characters (each a place a line may break);
    punctuation stays with the character it belongs to."""
    pieces: list[str] = []
    word = ""
    for ch in text:
        if ch.isspace():
            if word:
                pieces.append(word)
                word = ""
            pieces.append(" ")
        elif char_width(ch) == 2 and ch not in _CLOSING:
            if word and word[-1] not in _OPENING:
                pieces.append(word)
                word = ""
            word += ch
            if ch not in _OPENING:
                pieces.append(word)
                word = ""
        elif ch in _CLOSING and not word and pieces and pieces[-1] != " ":
            word = pieces.pop() + ch  # a line never starts with a closing mark
        else:
            word += ch
    if word:
        pieces.append(word)
    return pieces
