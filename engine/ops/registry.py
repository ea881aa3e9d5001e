"""The op registry: one entry per op a program can produce, and the words rules are written in.

An `Op` entry holds everything about one grad_fn kind: PyTorch's name for it, the rule
(VJP) of each input, what it saves for backward, the explanation a learner reads
(`autodiff explain`), the gradient-check domain, and the public names under which its
forward is offered (`torch.X`, `Tensor.X`, operators). The family modules (`ops/*.py`)
define the entries; `tensors/tensor.py` builds Tensor's methods and operators from them, `api.py`
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

from ..core import signatures


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
                 "functions", "methods", "node_rule", "repr_name", "differentiable",
                 "second_order")

    def __init__(self, name: str, *vjps, explain: str, formulas: tuple = (),
                 check: Check | None = None, saves: str = "", reads=None, views: bool = False,
                 variadic: bool = False, engine_node: bool = False, differentiable: bool = True,
                 second_order: bool = True):
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
        # False where autodiff refuses create_graph through the node by name ("... is not
        # supported by autodiff") rather than give a second derivative torch does not
        self.second_order = second_order

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
    """torch's names for the parameters of `forward`'s function form, read off its signature
    (the engine's `a` and `b` are torch's `input` and `other`; keyword-only ones, as `alpha`,
    at their place after the positional ones, as torch's schema has them); None when it takes
    `*args`, whose names only a surface's `params` can give."""
    import inspect

    names: list = []
    for p in inspect.signature(inspect.unwrap(forward)).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
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


def _parameter_positions(key: str) -> dict | None:
    """keyword_positions, else the generated table of the names no surface offers."""
    positions = keyword_positions(key)
    if positions is None:
        from .torch_parameters import POSITIONS  # noqa: PLC0415 - an error path's table

        positions = POSITIONS.get(key)
    return positions


signatures.parameter_positions = _parameter_positions


class Rules:
    """A rule vocabulary: the words of every family, in one flavour (arrays or tensors),
    plus the engine's own needs (`gradient`, `result_of`, `sum_to`, `cast`, `first_grad`)."""

    def __init__(self, flavour: int, **engine_words):
        for family in FAMILIES:
            for name, versions in family.words.items():
                setattr(self, name, versions[flavour])
        for name, fn in engine_words.items():
            setattr(self, name, fn)
