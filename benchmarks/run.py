"""Benchmark runner for issue 5: autodiff against PyTorch, same programs, same run.

    python -m benchmarks                  # all programs, 5 runs each, one BLAS/OpenMP thread
    python -m benchmarks --quick          # 3 runs (1 for the 100,000-line parse): a first look
    python -m benchmarks --only big_matmul deep_chain --runs 9
    python -m benchmarks --default-threads    # leave the thread counts to the libraries
    python -m benchmarks --small          # CI sizes, for trying the runner itself
    python -m benchmarks --json out.json --update-doc   # raw samples; refresh docs/performance.md
    python -m benchmarks --make-goldens   # regenerate benchmarks/goldens/ under real PyTorch

What happens
1. Output check: every program runs once through autodiff and once through PyTorch (and
   big_matmul's bare-NumPy twin); outputs are compared with each other and with the golden.
   These first runs also warm the file caches and are not timed.
2. Timed runs, alternating A B A B: for each of N rounds, an in-process run of autodiff,
   then of PyTorch, then a whole-process run of each. Every run is its own child process.
   - in-process compute: benchmarks/child.py times only `Program.run()` (autodiff) or
     `exec` of the pre-compiled program with torch already imported (PyTorch).
   - whole-process wall: `autodiff run --quiet prog.tg` against `python prog.tg`, from
     spawn to exit.
   - peak RSS: ru_maxrss of the in-process child (imports included); the "+" figure is
     the peak during the timed part above the RSS just before it.
   loop_backward also runs at a tenth of its size each round, for its RSS check.
3. parse: generated programs (benchmarks/parse_bench.py's generator) of 1,000, 10,000
   and 100,000 lines, each parse in its own child with the parser already built.
The table reports medians and the ratio autodiff / PyTorch of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python benchmarks/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

from benchmarks import programs, report  # noqa: E402

CHILD = Path(__file__).resolve().parent / "child.py"
DOC = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
DOC_START, DOC_END = "<!-- benchmark-table:start -->", "<!-- benchmark-table:end -->"
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
PARSE_SIZES = [1_000, 10_000, 100_000]
CHILD_TIMEOUT = 1800


def child_env(default_threads: bool) -> dict[str, str]:
    env = dict(os.environ)
    for var in THREAD_VARS:
        env.pop(var, None)
        if not default_threads:
            env[var] = "1"
    env.update(PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
    return env


def autodiff_command() -> list[str]:
    """The installed console script, called directly (a pyenv shim would add its own time)."""
    script = shutil.which("autodiff", path=sysconfig.get_path("scripts"))
    if script:
        return [script]
    return [sys.executable, "-c", "import sys; from autodiff.cli.main import app; "
            "sys.argv[0] = 'autodiff'; sys.exit(app())"]


def byte_compile() -> None:
    """Write the package's bytecode now, as `pip install` does: the children run with
    PYTHONDONTWRITEBYTECODE, and an editable checkout with stale caches would otherwise
    charge every start-up for compiling our sources (about 50 ms), which no installed copy
    pays (PyTorch's own bytecode was written when it was installed)."""
    import compileall
    import importlib

    for name in ("autodiff.cli", "autodiff.parser", "autodiff.engine", "autodiff.interpreter"):
        for folder in importlib.import_module(name).__path__:
            compileall.compile_dir(folder, quiet=1)


def compute_run(mode: str, arg: str, env: dict[str, str]) -> dict:
    """One in-process measurement in a fresh child (see child.py)."""
    proc = subprocess.run([sys.executable, str(CHILD), mode, arg], capture_output=True,
                          text=True, env=env, timeout=CHILD_TIMEOUT)
    try:
        result = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"child exited {proc.returncode}: {tail}", "out": ""}
    result["growth_kb"] = max(0, result["run_peak_kb"] - (result["rss_before_kb"] or 0))
    return result


def wall_run(cmd: list[str], env: dict[str, str], cwd: str) -> dict:
    """Spawn-to-exit time and peak RSS of one whole process (wait4 gives its own rusage)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env, cwd=cwd)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped
        proc.stdout.close()
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines() or [""]
    # a Python traceback ends with the error; autodiff's own diagnostic starts with it
    headline = lines[-1] if lines[0].startswith("Traceback") else lines[0]
    error = None if proc.returncode == 0 else f"exit {proc.returncode}: {headline}"
    return {"out": out.decode(errors="replace"), "error": error, "wall_s": wall,
            "maxrss_kb": usage.ru_maxrss}


def output_check(names, files, env, have_torch, small, expected) -> dict[str, bool]:
    """Run each program once per side; print the comparison. Returns name -> outputs agree.
    Fills `expected`: (name, variant) -> the output the timed runs must print again."""
    print("## Output check (autodiff vs PyTorch in this run, and vs benchmarks/goldens)\n")
    agree = {}
    for name in names:
        bench = programs.BY_NAME[name]
        ad = compute_run("autodiff", files[name], env)
        if ad["error"] is None:
            expected[(name, "autodiff")] = expected[(name, "autodiff-wall")] = ad["out"]
        notes, ok = [], ad["error"] is None
        if ad["error"]:
            notes.append(f"autodiff failed: {ad['error']}")
        if have_torch:
            pt = compute_run("torch", files[name], env)
            if pt["error"] is None:
                expected[(name, "torch")] = expected[(name, "torch-wall")] = pt["out"]
            if pt["error"]:
                notes.append(f"PyTorch failed: {pt['error']}")
            same = ad["out"] == pt["out"] and pt["error"] is None
            ok &= same
            notes.append("same as PyTorch" if same else f"DIFFERS from PyTorch {pt['out'].strip()!r}")
        golden = programs.golden_path(name, ci=small and bench.ci_size is not None)
        if golden.exists():
            same = ad["out"] == golden.read_text(encoding="utf-8")
            ok &= same
            notes.append("same as golden" if same else "DIFFERS from golden")
        if bench.numpy_baseline:
            np_run = compute_run("numpy", files[name + "-numpy"], env)
            if np_run["error"] is None:
                expected[(name, "numpy")] = np_run["out"]
            same = np_run["out"] == ad["out"]
            ok &= same
            notes.append("bare NumPy twin agrees" if same else
                         f"bare NumPy twin DIFFERS {np_run['out'].strip() or np_run['error']!r}")
        agree[name] = ok
        print(f"- {'ok ' if ok else 'BAD'} `{name}`: {ad['out'].strip()!r} — {'; '.join(notes)}")
    print()
    return agree


def timed_runs(name, files, env, have_torch, runs, autodiff_cmd, cwd, samples, expected):
    bench = programs.BY_NAME[name]
    start = time.perf_counter()

    def keep(variant: str, result: dict) -> None:
        want = expected.get((name, variant))
        if result["error"] is None and want is not None and result["out"] != want:
            result["error"] = f"printed {result['out'].strip()!r}, not what the check printed"
        samples.setdefault((name, variant), []).append(result)

    for i in range(runs):
        print(f"  {name}: round {i + 1}/{runs}", file=sys.stderr, flush=True)
        keep("autodiff", compute_run("autodiff", files[name], env))
        if have_torch:
            keep("torch", compute_run("torch", files[name], env))
        if bench.numpy_baseline:
            keep("numpy", compute_run("numpy", files[name + "-numpy"], env))
        keep("autodiff-wall", wall_run([*autodiff_cmd, "run", "--quiet", files[name]], env, cwd))
        if have_torch:
            keep("torch-wall", wall_run([sys.executable, files[name]], env, cwd))
        if name + "-short" in files:
            keep("autodiff-short", compute_run("autodiff", files[name + "-short"], env))
    print(f"  {name}: {runs} rounds in {time.perf_counter() - start:.0f} s", file=sys.stderr)


def parse_runs(sizes: list[int], runs: int, quick: bool, env) -> dict[int, list[dict]]:
    results = {}
    for size in sizes:
        n = 1 if quick and size > 10_000 else runs
        print(f"  parse {size:,} lines: {n} run(s)", file=sys.stderr, flush=True)
        results[size] = [compute_run("parse", str(size), env) for _ in range(n)]
    return results


def write_sources(names, tmp: Path, small: bool) -> tuple[dict[str, str], dict[str, int]]:
    """Each program (at its run size) into tmp; returns file paths and sizes by key."""
    files, sizes = {}, {}
    for name in names:
        bench = programs.BY_NAME[name]
        size = bench.ci_size if small and bench.ci_size is not None else None
        files[name] = str(tmp / f"{name}.tg")
        Path(files[name]).write_text(programs.source(name, size), encoding="utf-8")
        sizes[name] = size if size is not None else programs.default_size(name)
        if bench.numpy_baseline:
            text = (programs.PROGRAMS / bench.numpy_baseline).read_text(encoding="utf-8")
            if size is not None:
                text = text.replace(f"n = {programs.default_size(name)}  # size", f"n = {size}  # size")
            files[name + "-numpy"] = str(tmp / bench.numpy_baseline)
            Path(files[name + "-numpy"]).write_text(text, encoding="utf-8")
        if name == "loop_backward":  # its RSS check: the same program at a tenth of the size
            sizes[name + "-short"] = max(1, sizes[name] // 10)
            files[name + "-short"] = str(tmp / f"{name}_short.tg")
            Path(files[name + "-short"]).write_text(
                programs.source(name, sizes[name + "-short"]), encoding="utf-8")
    return files, sizes


def update_doc(machine: str, table: str, command: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(DOC_START) + len(DOC_START), text.index(DOC_END)
    block = f"\n{machine}\n\nCommand: `{command}`\n\n{table}\n"
    DOC.write_text(text[:start] + block + text[end:], encoding="utf-8")
    print(f"updated {DOC}", file=sys.stderr)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, help="timed runs per program and side (default 5)")
    ap.add_argument("--quick", action="store_true",
                    help="3 runs (1 for parses past 10,000 lines) instead of 5")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    choices=[b.name for b in programs.BENCHES] + ["parse"],
                    help="only these programs ('parse' for the parse benchmark)")
    ap.add_argument("--default-threads", action="store_true",
                    help="do not pin OMP/MKL/OPENBLAS_NUM_THREADS to 1")
    ap.add_argument("--no-torch", action="store_true", help="autodiff only, even with torch")
    ap.add_argument("--small", action="store_true",
                    help="CI sizes for the slow programs (tries the runner; not for targets)")
    ap.add_argument("--parse-sizes", type=int, nargs="+", default=PARSE_SIZES, metavar="LINES")
    ap.add_argument("--json", metavar="PATH", help="also write every sample to this file")
    ap.add_argument("--update-doc", action="store_true",
                    help=f"put the machine line and table into {DOC.name}")
    ap.add_argument("--make-goldens", action="store_true", help="regenerate the goldens")
    ap.add_argument("--check-goldens", action="store_true", help="exit 1 if a golden is stale")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.make_goldens or args.check_goldens:
        return programs.make_goldens(check=args.check_goldens)
    from autodiff.interpreter.reference import torch_available

    runs = args.runs or (3 if args.quick else 5)
    have_torch = torch_available() and not args.no_torch
    env = child_env(args.default_threads)
    names = [b.name for b in programs.BENCHES if not args.only or b.name in args.only]
    threads = "library defaults" if args.default_threads else "1 (" + "=".join(THREAD_VARS) + "=1)"
    machine = report.machine_line(env, have_torch, threads, runs)
    print(machine + "\n")

    samples: dict = {}
    with tempfile.TemporaryDirectory(prefix="autodiff-bench-") as tmp:
        files, samples["sizes"] = write_sources(names, Path(tmp), args.small)
        expected: dict = {}
        agree = output_check(names, files, env, have_torch, args.small, expected)
        autodiff_cmd = autodiff_command()
        byte_compile()
        for name in names:
            timed_runs(name, files, env, have_torch, runs, autodiff_cmd, tmp, samples, expected)
        parse_samples = {}
        if not args.only or "parse" in args.only:
            parse_samples = parse_runs(args.parse_sizes, runs, args.quick, env)

    rows = []
    for name in names:
        rows += report.program_rows(name, samples, not agree[name], have_torch)
    rows += report.parse_rows(parse_samples)
    table = report.markdown(rows)
    print("## Results (medians; ratio = autodiff / PyTorch)\n")
    print(table)
    failed = [f"{key[0]}/{key[1]}: {r['error']}" for key, runs_ in samples.items()
              if isinstance(key, tuple) for r in runs_ if r.get("error")]
    if failed:
        print("\nRuns that failed (left out of the medians):")
        for line in failed:
            print(f"- {line}")
    command = "python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.json:
        dump = {"machine": machine, "command": command,
                "samples": {f"{k[0]}/{k[1]}": v for k, v in samples.items() if isinstance(k, tuple)},
                "sizes": samples["sizes"],
                "parse": {str(k): v for k, v in parse_samples.items()},
                "rows": [vars(r) for r in rows]}
        Path(args.json).write_text(json.dumps(dump, indent=1), encoding="utf-8")
    if args.update_doc:
        update_doc(machine, table, command.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
