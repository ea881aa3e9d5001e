"""The op registry: one entry per op a program can produce, and the words rules are written in.

An `Op` entry holds everything about one grad_fn kind: PyTorch's name for it, the rule
(VJP) of each input, what it saves for backward, the explanation a learner reads
(`autodiff explain`), the gradient-check domain, and the public names under which its
forward is offered (`torch.X`, `Tensor.X`, operators). The family modules (`ops_*.py`)
define the entries; `tensor.py` builds Tensor's methods and operators from them, `api.py`
the torch namespaces, the sandbox its allow-list, `explain` its rules, the tests their
gradient checks, `docs/ops.md` its table: all from here and from nothing else.

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
                 "functions", "methods", "node_rule", "repr_name")

    def __init__(self, name: str, *vjps, explain: str, formulas: tuple = (),
                 check: Check | None = None, saves: str = "", reads=None, views: bool = False,
                 variadic: bool = False, engine_node: bool = False):
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

    def __repr__(self) -> str:
        return f"Op({self.name})"


class Family:
    """The entries, public functions and rule words of one family module."""

    def __init__(self, title: str):
        self.title = title
        self.ops: list[Op] = []
        self.functions: dict[str, Callable] = {}  # torch.X
        self.methods: dict[str, Callable] = {}  # Tensor.X and operators
        self.nn_functions: dict[str, Callable] = {}  # torch.nn.functional.X
        self.words: dict[str, tuple] = {}  # rule word -> (array version, tensor version)
        FAMILIES.append(self)

    def op(self, name: str, *vjps, **details) -> Op:
        entry = Op(name, *vjps, **details)
        entry.family = self.title
        self.ops.append(entry)
        return entry

    def exposes(self, *ops: Op, functions=(), methods=(), nn=()):
        """Offer the decorated forward as torch.X (`functions`), Tensor.X or an operator
        (`methods`) and torch.nn.functional.X (`nn`); it records `ops`."""
        def register(forward):
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


class Rules:
    """A rule vocabulary: the words of every family, in one flavour (arrays or tensors),
    plus the engine's own needs (`gradient`, `result_of`, `sum_to`, `cast`, `first_grad`)."""

    def __init__(self, flavour: int, **engine_words):
        for family in FAMILIES:
            for name, versions in family.words.items():
                setattr(self, name, versions[flavour])
        for name, fn in engine_words.items():
            setattr(self, name, fn)
