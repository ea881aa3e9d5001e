"""The benchmark programs, their sizes, and their PyTorch-made goldens.

Each program is `benchmarks/programs/NAME.tg`, a valid .tg file that prints one result
line. A program with a size knob has exactly one line of the form

    n = 10000  # size

and `source(name, size)` rewrites that number, so the runner and the tests can run the
same text at another size (the RSS check of loop_backward runs it at 200 and at 2,000
iterations; CI runs the slow ones smaller).

Goldens live in `benchmarks/goldens/`: `NAME.out` for the default size and `NAME.ci.out`
for the CI size where one is set. They are always made by real PyTorch through
`autodiff.interpreter.reference.run_with_torch`, never by autodiff:

    python -m benchmarks --make-goldens      # rewrite them (needs torch)
    python -m benchmarks --check-goldens     # exit 1 when one is stale
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
GOLDENS = HERE / "goldens"

_SIZE_LINE = re.compile(r"^(?P<name>\w+) = (?P<value>\d+)  # size$", re.MULTILINE)


@dataclass(frozen=True)
class Bench:
    name: str
    ci_size: int | None = None  # smaller size for the CI correctness test, if the default is slow
    numpy_baseline: str | None = None  # a plain NumPy script doing the same work


BENCHES = [
    Bench("startup"),
    Bench("scalar_loop"),
    Bench("small_mlp"),
    Bench("big_matmul", numpy_baseline="big_matmul_numpy.py"),
    Bench("deep_chain", ci_size=5_000),
    Bench("loop_backward", ci_size=200),
    Bench("tutorial_train", ci_size=100),
]
BY_NAME = {b.name: b for b in BENCHES}

# loop_backward's memory check: peak RSS after LOOP_RSS_LONG vs after LOOP_RSS_SHORT iterations.
LOOP_RSS_SHORT = 200
LOOP_RSS_LONG = 2_000


def path(name: str) -> Path:
    return PROGRAMS / f"{name}.tg"


def default_size(name: str) -> int | None:
    match = _SIZE_LINE.search(path(name).read_text(encoding="utf-8"))
    return int(match["value"]) if match else None


def source(name: str, size: int | None = None) -> str:
    """The program text, with its size line set to `size` (None: as written)."""
    text = path(name).read_text(encoding="utf-8")
    if size is None:
        return text
    matches = list(_SIZE_LINE.finditer(text))
    if len(matches) != 1:
        raise ValueError(f"{name}.tg needs exactly one '<name> = <int>  # size' line")
    m = matches[0]
    return text[: m.start("value")] + str(size) + text[m.end("value"):]


def golden_path(name: str, ci: bool = False) -> Path:
    return GOLDENS / f"{name}{'.ci' if ci else ''}.out"


def golden_jobs() -> list[tuple[Path, str, str]]:
    """(golden file, program text, shown file name) for every golden there should be."""
    jobs = []
    for bench in BENCHES:
        jobs.append((golden_path(bench.name), source(bench.name), f"{bench.name}.tg"))
        if bench.ci_size is not None:
            jobs.append((golden_path(bench.name, ci=True), source(bench.name, bench.ci_size),
                         f"{bench.name}.tg"))
    return jobs


def make_goldens(check: bool = False) -> int:
    """Write (or, with check, compare) every golden from a run under real PyTorch."""
    from autodiff.interpreter.reference import run_with_torch, torch_available

    if not torch_available():
        print("make-goldens: torch is not installed")
        return 2
    stale = 0
    for golden, text, shown in golden_jobs():
        result = run_with_torch(text, filename=shown, timeout=600)
        if result.exit_code != 0:
            print(f"{golden.name}: the program failed under torch: {result.error}")
            return 1
        old = golden.read_text(encoding="utf-8") if golden.exists() else None
        if old == result.stdout:
            print(f"{golden.name}: up to date")
        elif check:
            stale += 1
            print(f"{golden.name}: STALE")
        else:
            GOLDENS.mkdir(exist_ok=True)
            golden.write_text(result.stdout, encoding="utf-8", newline="")
            print(f"{golden.name}: written")
    return 1 if stale else 0
