"""NumPy's argument names that PyTorch's argument parser also takes: `axis` for `dim` and
`keepdims` for `keepdim` (`x.sum(axis=1, keepdims=True)`, `t.argmax(axis=1)`).

The interpreter asks only for calls that name one of them; the answer depends on the callee:
an engine function with a `dim` (`keepdim`) parameter and none called `axis` (`keepdims`)
gets the keyword renamed, anything else (NumPy's functions, the program's own) keeps it.
"""

from __future__ import annotations

import inspect
from functools import lru_cache

ALIASES = {"axis": "dim", "keepdims": "keepdim"}


@lru_cache(maxsize=256)
def _parameters(code) -> frozenset:
    return frozenset(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


def torch_keywords(function, kwargs: dict) -> dict:
    """`kwargs` as PyTorch's parser reads them for `function`."""
    target = inspect.unwrap(getattr(function, "__func__", function))
    code = getattr(target, "__code__", None)
    if code is None or not getattr(target, "__module__", "").startswith("autodiff.engine.ops_"):
        return kwargs
    names = _parameters(code)
    renamed = {}
    for key, value in kwargs.items():
        alias = ALIASES.get(key)
        if alias is not None and key not in names and alias in names and alias not in kwargs:
            key = alias
        renamed[key] = value
    return renamed
