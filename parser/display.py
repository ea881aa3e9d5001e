"""Terminal columns of source text: a caret must sit under the character a terminal shows.

East Asian Wide and Fullwidth characters (Chinese, Japanese, Korean text, full-width
punctuation) take two columns; combining marks and zero-width format characters none.
"""

from __future__ import annotations

import unicodedata


def char_width(ch: str) -> int:
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
