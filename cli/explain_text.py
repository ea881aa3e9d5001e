"""An op's rule as `explain` shows it: the registry entry's formula with the node's own numbers
put in.

A formula reads "rule: gradient expression" (e.g. "∂(aⁿ)/∂a = n·aⁿ⁻¹: g·n·aⁿ⁻¹"). The
expression's symbols are bound to the node's own values: g (the gradient arriving), out (the
forward result), each input under the name its formula differentiates by ("/∂b" names input
1 b), constants under the name the rule uses for them (exponent n, other or base c, alpha),
and n for a mean (elements averaged per output). Nothing per op is written twice: the
formula text is the template.
"""

from __future__ import annotations

import re

import numpy as np

from autodiff.engine.ops.registry import Op

_SYMBOL = re.compile(r"(?<![A-Za-z_'])(alpha|out|[A-Za-z])(?![A-Za-z_'(])([⁰¹²³⁴⁵⁶⁷⁸⁹⁻ⁿᵃᵇ]*)")
_UNSUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻ⁿᵃᵇ", "0123456789-nab")
_SUPER = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_CONSTANT_NAMES = {"exponent": "n", "other": "c", "base": "c", "alpha": "alpha"}
MAX_LISTED = 6  # a tensor with more elements is shown by its first element only
MAX_MATRIX = 12  # a matrix rule (⊗, ᵀ, Σ) lists its operands up to this many elements
_MATRIX_MARKS = "⊗ᵀΣ"


def number_text(x) -> str:
    """A number as a learner writes it: 4.5, 0.25, 8, 1e-05, True."""

    x = np.asarray(x).item() if hasattr(x, "shape") else x
    if isinstance(x, (bool, int)):
        return str(x)
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    text = f"{x:.6g}"
    return "0" if text == "-0" else text


def value_text(value, limit: int = MAX_LISTED) -> str:
    """A scalar, an all-equal tensor (its one value), or a list of at most `limit` elements
    (else its first element and `…`): `2.25`, `[0.1, 1]`, `[0.5, …]`."""

    array = np.asarray(value)
    if array.size == 0:
        return "[]"
    flat = array.reshape(-1)
    if array.ndim == 0 or np.all(flat == flat[0]):
        return number_text(flat[0])
    if array.size > limit:
        return f"[{number_text(flat[0])}, …]"
    return _nested(array.tolist())


def _nested(items) -> str:
    if isinstance(items, list):
        return "[" + ", ".join(_nested(i) for i in items) + "]"
    return number_text(items)


def input_symbols(op: Op, n_inputs: int) -> list:
    """What this op's formulas call each input (None where they do not name it)."""
    return _symbol_names(op, n_inputs, {})


def _symbol_names(op: Op, n_inputs: int, params: dict) -> list:
    """The name each input position goes by in this op's formulas."""
    names = [None] * n_inputs
    for j, formula in enumerate(op.formulas):
        found = re.search(r"/∂([A-Za-z]+)", formula)
        if found and j < n_inputs:
            names[j] = found.group(1)
    for j, name in enumerate(list(_signature(op))[:n_inputs]):
        if names[j] is None:
            names[j] = _CONSTANT_NAMES.get(name, name if len(name) == 1 else None)
    return names


def _signature(op: Op) -> dict:
    """The first rule's parameters after (F, g, out): name -> default (None: no default)."""
    import inspect

    if not op.vjps or op.variadic:
        return {}
    try:
        parameters = list(inspect.signature(op.vjps[0]).parameters.values())[3:]
    except (TypeError, ValueError):
        return {}
    return {p.name: None if p.default is inspect.Parameter.empty else p.default
            for p in parameters}


def bind_symbols(op: Op, g, out, inputs, params) -> dict:
    """Each symbol of op's formulas -> its value (arrays or numbers) for one node."""

    values = {"g": g}
    if out is not None:
        values["out"] = out
    inputs = inputs or ()
    for name, value in zip(_symbol_names(op, len(inputs), params or {}), inputs):
        if name is not None and value is not None:
            values.setdefault(name, value)
    for key, value in (params or {}).items():
        name = _CONSTANT_NAMES.get(key)
        if name is not None and isinstance(value, (bool, int, float)):
            values.setdefault(name, value)
    for key, default in _signature(op).items():
        name = _CONSTANT_NAMES.get(key)
        if name is not None and isinstance(default, (bool, int, float)):
            values.setdefault(name, default)
    shape = (params or {}).get("shape")
    if "n" not in values and op.name.startswith("Mean") and shape is not None:
        values["n"] = int(np.prod(shape)) // max(np.asarray(g).size, 1)
    return values


def rule_with_numbers(op: Op, position: int, values: dict) -> tuple[str, bool] | None:
    """The gradient expression of input `position`'s formula with `values` put in, and whether
    only the first element is shown (a tensor too long to list); None when the formula has
    no expression or no symbol of it has a value."""

    if position >= len(op.formulas) or ":" not in op.formulas[position]:
        return None
    expression = op.formulas[position].split(":", 1)[1].strip()
    arrays = {k: np.asarray(v) for k, v in values.items()}
    matrix = any(mark in expression for mark in _MATRIX_MARKS)
    if matrix:  # not elementwise: every operand listed whole, or no numbers at all
        named = [a for k, a in arrays.items() if re.search(rf"(?<![A-Za-z]){k}(?![A-Za-z])",
                                                             expression)]
        if any(a.size > MAX_MATRIX for a in named):
            return None
    first_only = not matrix and any(a.size > MAX_LISTED and not np.all(a == a.reshape(-1)[0])
                                    for a in arrays.values())
    if first_only:
        arrays = {k: a.reshape(-1)[:1] if a.size else a for k, a in arrays.items()}
    used = []

    def put_in(match) -> str:
        symbol, superscript = match.group(1), match.group(2)
        if symbol not in arrays:
            return match.group(0)
        used.append(symbol)
        array = arrays[symbol]
        base = _nested(array.tolist()) if matrix else value_text(array)
        if base.startswith("-") and match.start() > 0:
            base = f"({base})"
        if not superscript:
            return base
        exponent = _exponent(superscript.translate(_UNSUPER), arrays)
        if exponent is None:
            return base + superscript
        wrapped = f"({base})" if base.startswith("-") or base.startswith("[") else base
        if float(exponent).is_integer() and abs(exponent) < 1000:
            return wrapped + str(int(exponent)).translate(_SUPER)
        return f"{wrapped}^{number_text(exponent)}"

    text = _SYMBOL.sub(put_in, expression)
    if not used or used == ["g"] and expression.strip() == "g":
        return None
    return text, first_only


def _exponent(text: str, arrays: dict):
    """The value of a superscript such as `n-1` or `2`, when every symbol in it is one number."""

    total, sign, term = 0.0, 1, ""
    for ch in text + "+":
        if ch in "+-" and term:
            if term.isdigit():
                number = float(term)
            elif term in arrays and arrays[term].size >= 1 and np.all(
                    arrays[term] == arrays[term].reshape(-1)[0]):
                number = float(arrays[term].reshape(-1)[0])
            else:
                return None
            total += sign * number
            sign, term = (-1 if ch == "-" else 1), ""
        elif ch in "+-":
            sign = -1 if ch == "-" else 1
        else:
            term += ch
    return total
