"""A short, bounded fuzz run on every CI run (the long campaign is tests/fuzz_campaign.py)."""

import random
import shutil
import subprocess

import pytest
from tiers import slow
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzgen import check_invariant, fuzz_input


@slow
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_any_input_keeps_the_invariant(rng):
    text = fuzz_input(rng)
    problem = check_invariant(text)
    assert problem is None, f"{problem}\n--- input ---\n{text}"


@slow
@pytest.mark.skipif(shutil.which("autodiff") is None, reason="console script not installed")
@pytest.mark.parametrize("command", ["run", "graph", "explain", "check", "repl"])
def test_console_script_never_shows_a_traceback(tmp_path, command):
    rng = random.Random(11)
    for index in range(6):
        text = fuzz_input(rng)
        path = tmp_path / f"case{index}.tg"
        path.write_text(text, errors="surrogateescape")
        args = ["repl"] if command == "repl" else [command, str(path)]
        proc = subprocess.run(["autodiff", *args, "--timeout", "5"], capture_output=True,
                              timeout=60, input=path.read_bytes() if command == "repl" else None)
        assert proc.returncode in (0, 1, 2, 3), (proc.returncode, text)
        assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
        assert b"internal error" not in proc.stderr, proc.stderr.decode(errors="replace")
        proc.stdout.decode("utf-8")  # valid UTF-8
