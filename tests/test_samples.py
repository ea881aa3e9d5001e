"""Every sample prints what PyTorch printed for it (goldens made by tests/make_goldens.py)."""

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autodiff.cli.run import run_path
from autodiff.interpreter.reference import normalize_addresses, run_with_torch, torch_available

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "samples").glob("*.tg"))
GOLDENS = ROOT / "tests" / "goldens"


def _expected(sample: Path):
    out = (GOLDENS / f"{sample.stem}.out").read_text()
    err_file = GOLDENS / f"{sample.stem}.err"
    return out, err_file.read_text().strip() if err_file.exists() else None


def _run_in_process(sample: Path):
    out, err = io.StringIO(), io.StringIO()
    code = run_path(str(sample), quiet=True, out=out, err=err)
    return code, normalize_addresses(out.getvalue()), err.getvalue()


def test_there_are_enough_samples_with_goldens():
    assert len(SAMPLES) >= 15
    for sample in SAMPLES:
        assert (GOLDENS / f"{sample.stem}.out").exists(), sample.name
        assert sample.read_text().startswith("# "), f"{sample.name} lacks its one-line comment"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_sample_matches_pytorch_golden(sample):
    expected_out, expected_err = _expected(sample)
    code, out, err = _run_in_process(sample)
    assert out == expected_out
    if expected_err is None:
        assert code == 0, err
        # stderr may only carry warnings, as torch's does (e.g. the non-leaf .grad warning)
        for line in err.splitlines():
            assert line.startswith("  ") or ": UserWarning: " in line, err
    else:
        assert code == 1
        headline = err.splitlines()[0]
        assert headline.startswith(f"{sample}:")
        assert headline.endswith(": " + expected_err)
        assert "Traceback" not in err


CONSOLE_SAMPLES = ["seed_scalar_derivative", "seed_linear_backward_error", "train_linreg_sgd"]


@pytest.mark.skipif(shutil.which("autodiff") is None, reason="console script not installed")
@pytest.mark.parametrize("name", CONSOLE_SAMPLES)
def test_console_script_matches_golden(name):
    sample = ROOT / "samples" / f"{name}.tg"
    expected_out, expected_err = _expected(sample)
    proc = subprocess.run(["autodiff", "run", "--quiet", str(sample)], capture_output=True,
                          text=True, timeout=60)
    assert normalize_addresses(proc.stdout) == expected_out
    assert proc.returncode == (0 if expected_err is None else 1)
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(not torch_available(), reason="torch is not installed")
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_live_against_torch(sample):
    """The golden is current, and autodiff agrees with torch right now."""
    reference = run_with_torch(sample.read_text(), filename=str(sample))
    expected_out, expected_err = _expected(sample)
    assert reference.stdout == expected_out, "golden is stale: rerun tests/make_goldens.py"
    assert reference.error == expected_err
    code, out, _ = _run_in_process(sample)
    assert out == reference.stdout
    assert code == reference.exit_code
