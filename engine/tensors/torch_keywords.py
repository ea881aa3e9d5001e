"""Keywords PyTorch's argument parser handles for every function, which the engine's own
functions do not name: NumPy's `axis` for `dim` and `keepdims` for `keepdim`
(`x.sum(axis=1, keepdims=True)`), and `out=` (the result written into a given tensor).

The interpreter asks only for calls that name one of them; the answer depends on the callee:
an engine op function with a `dim` (`keepdim`, `out`) parameter of its own, or any other
callable (NumPy's functions, the program's own), gets the call as written.
"""

from __future__ import annotations

import inspect
import warnings
from functools import lru_cache

import numpy as np

from ..ops.operands import type_word
from ..ops.inplace import check_internal_overlap
from ..ops.registry import keyword_positions
from ..core.session import current
from .tensor import Tensor

ALIASES = {"axis": "dim", "keepdims": "keepdim"}
NAMES = frozenset(ALIASES) | {"out"}


@lru_cache(maxsize=256)
def _parameters(code) -> frozenset:
    return frozenset(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


def call(function, args: list, kwargs: dict):
    """`function(*args, **kwargs)` as torch's parser reads the keywords for it."""
    target = inspect.unwrap(getattr(function, "__func__", function))
    code = getattr(target, "__code__", None)
    if code is None or not getattr(target, "__module__", "").startswith("autodiff.engine.ops."):
        return function(*args, **kwargs)
    names = _parameters(code)
    renamed = {}
    for key, value in kwargs.items():
        alias = ALIASES.get(key)
        if alias is not None and key not in names and alias in names and alias not in kwargs:
            key = alias
        renamed[key] = value
    if "out" in renamed and "out" not in names:
        bound = getattr(function, "__self__", None)  # t.add(1, out=o): t is an input too
        return _into(renamed.pop("out"), target.__name__, function, args, renamed,
                     () if bound is None else (bound,))
    return function(*args, **renamed)


def _into(out, name: str, function, args: list, kwargs: dict, bound: tuple):
    """torch's `out=`: no autograd, the result cast into `out` (resized when its shape
    differs, with torch's warning unless it was empty); `out` is returned."""
    if type(out) is not Tensor:
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    inputs = (*bound, *args, *kwargs.values())
    if current().grad_enabled and (out.requires_grad or any(
            type(a) is Tensor and a.requires_grad for a in inputs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    result = function(*args, **kwargs)
    got, wanted = result.array.dtype, out.array.dtype
    if not np.can_cast(got, wanted, casting="same_kind"):
        raise RuntimeError(f"result type {type_word(got)} can't be cast to the desired output "
                           f"type {type_word(wanted)}")
    if out.array.shape != result.array.shape:
        if out.array.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.array.shape)}, which does not match the required output shape "
                f"{list(result.array.shape)}. This behavior is deprecated, and in a future "
                "PyTorch release outputs will not be resized unless they have zero elements. "
                "You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out.array = result.array.astype(wanted)
    else:
        check_internal_overlap(out)
        np.copyto(out.own_array(), result.array, casting="unsafe")
    out._bump_version()
    return out


def by_position(exc: Exception, function, name: str, owner, args: list, kwargs: dict):
    """torch's parser takes any positional parameter by its name too (`torch.add(a, other=b)`,
    `x.view(size=(3, 2))`, `F.relu(input=x)`), where the engine's function names it
    otherwise: after `function` refused such a keyword (or missed the parameter), the
    arguments with those keywords put in their places, as (args, kwargs); None where that is not the reason or not possible (a
    gap: torch's own error stands). A keyword for a place the arguments already fill is
    torch's TypeError."""
    if not isinstance(exc, TypeError) or not any(
            words in str(exc) for words in ("unexpected keyword argument", "required positional")):
        return None  # (`torch.sin_(input=t)`: the engine's first parameter missing)
    module = getattr(owner, "_tg_module_name", None)
    if type(getattr(function, "__self__", None)) is Tensor:
        key = f"Tensor.{name}"
    elif module == "torch":
        key = f"torch.{name}"
    elif module == "torch.nn.functional":
        key = f"F.{name}"
    else:
        return None
    positions = keyword_positions(key)  # (an op's own surface states them)
    if positions is None:
        from ..ops.torch_parameters import POSITIONS  # noqa: PLC0415 - an error path's table

        positions = POSITIONS.get(key)
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    if positions is None or any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    parameters = [p for p in parameters if p.kind is not p.VAR_POSITIONAL]
    accepted = {p.name for p in parameters}
    same_place = {p.name for k, p in enumerate(parameters) if positions.get(p.name) == k
                  and p.kind is p.POSITIONAL_OR_KEYWORD}
    moved, rest = {}, {}
    for key_name, value in kwargs.items():
        if key_name not in accepted and key_name in positions:
            if positions[key_name] < len(args):
                raise TypeError(f"{name}() got multiple values for argument '{key_name}'")
            moved[positions[key_name]] = value
        else:
            rest[key_name] = value
    if not moved:
        return None
    for key_name in [k for k in rest if k in same_place]:  # (one that fills a gap moves too)
        moved[positions[key_name]] = rest.pop(key_name)
    placed = list(args)
    while len(placed) in moved:
        placed.append(moved.pop(len(placed)))
    return None if moved else (placed, rest)
