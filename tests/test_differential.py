"""Differential testing: generated .tg programs print what PyTorch prints.

    pytest tests/test_differential.py                          # CI: 1500 programs, fixed seed
    DIFF_PROGRAMS=5000 DIFF_SEED=7 pytest -s tests/test_differential.py
    DIFF_SEEDS=1234,5678 pytest -s tests/test_differential.py  # rerun chosen programs
    python tests/tg_programs.py 1234                           # show one program

Programs come from tests/tg_programs.py (program i of a run is generated from
seed DIFF_SEED + i).  All of a run's programs go through real torch in a few
batch subprocesses (run_many_with_torch: one torch import per batch) and through
autodiff in-process.  Lines ``#VAL name dtype values`` are compared numerically
(float32: rtol 1e-5, atol 1e-6; float64: rtol = atol = 1e-10; other dtypes
exactly); every other line byte for byte, after replacing object addresses.  When
torch raises, autodiff must raise the same ``ErrorClass: message``; a full run must also
see torch raise each wrong-usage class of ERROR_CLASSES.  What the programs cover is
tabled by test_generator_coverage.py (same seeds); engine bugs still open are steered
away from by the flags in tests/tg_known_bugs.py.  How to keep a mismatch as a regression
sample: test_generator_coverage.py's docstring.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import time
import traceback
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import numpy as np
import pytest
import tg_programs
from hypothesis import HealthCheck, given, settings

from autodiff.interpreter import run_source
from autodiff.interpreter.reference import (
    ReferenceRefused,
    normalize_addresses,
    run_many_with_torch,
    run_with_torch,
    torch_available,
)

N_PROGRAMS = int(os.environ.get("DIFF_PROGRAMS", "1500"))
BASE_SEED = int(os.environ.get("DIFF_SEED", "20240611"))
CHOSEN_SEEDS = [int(s) for s in os.environ.get("DIFF_SEEDS", "").split(",") if s.strip()]
BATCH = 250  # programs per torch subprocess
WORKERS = int(os.environ.get("DIFF_WORKERS", str(min(4, os.cpu_count() or 1))))
TOLERANCES = {"torch.float32": (1e-5, 1e-6), "torch.float64": (1e-10, 1e-10)}

needs_torch = pytest.mark.skipif(not torch_available(), reason="torch is not installed")

# The wrong-usage classes of the spec (and of shared/spec/pytorch-facts.md): each is a
# pattern of the error line torch prints.  A full run must see torch raise each of them.
ERROR_CLASSES = [
    ("requires grad on a non-float tensor", r"only Tensors of floating point"),
    ("a leaf that requires grad changed in place", r"leaf Variable that requires grad is being used"),
    ("a tensor saved for backward changed in place", r"modified by an inplace operation"),
    ("backward through a freed graph", r"backward through the graph a second time"),
    ("implicit gradient of a non-scalar", r"grad can be implicitly created only for scalar"),
    ("backward of a tensor without grad", r"does not require grad and does not have a grad_fn"),
    ("grad of an input outside the graph",  # (torch 2.13 words the unused one by its index)
     r"One of the differentiated Tensors|The differentiated Tensor at index"),
    ("gradient of the wrong shape", r"Mismatch in shape"),
    ("shapes that do not broadcast", r"must match the size of tensor b"),
    ("matmul shapes", r"cannot be multiplied|size mismatch|Expected size for first two"),
    ("cat/stack shapes", r"Sizes of tensors must match|stack expects each tensor"),
    ("view/reshape/expand sizes", r"is invalid for input of size|view size is not compatible|expand"),
    ("dim out of range", r"Dimension out of range"),
    ("index out of range", r"out of bounds|index \d+ is out of"),
    ("one-element conversion", r"only one element tensors|elements cannot be converted"),
    ("dtype mismatch", r"dtype|expected scalar type|could not infer output dtype"),
    ("nn.functional arguments", r"Target \d+ is out of bounds|is not a valid value for reduction"),
    ("attribute or name", r"^(AttributeError|NameError)"),
    ("Python TypeError", r"^TypeError"),
    ("Python arithmetic/lookup errors", r"^(ZeroDivisionError|IndexError: (list|tuple)|ValueError)"),
    ("assert", r"^AssertionError"),
]


# --- comparing two outputs ------------------------------------------------------------------

def _parse_val(line: str):
    """'#VAL name dtype values' -> (name, dtype, values); '#VAL name None' -> (name, None, None)."""
    _, name, rest = line.split(" ", 2)
    if rest == "None":
        return name, None, None
    dtype, _, values = rest.partition(" ")
    try:  # json, not ast.literal_eval: CPython 3.11's compile() raises a spurious "AST constructor
        # recursion depth mismatch" when another worker thread's run changes the recursion limit
        return name, dtype, json.loads(values)
    except ValueError:  # nan / inf / True: compared as text
        return name, dtype, values


def _values_differ(dtype: str, want, got) -> str | None:
    if isinstance(want, str) or isinstance(got, str):
        return None if want == got else "values differ"
    a, b = np.asarray(want), np.asarray(got)
    if a.shape != b.shape:
        return f"shape {a.shape} != {b.shape}"
    if dtype not in TOLERANCES:
        return None if np.array_equal(a, b) else "values differ"
    rtol, atol = TOLERANCES[dtype]
    a, b = a.astype(np.float64), b.astype(np.float64)
    if np.allclose(b, a, rtol=rtol, atol=atol, equal_nan=True):
        return None
    worst = np.max(np.abs(a - b) - rtol * np.abs(a), initial=0.0)
    return f"not allclose (rtol={rtol:g}, atol={atol:g}; worst excess {worst:.3g})"


def compare_outputs(want: str, got: str) -> str | None:
    """None when `got` matches the reference `want`, else what differs first."""
    want_lines, got_lines = want.splitlines(), got.splitlines()
    for k, (w, g) in enumerate(zip(want_lines, got_lines), start=1):
        if w.startswith("#VAL ") and g.startswith("#VAL "):
            wn, wd, wv = _parse_val(w)
            gn, gd, gv = _parse_val(g)
            if (wn, wd) != (gn, gd):
                return f"line {k}: {w[:80]!r} != {g[:80]!r}"
            if wd is None and (wv, gv) != (None, None):
                return f"line {k}: {w[:80]!r} != {g[:80]!r}"
            if wd is not None and (why := _values_differ(wd, wv, gv)):
                return f"line {k} ({wn}): {why}"
        elif w != g:
            return f"line {k}: {w!r} != {g!r}"
    if len(want_lines) != len(got_lines) or want.endswith("\n") != got.endswith("\n"):
        return f"torch printed {len(want_lines)} lines, autodiff {len(got_lines)}"
    return None


def run_autodiff(source: str) -> tuple[str, str | None]:
    """(address-normalized stdout, 'ErrorClass: message' or None), run in-process."""
    out = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")  # warnings go to stderr, which is not compared
            result = run_source(source, "<program>", out=out)
    except Exception as exc:  # noqa: BLE001 - an engine crash is a finding, not a test error
        tb = traceback.format_exc(limit=-3).strip().splitlines()
        return normalize_addresses(out.getvalue()), f"(crash) {type(exc).__name__}: {exc} | {tb}"
    error = None
    if result.error is not None:
        e = result.error
        error = f"{e.error_class}: {e.message}" if e.message else e.error_class
        error = error.splitlines()[0]
    return normalize_addresses(out.getvalue()), error


def mismatch(source: str, reference, ours: tuple[str, str | None] | None = None) -> str | None:
    """What autodiff does (or did: `ours`) differently from torch's `reference` (None: nothing)."""
    stdout, error = ours or run_autodiff(source)
    if error != reference.error:
        return f"error: torch {reference.error!r}, autodiff {error!r}"
    return compare_outputs(reference.stdout, stdout)


def _report(seed: int, kind: str, source: str, reference, why: str) -> str:
    stdout, error = run_autodiff(source)
    return (f"--- program seed {seed} (kind {kind}; show it with: python tests/tg_programs.py "
            f"{seed}): {why}\n{source}--- torch stdout:\n{reference.stdout}--- torch error: "
            f"{reference.error}\n--- autodiff stdout:\n{stdout}--- autodiff error: {error}\n")


def run_both(sources: list[str]):
    """(torch's results, autodiff's (stdout, error)s): torch batches run in a few subprocesses
    while autodiff runs here.  The batches are handed out from worker processes, not threads:
    run_many_with_torch parses each program (has_torch_import), and autodiff's parser keeps
    per-parse state (the f-string hook) that two threads parsing at once overwrite."""
    chunks = [sources[i:i + BATCH] for i in range(0, len(sources), BATCH)]
    with ProcessPoolExecutor(max_workers=max(1, WORKERS)) as pool:
        # our own programs: a misspelling the generator writes gets PyTorch's own error
        futures = [pool.submit(partial(run_many_with_torch, misspellings="fail"), chunk)
                   for chunk in chunks]
        ours = [run_autodiff(source) for source in sources]
        return [r for f in futures for r in f.result()], ours


# --- the differential run -------------------------------------------------------------------

@needs_torch
def test_generated_programs_match_torch():
    started = time.perf_counter()
    seeds = CHOSEN_SEEDS or [BASE_SEED + i for i in range(N_PROGRAMS)]
    generated = [tg_programs.program_for_seed(s) for s in seeds]
    references, ours = run_both([src for _, src in generated])
    failures, failed_seeds, kinds, raised = [], [], Counter(), 0
    for seed, (kind, source), reference, result in zip(seeds, generated, references, ours):
        kinds[kind] += 1
        raised += reference.error is not None
        why = mismatch(source, reference, result)
        if why is not None:
            failures.append(_report(seed, kind, source, reference, why))
            failed_seeds.append(seed)
    elapsed = time.perf_counter() - started
    print(f"\ndifferential: {len(seeds)} programs (seeds {seeds[0]}..{seeds[-1]}), "
          f"{dict(kinds)}, {raised} raised in torch, {len(failures)} mismatches, "
          f"{elapsed:.1f} s")
    errors = _error_classes(references)
    if not CHOSEN_SEEDS:
        print("programs torch stopped, per wrong-usage class:")
        for label, count in errors.items():
            print(f"    {label:<48} {count:5d}")
    unseen = [label for label, count in errors.items() if count == 0]
    assert not failures, (
        f"{len(failures)} of {len(seeds)} programs differ from torch (base seed {BASE_SEED}; "
        f"rerun them with DIFF_SEEDS={','.join(map(str, failed_seeds))}); first ones:\n"
        + "\n".join(failures[:3]))
    assert CHOSEN_SEEDS or len(seeds) < 1000 or not unseen, f"no program raised: {unseen}"


def _error_classes(references) -> dict[str, int]:
    """How many programs torch stopped with each wrong-usage class's error."""
    counts = dict.fromkeys([label for label, _ in ERROR_CLASSES], 0)
    for reference in references:
        for label, pattern in ERROR_CLASSES:
            if reference.error and re.search(pattern, reference.error.partition(": ")[2]
                                             if not pattern.startswith("^") else reference.error):
                counts[label] += 1
    return counts


@needs_torch
def test_each_kind_runs_mostly_without_error_in_torch():
    """The generator mostly writes valid programs (else it would test little but errors)."""
    seeds = range(BASE_SEED, BASE_SEED + 200)
    generated = [tg_programs.program_for_seed(s) for s in seeds]
    references = [r for chunk in (generated[i:i + BATCH] for i in range(0, len(generated), BATCH))
                  for r in run_many_with_torch([src for _, src in chunk], misspellings="fail")]
    for kind in set(tg_programs.KINDS) - {"error", "inplace"}:  # inplace raises on purpose
        outcomes = [r.error for (k, _), r in zip(generated, references) if k == kind]
        failed = [e for e in outcomes if e is not None]
        assert len(failed) <= 0.1 * len(outcomes), (kind, Counter(failed).most_common(3))


@needs_torch
def test_batch_reference_matches_single_runs():
    sources = [
        "x = torch.ones(2, requires_grad=True)\nprint((x * 3).sum())\n",
        "import torch\nprint(torch.is_grad_enabled())\ntorch.set_grad_enabled(False)\n",
        "print(torch.is_grad_enabled())\nprint(torch.ones(3)[5])\n",
    ]
    batch = run_many_with_torch(sources)
    for source, got in zip(sources, batch):
        want = run_with_torch(source)
        assert (got.stdout, got.exit_code, got.error) == (want.stdout, want.exit_code, want.error)
    for not_tg in ("print('a')\nraise SystemExit(0)\n", "def f(\n"):  # neither path runs these
        with pytest.raises(ReferenceRefused):
            run_many_with_torch([not_tg])
        with pytest.raises(ReferenceRefused):
            run_with_torch(not_tg)


# --- pieces that need no torch --------------------------------------------------------------

def test_compare_outputs_tolerates_rounding_only_in_val_lines():
    want = "#VAL g torch.float32 [1.0, 2.0]\nx\n"
    assert compare_outputs(want, "#VAL g torch.float32 [1.000001, 2.0]\nx\n") is None
    assert compare_outputs(want, "#VAL g torch.float32 [1.001, 2.0]\nx\n") is not None
    assert compare_outputs(want, "#VAL g torch.float64 [1.0, 2.0]\nx\n") is not None
    assert compare_outputs(want, "#VAL g torch.float32 [[1.0, 2.0]]\nx\n") is not None
    assert compare_outputs(want, "#VAL g torch.float32 [1.0, 2.0]\ny\n") is not None
    assert compare_outputs(want, "#VAL g torch.float32 [1.0, 2.0]\n") is not None
    f64 = "#VAL g torch.float64 0.1\n"
    assert compare_outputs(f64, "#VAL g torch.float64 0.10000000001\n") is None
    assert compare_outputs(f64, "#VAL g torch.float64 0.1000000005\n") is not None
    assert compare_outputs("#VAL i torch.int64 [1]\n", "#VAL i torch.int64 [2]\n") is not None
    assert compare_outputs("#VAL g None\n", "#VAL g torch.float32 0.0\n") is not None


def test_programs_are_a_function_of_the_seed():
    assert tg_programs.program_for_seed(12345) == tg_programs.program_for_seed(12345)
    kinds = {tg_programs.program_for_seed(s)[0] for s in range(200)}
    assert kinds == set(tg_programs.KINDS)


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tg_programs.programs())
def test_generated_programs_parse_and_never_crash_autodiff(source):
    """Shrinkable by Hypothesis: autodiff parses every generated program and never crashes."""
    _, error = run_autodiff(source)
    assert error is None or not error.startswith("(crash)"), error
    assert error is None or not error.startswith(("SyntaxError", "NotImplemented")), error
