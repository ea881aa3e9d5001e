"""Every sample prints what PyTorch printed for it: samples/NAME.out and NAME.err beside
NAME.tg, made by tests/make_goldens.py and checked by `autodiff test`'s own library."""

import shutil
import subprocess
from pathlib import Path

import pytest
from tiers import slow

from autodiff.cli import golden
from autodiff.interpreter.reference import (
    ReferenceResult,
    normalize_addresses,
    reference_outcomes,
    torch_available,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "samples").glob("*.tg"))


def _expected(sample: Path) -> golden.Expected:
    expected = golden.read_expected(sample)
    assert expected is not None and expected.stdout is not None, f"{sample.name} has no .out"
    return expected


def test_there_are_enough_samples_with_goldens():
    assert len(SAMPLES) >= 60
    for sample in SAMPLES:
        assert sample.with_suffix(".out").exists(), sample.name
        assert sample.read_text().startswith("# "), f"{sample.name} lacks its one-line comment"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_sample_matches_pytorch_golden(sample):
    result = golden.check_program(sample)
    assert result.status == golden.PASSED, f"{result.reason}\n{result.diff}"
    # stderr may only carry warnings, as torch's does (e.g. the non-leaf .grad warning), and
    # autodiff's hints after them
    for line in result.stderr.splitlines():
        assert line.startswith(("  ", "hint: ")) or ": UserWarning: " in line, result.stderr


@slow
def test_the_whole_folder_passes_in_a_pool():
    suite = golden.run_suite(golden.discover([str(ROOT / "samples")]), jobs=2)
    assert suite.summary() == f"{len(SAMPLES)} passed, 0 failed"


CONSOLE_SAMPLES = ["seed_scalar_derivative", "seed_linear_backward_error", "train_linreg_sgd"]


@pytest.mark.skipif(shutil.which("autodiff") is None, reason="console script not installed")
@pytest.mark.parametrize("name", CONSOLE_SAMPLES)
def test_console_script_matches_golden(name):
    sample = ROOT / "samples" / f"{name}.tg"
    expected = _expected(sample)
    proc = subprocess.run(["autodiff", "run", "--quiet", str(sample)], capture_output=True,
                          text=True, timeout=60)
    assert normalize_addresses(proc.stdout) == expected.stdout
    assert proc.returncode == (0 if expected.error is None else 1)
    assert "Traceback" not in proc.stderr
    if expected.error is not None:
        headline = proc.stderr.splitlines()[0]
        assert headline.startswith(f"{sample}:") and headline.endswith(": " + expected.error)


@slow
@pytest.mark.skipif(shutil.which("autodiff") is None, reason="console script not installed")
def test_console_script_tests_the_samples():
    proc = subprocess.run(["autodiff", "test", "samples", "-j", "2"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == f"{len(SAMPLES)} passed, 0 failed"


@pytest.fixture(scope="module")
def torch_outcomes():
    """Every sample under real torch, from one child that imports torch once."""
    if not torch_available():
        pytest.skip("torch is not installed")
    outcomes = reference_outcomes([s.read_text() for s in SAMPLES],
                                  filenames=[str(s) for s in SAMPLES], misspellings="fail")
    return dict(zip(SAMPLES, outcomes))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_golden_is_what_torch_prints_now(sample, torch_outcomes):
    """The golden is current (test_sample_matches_pytorch_golden: autodiff prints it)."""
    reference = torch_outcomes[sample]
    assert isinstance(reference, ReferenceResult), reference
    expected = _expected(sample)
    assert reference.stdout == expected.stdout, "golden is stale: rerun tests/make_goldens.py"
    assert reference.error == expected.error
