"""Turn measured samples into the results table: medians, ratios, targets, pass/miss.

Samples come from `run.py` as lists of child results (dicts, see child.py) keyed by
(program, variant), where variant is "autodiff", "torch", "numpy", "autodiff-short" for
compute runs and "autodiff-wall", "torch-wall" for whole-process runs.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
from dataclasses import dataclass

# (program, figure) -> the ratio autodiff / PyTorch must not exceed (issue 5).
RATIO_TARGETS = {
    ("startup", "wall"): 0.15,
    ("scalar_loop", "compute"): 0.6,
    ("small_mlp", "compute"): 1.0,
    ("big_matmul", "compute"): 1.3,
    ("deep_chain", "compute"): 1.0,
    ("deep_chain", "rss"): 1.0,
    ("loop_backward", "compute"): 1.0,
    ("tutorial_train", "compute"): 1.0,  # issue 14
}
NUMPY_TARGET = 1.05  # big_matmul against the same matmuls in bare NumPy
RSS_GROWTH_TARGET = 0.05  # loop_backward: peak RSS, long run vs short run, within 5 %
PARSE_TARGET_LINES = 10_000
PARSE_TARGET_S = 0.5
PARSE_LINEAR_SLACK = 1.2  # time per line may grow at most 20 % from one size to the next

FIGURES = [("compute", "in-process compute"), ("wall", "whole-process wall"),
           ("rss", "peak RSS (+ growth in run)")]


@dataclass
class Row:
    program: str
    figure: str
    autodiff: str
    torch: str = "—"
    ratio: str = "—"
    target: str = ""
    result: str = ""


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def metric(runs: list[dict], key: str) -> float | None:
    """Median of one metric over the runs that succeeded."""
    return median([r[key] for r in runs if r.get("error") is None and r.get(key) is not None])


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "error"
    if seconds < 0.1:
        return f"{seconds * 1000:.3g} ms"
    return f"{seconds:.3f} s" if seconds < 10 else f"{seconds:.1f} s"


def fmt_mb(kb: float | None) -> str:
    return "error" if kb is None else f"{kb / 1024:.1f} MB"


def fmt_ratio(r: float | None, digits: int = 2) -> str:
    return "—" if r is None else f"{r:.{digits}f}"


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def verdict(r: float | None, limit: float, mismatch: bool = False, failed: bool = False) -> str:
    if failed:
        return "error"
    if mismatch:
        return "MISMATCH"
    if r is None:
        return "n/a"
    return "pass" if r <= limit else "miss"


def program_rows(name: str, samples: dict, mismatch: bool, have_torch: bool) -> list[Row]:
    """The compute, wall and RSS rows of one program, plus its extra checks."""
    rows = []
    ad, pt = samples.get((name, "autodiff"), []), samples.get((name, "torch"), [])
    ad_wall, pt_wall = samples.get((name, "autodiff-wall"), []), samples.get((name, "torch-wall"), [])
    pairs = {"compute": (metric(ad, "compute_s"), metric(pt, "compute_s")),
             "wall": (metric(ad_wall, "wall_s"), metric(pt_wall, "wall_s")),
             "rss": (metric(ad, "maxrss_kb"), metric(pt, "maxrss_kb"))}
    growth = (metric(ad, "growth_kb"), metric(pt, "growth_kb"))
    for key, label in FIGURES:
        a, b = pairs[key]
        if key == "rss":
            cells = [fmt_mb(x) if x is None else f"{fmt_mb(x)} (+{fmt_mb(g)})"
                     for x, g in ((a, growth[0]), (b, growth[1]))]
        else:
            cells = [fmt_time(a), fmt_time(b)]
        if not have_torch:
            cells[1] = "—"
        r = ratio(a, b) if have_torch else None
        limit = RATIO_TARGETS.get((name, key))
        rows.append(Row(name, label, cells[0], cells[1], fmt_ratio(r),
                        f"≤ {limit}" if limit is not None else "",
                        verdict(r, limit, mismatch, a is None) if limit is not None else ""))
    if (name, "numpy") in samples:
        a, b = pairs["compute"][0], metric(samples[(name, "numpy")], "compute_s")
        r = ratio(a, b)
        rows.append(Row(name, "in-process compute vs bare NumPy", fmt_time(a),
                        f"NumPy {fmt_time(b)}", fmt_ratio(r), f"≤ {NUMPY_TARGET}",
                        verdict(r, NUMPY_TARGET, mismatch, a is None)))
    if (name, "autodiff-short") in samples:
        long_n, short_n = samples["sizes"][name], samples["sizes"][name + "-short"]
        short = samples[(name, "autodiff-short")]
        a, b = metric(ad, "maxrss_kb"), metric(short, "maxrss_kb")
        r = ratio(a, b)
        cells = [fmt_mb(x) if x is None else f"{fmt_mb(x)} (+{fmt_mb(g)})"
                 for x, g in ((a, metric(ad, "growth_kb")), (b, metric(short, "growth_kb")))]
        ok = None if r is None else abs(r - 1) <= RSS_GROWTH_TARGET
        rows.append(Row(name, f"peak RSS after {long_n:,} vs {short_n:,} iterations",
                        cells[0], f"{short_n:,} it.: {cells[1]}", fmt_ratio(r, 3),
                        f"within {RSS_GROWTH_TARGET * 100:.0f} %",
                        "n/a" if ok is None else ("pass" if ok else "miss")))
    return rows


def parse_rows(parse_samples: dict[int, list[dict]]) -> list[Row]:
    """One row per size, then the linear-growth row (time per line from size to size)."""
    rows, per_line = [], []
    for size in sorted(parse_samples):
        runs = parse_samples[size]
        t = metric(runs, "compute_s")
        lines = next((int(r["out"].split()[0]) for r in runs if r.get("out")), size)
        target, result = "", ""
        if size == PARSE_TARGET_LINES:
            target = f"≤ {PARSE_TARGET_S} s"
            result = "n/a" if t is None else ("pass" if t <= PARSE_TARGET_S else "miss")
        rows.append(Row("parse", f"parse {lines:,} lines", fmt_time(t), target=target,
                        result=result))
        if t is not None:
            per_line.append(t / lines * 1e6)
    if len(per_line) >= 2:
        steps = [b / a for a, b in zip(per_line, per_line[1:])]
        ok = all(s <= PARSE_LINEAR_SLACK for s in steps)
        rows.append(Row("parse", "linear growth: µs per line",
                        " → ".join(f"{p:.0f}" for p in per_line),
                        ratio=" / ".join(f"×{s:.2f}" for s in steps),
                        target=f"each step ≤ ×{PARSE_LINEAR_SLACK}",
                        result="pass" if ok else "miss"))
    return rows


def markdown(rows: list[Row]) -> str:
    out = ["| program | figure | autodiff | PyTorch | ratio | target | result |",
           "|---|---|---:|---:|---:|---|---|"]
    for r in rows:
        out.append(f"| {r.program} | {r.figure} | {r.autodiff} | {r.torch} | {r.ratio} | "
                   f"{r.target} | {r.result} |")
    return "\n".join(out)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _numpy_blas() -> str:
    import numpy as np

    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas['name']} {blas.get('version', '')}".strip()
    except Exception:  # older NumPy: no dict mode
        return "unknown"


def _torch_info(env: dict[str, str]) -> str:
    code = ("import re, torch; c = torch.__config__.show(); "
            "b = re.search(r'BLAS_INFO=(\\w+)', c); k = re.search(r'CPU capability usage: (\\w+)', c); "
            "print(torch.__version__, b.group(1) if b else '?', k.group(1) if k else '?', "
            "torch.get_num_threads())")
    try:
        text = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=300).stdout.split()
        return f"torch {text[0]} (BLAS {text[1]}, {text[2]}, {text[3]} thread(s))"
    except (OSError, IndexError, subprocess.SubprocessError):
        return "torch (version unknown)"


def machine_line(env: dict[str, str], have_torch: bool, threads: str, runs: int) -> str:
    import numpy as np

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    parts = [f"{_cpu_model()}, {os.cpu_count()} cores (load {load:.2f} at start)",
             f"Python {platform.python_version()}",
             f"NumPy {np.__version__} (BLAS {_numpy_blas()})",
             _torch_info(env) if have_torch else "torch not installed",
             f"threads: {threads}", f"median of {runs} runs"]
    return "Machine: " + "; ".join(parts)
