"""What real torch prints for a table of named .tg programs: one reference run for a test
module's whole table (skipped without torch)."""

from __future__ import annotations

import pytest


def run_under_torch(programs: dict[str, str]) -> dict:
    """name -> the ReferenceResult of running that program under torch."""
    pytest.importorskip("torch")
    from autodiff.interpreter.reference import run_many_with_torch

    names = sorted(programs)
    return dict(zip(names, run_many_with_torch([programs[n] for n in names], filenames=names)))
