"""What every standard module of the language shares: a namespace class whose public names are
its `_tg_public` (the sandbox's allow-list) and whose other names of the real module are
refused as not supported (known_names.stand_in reads names.py), and the plain-function
wrapper that gives a host function the name Python shows."""

from __future__ import annotations

from typing import Any, Callable


class StdModule:
    """A standard module as a program sees it. Subclasses set `_tg_module_name` and
    `_tg_public`; `shown` is how `print(module)` shows it (CPython's text, without the
    host's file path)."""

    _tg_module_name = ""
    _tg_public: frozenset = frozenset()
    shown = "built-in"

    def __repr__(self) -> str:
        where = f" ({self.shown})" if self.shown else ""
        return f"<module '{self._tg_module_name}'{where}>"


def function(name: str, body: Callable[..., Any], qualname: str | None = None) -> Callable:
    """`body` named as the module's function is (its errors and repr say `name`)."""
    body.__name__ = name
    body.__qualname__ = qualname or name
    return body


def public(*groups: str) -> frozenset:
    return frozenset(" ".join(groups).split())
