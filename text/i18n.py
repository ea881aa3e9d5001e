"""The one function every message autodiff writes itself goes through: `_("text")`.

The language is English or Chinese: `--lang` chooses it for one command (`language()` here,
held in a context variable, so a thread running another program keeps its own), else the
environment does as gettext reads it (the first of LC_ALL, LC_MESSAGES, LANG that is set;
`zh...` means Chinese). The catalog is the standard gettext one shipped in the package:
`locale/zh_CN/LC_MESSAGES/autodiff.mo`, compiled from the `.po` beside it by
tests/make_catalog.py. PyTorch's and Python's own messages and the program's output never go
through `_()`: they stay exactly as PyTorch prints them.
"""

from __future__ import annotations

import gettext
import os
from contextlib import contextmanager
from contextvars import ContextVar, Token
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Mapping

LANGUAGES = ("en", "zh")
DOMAIN = "autodiff"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LOCALES = {"zh": "zh_CN"}  # language -> the catalog's folder under LOCALE_DIR
ENVIRONMENT = ("LC_ALL", "LC_MESSAGES", "LANG")  # gettext's order of precedence

_chosen: ContextVar[str | None] = ContextVar("autodiff_language", default=None)


def normalize(lang: str) -> str:
    """'en' or 'zh' for what a user writes (zh, zh_CN, zh-Hans, EN); ValueError otherwise."""
    code = lang.strip().lower().replace("-", "_")
    for known in LANGUAGES:
        if code == known or code.startswith(known + "_") or code.startswith(known + "."):
            return known
    raise ValueError(f"unknown language {lang!r}: choose one of {', '.join(LANGUAGES)}")


def from_environment(environ: Mapping[str, str] | None = None) -> str:
    """The language the locale variables ask for: the first one set decides."""
    environ = os.environ if environ is None else environ
    for variable in ENVIRONMENT:
        value = environ.get(variable)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def current() -> str:
    chosen = _chosen.get()
    return chosen if chosen is not None else from_environment()


def choose(lang: str | None) -> Token:
    """Use `lang` in this context from now on (None: the environment decides again); give
    the token to `forget` to go back."""
    return _chosen.set(None if lang is None else normalize(lang))


def forget(token: Token) -> None:
    try:
        _chosen.reset(token)
    except ValueError:  # the token belongs to another context: back to the environment's choice
        _chosen.set(None)


@contextmanager
def language(lang: str | None) -> Iterator[None]:
    token = choose(lang)
    try:
        yield
    finally:
        forget(token)


@lru_cache(maxsize=None)
def catalog(lang: str) -> gettext.NullTranslations:
    """The compiled catalog of `lang`; English, or an install without the file, translates
    nothing."""
    if lang not in LOCALES:
        return gettext.NullTranslations()
    try:
        return gettext.translation(DOMAIN, str(LOCALE_DIR), languages=[LOCALES[lang]])
    except OSError:
        return gettext.NullTranslations()


def _(message: str) -> str:
    """The message in the current language."""
    lang = current()
    return message if lang == "en" else catalog(lang).gettext(message)


def N_(message: str) -> str:
    """Marks a message translated later, where it is shown (a --help text built at import):
    the catalog's extraction finds it, and `_()` translates it then."""
    return message


def english() -> bool:
    return current() == "en"
