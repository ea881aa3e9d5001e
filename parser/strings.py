"""String literals: Python's backslash escapes, decoded without eval.

The common escapes are decoded here; a `\\N{...}` name, and any escape Python refuses, go to
Python's own unicode-escape codec, given the body exactly as CPython's compiler gives it,
so the result and the error message (its positions included) are Python's.
"""

from __future__ import annotations

import re

_ESCAPES = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.DOTALL)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "\n": "",
           "a": "\a", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


class BadEscape(ValueError):
    """A malformed escape; the message is Python's own (its codec's) for the same literal."""


def unescape(text: str) -> str:
    """Decode Python backslash escapes (never via eval). `\\N{...}` escapes and malformed
    ones are left to Python's own codec, which knows the names and words the errors."""
    if "\\" not in text:
        return text
    if "\\N" in text:
        return _codec_unescape(text)

    def one(m: re.Match) -> str:
        s = m.group(1)
        if s in _SIMPLE:
            return _SIMPLE[s]
        if s[0] in "xuU":
            if len(s) == 1:  # too few hex digits
                raise BadEscape(_codec_error(text))
            code = int(s[1:], 16)
            if code > 0x10FFFF:
                raise BadEscape(_codec_error(text))
            return chr(code)
        if s[0] in "01234567":
            return chr(int(s, 8))
        return "\\" + s  # unknown escapes stay as written, as in Python
    return _ESCAPES.sub(one, text)


def _codec_form(text: str) -> bytes:
    """The bytes CPython's compiler hands its unicode-escape codec for a literal's body:
    non-ASCII characters as \\U escapes, a backslash before one (or at the end) escaped."""
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        i += 1
        if ch == "\\":
            out.append("\\")
            if i >= n or ord(text[i]) >= 128:
                out.append("u005c")
            else:  # the escaped character itself, whatever it is
                out.append(text[i])
                i += 1
        elif ord(ch) >= 128:
            out.append(f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return "".join(out).encode("ascii")


def _codec_unescape(text: str) -> str:
    import codecs
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "invalid escape sequence": Python keeps it as written
        try:
            return codecs.decode(_codec_form(text), "unicode_escape")
        except UnicodeDecodeError as exc:
            raise BadEscape(f"(unicode error) {exc}") from None


def _codec_error(text: str) -> str:
    try:
        _codec_unescape(text)
    except BadEscape as exc:
        return str(exc)
    return "(unicode error) malformed escape"  # not reached: the codec refuses what we refuse
