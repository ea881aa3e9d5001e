"""The one way autodiff's text reaches stdout and stderr: every control character of it made
visible (text/display.py `visible`), so no program output, error message or file name that
a report shows can drive the reader's terminal (clear it, write its clipboard, retitle it).

`guard_streams` puts a `VisibleStream` in front of sys.stdout and sys.stderr once, when a
command starts; Rich consoles write past it to the stream behind, after a render hook made
their text visible (their own colour codes must reach the terminal). The one text that goes
out untouched is the program's own stdout under `autodiff run`: that is PyTorch's output,
byte for byte (`raw_stream`).
"""

from __future__ import annotations

import sys
from typing import Iterable, TextIO

from autodiff.text.display import visible


class VisibleStream:
    """A text stream that writes `visible(text)` to the stream behind it (`raw`); a character
    the stream's encoding cannot hold is written as its backslash escape."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        shown = visible(text)
        encoding = getattr(self.raw, "encoding", None) or "utf-8"
        if encoding.lower().replace("-", "") != "utf8":
            shown = shown.encode(encoding, "backslashreplace").decode(encoding)
        self.raw.write(shown)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):  # flush, fileno, isatty, encoding, ...: the stream's
        return getattr(self.raw, name)


def guard_streams() -> None:
    """Put a VisibleStream in front of sys.stdout and sys.stderr (once)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, VisibleStream):
            setattr(sys, name, VisibleStream(stream))


def raw_stream(out: TextIO) -> TextIO:
    """The stream behind the guard: for the program's own output under `run`, and for Rich
    consoles (whose text `VisibleText` made visible)."""
    return out.raw if isinstance(out, VisibleStream) else out


class VisibleText:
    """A Rich render hook: each renderable's text segments made visible (Rich's own control
    segments, cursor moves of a progress bar, are left alone)."""

    def process_renderables(self, renderables: list) -> list:
        return [_Visible(r) for r in renderables]


class _Visible:
    def __init__(self, renderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console, options):
        from rich.segment import Segment

        for segment in console.render(self.renderable, options):
            text, style, control = segment
            if control or not text:
                yield segment
            else:
                shown = visible(text)
                yield segment if shown is text else Segment(shown, style)
