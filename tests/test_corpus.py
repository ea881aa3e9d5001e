"""The tutorial-patterns corpus (corpus/*.tg) against autodiff, and corpus/STATUS.md.

Each program is run through autodiff and compared with its PyTorch golden. Programs that do
not pass yet do not fail the suite, but every outcome must be the one corpus/STATUS.md
records: a program that stops passing is a regression, and any other change (a program
that now passes, or stops elsewhere) must be recorded on purpose by rerunning
`python tests/make_corpus_status.py`. With torch installed, the goldens are also checked to
be what PyTorch prints today.
"""

from __future__ import annotations

import pytest
from corpus_constructs import coverage
from make_corpus_status import (CORPUS, PASSES, STATUS, all_outcomes, parse, programs,
                                render, source_of)

from autodiff.cli import golden

PROGRAMS = programs()
RERUN = "record it on purpose: python tests/make_corpus_status.py"


@pytest.fixture(scope="module")
def outcomes() -> dict[str, str]:
    return all_outcomes()


@pytest.fixture(scope="module")
def recorded() -> dict[str, str]:
    assert STATUS.exists(), f"no {STATUS}: {RERUN}"
    return parse(STATUS.read_text(encoding="utf-8"))


def test_the_corpus_is_large_and_covers_what_tutorials_do():
    assert len(PROGRAMS) >= 70
    kinds = [kind for program in PROGRAMS for kind in coverage(program)]
    assert kinds.count("trains an nn.Module subclass with an optimiser") >= 10
    assert kinds.count("custom autograd.Function or functional autograd") >= 4
    assert kinds.count("follows a Chinese source") >= len(PROGRAMS) // 4


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_program_names_its_source_and_has_a_golden(program):
    lines = program.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ") and len(source_of(program)) > 20, \
        "the first line must name the tutorial and section the program follows"
    assert 5 <= len(lines) <= 40, "corpus programs stay small"
    expected = golden.read_expected(program)
    assert expected is not None and expected.stdout is not None, \
        f"no golden: python tests/make_corpus_goldens.py {program.stem}"


def test_status_lists_exactly_the_corpus(recorded):
    assert sorted(recorded) == [p.stem for p in PROGRAMS], RERUN


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_outcome_is_the_recorded_one(program, outcomes, recorded):
    now, before = outcomes[program.stem], recorded.get(program.stem)
    if before == PASSES:
        assert now == PASSES, f"regression: {program.name} passed and now: {now}"
    assert now == before, f"{program.name}'s outcome changed from {before!r} to {now!r}; {RERUN}"


def test_status_file_is_current(outcomes):
    assert STATUS.read_text(encoding="utf-8") == render(outcomes), RERUN


def test_goldens_are_what_pytorch_prints_today():
    from corpus_runner import run_programs, torch_python_available

    if not torch_python_available():
        pytest.skip("torch is not installed")
    stale = [program.name for program, result in zip(PROGRAMS, run_programs(PROGRAMS,
                                                                              fresh=False))
             if golden.read_expected(program) != golden.Expected(result.stdout, result.error)]
    assert not stale, f"goldens differ from PyTorch: python tests/make_corpus_goldens.py {stale}"


def test_orphan_goldens_are_gone():
    names = {p.stem for p in PROGRAMS}
    orphans = [p.name for p in CORPUS.iterdir() if p.suffix in (".out", ".err")
               and p.stem not in names]
    assert not orphans
