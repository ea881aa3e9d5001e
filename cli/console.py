"""Rich consoles for the views: Rich decides colour (on a terminal, unless NO_COLOR is set
to a non-empty value, the convention); `--no-color` forces it off.

Imported only by commands that draw with Rich, so `autodiff run --quiet` never loads it.
"""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.theme import Theme

THEME = Theme({
    "name": "bold cyan", "op": "magenta", "leaf": "green", "dim": "dim",
    "ok": "bold green", "fail": "bold red", "warn": "yellow", "value": "default",
    "grad": "bold",  # what a learner came to see: brighter than the values around it
    "error": "bold red",
})


def make_console(out: TextIO, *, no_color: bool = False) -> Console:
    """A console on `out`; `no_color` turns colour and styles off, else Rich decides. What it
    prints shows control characters as escapes (cli/terminal.py), whatever `out` is."""
    from .terminal import VisibleText, raw_stream

    console = Console(file=raw_stream(out), theme=THEME, no_color=True if no_color else None,
                      color_system=None if no_color else "auto",
                      highlight=False, soft_wrap=True, emoji=False)
    console.push_render_hook(VisibleText())
    return console


def draws_in_colour(console: Console) -> bool:
    """Whether `console` will style its output (Rich's own terminal and NO_COLOR checks)."""
    return console.color_system is not None and not console.no_color
