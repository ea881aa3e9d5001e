"""Hints for troubles in the source file itself, as a Chinese learner's tools make them: a
file saved as GBK/GB18030 or UTF-16, punctuation typed by a Chinese input method.

Listed in RULES, which interpreter/hints.py adds to its table after its own; worded through `_()` too.
"""

from __future__ import annotations

import re
import unicodedata

from typing import TYPE_CHECKING

from autodiff.text.i18n import N_, _

if TYPE_CHECKING:
    from .hints import Context

RULES: list = []  # (error class, pattern, rule), in the order they are tried


def rule(error_class: str, pattern: str):
    """List a hint for errors of `error_class` whose message matches `pattern`."""
    def listed(fn):
        RULES.append((error_class, pattern, fn))
        return fn
    return listed

# Punctuation a Chinese input method types whose ASCII form NFKC does not give.
_ASCII_FOR = {"“": '"', "”": '"', "‘": "'", "’": "'", "。": ".", "、": ",", "【": "[",
              "】": "]", "《": "<", "》": ">", "…": "...", "—": "-", "·": ".", "\u3000": " "}


# The names Unicode gives the marks an input method types most, for translation.
_MARK_NAMES = frozenset((
    N_("fullwidth semicolon"), N_("fullwidth comma"), N_("fullwidth colon"),
    N_("fullwidth left parenthesis"), N_("fullwidth right parenthesis"),
    N_("fullwidth full stop"), N_("fullwidth exclamation mark"), N_("fullwidth question mark"),
    N_("fullwidth left square bracket"), N_("fullwidth right square bracket"),
    N_("fullwidth equals sign"), N_("fullwidth plus sign"), N_("fullwidth hyphen-minus"),
    N_("left double quotation mark"), N_("right double quotation mark"),
    N_("left single quotation mark"), N_("right single quotation mark"),
    N_("ideographic full stop"), N_("ideographic comma"), N_("ideographic space"),
    N_("left black lenticular bracket"), N_("right black lenticular bracket"),
    N_("left double angle bracket"), N_("right double angle bracket"),
    N_("horizontal ellipsis"), N_("em dash"), N_("middle dot")))


def ascii_for(ch: str) -> str | None:
    """The ASCII character a full-width (or Chinese) punctuation mark stands for."""
    if ch in _ASCII_FOR:
        return _ASCII_FOR[ch]
    folded = unicodedata.normalize("NFKC", ch)
    return folded if folded != ch and folded.isascii() and folded.isprintable() else None


_CODE_PART = re.compile(r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#.*)|([^"'#]+|["'])""")


def ascii_line(line: str) -> str:
    """`line` with full-width punctuation outside strings and comments made ASCII."""
    out = []
    for m in _CODE_PART.finditer(line):
        if m.group(1):
            out.append(m.group(1))
        else:
            out.append("".join(ascii_for(ch) or ch for ch in m.group(2)))
    return "".join(out)


@rule("SyntaxError", r"^invalid (non-printable )?character (?:'(?P<ch>.)' )?\(?U\+(?P<code>[0-9A-F]{4,6})")
def _full_width(m: re.Match, cx: Context) -> str | None:
    ch = chr(int(m["code"], 16))
    plain = ascii_for(ch)
    if plain is None:
        return None
    name = unicodedata.name(ch, "").lower()
    text = _("Did you mean '{plain}'? '{ch}' ({name}) is what a Chinese input method types; "
             "switch it to English (half-width) punctuation for code.").format(
        plain=plain, ch=ch, name=_(name) if name in _MARK_NAMES else
        name or f"U+{ord(ch):04X}")
    line = _source_line(cx)
    if line is not None:
        fixed = ascii_line(line)
        if fixed != line:
            text += "\n" + _("The line in ASCII: {line}").format(line=fixed.strip())
    return text


def _source_line(cx: Context) -> str | None:
    if cx.source is None:
        return None
    lines = cx.source.split("\n")
    return lines[cx.error.line - 1] if 1 <= cx.error.line <= len(lines) else None


def _plausible_text(text: str) -> bool:
    """Decoded text a person wrote: no control characters but line ends and tabs."""
    return all(ch.isprintable() or ch in "\t\r\n\f" for ch in text)


def _has_cjk(text: str) -> bool:
    return any(unicodedata.east_asian_width(ch) in ("W", "F") for ch in text)


@rule("SyntaxError", r"^\(unicode error\) 'utf-8' codec can't decode")
def _not_utf8(m: re.Match, cx: Context) -> str | None:
    raw = getattr(cx.error, "raw", None)
    name = cx.error.filename
    if raw is not None:
        try:
            text = raw.decode("gb18030")
        except UnicodeDecodeError:
            text = None
        if text is not None and _plausible_text(text) and _has_cjk(text):
            lines = text.replace("\r\n", "\n").split("\n")
            where = cx.error.line
            shown = lines[where - 1].strip() if 1 <= where <= len(lines) else ""
            return (_("{name} is not UTF-8: it reads as GB18030 (GBK), the encoding Chinese "
                      "Windows editors save in. Line {line} would read: {shown}").format(
                        name=name, line=where, shown=shown) + "\n" +
                    _("Save it as UTF-8 (in the editor: Save As, Encoding: UTF-8), or convert "
                      "it: iconv -f GB18030 -t UTF-8 {name} > utf8-{base}").format(
                        name=name, base=_base(name)))
    return _("{name} is not UTF-8 text, the encoding .tg programs (like Python files) are "
             "read in.").format(name=name) + "\n" + _("Save it as UTF-8 (in the editor: Save "
                                                      "As, Encoding: UTF-8).")


@rule("SyntaxError", r"^source code cannot contain null bytes")
def _utf16(m: re.Match, cx: Context) -> str | None:
    raw = getattr(cx.error, "raw", None)
    if raw is None or not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    return _("{name} is UTF-16 (what Windows Notepad calls \"Unicode\"). Save it as UTF-8 "
             "(Save As, Encoding: UTF-8).").format(name=cx.error.filename)


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]
