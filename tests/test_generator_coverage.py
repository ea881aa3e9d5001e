"""The coverage table: does the program generator reach every construct the spec lists?

    pytest -s tests/test_generator_coverage.py                       # the CI run's programs
    DIFF_PROGRAMS=10000 DIFF_SEED=7 pytest -s tests/test_generator_coverage.py

Each row below is one construct or API of shared/spec/tg-language.md ("What must parse and
run", the PyTorch surface, torch.nn.functional), or one of the autograd corners that once
hid bugs from the differential test (grad-mode blocks, create_graph gradients printed with
their grad_fn, next_functions of every op, writes through every kind of index, iteration
over tensors, results that can be -0.).  The lists are written out by hand, in the spec's
own words where it has a list, so that a reviewer can hold them against it; a construct the
generator never reaches shows up as a row with count 0.  A row counts the programs (of the
same seeds test_differential.py runs) whose syntax tree shows the construct; tg_coverage.py
reads the trees with autodiff's own parser.  Every row must be non-zero, and at least 20 in
a run of 10,000 programs or more.

The error rows (one per wrong-usage class) need torch, which says what a program raised:
they are in test_differential.py.

Keeping a mismatch as a regression sample (when test_differential.py reports one):
  1. rerun it alone: DIFF_SEEDS=<seed> pytest -s tests/test_differential.py, and show it
     with python tests/tg_programs.py <seed>;
  2. cut it down by hand to the few lines that still differ, and save them as
     samples/<what_differs>.tg, starting with a one-line "# ..." comment saying what it
     checks (test_samples.py requires it);
  3. python tests/make_goldens.py <what_differs> writes samples/<what_differs>.out (and .err
     when torch raises) by running the sample under real PyTorch; read the golden, then
     commit the three files: the sample fails until the engine prints what PyTorch prints.
"""

from __future__ import annotations

import functools
import os
from collections import Counter

import pytest
import tg_coverage
import tg_programs

N_PROGRAMS = int(os.environ.get("DIFF_PROGRAMS", "1500"))
BASE_SEED = int(os.environ.get("DIFF_SEED", "20240611"))
MIN_COUNT = 20 if N_PROGRAMS >= 10_000 else 1


CG_BUG = "I11_2_create_graph_names"
CG_PROD_BUG = "I11_2c_prod_zero_graph"
CG_MATMUL_BUG = "I11_2d_matmul_layout_graph"
GRAPH_BUGS = {"outer": "C9_outer_view", "cross_entropy": "C2_nll_next_functions"}


def _words(text: str) -> list[str]:
    return text.split()


# --- the spec's lists, verbatim -------------------------------------------------------------
CREATION = _words("tensor ones zeros ones_like zeros_like full eye arange linspace rand randn "
                  "manual_seed empty_like")
DTYPES = _words("float float32 float64 double int64 long int32 bool")
ARITHMETIC = _words("add sub mul div pow neg exp log sqrt abs sin cos tanh sigmoid relu clamp "
                    "maximum minimum where matmul mm mv dot outer")
REDUCTIONS = _words("sum mean max min norm prod")
SHAPES = _words("reshape view flatten unsqueeze squeeze t T transpose permute expand cat stack")
TENSOR_API = _words("shape size() dim() ndim numel() dtype item() tolist() data grad grad_fn "
                    "requires_grad is_leaf requires_grad_() detach() detach_() retain_grad() "
                    "zero_() clone() float() double() long()")
IN_PLACE = _words("add_ sub_ mul_ div_ zero_ fill_")
FUNCTIONAL = _words("relu sigmoid tanh softmax log_softmax mse_loss cross_entropy")
BUILTINS = _words("print range len abs min max sum float int bool str round enumerate zip list "
                  "tuple isinstance")
MATH = _words("pi e sqrt exp log sin cos")
# PyTorch has no torch.X function for these; every other op exists both ways.
METHOD_ONLY = {"view", "expand", "T"}
FUNCTION_ONLY = {"cat", "stack"}
DIFFERENTIABLE = ARITHMETIC + REDUCTIONS + SHAPES + ["softmax", "log_softmax", "mse_loss",
                                                      "cross_entropy"]
VARIANTS = [f"{op}({form})" for op in REDUCTIONS for form in ("dim", "dim, keepdim")]
BROADCAST = [f"cg:{op}(broadcast)" for op in ("div", "sub", "mul", "maximum",
                                                "minimum")]
INDEX_KINDS = ["int", "a:b", "a:", "a::k", "..., k", ":, j", "None", "list", "index tensor",
               "bool mask", "basic and advanced", "bool", "0-d bool mask"]
WRITE_KINDS = ["int", "0:", ":", "a:b", "a::k", "...", "..., k", ":, j", "i, j", "bool mask",
               "list", "index tensor", "basic and advanced", "bool", "0-d bool mask"]


def _row(section: str, label: str, *features: str, bug: str | None = None):
    """(section, label, the features that count for it, the KNOWN_BUGS flag that steers the
    generator away from it while that bug is open)."""
    return section, label, features or (label,), bug


ROWS = [
    # statements
    *(_row("statements", f"import {m}", f"stmt:import {m}") for m in
      ("torch", "torch.nn as nn", "torch.nn.functional as F", "math")),
    _row("statements", "assignment a = e", "stmt:assign"),
    _row("statements", "tuple unpacking a, b = e", "stmt:assign tuple"),
    _row("statements", "subscript assignment x[i] = e", "stmt:assign subscript"),
    _row("statements", "x.requires_grad = ...", "stmt:assign attribute requires_grad"),
    _row("statements", "x.grad = None", "stmt:assign attribute grad"),
    *(_row("statements", f"augmented {op}=", f"stmt:augassign {op}=") for op in
      ("+", "-", "*", "/", "**", "@")),
    _row("statements", "expression statement", "stmt:expression"),
    _row("statements", "print(..., sep=)", "print sep="),
    _row("statements", "print(..., end=)", "print end="),
    *(_row("statements", s, f"stmt:{s}") for s in ("if", "elif", "else", "while")),
    *(_row("statements", f"for over {k}", f"stmt:for {k}") for k in
      ("range", "list", "tuple", "enumerate", "zip", "tensor", "generator")),
    _row("statements", "yield", "stmt:yield"),
    _row("statements", "yield from", "stmt:yield from"),
    _row("grad mode", "yield inside a grad-mode block",
         "grad mode: yield inside a grad-mode block"),
    _row("statements", "for with a tuple of names", "stmt:for tuple target"),
    *(_row("statements", s, f"stmt:{s}") for s in ("break", "continue", "pass")),
    _row("statements", "def", "stmt:def"),
    _row("statements", "def with a default", "stmt:def default"),
    _row("statements", "keyword argument to a def", "call:def keyword"),
    _row("statements", "recursion", "stmt:recursion"),
    _row("statements", "return", "stmt:return"),
    _row("statements", "assert", "stmt:assert"),
    _row("statements", "assert with a message", "stmt:assert with message"),
    _row("statements", "# comment", "src:comment"),
    _row("statements", "blank line", "src:blank line"),
    _row("statements", "continuation inside brackets", "src:continuation line"),
    # expressions
    *(_row("expressions", f"literal {k}", f"expr:{k}") for k in
      ("int", "float", "float with exponent", "True", "False", "None", "str", "f-string",
       "f-string format spec", "list", "tuple")),
    *(_row("expressions", f"binary {op}", f"binop:{op}") for op in
      ("+", "-", "*", "/", "//", "%", "**", "@")),
    _row("expressions", "unary -", "unary:-"),
    _row("expressions", "unary +", "unary:+"),
    *(_row("expressions", f"comparison {op}", f"compare:{op}") for op in
      ("<", "<=", ">", ">=", "==", "!=", "is", "is not", "in", "not in", "chained")),
    _row("expressions", "and", "boolop:and"),
    _row("expressions", "or", "boolop:or"),
    _row("expressions", "not", "unary:not"),
    _row("expressions", "a if c else b", "expr:a if c else b"),
    _row("expressions", "call with keyword arguments", "call:keyword arguments"),
    *(_row("expressions", f"subscript [{k}]", f"index:{k}") for k in INDEX_KINDS + ["..."]),
    # builtins and math
    *(_row("builtins", name, f"builtin:{name}") for name in BUILTINS),
    _row("builtins", "list.append", "method:append"),
    _row("builtins", "list.pop", "method:pop"),
    *(_row("builtins", f"math.{name}") for name in MATH),
    # the PyTorch surface
    *(_row("creation", f"torch.{name}") for name in CREATION),
    *(_row("dtypes", f"torch.{name}") for name in DTYPES),
    *(_row("ops (torch.X)", f"torch.{name}") for name in ARITHMETIC + REDUCTIONS + SHAPES
      if name not in METHOD_ONLY),
    *(_row("ops (x.X)", f"x.{name}", "attr:T" if name == "T" else f"method:{name}",
           bug="C4_where_method" if name == "where" else None)
      for name in ARITHMETIC + REDUCTIONS + SHAPES if name not in FUNCTION_ONLY),
    _row("reductions", "dim=", "kw:dim"),
    _row("reductions", "keepdim=", "kw:keepdim"),
    _row("reductions", "max/min .values", "attr:values"),
    _row("reductions", "max/min .indices", "attr:indices"),
    *(_row("tensor API", f"x.{name}", ("method:" if name.endswith(")") else "attr:") +
           name.rstrip("()")) for name in TENSOR_API),
    *(_row("in-place", f"x.{name}()", f"method:{name}") for name in IN_PLACE),
    *(_row("nn.functional", f"F.{name}") for name in FUNCTIONAL),
    _row("nn.functional", "torch.softmax", "torch.softmax"),
    _row("nn.functional", "torch.log_softmax", "torch.log_softmax"),
    _row("nn.functional", "x.relu()", "method:relu"),
    _row("nn.functional", "x.softmax()", "method:softmax"),
    _row("nn.functional", "x.log_softmax()", "method:log_softmax"),
    *(_row("keywords", f"{k}=", f"kw:{k}") for k in
      ("reduction", "steps", "min", "max", "dtype", "requires_grad")),
    # autograd
    _row("autograd", "x.backward()", "method:backward"),
    *(_row("autograd", f"backward/grad {k}=", f"kw:{k}") for k in
      ("gradient", "retain_graph", "create_graph", "grad_outputs", "allow_unused", "inputs",
       "grad_tensors")),
    _row("autograd", "torch.autograd.grad", "torch.autograd.grad"),
    _row("autograd", "torch.autograd.backward", "torch.autograd.backward"),
    _row("autograd", "grad_fn.next_functions", "attr:next_functions"),
    _row("autograd", "grad_fn.name()", "method:name"),
    _row("autograd", "AccumulateGrad.variable", "attr:variable"),
    _row("autograd", "torch.is_grad_enabled()", "torch.is_grad_enabled"),
    # grad modes
    _row("grad modes", "with torch.no_grad()", "with:no_grad"),
    _row("grad modes", "with torch.enable_grad()", "with:enable_grad"),
    _row("grad modes", "with torch.set_grad_enabled(True)", "with:set_grad_enabled(True)"),
    _row("grad modes", "with torch.set_grad_enabled(False)", "with:set_grad_enabled(False)"),
    _row("grad modes", "with torch.set_grad_enabled(flag)", "with:set_grad_enabled(expression)"),
    _row("grad modes", "nested grad-mode blocks", "with:nested grad-mode blocks"),
    _row("grad modes", "torch.set_grad_enabled(...) as a statement",
         "grad mode: set_grad_enabled statement"),
    _row("grad modes", "is_grad_enabled() after a block",
         "grad mode: is_grad_enabled() after a with block"),
    _row("grad modes", "requires_grad read after a block",
         "grad mode: requires_grad read after a with block"),
    _row("grad modes", "return from inside a with block", "grad mode: return inside with"),
    _row("grad modes", "an inference tensor used after its block",
         "grad mode: an inference tensor used after its block"),
    # graphs: every op's node, and gradients built with create_graph=True
    *(_row("next_functions printed", op, f"nf:{op}", bug=GRAPH_BUGS.get(op))
      for op in DIFFERENTIABLE),
    *(_row("next_functions printed", f"index [{k}]", f"nf:index:{k}") for k in INDEX_KINDS),
    *(_row("create_graph grad printed with grad_fn", op, f"cg:{op}",
           bug=CG_PROD_BUG if op.startswith("prod") else
           CG_MATMUL_BUG if op in ("matmul", "mm") else CG_BUG)
      for op in DIFFERENTIABLE + VARIANTS),
    *(_row("create_graph grad printed with grad_fn", f"index [{k}]", f"cg:index:{k}", bug=CG_BUG)
      for k in INDEX_KINDS),
    _row("create_graph grad printed with grad_fn", "a broadcast operand", *BROADCAST,
         bug=CG_BUG),
    *(_row("second derivative through", op, f"d2:{op}") for op in
      ("prod", "unsqueeze", "sum(dim, keepdim)", "max", "minimum", "where", "index:int")),
    # in-place writes through an index, followed by backward and a printed grad_fn
    *(_row("t[k] = v on a leaf under no_grad", f"[{k}]", f"write:{k}:leaf under no_grad")
      for k in WRITE_KINDS),
    *(_row("t[k] = v on a non-leaf in grad mode", f"[{k}]", f"write:{k}:non-leaf in grad mode")
      for k in WRITE_KINDS),
    *(_row("t[k] = v on a plain tensor", f"[{k}]", f"write:{k}:plain tensor")
      for k in ("int", ":", "a:b", "bool mask", "list")),
    _row("in-place", "t[k] op= v", "stmt:assign subscript augmented"),
    _row("in-place", "x.op_() on a view of a tensor requiring grad",
         "inplace:a view of a tensor requiring grad"),
    _row("in-place", "x.op_() on an expand's view (elements sharing memory)",
         "inplace:an expand's view"),
    # hooks
    _row("hooks", "x.register_hook(f) on a leaf", "hook:leaf"),
    _row("hooks", "y.register_hook(f) on a non-leaf", "hook:non-leaf"),
    _row("hooks", "handle.remove()", "method:remove"),
    # iteration over tensors
    _row("iteration", "for v in x (x requires grad), v.grad_fn printed", "iter:grad"),
    _row("iteration", "next_functions of a row", "nf:unbind"),
    *(_row("iteration", f"{fn}(tensor)", f"iter:{fn}(tensor)") for fn in
      ("list", "tuple", "enumerate", "zip")),
    # results that can be -0.
    _row("-0.", "zero_() on a result", "zero:zero_ on a result"),
    _row("-0.", "fill_() on a result", "zero:fill_ on a result"),
    _row("-0.", "product with a literal holding 0", "zero:mul by zero"),
    _row("-0.", "negation of a value that may hold 0", "zero:neg"),
    *(_row("-0.", f"{op} with a tie", f"zero:{op} tie") for op in ("maximum", "minimum")),
    *(_row("-0.", f"{op}() with a tie", f"zero:{op} tie") for op in ("max", "min")),
    # the language's second surface
    _row("v2 surface", "lambda", "expr:lambda"),
    _row("v2 surface", "list comprehension", "expr:list comprehension"),
    _row("v2 surface", "dict comprehension", "expr:dict comprehension"),
    _row("v2 surface", "set comprehension", "expr:set comprehension"),
    _row("v2 surface", "generator expression", "expr:generator expression"),
    _row("v2 surface", "class X(nn.Module)", "class:nn.Module"),
    _row("v2 surface", "nn.Module's forward", "class method:nn.Module.forward"),
    _row("v2 surface", "Function's backward", "class method:torch.autograd.Function.backward"),
    _row("v2 surface", "class X(torch.autograd.Function)", "class:torch.autograd.Function"),
    _row("v2 surface", "Function.apply", "method:apply"),
    _row("v2 surface", "ctx.save_for_backward", "method:save_for_backward"),
    *(_row("v2 surface", f"@{d}", f"decorator:{d}") for d in
      ("torch.no_grad()", "torch.no_grad", "torch.enable_grad()", "torch.inference_mode()",
       "staticmethod", "a program's own")),
    _row("v2 surface", "with torch.inference_mode()", "with:inference_mode"),
    *(_row("v2 surface", name) for name in ("nn.Linear", "nn.Sequential", "nn.MSELoss",
                                            "torch.optim.SGD", "torch.optim.Adam")),
    _row("v2 surface", "optimizer.step()", "method:step"),
    _row("v2 surface", "zero_grad()", "method:zero_grad"),
    _row("v2 surface", "named_parameters()", "method:named_parameters"),
    # full-precision prints
    _row("printing", "linspace printed with tolist()", "print:linspace tolist"),
    _row("printing", "arange printed with tolist()", "print:arange tolist"),
]


@functools.lru_cache(maxsize=2)
def generated_features(n: int, base: int) -> tuple[Counter, int]:
    counts: Counter = Counter()
    for seed in range(base, base + n):
        _, source = tg_programs.program_for_seed(seed)
        counts.update(tg_coverage.program_features(source))
    return counts, n


def coverage_table(counts: Counter) -> list[tuple[str, str, int, str | None]]:
    """(section, label, programs, the open bug steering away from it or None) per row."""
    return [(section, label, sum(counts[f] for f in features),
             bug if bug in tg_programs.KNOWN_BUGS else None)
            for section, label, features, bug in ROWS]


def test_every_spec_construct_is_generated():
    counts, n = generated_features(N_PROGRAMS, BASE_SEED)
    table = coverage_table(counts)
    width = max(len(label) for _, label, _, _ in table)
    print(f"\ncoverage of {n} programs (seeds {BASE_SEED}..{BASE_SEED + n - 1}), "
          f"programs using each construct:")
    section = None
    for sec, label, count, bug in table:
        if sec != section:
            print(f"  {sec}")
            section = sec
        print(f"    {label:<{width}} {count:6d}" + (f"  (steered away: {bug})" if bug else ""))
    missing = [f"{sec}: {label} ({count})" for sec, label, count, bug in table
               if count < MIN_COUNT and not bug]
    assert not missing, f"rows under {MIN_COUNT} in {n} programs:\n  " + "\n  ".join(missing)


def test_every_feature_a_row_names_occurs():
    """A row of several features is non-zero when one of them is: a misspelt one would hide."""
    counts, _ = generated_features(N_PROGRAMS, BASE_SEED)
    unknown = [(label, f) for _, label, features, bug in ROWS for f in features
               if not counts[f] and bug not in tg_programs.KNOWN_BUGS]
    assert not unknown, unknown


@pytest.mark.parametrize("source, feature", [
    ("x = torch.ones(2, requires_grad=True)\ng = torch.autograd.grad((x.exp()).sum(), x, "
     "create_graph=True)\nprint(g[0])\n", "cg:exp"),
    ("x = torch.ones(2, requires_grad=True)\ny = x.sum(0, keepdim=True)\n"
     "print(y.grad_fn.next_functions)\n", "nf:sum(dim, keepdim)"),
    ("x = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    x[0:] = 2.0\n"
     "x.sum().backward()\nprint(x.grad_fn)\n", "write:0::leaf under no_grad"),
    ("x = torch.ones(3, requires_grad=True)\nfor v in x:\n    print(v.grad_fn)\n", "iter:grad"),
    ("x = torch.tensor([0.0, 1.0], requires_grad=True)\ny = x * 1\ny.zero_()\n",
     "zero:zero_ on a result"),
    ("x = torch.ones(3)\nv = torch.broadcast_to(x, (2, 3))\nv.add_(1)\n",
     "inplace:an expand's view"),
    ("torch.set_grad_enabled(False)\n", "grad mode: set_grad_enabled statement"),
    ("with torch.inference_mode():\n    y = torch.ones(2)\nprint(y * 2)\n",
     "grad mode: an inference tensor used after its block"),
    ("with torch.set_grad_enabled(False):\n    pass\nprint(torch.is_grad_enabled())\n",
     "grad mode: is_grad_enabled() after a with block"),
])
def test_the_reader_sees_what_a_row_names(source, feature):
    assert feature in tg_coverage.program_features(source)


@pytest.mark.parametrize("source, feature", [
    ("x = torch.ones(2, requires_grad=True)\ng = torch.autograd.grad(x.exp().sum(), x)\n"
     "print(g[0])\n", "cg:exp"),  # no create_graph: no grad_fn to print
    ("x = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    x[0:] = 2.0\n",
     "write:0::leaf under no_grad"),  # no backward after the write
    ("x = torch.ones(3)\nfor v in x:\n    print(v.grad_fn)\n", "iter:grad"),
])
def test_the_reader_does_not_see_what_is_not_there(source, feature):
    assert feature not in tg_coverage.program_features(source)
