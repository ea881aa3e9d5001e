"""What real torch prints for a table of named .tg programs: one reference run for a test
module's whole table (skipped without torch)."""

from __future__ import annotations

import io
import re

import pytest

_ADDRESS = re.compile(r"0x[0-9a-f]+")


def run_under_torch(programs: dict[str, str]) -> dict:
    """name -> the ReferenceResult of running that program under torch."""
    pytest.importorskip("torch")
    from autodiff.interpreter.reference import run_many_with_torch

    names = sorted(programs)
    return dict(zip(names, run_many_with_torch([programs[n] for n in names], filenames=names)))


def assert_prints_as_torch(name: str, source: str, expected, *, may_fail: bool = False,
                           warnings: re.Pattern | None = None) -> None:
    """Run `source` on autodiff: its stdout (object addresses masked) is torch's `expected`
    one. Both runs end without an error, or with `may_fail` both end the same way; with
    `warnings`, stderr has the same matches of that pattern, as many times."""
    from autodiff.interpreter import run_source

    out, err = io.StringIO(), io.StringIO()
    result = run_source(source, f"{name}.tg", out=out, err=err)
    if may_fail:
        assert (result.error is None) == (expected.error is None), (result.error, expected.error)
    else:
        assert expected.error is None, expected.error
        assert result.error is None, result.error
    assert _ADDRESS.sub("0xADDR", out.getvalue()) == _ADDRESS.sub("0xADDR", expected.stdout)
    if warnings is not None:
        assert warnings.findall(err.getvalue()) == warnings.findall(expected.stderr)
