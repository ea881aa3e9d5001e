"""Random numbers equal to PyTorch's CPU generator, bit for bit.

The goldens (tests/goldens/random/, written by tests/make_random_goldens.py under real
torch) hold torch's values for every case of tests/random_cases.py: rand, randn, randint,
randperm, normal, uniform_, normal_, bernoulli, dropout and nn.init over 20 seeds, sizes
1 to 1000 and both float dtypes. A live comparison on other seeds runs when torch is here.
"""

from __future__ import annotations

import io
import json
import lzma
import math
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import random_cases

from autodiff.engine import api
from autodiff.engine.numerics import fma
from autodiff.engine.random import kernels as random_math
from autodiff.engine.random.generator import DEFAULT_SEED, Generator
from autodiff.engine.core.session import Session
from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses, torch_available

GOLDENS = Path(__file__).resolve().parent / "goldens" / "random"


def _stored():
    index = json.loads(lzma.decompress((GOLDENS / "cases.json.xz").read_bytes()))
    blob = lzma.decompress((GOLDENS / "values.bin.xz").read_bytes())
    offset, cases = 0, []
    for case in index["cases"]:
        arrays = []
        for a in case["arrays"]:
            size = math.prod(a["shape"]) * np.dtype(a["dtype"]).itemsize
            arrays.append(random_cases.from_little_endian(blob[offset:offset + size],
                                                          a["dtype"], a["shape"]))
            offset += size
        cases.append((case["name"], case["code"], arrays))
    assert offset == len(blob)
    return cases


STORED = _stored()


def _mismatch(want: list, got: list) -> str | None:
    """Where two lists of arrays first differ, as a readable sentence (None: bit-equal)."""
    if len(want) != len(got):
        return f"{len(got)} tensors, torch made {len(want)}"
    for i, (w, g) in enumerate(zip(want, got)):
        if w.dtype != g.dtype or w.shape != g.shape:
            return f"tensor {i}: {g.dtype}{list(g.shape)}, torch {w.dtype}{list(w.shape)}"
        bits = w.reshape(-1).view(np.uint8).reshape(w.size, -1) != \
            g.reshape(-1).view(np.uint8).reshape(g.size, -1)
        differ = np.flatnonzero(bits.any(axis=1))
        if differ.size:
            k = differ[0]
            return (f"tensor {i}: {differ.size} of {w.size} values differ, first at flat index "
                    f"{k}: {g.reshape(-1)[k]!r}, torch {w.reshape(-1)[k]!r}")
    return None


def _ours(code: str) -> list:
    with Session().active():  # a fresh run's state: the default generator at its first seed
        return [np.asarray(t.array) for t in random_cases.run_case(code, api.torch)]


def test_the_goldens_are_for_the_current_cases():
    assert [(name, code) for name, code, _ in STORED] == random_cases.cases()
    assert len({name.split("seed=")[1] for name, _, _ in STORED}) >= 20


@pytest.mark.parametrize("kind", sorted({name.split(" seed=")[0] for name, _, _ in STORED}))
def test_values_equal_torchs(kind):
    failures = []
    for name, code, want in STORED:
        if name.split(" seed=")[0] == kind:
            problem = _mismatch(want, _ours(code))
            if problem:
                failures.append(f"{name}: {problem}")
    assert not failures, "\n".join(failures[:10])


def test_readable_goldens_agree_with_the_stored_values():
    readable = json.loads((GOLDENS / "readable.json").read_text())["cases"]
    assert readable["rand(5), seed 0"][0]["values"] == pytest.approx(
        [0.4963, 0.7682, 0.0885, 0.1320, 0.3074], abs=1e-4)
    got = _ours("torch.manual_seed(0); out = [torch.randn(3), torch.randn(17)]")
    for tensor, values in zip(got, readable["randn(3) then randn(17), seed 0"]):
        assert tensor.astype(np.float64).tolist() == values["values"]


@pytest.mark.skipif(not torch_available(), reason="torch is not installed")
def test_live_against_torch_on_other_seeds():
    seeds = [8, 77, 2 ** 40 + 1, 3 ** 30]
    proc = subprocess.run([sys.executable, str(Path(__file__).with_name("make_random_goldens.py")),
                           "--live", *map(str, seeds)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    live = json.loads(proc.stdout)
    if live["cpu_capability"] not in ("AVX2", "AVX512"):
        pytest.skip("this torch computes float32 normals with its scalar kernel (CPU capability "
                    f"{live['cpu_capability']}); autodiff reproduces the AVX2 kernel of x86-64")
    live = live["cases"]
    assert len(live) == len(random_cases.cases(seeds, seeds[:1]))
    failures = []
    for name, code in random_cases.cases(seeds, seeds[:1]):
        data, offset, want = bytes.fromhex(live[name]["hex"]), 0, []
        for a in live[name]["arrays"]:
            size = math.prod(a["shape"]) * np.dtype(a["dtype"]).itemsize
            want.append(random_cases.from_little_endian(data[offset:offset + size], a["dtype"],
                                                        a["shape"]))
            offset += size
        problem = _mismatch(want, _ours(code))
        if problem:
            failures.append(f"{name}: {problem}")
    assert not failures, "\n".join(failures[:10])


API = json.loads((GOLDENS / "api.json").read_text())


def test_the_api_goldens_are_for_the_current_programs():
    assert [entry["line"] for entry in API] == [line for line, _ in random_cases.api_programs()]


@pytest.mark.parametrize("entry", API, ids=[e["line"][:60] for e in API])
def test_argument_forms_and_errors_match_torch(entry):
    program = dict(random_cases.api_programs())[entry["line"]]
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # randint's float-range warnings go to stderr
        result = run_source(program, "<api>", out=out, err=io.StringIO())
    error = None if result.error is None else \
        f"{result.error.error_class}: {result.error.message}".split("\n")[0]
    assert (normalize_addresses(out.getvalue()), error) == (entry["stdout"], entry["error"])


# --- seeds and generators --------------------------------------------------------------------

def _run(source: str) -> str:
    out = io.StringIO()
    result = run_source(source, "<test>", out=out)
    if result.error is not None:
        return f"{result.error.error_class}: {result.error.message}"
    return out.getvalue()


def test_an_unseeded_run_starts_from_torch_generators_default_seed_every_time():
    first = _run("print(torch.initial_seed(), torch.rand(3))")
    assert first == _run("print(torch.initial_seed(), torch.rand(3))")
    assert first.startswith(f"{DEFAULT_SEED} ")
    seeded = _run(f"torch.manual_seed({DEFAULT_SEED})\nprint(torch.rand(3))")
    assert first.split(" ", 1)[1] == seeded


def test_each_run_starts_a_fresh_generator():
    unseeded = _run("print(torch.rand(2))")
    seeded = _run("torch.manual_seed(5)\nprint(torch.rand(2))")
    assert seeded != unseeded
    assert _run("print(torch.rand(2))") == unseeded  # nothing left over from the seeded run
    assert _run("torch.manual_seed(5)\nprint(torch.rand(2))") == seeded


@pytest.mark.parametrize("seed, stored", [(-1, 2 ** 64 - 1), (-2 ** 63, 2 ** 63), (2.9, 2),
                                          ("7", 7), (True, 1), (2 ** 64 - 1, 2 ** 64 - 1)])
def test_manual_seed_takes_torchs_seeds(seed, stored):
    assert _run(f"torch.manual_seed({seed!r})\nprint(torch.initial_seed())") == f"{stored}\n"


@pytest.mark.parametrize("seed, error", [
    (2 ** 64, "ValueError: Overflow when unpacking long long"),
    (-2 ** 63 - 1, "ValueError: Overflow when unpacking long long"),
    (None, "TypeError: int() argument must be a string, a bytes-like object or a real number, "
           "not 'NoneType'"),
    ("'x'", "ValueError: invalid literal for int() with base 10: 'x'"),
])
def test_manual_seed_refuses_what_torch_refuses(seed, error):
    source = f"torch.manual_seed({seed if isinstance(seed, str) else repr(seed)})"
    assert _run(source) == error


def test_a_generator_object_has_its_own_stream():
    g = Generator()
    assert g.initial_seed() == DEFAULT_SEED
    a = Generator().manual_seed(3).uniform(4, np.float32)
    b = Generator().manual_seed(3)
    b_first = b.uniform(2, np.float32)
    Generator().manual_seed(3).uniform(10, np.float32)  # another generator does not interfere
    assert np.array_equal(np.concatenate([b_first, b.uniform(2, np.float32)]), a)
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        Generator().manual_seed(1.5)


def test_the_generator_prints_and_exposes_what_torch_does():
    assert _run("print(torch.manual_seed(0))").startswith("<torch._C.Generator object at 0x")
    assert Generator._tg_public == {"manual_seed", "initial_seed", "seed"}
    assert _run("g = torch.Generator()\ng._stream").startswith("AttributeError")


def test_generating_does_not_import_numpy_random_until_a_draw():
    code = ("import sys\nfrom autodiff.engine import api\n"
            "api.torch.ones(2)\nprint('numpy.random' in sys.modules)\n"
            "api.torch.manual_seed(3); api.torch.rand(1)\nprint('numpy.random' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "True"], out.stderr


# --- the arithmetic torch's kernels do --------------------------------------------------------

def test_fused_multiply_add_rounds_once():
    rng = np.random.default_rng(1)
    a, b, c = (rng.normal(size=3000) * 10.0 ** rng.integers(-8, 8, size=3000) for _ in range(3))
    for got, dtype in ((fma.fma64(a, b, c), np.float64),
                       (fma.fma32(a.astype(np.float32), b.astype(np.float32),
                                          c.astype(np.float32)), np.float32)):
        x, y, z = (v.astype(dtype) for v in (a, b, c))
        exact = [Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r))
                 for p, q, r in zip(x, y, z)]
        assert got.dtype == dtype
        assert got.tolist() == [float(dtype(float(e))) if dtype == np.float64 else
                                _round_float32(e) for e in exact]


def _round_float32(value: Fraction) -> float:
    """value rounded once to the nearest float32 (ties to even)."""
    if value == 0:
        return 0.0
    low = np.float32(float(value))  # within one float32 step of the answer
    candidates = [np.nextafter(low, np.float32(-np.inf)), low,
                  np.nextafter(low, np.float32(np.inf))]
    best = min(candidates, key=lambda f: (abs(Fraction(float(f)) - value),
                                          int(np.array(f).view(np.int32)) & 1))
    return float(best)


def test_float32_fma_on_exact_ties():
    # a*b + c exactly halfway between two float32s after float64 rounding went the other way
    a, b = np.float32(1 + 2 ** -12), np.float32(1 + 2 ** -12)  # a*b = 1 + 2**-11 + 2**-24
    c = np.float32(2 ** -60)
    got = fma.fma32(np.array([a]), np.array([b]), np.array([c]))[0]
    assert got == np.float32(1 + 2 ** -11 + 2 ** -23)  # rounded up: the exact sum is past the tie


class _ZeroUniforms(Generator):
    """A generator whose float32 uniforms are all 0."""

    def _floats(self, n):
        return np.zeros(n, np.float32)


def test_box_muller_ends_with_positive_zero_as_torch_does():
    # uniforms of 0: u1 = 1 gives log 0, and sqrt(-2 * 0) is -0., so every product is -0.;
    # torch's kernel ends with fma(n, std, mean), which for N(0, 1) turns -0. into 0.
    d = np.zeros(16, np.float32)
    random_math.box_muller_avx(d)
    assert np.signbit(d).all() and not d.any()
    assert not np.signbit(_ZeroUniforms().normal(16, np.float32)).any()


def test_seed_draws_a_fresh_seed_and_sets_it():
    # torch.seed() and Generator.seed(): a nondeterministic 64-bit seed, set and returned
    out = _run("g = torch.Generator()\nseeds = {g.seed() for _ in range(4)}\n"
               "print(len(seeds), g.initial_seed() in seeds, all(0 <= s < 2 ** 64 for s in seeds))\n"
               "s = torch.seed()\na = torch.rand(3)\ntorch.manual_seed(s)\n"
               "print(torch.initial_seed() == s, torch.equal(a, torch.rand(3)))")
    assert out.split() == ["4", "True", "True", "True", "True"]
