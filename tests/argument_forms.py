"""The argument-forms table: every public function (torch.X, F.X), Tensor method and operator of
the .tg language, each called with the argument forms torch's parser reads, compared with torch.

The names come from the registry surfaces (engine/ops/registry.py: `functions`, `methods`,
`nn`, torch's parameter names `params`) and, for the calls a surface cannot describe alone,
from BASELINES below (a call that works: the argument of each position). From a baseline
come the rows:

- the baseline itself, and its tensors as float32, int64 and bool;
- each tensor position (of a function: the first too) given a Python int, float and bool, a
  0-d tensor, a one-element and a three-element 1-d tensor, and a list;
- each parameter by keyword (all of them, then one at a time), and each optional parameter
  with a value, by keyword;
- operators: binary, reflected (a number or a list first), unary, augmented (in-place),
  comparisons, and indexing and item assignment with each index form.

A row is a few lines of .tg (make tensors, call, print the result or the exception's class
and message). Rows run in chunks, one program each, once under autodiff in-process and once
under torch (interpreter/reference.py), and each row's stdout is compared exactly
(tests/test_argument_forms.py).

    python tests/argument_forms.py [--xfails] [DIFFS_FILE]   # needs torch

prints the counts, writes the differing rows grouped by cause to DIFFS_FILE, and with
--xfails rewrites the test's table of known differences (KNOWN) from this run.
"""

from __future__ import annotations

import inspect
import io
import re
import sys
from collections import defaultdict
from typing import NamedTuple

HEADER = "import torch\nimport torch.nn.functional as F\n"
MARK = "@@ "
CHUNK = 150  # rows per program

# --- tensors ---------------------------------------------------------------------------------

# the values a tensor of each kind cycles through (no zeros: remainder, division, log)
VALUES = {
    "T": {"float32": [0.5, -2.0, 3.0, 1.5, 2.0, -0.5, 4.0, -1.0, 2.5],
          "int64": [1, -2, 3, 2, 4, -1, 5, 3, -3],
          "bool": [True, False, True, True, False, True, False, False, True]},
    "U": {"float32": [2.0, 0.5, -1.5, 1.0, -3.0, 2.5, 0.25, 1.5, -1.0],
          "int64": [2, 3, -1, 1, -3, 2, 4, 1, 2],
          "bool": [False, True, True, True, False, False, True, False, True]},
    "V": {"float32": [1.0, -0.5, 2.0, 0.5, 1.5, -1.0], "int64": [1, 2, -1, 3, 1, 2],
          "bool": [True, True, False, True, False, True]},
    "P": {"float32": [0.25, 0.5, 0.75, 0.125, 0.625, 0.375]},  # probabilities
    "I": {"int64": [0, 2, 1, 1, 0, 2, 2, 1, 0]},  # indices below 3
    "M": {"bool": [True, False, True, False, True, True, False, True, False]},  # masks
}
DEFAULT_DTYPE = {"T": "float32", "U": "float32", "V": "float32", "P": "float32", "I": "int64",
                 "M": "bool"}


def _nested(flat, shape):
    if not shape:
        return flat[0]
    step = len(flat) // shape[0]
    return [_nested(flat[k * step:(k + 1) * step], shape[1:]) for k in range(shape[0])]


def _flat(kind: str, dtype: str, n: int) -> list:
    values = VALUES[kind][dtype]
    return [values[k % len(values)] for k in range(n)]


def literal(kind: str, shape: tuple, dtype: str | None = None) -> str:
    """A tensor of `kind` (T, U, V, P, I, M) and `shape` as .tg text."""
    dtype = dtype or DEFAULT_DTYPE[kind]
    data = repr(_nested(_flat(kind, dtype, _size(shape)), shape))
    return f"torch.tensor({data})" if dtype == "float32" else f"torch.tensor({data}, dtype=torch.{dtype})"


class Slot(NamedTuple):
    """One argument of a baseline: a tensor (`kind` T, U, V, P, I, M, of `shape`), a number
    a tensor may replace (`kind` S, `code` its value), a list of tensors (`kind` L) or plain
    code (`kind` C: a dim, a size)."""

    kind: str
    shape: tuple = (3,)
    code: str = ""


def T(*shape):
    return Slot("T", shape or (3,))


def U(*shape):
    return Slot("U", shape or (3,))


def V(*shape):
    return Slot("V", shape or (3,))


def P(*shape):
    return Slot("P", shape or (3,))


def I(*shape):  # noqa: E743 - the index tensor
    return Slot("I", shape or (2,))


def M(*shape):
    return Slot("M", shape or (3,))


def S(code):
    return Slot("S", (), code)


def C(code):
    return Slot("C", (), code)


def L(*slots):
    return Slot("L", slots)


class Baseline(NamedTuple):
    """A call that works: its arguments by position (the first a method's self) and the
    optional parameters to try by keyword, with a value each."""

    args: tuple
    keywords: dict = {}
    dtype: str = "float32"  # of its T, U and V (the bitwise ops take integers)


# public name (torch.X, Tensor.X and F.X alike) -> its baseline, where the surface's own
# signature does not give one (a 2-d input, a dim, an index tensor, a list of tensors)
_MAT = T(2, 3)
BASELINES = {
    **{n: Baseline((T(), C("(3, 1)"))) for n in ("reshape", "view")},
    "flatten": Baseline((T(1, 3),), {"start_dim": "0", "end_dim": "-1"}),
    **{n: Baseline((T(), C("(2, 3)"))) for n in ("expand", "broadcast_to")},
    "expand_as": Baseline((T(), U(2, 3))),
    "broadcast_tensors": Baseline((T(), U(2, 1))),
    "permute": Baseline((_MAT, C("(1, 0)"))),
    **{n: Baseline((_MAT, C("0"), C("1"))) for n in ("transpose", "swapaxes")},
    "t": Baseline((_MAT,)),
    "unsqueeze": Baseline((T(), C("0"))),
    "squeeze": Baseline((T(1, 3),), {"dim": "0"}),
    "unbind": Baseline((_MAT,), {"dim": "1"}),
    **{n: Baseline((L(T(), U()),), {"dim": "0"}) for n in ("cat", "concat", "concatenate", "stack",
                                                            "hstack", "vstack")},
    "flip": Baseline((T(), C("(0,)"))),
    "select": Baseline((_MAT, C("0"), C("1"))),
    "masked_fill": Baseline((T(), M(), S("0.5"))),
    "masked_fill_": Baseline((T(), M(), S("0.5"))),
    **{n: Baseline((_MAT, C("1"), I(2, 2), U(2, 3))) for n in ("scatter", "scatter_", "scatter_add",
                                                              "scatter_add_")},
    "gather": Baseline((_MAT, C("1"), I(2, 2))),
    "one_hot": Baseline((I(3),), {"num_classes": "4"}),
    "fill_": Baseline((T(), S("1.5"))),
    "copy_": Baseline((T(), U())),
    **{n: Baseline((T(), C("0")), {"dtype": "torch.float64"})
       for n in ("softmax", "log_softmax", "cumsum", "cumprod", "cumsum_", "cumprod_")},
    "mv": Baseline((_MAT, U())),
    "mm": Baseline((_MAT, U(3, 2))),
    "bmm": Baseline((T(1, 2, 3), U(1, 3, 2))),
    "matmul": Baseline((T(), U())),
    "addmm": Baseline((T(2, 2), U(2, 3), V(3, 2)), {"beta": "2", "alpha": "0.5"}),
    "linear": Baseline((_MAT, U(2, 3)), {"bias": "torch.tensor([1.0, -1.0])"}),
    "diagonal": Baseline((_MAT,), {"offset": "1", "dim1": "1", "dim2": "0"}),
    **{n: Baseline((_MAT, C("0"), C("1"))) for n in ("movedim", "moveaxis")},
    "einsum": Baseline((C("'i,i->'"), T(), U())),
    **{n: Baseline((P(), P()), {"reduction": "'sum'"})
       for n in ("binary_cross_entropy",)},
    "binary_cross_entropy_with_logits": Baseline((T(), P()), {"reduction": "'sum'",
                                                            "pos_weight": "torch.tensor([2.0])"}),
    "cosine_similarity": Baseline((_MAT, U(2, 3)), {"dim": "0", "eps": "0.5"}),
    "kl_div": Baseline((T(), P()), {"reduction": "'sum'", "log_target": "True"}),
    **{n: Baseline((_MAT, I(2)), {"reduction": "'sum'", "ignore_index": "1",
                                  "weight": "torch.tensor([1.0, 2.0, 0.5])"})
       for n in ("nll_loss", "cross_entropy")},
    "bernoulli": Baseline((P(),)),
    "multinomial": Baseline((P(), C("2")), {"replacement": "True"}),
    "exponential_": Baseline((T(),), {"lambd": "2.0"}),
    "new_zeros": Baseline((T(), C("(2,)"))),
    "new_ones": Baseline((T(), C("(2,)"))),
    "new_full": Baseline((T(), C("(2,)"), S("1.5"))),
    "new_tensor": Baseline((T(), C("[1, 2]"))),
    "split": Baseline((T(), C("2")), {"dim": "0"}),
    "chunk": Baseline((T(), C("2")), {"dim": "0"}),
    "narrow": Baseline((T(), C("0"), C("1"), C("2"))),
    "index_select": Baseline((T(), C("0"), I(2))),
    "repeat": Baseline((T(), C("2"))),
    "repeat_interleave": Baseline((T(), C("2")), {"dim": "0", "output_size": "6"}),
    **{n: Baseline((T(), C("0"), I(2), U(2))) for n in ("index_copy", "index_copy_")},
    **{n: Baseline((T(), C("0"), I(2), U(2)), {"alpha": "2"}) for n in ("index_add", "index_add_")},
    **{n: Baseline((T(), C("0"), I(2), S("1.5"))) for n in ("index_fill", "index_fill_")},
    **{n: Baseline((T(), U())) for n in ("view_as", "reshape_as", "type_as")},
    **{n: Baseline((_MAT,), {"diagonal": "1"}) for n in ("tril", "triu", "tril_", "triu_")},
    "trace": Baseline((T(3, 3),)),
    "logsumexp": Baseline((T(), C("0")), {"keepdim": "True"}),
    "topk": Baseline((T(), C("2")), {"dim": "0", "largest": "False", "sorted": "True"}),
    "roll": Baseline((T(), C("1")), {"dims": "0"}),
    "meshgrid": Baseline((T(), U(2)), {"indexing": "'ij'"}),
    "pad": Baseline((T(), C("(1, 1)")), {"mode": "'constant'", "value": "0.5"}),
    "masked_select": Baseline((T(), M())),
    "conv2d": Baseline((T(1, 1, 3, 3), U(1, 1, 2, 2)), {"bias": "torch.tensor([0.5])", "stride": "1",
                                                       "padding": "1", "dilation": "1", "groups": "1"}),
    "conv1d": Baseline((T(1, 1, 4), U(1, 1, 2)), {"bias": "torch.tensor([0.5])", "stride": "2",
                                                 "padding": "1", "dilation": "1", "groups": "1"}),
    **{n: Baseline((T(1, 1, 4, 4), C("2")), {"stride": "1", "padding": "1", "dilation": "1",
                                             "ceil_mode": "True"})
       for n in ("max_pool2d", "max_pool2d_with_indices")},
    "avg_pool2d": Baseline((T(1, 1, 4, 4), C("2")), {"stride": "1", "padding": "1", "ceil_mode": "True",
                                                    "count_include_pad": "False",
                                                    "divisor_override": "3"}),
    "adaptive_avg_pool2d": Baseline((T(1, 1, 4, 4), C("2"))),
    "embedding": Baseline((I(3), U(3, 2)), {"padding_idx": "1"}),
    "where": Baseline((M(), T(), U())),
    "clamp": Baseline((T(), U(), V())),
    "clip": Baseline((T(), U(), V())),
    "clamp_": Baseline((T(), U(), V())),
    "clip_": Baseline((T(), U(), V())),
    "normal_": Baseline((T(),), {"mean": "1.0", "std": "0.5"}),
    "uniform_": Baseline((T(),), {"to": "1.0"}),  # (`from` is Python's keyword)
    "bernoulli_": Baseline((T(),), {"p": "0.25"}),
    "dropout": Baseline((T(),), {"p": "0.5", "training": "True", "inplace": "False"}),
    "unique": Baseline((T(),), {"sorted": "True", "return_inverse": "True", "return_counts": "True",
                                "dim": "0"}),
    "unique_consecutive": Baseline((T(),), {"return_inverse": "True", "return_counts": "True",
                                            "dim": "0"}),
    "diff": Baseline((T(),), {"n": "1", "dim": "0", "prepend": "torch.tensor([1.0])",
                              "append": "torch.tensor([2.0])"}),
    "diag": Baseline((T(),), {"diagonal": "1"}),
    "count_nonzero": Baseline((T(),), {"dim": "0"}),
    "is_tensor": Baseline((T(),)),
    "normalize": Baseline((_MAT,), {"p": "1.0", "dim": "0", "eps": "0.5"}),
    **{n: Baseline((T(), U()), dtype="int64") for n in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "bitwise_not": Baseline((T(),), dtype="int64"),
}
# Tensor.where(condition, other): self first
METHOD_BASELINES = {"where": Baseline((T(), M(), U())),
                    "split": Baseline((T(), C("2")), {"dim": "0"})}

# optional parameters tried by keyword, with the value given (a surface's baseline adds its own)
KEYWORD_VALUES = {
    "alpha": "2", "rounding_mode": "'floor'", "keepdim": "True", "dtype": "torch.float64",
    "dim": "0", "rtol": "0.5", "atol": "0.5", "equal_nan": "True", "eps": "0.25",
    "unbiased": "False", "descending": "True", "stable": "True", "approximate": "'tanh'",
    "negative_slope": "0.2", "beta": "2.0", "threshold": "1.0", "inplace": "False",
    "min_val": "-1.0", "max_val": "1.0", "reduction": "'sum'", "delta": "0.5",
    "label_smoothing": "0.1", "decimals": "1", "p": "1", "start_dim": "0",
}
# names of torch parameters that take a tensor (the positions whose forms are tried)
TENSOR_NAMES = {"input", "other", "condition", "exponent", "base", "tensor", "vec", "vec2", "mat2",
                "mat1", "weight", "target", "x1", "x2", "src", "number", "min", "max", "self"}
SKIPPED = {"register_hook", "normal"}  # a function as argument; no public name

# operators: method name -> the operator (its text), by kind
BINARY = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__floordiv__": "//",
          "__mod__": "%", "__pow__": "**", "__matmul__": "@", "__and__": "&", "__or__": "|",
          "__xor__": "^", "__eq__": "==", "__ne__": "!=", "__lt__": "<", "__le__": "<=",
          "__gt__": ">", "__ge__": ">="}
REFLECTED = {"__radd__": "+", "__rsub__": "-", "__rmul__": "*", "__rtruediv__": "/",
             "__rfloordiv__": "//", "__rmod__": "%", "__rpow__": "**", "__rmatmul__": "@",
             "__rand__": "&", "__ror__": "|", "__rxor__": "^"}
AUGMENTED = {"__iadd__": "+=", "__isub__": "-=", "__imul__": "*=", "__itruediv__": "/=",
             "__ifloordiv__": "//=", "__imod__": "%=", "__ipow__": "**="}
UNARY = {"__neg__": "-{}", "__invert__": "~{}", "__abs__": "abs({})"}
# torch's Tensor has these operators and no registry surface offers them
EXTRA_OPERATORS = {"__pos__": "+{}"}

# --- rows ------------------------------------------------------------------------------------


class Row(NamedTuple):
    """One call: `id` (what is called, with which form) and its lines of .tg."""

    id: str
    text: str


def _row(rid: str, setup: list, statement: str, shows: str = "r") -> Row:
    lines = [f"print({MARK + rid!r})", "torch.manual_seed(0)", *setup, "try:",
             f"    {statement}", f"    print({shows})",
             "except Exception as e:", "    print(type(e).__name__, e)"]
    return Row(rid, "\n".join(lines) + "\n")


_NUMBER_FORMS = (("int", "2"), ("float", "2.5"), ("bool", "True"))


def _tensor_forms(slot: Slot) -> list[tuple[str, str]]:
    """(label, code) of each form a tensor position is tried with."""
    if slot.kind == "I":
        forms = [("int", "1"), ("float", "1.0"), ("bool", "True"), ("0-d", "torch.tensor(1)"),
                 ("list", repr(_nested(_flat("I", "int64", _size(slot.shape)), slot.shape))),
                 ("float-tensor", literal("T", slot.shape)),
                 ("int32", literal("I", slot.shape).replace("torch.int64", "torch.int32"))]
        return forms
    if slot.kind == "M":
        return [("int", "1"), ("bool", "True"), ("0-d", "torch.tensor(True)"),
                ("list", repr(_nested(_flat("M", "bool", _size(slot.shape)), slot.shape))),
                ("int-tensor", literal("T", slot.shape, "int64")),
                ("float-tensor", literal("T", slot.shape))]
    kind = "T" if slot.kind == "S" else slot.kind
    shape = slot.shape or (3,)
    forms = list(_NUMBER_FORMS)
    forms += [("0-d", "torch.tensor(2.5)"), ("0-d-int", "torch.tensor(2)"), ("1-elem", "torch.tensor([2.5])"),
              ("list", repr(_nested(_flat(kind, "float32", _size(shape)), shape))), ("None", "None")]
    if slot.kind == "S":
        forms.append(("1-d", literal("T", (3,))))
    elif shape != (3,):
        forms.append(("1-d", literal(kind, (3,))))
    return forms


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


class Call(NamedTuple):
    """A public name as a program calls it: `torch.X`, `F.X` or `T.X` (a method)."""

    prefix: str  # "torch", "F" or "Tensor"
    name: str

    @property
    def label(self) -> str:
        return f"{self.prefix}.{self.name}"


def _setup_and_args(args: tuple, dtypes: dict) -> tuple[list, list]:
    """The lines making the tensors of `args` and each argument's code (dtype per kind)."""
    setup, codes, names = [], [], defaultdict(int)
    for slot in args:
        if slot.kind in "TUVPIM":
            names[slot.kind] += 1
            var = slot.kind if names[slot.kind] == 1 else f"{slot.kind}{names[slot.kind]}"
            setup.append(f"{var} = {literal(slot.kind, slot.shape, dtypes.get(slot.kind))}")
            codes.append(var)
        elif slot.kind == "L":
            inner_setup, inner = _setup_and_args(slot.shape, dtypes)
            setup += inner_setup
            codes.append("[" + ", ".join(inner) + "]")
        else:
            codes.append(slot.code)
    return setup, codes


def _call_text(call: Call, codes: list, keywords: dict) -> str:
    parts = list(codes[1:] if call.prefix == "Tensor" else codes)
    parts += [f"{k}={v}" for k, v in keywords.items()]
    owner = codes[0] if call.prefix == "Tensor" else call.prefix
    return f"{owner}.{call.name}({', '.join(parts)})"


def _shows(call: Call) -> str:
    return "r, T" if call.name.endswith("_") else "r"


def _param_names(params, position: int):
    if params is None or position >= len(params):
        return ()
    names = params[position]
    return (names,) if isinstance(names, str) else tuple(names)


def call_rows(call: Call, baseline: Baseline, params) -> list[Row]:
    """The rows of one public name from its baseline (params: torch's names by position, of
    torch.X: a method's start with self's)."""
    rows = []
    args = baseline.args
    method = call.prefix == "Tensor"
    shows = _shows(call)

    base = {} if baseline.dtype == "float32" else dict.fromkeys("TUV", baseline.dtype)

    def add(label, dtypes=None, replace=None, keywords=None, positional=None):
        setup, codes = _setup_and_args(args, {**base, **(dtypes or {})})
        if replace is not None:
            position, code = replace
            codes[position] = code
        kws = {}
        if positional is not None:  # the arguments from `positional` on by keyword
            for k in range(positional, len(codes)):
                names = _param_names(params, k)
                if not names:
                    return
                kws[names[0]] = codes[k]
            codes = codes[:positional]
        kws.update(keywords or {})
        text = _call_text(call, codes, kws)
        rows.append(_row(f"{call.label}[{label}]", setup, f"r = {text}", shows))

    add("base")
    kinds = [s.kind for s in args if s.kind in "TUV"]
    for kind in dict.fromkeys(kinds):
        for dtype in ("float32", "int64", "bool"):
            if dtype != baseline.dtype:
                add(f"{kind}:{dtype}", {kind: dtype})
    for position, slot in enumerate(args):
        if slot.kind not in "TUVPIMS" or (method and position == 0):
            continue
        names = _param_names(params, position)
        name = names[0] if names else f"#{position}"
        for label, code in _tensor_forms(slot):
            add(f"{name}={label}", replace=(position, code))
    if params is not None:
        first = 1 if method else 0
        for k in range(first, len(args)):
            if _param_names(params, k):
                add(f"kw-from-{_param_names(params, k)[0]}", positional=k)
                for alias in _param_names(params, k)[1:]:
                    add(f"kw-alias-{alias}", positional=k)
    for key, value in baseline.keywords.items():
        add(f"{key}={value}", keywords={key: value})
    return rows


def _default_baseline(surface) -> Baseline | None:
    """The baseline a surface's forward signature gives: its required parameters (tensors
    where torch names one), its optional ones by keyword where a value is known."""
    try:
        signature = inspect.signature(inspect.unwrap(surface.forward))
    except (TypeError, ValueError):
        return None
    params = surface.params or ()
    args, keywords = [], {}
    tensors = iter([T(), U(), V()])
    for k, p in enumerate(signature.parameters.values()):
        if p.kind is p.VAR_POSITIONAL:
            return None
        names = _param_names(params, k) if p.kind is not p.KEYWORD_ONLY else (p.name,)
        name = names[0] if names else p.name
        if p.default is inspect.Parameter.empty:
            if name not in TENSOR_NAMES:
                return None
            args.append(next(tensors))
        elif name in KEYWORD_VALUES:
            keywords[name] = KEYWORD_VALUES[name]
    return Baseline(tuple(args), keywords) if args else None


def _baseline(surface, name: str, method: bool) -> Baseline | None:
    if method and name in METHOD_BASELINES:
        return METHOD_BASELINES[name]
    return BASELINES.get(name) or _default_baseline(surface)


def operator_rows(name: str) -> list[Row]:
    rows = []
    if name in BINARY or name in AUGMENTED:
        op = BINARY.get(name) or AUGMENTED[name]
        for dtype in ("float32", "int64", "bool"):
            for label, other in ([(f"U:{d}", literal("U", (3,), d)) for d in ("float32", "int64", "bool")]
                                 + [(lab, code) for lab, code in _tensor_forms(U())]):
                setup = [f"T = {literal('T', (3,), dtype)}"]
                if name in BINARY:
                    rows.append(_row(f"op:{name}[T:{dtype},{label}]", setup, f"r = T {op} {other}"))
                else:
                    rows.append(_row(f"op:{name}[T:{dtype},{label}]", setup + ["r = T"],
                                     f"T {op} {other}", "T, r is T"))
    elif name in REFLECTED:
        op = REFLECTED[name]
        for dtype in ("float32", "int64", "bool"):
            for label, left in list(_NUMBER_FORMS) + [("list", "[2.5, 1.0, -1.0]"), ("None", "None"),
                                                      ("str", "'a'")]:
                rows.append(_row(f"op:{name}[{label},T:{dtype}]", [f"T = {literal('T', (3,), dtype)}"],
                                 f"r = {left} {op} T"))
    elif name in UNARY or name in EXTRA_OPERATORS:
        form = UNARY.get(name) or EXTRA_OPERATORS[name]
        for dtype in ("float32", "int64", "bool"):
            for shape in ((3,), ()):
                rows.append(_row(f"op:{name}[T:{dtype},{shape}]", [f"T = {literal('T', shape, dtype)}"],
                                 f"r = {form.format('T')}"))
    elif name == "__getitem__":
        for shape in ((3,), (2, 3)):
            for dtype in ("float32", "int64"):
                for label, index in INDEXES:
                    rows.append(_row(f"op:__getitem__[{shape},{dtype},{label}]",
                                     [f"T = {literal('T', shape, dtype)}"], f"r = T[{index}]"))
    elif name == "__setitem__":
        for shape in ((3,), (2, 3)):
            for dtype in ("float32", "int64", "bool"):
                for label, index in SET_INDEXES:
                    for vlabel, value in SET_VALUES:
                        rows.append(_row(f"op:__setitem__[{shape},{dtype},{label},{vlabel}]",
                                         [f"T = {literal('T', shape, dtype)}"],
                                         f"T[{index}] = {value}", "T"))
    return rows


INDEXES = [("int", "1"), ("neg", "-1"), ("out", "5"), ("bool", "True"), ("false", "False"),
           ("none", "None"), ("ellipsis", "..."), ("float", "0.5"), ("0-d", "torch.tensor(1)"),
           ("0-d-float", "torch.tensor(1.0)"), ("1-d", "torch.tensor([0, 1])"), ("list", "[0, 1]"),
           ("list-bool", "[True, False]"), ("mask", "torch.tensor([True, False])"),
           ("slice", "1:"), ("step", "::2"), ("tuple", "(0,)"), ("pair", "0, 1"),
           ("str", "'a'"), ("neg-step", "::-1"), ("empty-list", "[]")]
SET_INDEXES = [("int", "0"), ("slice", ":1"), ("mask", "T > 0"), ("list", "[0]"),
               ("ellipsis", "...")]
SET_VALUES = [("int", "7"), ("float", "2.5"), ("bool", "True"), ("0-d", "torch.tensor(9.0)"),
              ("1-elem", "torch.tensor([9])"), ("list", "[9.0]"), ("None", "None")]


def rows() -> list[Row]:
    """Every row of the table, in a stable order (unique ids)."""
    from autodiff.engine import api  # noqa: F401 - fills the registry
    from autodiff.engine.ops.registry import all_surfaces

    out, seen = [], set()

    def extend(new):
        for row in new:
            if row.id not in seen:
                seen.add(row.id)
                out.append(row)

    for surface in all_surfaces():
        for prefix, names in (("torch", surface.functions), ("Tensor", surface.methods),
                              ("F", surface.nn)):
            for name in names:
                if name in SKIPPED:
                    continue
                if name.startswith("__"):
                    extend(operator_rows(name))
                    continue
                baseline = _baseline(surface, name, prefix == "Tensor")
                if baseline is None:
                    continue
                extend(call_rows(Call(prefix, name), baseline, surface.params))
    for name in EXTRA_OPERATORS:
        extend(operator_rows(name))
    return out


def uncovered() -> list[str]:
    """The public names no row calls (no baseline could be made for them)."""
    from autodiff.engine import api  # noqa: F401
    from autodiff.engine.ops.registry import all_surfaces

    called = {r.id.split("[", 1)[0] for r in rows()}
    missing = []
    for surface in all_surfaces():
        for prefix, names in (("torch", surface.functions), ("Tensor", surface.methods),
                              ("F", surface.nn)):
            for name in names:
                label = f"op:{name}" if name.startswith("__") else f"{prefix}.{name}"
                if label not in called:
                    missing.append(label)
    return sorted(set(missing))


def chunks(table: list[Row], size: int = CHUNK) -> list[list[Row]]:
    return [table[k:k + size] for k in range(0, len(table), size)]


def program(rows_: list[Row]) -> str:
    return HEADER + "".join(r.text for r in rows_)


# --- running ---------------------------------------------------------------------------------

def _split(stdout: str) -> dict[str, str]:
    """Row id -> the stdout that row printed (after its marker line)."""
    found, current = {}, None
    for line in stdout.splitlines(keepends=True):
        if line.startswith(MARK):
            current = line[len(MARK):].rstrip("\n")
            found[current] = ""
        elif current is not None:
            found[current] += line
    return found


def _row_at_line(rows_: list[Row], line: int) -> int:
    """The index of the row whose text holds program line `line` (1-based)."""
    at = HEADER.count("\n")
    for k, row in enumerate(rows_):
        at += row.text.count("\n")
        if line <= at:
            return k
    return len(rows_) - 1


def run_ours(rows_: list[Row]) -> dict[str, str]:
    """Each row's stdout under autodiff; a row that stops its program (an error no `except`
    catches) ends with `<stopped: Class: message>` and the rows after it run again."""
    from autodiff.interpreter import run_source
    from autodiff.interpreter.reference import normalize_addresses

    results: dict[str, str] = {}
    for chunk in chunks(rows_):
        results.update(_run_ours_chunk(chunk, run_source, normalize_addresses))
    return results


def _run_ours_chunk(rows_: list[Row], run_source, normalize_addresses) -> dict[str, str]:
    results: dict[str, str] = {}
    pending = list(rows_)
    while pending:
        out = io.StringIO()
        result = run_source(program(pending), "forms.tg", out=out, err=io.StringIO())
        found = _split(normalize_addresses(out.getvalue()))
        results.update(found)
        if result.error is None:
            break
        error = result.error
        k = _row_at_line(pending, error.line) if getattr(error, "line", None) else len(found) - 1
        k = max(k, 0)
        stopped = pending[k].id
        results[stopped] = results.get(stopped, "") + \
            f"<stopped: {error.error_class}: {error.message}>\n"
        # (an error before any row ran, a syntax error, leaves the rows before it to run)
        pending = [r for r in pending[:k] if r.id not in found] + pending[k + 1:]
    return results


def run_torch(rows_: list[Row]) -> dict[str, str]:
    """Each row's stdout under torch, from one child process for the whole table; a row the
    reference refuses is recorded as refused and its chunk runs again without it."""
    from autodiff.interpreter.reference import ReferenceRefused, reference_outcomes

    results: dict[str, str] = {}
    pending = chunks(rows_)
    while pending:
        outcomes = reference_outcomes([program(c) for c in pending], timeout=600)
        again = []
        for chunk, outcome in zip(pending, outcomes):
            if isinstance(outcome, ReferenceRefused):
                k = _row_at_line(chunk, outcome.error.line)
                results[chunk[k].id] = f"<refused: {outcome.error.message}>\n"
                rest = chunk[:k] + chunk[k + 1:]
                if rest:
                    again.append(rest)
                continue
            if isinstance(outcome, Exception):
                raise outcome
            found = _split(outcome.stdout)
            results.update(found)
            if outcome.error:
                last = chunk[len(found) - 1].id if found else chunk[0].id
                results[last] = results.get(last, "") + f"<raised: {outcome.error}>\n"
                k = max(len(found), 1)
                if chunk[k:]:
                    again.append(chunk[k:])
        pending = again
    return results


def differences(table: list[Row], ours: dict, theirs: dict) -> list[tuple[Row, str, str]]:
    return [(row, theirs.get(row.id, "<no output>\n"), ours.get(row.id, "<no output>\n"))
            for row in table if ours.get(row.id) != theirs.get(row.id)]


# --- causes of a difference (for the notes) -----------------------------------------------------

_ERROR_LINE = re.compile(r"^[A-Za-z._]*(Error|Exception)\b|^<(stopped|refused|raised)", re.MULTILINE)
_TORCH_DTYPE_REFUSAL = re.compile(r"not implemented for '|bool tensor|Boolean inputs|bool input|"
                                  r"Integral inputs|did not match|Expected self.dtype|dtype to be|"
                                  r"only supports floating-point|can't be cast|must have the same dtype")
_LEAKED = re.compile(r"numpy|ufunc|ZeroDivisionError|scalar variable|too many indices for array|"
                     r"cannot reshape array|object has no attribute|`indices`|`arr`|"
                     r"list assignment index|tuple index out of range|arrays used as indices|"
                     r"Integers to negative integer powers|operator\.invert")


def _is_error(text: str) -> bool:
    return bool(_ERROR_LINE.search(text))


def _wraps(r, t, o):
    return not _is_error(t) and "must be Tensor, not" in o and re.search(r"\[[^\]]*=(int|float|bool)", r.id)


# (name, test(row, torch's text, autodiff's text)), the first that holds names a difference
CAUSES = [
    ("autodiff stops the program: an error no `except` catches (not supported by autodiff)",
     lambda r, t, o: "<stopped:" in o),
    ("torch wraps a Python number given for a tensor (torch.add(1, y)); autodiff refuses it", _wraps),
    ("torch runs the call; autodiff refuses it (other reasons)",
     lambda r, t, o: not _is_error(t) and _is_error(o)),
    ("torch refuses the dtype (bool/integer/mixed); autodiff runs the call",
     lambda r, t, o: _is_error(t) and not _is_error(o) and _TORCH_DTYPE_REFUSAL.search(t)),
    ("torch refuses the call (shapes, keywords, types); autodiff runs it",
     lambda r, t, o: _is_error(t) and not _is_error(o)),
    ("both refuse: autodiff's message leaks NumPy's or Python's own",
     lambda r, t, o: _LEAKED.search(o) and not _LEAKED.search(t)),
    ("both refuse: torch lists every overload (invalid combination); autodiff names one argument",
     lambda r, t, o: "received an invalid combination" in t and "received an invalid combination" not in o),
    ("both refuse: autodiff names the engine's parameter ('a', 'b') for torch's",
     lambda r, t, o: re.search(r"argument '[ab]'", o)),
    ("both refuse: the messages differ (other)", lambda r, t, o: _is_error(t) and _is_error(o)),
    ("a printed value differs", lambda r, t, o: True),
]


def cause(row: Row, theirs: str, ours: str) -> str:
    return next(name for name, test in CAUSES if test(row, theirs, ours))


def report(diffs, total: int) -> str:
    """The differing rows grouped by cause: a summary (each cause's count and the names it
    touches), then each row's program, torch's stdout and autodiff's."""
    groups = defaultdict(list)
    for row, theirs, ours in diffs:
        groups[cause(row, theirs, ours)].append((row, theirs, ours))
    parts = [f"{total} rows, {len(diffs)} differ from torch 2.13 (tests/argument_forms.py)\n\n"]
    for name, _ in CAUSES:
        if name in groups:
            names = defaultdict(int)
            for row, _, _ in groups[name]:
                names[row.id.split("[", 1)[0]] += 1
            touched = ", ".join(f"{n} ({k})" for n, k in names.items())
            parts.append(f"{len(groups[name]):5d}  {name}\n       {touched}\n")
    parts.append("\n")
    for name, _ in CAUSES:
        if name not in groups:
            continue
        parts.append(f"##### {name}: {len(groups[name])} rows\n")
        for row, theirs, ours in groups[name]:
            body = row.text.split("\n", 1)[1]
            parts.append(f"--- {row.id}\n{body}torch:\n{_indent(theirs)}autodiff:\n{_indent(ours)}\n")
    return "".join(parts)


def _indent(text: str) -> str:
    return "".join("    " + line + "\n" for line in text.rstrip("\n").split("\n"))


BLOCK_START = "# --- known differences: generated by `python tests/argument_forms.py --xfails` ---\n"
BLOCK_END = "# --- end of known differences ---\n"


def xfail_block(diffs) -> str:
    """The test's KNOWN table: each cause -> the ids of its differing rows."""
    groups = defaultdict(list)
    for d in diffs:
        groups[cause(*d)].append(d[0].id)
    lines = [BLOCK_START, "KNOWN = {\n"]
    for name, _ in CAUSES:
        if name in groups:
            lines.append(f"    {name!r}: (\n")
            lines += [f"        {rid!r},\n" for rid in groups[name]]
            lines.append("    ),\n")
    lines += ["}\n", BLOCK_END]
    return "".join(lines)


def write_xfails(diffs) -> None:
    from pathlib import Path

    test = Path(__file__).with_name("test_argument_forms.py")
    text = test.read_text(encoding="utf-8")
    start, end = text.index(BLOCK_START), text.index(BLOCK_END) + len(BLOCK_END)
    test.write_text(text[:start] + xfail_block(diffs) + text[end:], encoding="utf-8")


def main(argv: list[str]) -> int:
    import time

    table = rows()
    start = time.perf_counter()
    ours = run_ours(table)
    mid = time.perf_counter()
    theirs = run_torch(table)
    end = time.perf_counter()
    diffs = differences(table, ours, theirs)
    print(f"{len(table)} rows, {len(diffs)} differ (autodiff {mid - start:.1f} s, "
          f"torch {end - mid:.1f} s); names without rows: {uncovered()}")
    counts = defaultdict(int)
    for d in diffs:
        counts[cause(*d)] += 1
    for name, n in counts.items():
        print(f"  {n:5d}  {name}")
    if "--xfails" in argv:
        write_xfails(diffs)
    files = [a for a in argv[1:] if not a.startswith("--")]
    if files:
        with open(files[0], "w", encoding="utf-8") as f:
            f.write(report(diffs, len(table)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
