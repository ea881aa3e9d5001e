"""Rich consoles for the views: colour on a terminal, plain text when piped or asked.

Imported only by commands that draw with Rich, so `autodiff run --quiet` never loads it.
"""

from __future__ import annotations

import os
from typing import TextIO

from rich.console import Console
from rich.theme import Theme

THEME = Theme({
    "name": "bold cyan", "op": "magenta", "leaf": "green", "dim": "dim",
    "ok": "bold green", "fail": "bold red", "warn": "yellow", "value": "default",
    "error": "bold red",
})


def make_console(out: TextIO, *, no_color: bool = False) -> Console:
    """A console on `out`; NO_COLOR (any value) or `no_color` turns colour off."""
    plain = no_color or "NO_COLOR" in os.environ
    return Console(file=out, theme=THEME, no_color=plain, color_system=None if plain else "auto",
                   highlight=False, soft_wrap=True, emoji=False)
