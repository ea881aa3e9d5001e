"""The one function every message autodiff writes itself goes through: `_("text")`.

Today it returns the text unchanged. A later gettext catalog installs its translation here
(`use(gettext.translation(...))`) and every hint, in every command, follows. PyTorch's own
messages and the program's output never go through it: they stay exactly as PyTorch prints
them.
"""

from __future__ import annotations

import gettext

_translation: gettext.NullTranslations = gettext.NullTranslations()


def use(translation: gettext.NullTranslations) -> None:
    """Install a catalog (gettext.translation(...)); NullTranslations puts English back."""
    global _translation
    _translation = translation


def _(message: str) -> str:
    """The message in the user's language (English until a catalog is installed)."""
    return _translation.gettext(message)
