"""The benchmark programs (benchmarks/programs) print what PyTorch printed for them.

CI runs each program once for correctness, not for timing: the slow ones at their CI
size (`Bench.ci_size`), whose golden `NAME.ci.out` also comes from PyTorch. Set
AUTODIFF_BENCH_FULL=1 to run every program at its benchmark size as well.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import programs, report, run  # noqa: E402

from autodiff.interpreter import run_source  # noqa: E402
from autodiff.interpreter.reference import normalize_addresses, run_many_with_torch, torch_available

NAMES = [b.name for b in programs.BENCHES]


def _ci_size(name):
    return programs.BY_NAME[name].ci_size


def _run_autodiff(text, name):
    out, err = io.StringIO(), io.StringIO()
    result = run_source(text, f"{name}.tg", out=out, err=err)
    assert result.error is None, str(result.error)
    return normalize_addresses(out.getvalue())


def test_the_issue_programs_are_all_there():
    assert set(NAMES) >= {"startup", "scalar_loop", "small_mlp", "big_matmul", "deep_chain",
                          "loop_backward"}


@pytest.mark.parametrize("name", NAMES)
def test_program_is_a_plain_tg_file_with_one_result_line(name):
    text = programs.path(name).read_text(encoding="utf-8")
    assert text.startswith(f"# {name}: "), "first line: '# NAME: what it measures'"
    assert "\nimport torch\n" in text  # so `python NAME.tg` runs it under PyTorch as is
    for ci in (False, True):
        golden = programs.golden_path(name, ci=ci)
        if ci and _ci_size(name) is None:
            assert not golden.exists(), f"stale {golden.name}"
            continue
        assert golden.exists(), f"missing {golden.name}: python -m benchmarks --make-goldens"
        assert golden.read_text(encoding="utf-8").count("\n") == 1


@pytest.mark.parametrize("name", NAMES)
def test_program_matches_pytorch_golden(name):
    """Each program once through autodiff (at its CI size where it has one)."""
    ci = _ci_size(name) is not None
    text = programs.source(name, _ci_size(name))
    assert _run_autodiff(text, name) == programs.golden_path(name, ci).read_text(encoding="utf-8")


@pytest.mark.skipif(os.environ.get("AUTODIFF_BENCH_FULL") != "1",
                    reason="set AUTODIFF_BENCH_FULL=1 for the benchmark sizes")
@pytest.mark.parametrize("name", [n for n in NAMES if _ci_size(n) is not None])
def test_program_at_benchmark_size_matches_pytorch_golden(name):
    text = programs.source(name)
    assert _run_autodiff(text, name) == programs.golden_path(name).read_text(encoding="utf-8")


@pytest.mark.skipif(not torch_available(), reason="torch is not installed")
def test_goldens_are_current_under_torch():
    jobs = programs.golden_jobs()
    results = run_many_with_torch([text for _, text, _ in jobs],
                                  filenames=[shown for _, _, shown in jobs], timeout=900)
    for (golden, _, _), result in zip(jobs, results):
        assert result.exit_code == 0, result.error
        assert result.stdout == golden.read_text(encoding="utf-8"), \
            f"{golden.name} is stale: python -m benchmarks --make-goldens"


def test_size_line_is_rewritten_and_nothing_else():
    original = programs.source("deep_chain")
    resized = programs.source("deep_chain", 7)
    assert programs.default_size("deep_chain") == 50_000
    changed = [(a, b) for a, b in zip(original.splitlines(), resized.splitlines()) if a != b]
    assert changed == [("n = 50000  # size", "n = 7  # size")]
    with pytest.raises(ValueError):
        programs.source("startup", 3)  # no size line


def test_numpy_twin_prints_what_big_matmul_prints():
    env = run.child_env(default_threads=False)
    twin = programs.PROGRAMS / programs.BY_NAME["big_matmul"].numpy_baseline
    proc = subprocess.run([sys.executable, str(twin)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.stdout == programs.golden_path("big_matmul").read_text(encoding="utf-8")


def test_child_measures_an_autodiff_run():
    result = run.compute_run("autodiff", str(programs.path("startup")),
                             run.child_env(default_threads=False))
    assert result["error"] is None
    assert result["out"] == programs.golden_path("startup").read_text(encoding="utf-8")
    assert 0 < result["compute_s"] < 10
    assert result["maxrss_kb"] > 1000 and result["growth_kb"] >= 0


def test_runner_end_to_end_without_torch(tmp_path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = run.main(["--small", "--runs", "1", "--no-torch", "--only", "startup", "parse",
                         "--parse-sizes", "60", "120", "--json", str(tmp_path / "r.json")])
    text = out.getvalue()
    assert code == 0
    assert text.index("## Output check") < text.index("## Results")
    assert "- ok  `startup`" in text
    assert "| startup | whole-process wall |" in text
    assert "| parse | linear growth: µs per line |" in text
    dump = json.loads((tmp_path / "r.json").read_text())
    assert len(dump["samples"]["startup/autodiff"]) == 1


def _runs(compute=None, wall=None, rss=None, growth=0):
    return [{"error": None, "compute_s": compute, "wall_s": wall, "maxrss_kb": rss,
             "growth_kb": growth}]


def test_report_ratios_targets_and_verdicts():
    samples = {("deep_chain", "autodiff"): _runs(1.0, rss=50_000),
               ("deep_chain", "torch"): _runs(2.0, rss=40_000),
               ("deep_chain", "autodiff-wall"): _runs(wall=1.0),
               ("deep_chain", "torch-wall"): _runs(wall=4.0)}
    rows = {r.figure: r for r in report.program_rows("deep_chain", samples, False, True)}
    compute = rows["in-process compute"]
    assert (compute.ratio, compute.target, compute.result) == ("0.50", "≤ 1.0", "pass")
    assert rows["peak RSS (+ growth in run)"].result == "miss"  # 50 MB against 40 MB
    assert rows["whole-process wall"].target == ""  # no target for deep_chain's wall time
    mismatch = report.program_rows("deep_chain", samples, True, True)
    assert mismatch[0].result == "MISMATCH"
    no_torch = report.program_rows("deep_chain", samples, False, False)
    assert no_torch[0].ratio == "—" and no_torch[0].result == "n/a"


def test_report_parse_growth():
    samples = {1000: [{"error": None, "compute_s": 0.04, "out": "1000 lines\n"}],
               10000: [{"error": None, "compute_s": 0.45, "out": "10000 lines\n"}],
               100000: [{"error": None, "compute_s": 6.0, "out": "100000 lines\n"}]}
    rows = report.parse_rows(samples)
    assert [r.result for r in rows] == ["", "pass", "", "miss"]  # 45 -> 60 us/line is x1.33
    assert rows[-1].autodiff == "40 → 45 → 60"


def test_update_doc_replaces_only_the_marked_block(tmp_path, monkeypatch):
    doc = tmp_path / "performance.md"
    doc.write_text(f"# P\n\n{run.DOC_START}\nold\n{run.DOC_END}\n\n## Analysis\nkept\n")
    monkeypatch.setattr(run, "DOC", doc)
    with contextlib.redirect_stderr(io.StringIO()):
        run.update_doc("Machine: m", "| t |", "python -m benchmarks")
    text = doc.read_text()
    assert "old" not in text and "Machine: m" in text and "| t |" in text
    assert text.endswith("## Analysis\nkept\n")
    real = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert real.count(run.DOC_START) == 1 and real.count(run.DOC_END) == 1
