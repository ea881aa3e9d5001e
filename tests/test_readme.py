"""README.md's set-up lines stay true: CI runs its test command."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _quick_start_lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_quick_start_has_exactly_two_lines():
    lines = _quick_start_lines()
    assert len(lines) == 2
    assert "autodiff run samples/" in lines[0]
    assert "pytest" in lines[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _quick_start_lines()[1] in ci


def test_readme_sample_exists():
    sample = _quick_start_lines()[0].split("autodiff run ")[1].split()[0]
    assert (ROOT / sample).is_file()
