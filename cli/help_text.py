"""`--help` in the user's language: the help texts are marked with N_() where the commands
are declared (they are built at import, before `--lang` is read) and translated here, when
click formats them.

In English click formats as always. In another language a formatter of ours does, which
looks each text up in the catalog, also click's and Typer's few words (headings, `[required]`,
the --help option), and wraps by terminal columns: click counts characters, and a Chinese
character takes two columns.
"""

from __future__ import annotations

import typer
from typer.core import TyperCommand, TyperGroup

from autodiff.text.display import text_width, wrap
from autodiff.text.i18n import N_, _, english

# What click and Typer write themselves, as they write it.
_THEIRS = {
    "Usage: ": N_("Usage: "),
    "Options": N_("Options"),
    "Arguments": N_("Arguments"),
    "Commands": N_("Commands"),
    "Show this message and exit.": N_("Show this message and exit."),
    "Install completion for the current shell.": N_("Install completion for the current shell."),
    "Show completion for the current shell, to copy it or customize the installation.":
        N_("Show completion for the current shell, to copy it or customize the installation."),
}
_NOTES = {"required": N_("required"), "default": N_("default: {value}")}


def translated(text: str) -> str:
    return _(_THEIRS.get(text, text))


def _with_notes(text: str) -> str:
    """An option's help, then click's `[default: 1e-06; required]` notes, each translated."""
    body, sep, notes = text.rpartition("  [")
    if not sep or not notes.endswith("]"):
        return translated(text)
    parts = []
    for note in notes[:-1].split("; "):
        key, _colon, value = note.partition(": ")
        parts.append(_(_NOTES[key]).format(value=value) if key in _NOTES else note)
    return (translated(body) + "  " if body else "") + "[" + "; ".join(parts) + "]"


# Typer's own click (it vendors one from 0.27 on): its classes, not a separately installed click's
_HelpFormatter = typer.Context.formatter_class


class TranslatingFormatter(_HelpFormatter):
    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog, args, translated("Usage: ") if prefix is None else prefix)

    def write_heading(self, heading: str) -> None:
        self.write(" " * self.current_indent
                   + _("{heading}:").format(heading=translated(heading)) + "\n")

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        paragraphs = translated(text).split("\n\n")
        for n, paragraph in enumerate(paragraphs):
            if n:
                self.write("\n")
            joined = " ".join(line.strip() for line in paragraph.splitlines())
            for line in wrap(joined, max(self.width - self.current_indent, 20)):
                self.write(indent + line + "\n")

    def write_dl(self, rows, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first_col = min(max((text_width(first) for first, _second in rows), default=0),
                        col_max) + col_spacing
        for first, second in rows:
            self.write(" " * self.current_indent + first)
            if not second:
                self.write("\n")
                continue
            if text_width(first) <= first_col - col_spacing:
                self.write(" " * (first_col - text_width(first)))
            else:
                self.write("\n" + " " * (first_col + self.current_indent))
            lines = wrap(_with_notes(second), max(self.width - first_col - 2, 10)) or [""]
            self.write(lines[0] + "\n")
            for line in lines[1:]:
                self.write(" " * (first_col + self.current_indent) + line + "\n")


class Context(typer.Context):
    def make_formatter(self) -> _HelpFormatter:
        if english():
            return super().make_formatter()
        return TranslatingFormatter(width=self.terminal_width, max_width=self.max_content_width)


class Group(TyperGroup):
    context_class = Context


class Command(TyperCommand):
    context_class = Context

    def get_short_help_str(self, limit: int = 45) -> str:
        """The help's first paragraph, whole (click cuts it at `limit` characters, a limit
        meant for English words)."""
        return translated(self.help or "").split("\n\n")[0]
