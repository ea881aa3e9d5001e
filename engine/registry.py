"""The op registry: one entry per op a program can produce, and the words rules are written in.

An `Op` entry holds everything about one grad_fn kind: PyTorch's name for it, the rule
(VJP) of each input, what it saves for backward, the explanation a learner reads
(`autodiff explain`), the gradient-check domain, and the public names under which its
forward is offered (`torch.X`, `Tensor.X`, operators). The family modules (`ops_*.py`)
define the entries; `tensor.py` builds Tensor's methods and operators from them, `api.py`
the torch namespaces, the sandbox its allow-list, `explain` its rules, the tests their
gradient checks, `docs/ops.md` its table: all from here and from nothing else.

Each `exposes` call is one surface: besides the public names, it states torch's names for the
forward's parameters (`params`, what `torch.X(input=t)` and `t.X(other=u)` take by keyword) and
the in-place decision (`inplace`: `x.X_()` and `torch.X_(x)` derived from the forward, or why
there is none). Both have defaults: the parameters read off the forward's own signature (its
`a` and `b` are torch's `input` and `other`), the decision from the family.

Rule vocabulary (HIPS-autograd style, one rule per input position):

    vjp(F, g, out, *inputs, **params) -> the gradient for that input, in out's shape

`F` is the vocabulary the rule computes with (the `Rules` namespaces below: NumPy arrays
in a plain backward, tensors under create_graph, so the same rule text is recorded and
can be differentiated again, and prints PyTorch's grad_fn names because each word is the
op PyTorch's own formula uses); `g` is the gradient arriving at the output; `out` is the
forward result (None unless the op saves "o"); the inputs by position (None unless the op
saves "i"; Python numbers stay numbers); `params` are what the forward recorded. The
engine sums a returned gradient back to its input's shape and dtype. Only inputs that
need a gradient have their rule called. A variadic op (cat, stack) has one rule, called
with `position=i` for input i.
"""

from __future__ import annotations

from typing import Callable, NamedTuple


class Check(NamedTuple):
    """How the gradient checker exercises an op: `call(*leaves)` builds the op from leaves
    drawn from `domains` (one per leaf: see `domain`), within the given tolerances."""

    call: Callable
    domains: tuple
    eps: float = 1e-6
    rtol: float = 1e-6
    atol: float = 1e-7


class Domain(NamedTuple):
    """Where an op's input may be drawn for a gradient check: a shape and a value range
    that keeps away from kinks and poles (`positive` for log, `away_from_zero` for 1/x)."""

    shape: tuple
    kind: str = "any"  # any | positive | away_from_zero | unit (in (-1, 1))

    def draw(self, rng):
        if self.kind == "positive":
            return rng.uniform(0.5, 2.0, self.shape)
        if self.kind == "away_from_zero":
            return rng.choice([-1, 1], self.shape) * rng.uniform(0.3, 2.0, self.shape)
        if self.kind == "unit":
            return rng.uniform(-0.8, 0.8, self.shape)
        return rng.uniform(-2.0, 2.0, self.shape)


def any_(*shape) -> Domain:
    return Domain(tuple(shape))


def positive(*shape) -> Domain:
    return Domain(tuple(shape), "positive")


def away_from_zero(*shape) -> Domain:
    return Domain(tuple(shape), "away_from_zero")


def unit(*shape) -> Domain:
    return Domain(tuple(shape), "unit")


class Op:
    """One registry entry (see the module docstring)."""

    __slots__ = ("name", "qualified_name", "vjps", "variadic", "saves_inputs", "saves_out",
                 "saves_params", "reads", "views", "explain", "formulas", "check", "family", "forward",
                 "functions", "methods", "node_rule", "repr_name", "differentiable")

    def __init__(self, name: str, *vjps, explain: str, formulas: tuple = (),
                 check: Check | None = None, saves: str = "", reads=None, views: bool = False,
                 variadic: bool = False, engine_node: bool = False, differentiable: bool = True):
        self.name = name  # as the node prints: <MulBackward0 object at ...>
        # what grad_fn.name() says: torch's own engine nodes carry their C++ namespace
        self.qualified_name = "torch::autograd::" + name if engine_node else name
        self.vjps = vjps
        self.variadic = variadic
        self.saves_inputs = "i" in saves
        self.saves_out = "o" in saves
        # "p": tensors among its params (a condition, indices, a mask) that a backward without
        # retain_graph frees, as torch frees them, so a second backward fails
        self.saves_params = "p" in saves
        # reads[i]: the inputs the VJP of input i uses; only those are version-checked,
        # so `x.mul_(2)` does not keep x's old value alive, as in torch
        self.reads = reads
        self.views = views  # the result shares the first input's storage (and version)
        self.explain = explain  # the rule in a learner's words
        self.formulas = formulas  # one formula per input, e.g. "∂(a·b)/∂a = b"
        self.check = check  # None only for ops whose gradient is checked through another
        self.family = ""
        self.forward = None  # the function that records this op (set by `exposes`)
        self.functions: tuple = ()
        self.methods: tuple = ()
        # a node whose whole backward is one call, node_rule(node, g, rules, create_graph) ->
        # one gradient per edge (a program's autograd.Function), instead of rules per input
        self.node_rule = None
        self.repr_name = name  # the class name its node prints with: <repr_name object at ...>
        # False for torch's NotImplemented node: its check asserts that backward fails
        self.differentiable = differentiable

    def __repr__(self) -> str:
        return f"Op({self.name})"


# --- the in-place decision of a surface ----------------------------------------------------------

IN_PLACE = "torch.X_ and Tensor.X_"  # both derived from the forward (sin_, clamp_)
METHOD_IN_PLACE = "Tensor.X_"  # the method only: torch has no torch.X_ (add_, sign_)
OWN_IN_PLACE = "Tensor.X_ of its own"  # a surface of its own offers X_ (bernoulli_)


def no_in_place(reason: str) -> str:
    """The decision of a surface torch offers no in-place variant of either, and why."""
    return "none: " + reason


def in_place_gap(reason: str) -> str:
    """The decision of a surface whose in-place variant torch has and autodiff does not offer,
    and why (its `x.X_()` is then "not supported", as any name autodiff lacks)."""
    return "gap: " + reason


def torch_parameters(forward: Callable) -> tuple | None:
    """torch's names for the positional parameters of `forward`'s function form, read off its
    signature (the engine's `a` and `b` are torch's `input` and `other`); None when it takes
    `*args`, whose names only a surface's `params` can give."""
    import inspect

    names: list = []
    for p in inspect.signature(inspect.unwrap(forward)).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append({"a": "input", "b": "other"}.get(p.name, p.name))
    return tuple(names)


class Surface(NamedTuple):
    """One `exposes` call: a forward's public names, torch's names for its parameters (those of
    torch.X; Tensor.X takes the same without the first; a tuple of names where overloads put
    different ones at one place) and its in-place decision (IN_PLACE, METHOD_IN_PLACE,
    OWN_IN_PLACE, `no_in_place(why)`, `in_place_gap(why)`). `inplace_entry`: what the in-place
    variant records where torch's records another node than the op's (asinh_: a node without
    a derivative). `variant_of`: the surface an in-place variant was derived from."""

    forward: Callable
    functions: tuple
    methods: tuple
    nn: tuple
    params: tuple | None
    inplace: str
    variant_of: "Surface | None" = None
    inplace_entry: Op | None = None

    def positions(self, method: bool) -> dict | None:
        """torch's keyword name -> its position, for torch.X/F.X or (`method`) Tensor.X."""
        params = self.params
        if params is None:
            return None
        positions = {}
        for k, names in enumerate(params[1:] if method else params):
            for name in (names,) if isinstance(names, str) else names:
                positions[name] = k
        return positions

    def decided_names(self) -> tuple:
        """The public names the in-place decision is about: not operators, not in-place
        themselves."""
        return tuple(n for n in dict.fromkeys(self.functions + self.methods + self.nn)
                     if not n.startswith("__") and not n.endswith("_"))


class Family:
    """The entries, public functions and rule words of one family module; `inplace` is the
    in-place decision of its surfaces that state none."""

    def __init__(self, title: str, inplace: str | None = None):
        self.title = title
        self.inplace = inplace
        self.ops: list[Op] = []
        self.functions: dict[str, Callable] = {}  # torch.X
        self.methods: dict[str, Callable] = {}  # Tensor.X and operators
        self.nn_functions: dict[str, Callable] = {}  # torch.nn.functional.X
        self.words: dict[str, tuple] = {}  # rule word -> (array version, tensor version)
        self.surfaces: list[Surface] = []
        FAMILIES.append(self)

    def op(self, name: str, *vjps, **details) -> Op:
        entry = Op(name, *vjps, **details)
        entry.family = self.title
        self.ops.append(entry)
        return entry

    def exposes(self, *ops: Op, functions=(), methods=(), nn=(), params=None, inplace=None,
                inplace_entry=None, variant_of=None):
        """Offer the decorated forward as torch.X (`functions`), Tensor.X or an operator
        (`methods`) and torch.nn.functional.X (`nn`); it records `ops`. `params` and
        `inplace`: see Surface (by default the forward's signature and the family's
        decision)."""
        def register(forward):
            self.surfaces.append(Surface(
                forward, tuple(functions), tuple(methods), tuple(nn),
                tuple(params) if params is not None else torch_parameters(forward),
                inplace if inplace is not None else self.inplace, variant_of, inplace_entry))
            for entry in ops:
                entry.forward = forward
                entry.functions += tuple(functions)
                entry.methods += tuple(methods)
            for public in functions:
                self.functions[public] = forward
            for public in methods:
                self.methods[public] = forward
            for public in nn:
                self.nn_functions[public] = forward
            return forward
        return register

    def word(self, name: str, array: Callable):
        """Make the decorated tensor function a rule word `F.name`, with `array` as the
        same computation on NumPy arrays for a plain backward."""
        def register(tensor_version):
            self.words[name] = (array, tensor_version)
            return tensor_version
        return register


FAMILIES: list[Family] = []


def all_ops() -> list[Op]:
    return [op for family in FAMILIES for op in family.ops]


def all_surfaces() -> list[Surface]:
    return [surface for family in FAMILIES for surface in family.surfaces]


_POSITIONS: dict = {}


def keyword_positions(key: str) -> dict | None:
    """torch's keyword name -> position for `torch.X`, `Tensor.X` or `F.X` (key), as the
    surface offering that name states it; None for a name no surface offers."""
    if not _POSITIONS:
        for surface in all_surfaces():  # (a later surface of a name replaces it, as in Tensor)
            for prefix, names in (("torch.", surface.functions), ("Tensor.", surface.methods),
                                  ("F.", surface.nn)):
                for name in names:
                    _POSITIONS[prefix + name] = surface.positions(prefix == "Tensor.")
    return _POSITIONS.get(key)


class Rules:
    """A rule vocabulary: the words of every family, in one flavour (arrays or tensors),
    plus the engine's own needs (`gradient`, `result_of`, `sum_to`, `cast`, `first_grad`)."""

    def __init__(self, flavour: int, **engine_words):
        for family in FAMILIES:
            for name, versions in family.words.items():
                setattr(self, name, versions[flavour])
        for name, fn in engine_words.items():
            setattr(self, name, fn)


# --- explain rendering: a rule with the engine's numbers put in ----------------------------------
#
# A formula reads "rule: gradient expression" (e.g. "∂(aⁿ)/∂a = n·aⁿ⁻¹: g·n·aⁿ⁻¹"). The
# expression's symbols are bound to the node's own values: g (the gradient arriving), out (the
# forward result), each input under the name its formula differentiates by ("/∂b" names input
# 1 b), constants under the name the rule uses for them (exponent n, other or base c, alpha),
# and n for a mean (elements averaged per output). Nothing per op is written twice: the
# formula text is the template.

import re as _re

_SYMBOL = _re.compile(r"(?<![A-Za-z_'])(alpha|out|[A-Za-z])(?![A-Za-z_'(])([⁰¹²³⁴⁵⁶⁷⁸⁹⁻ⁿᵃᵇ]*)")
_UNSUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻ⁿᵃᵇ", "0123456789-nab")
_SUPER = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_CONSTANT_NAMES = {"exponent": "n", "other": "c", "base": "c", "alpha": "alpha"}
MAX_LISTED = 6  # a tensor with more elements is shown by its first element only
MAX_MATRIX = 12  # a matrix rule (⊗, ᵀ, Σ) lists its operands up to this many elements
_MATRIX_MARKS = "⊗ᵀΣ"


def number_text(x) -> str:
    """A number as a learner writes it: 4.5, 0.25, 8, 1e-05, True."""
    import numpy as np

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
    import numpy as np

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
        found = _re.search(r"/∂([A-Za-z]+)", formula)
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
    import numpy as np

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
    import numpy as np

    if position >= len(op.formulas) or ":" not in op.formulas[position]:
        return None
    expression = op.formulas[position].split(":", 1)[1].strip()
    arrays = {k: np.asarray(v) for k, v in values.items()}
    matrix = any(mark in expression for mark in _MATRIX_MARKS)
    if matrix:  # not elementwise: every operand listed whole, or no numbers at all
        named = [a for k, a in arrays.items() if _re.search(rf"(?<![A-Za-z]){k}(?![A-Za-z])",
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
    import numpy as np

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
