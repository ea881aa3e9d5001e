"""docs/cli.md's examples are the commands' real output (tests/make_cli_doc.py fills them)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_cli_doc  # noqa: E402


@pytest.mark.skipif(shutil.which("autodiff") is None and not
                    (Path(sys.executable).parent / "autodiff").exists(),
                    reason="the autodiff console script is not installed")
def test_cli_page_matches_the_commands() -> None:
    page = make_cli_doc.PAGE.read_text(encoding="utf-8")
    assert page.count("<!-- example: ") >= 15
    fresh = make_cli_doc.rendered(page)
    assert fresh == page, "docs/cli.md is stale: run python tests/make_cli_doc.py"
