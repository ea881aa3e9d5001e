"""Regenerate (or check) the golden outputs of samples/*.tg under real PyTorch.

    python tests/make_goldens.py              # every samples/*.tg
    python tests/make_goldens.py NAME ...     # only these (NAME, NAME.tg or a path)
    python tests/make_goldens.py --check      # exit 1, listing goldens that are stale

For each sample NAME.tg this writes samples/NAME.out beside it (the program's stdout
with object addresses replaced by 0xADDR, exact bytes) and, when the program raises,
samples/NAME.err holding the single line "ErrorClass: message" (a stale .err is
removed once the program no longer fails). It is `autodiff test --reference torch
samples/` with a --check mode: both call autodiff.cli.golden.update_expected, which
runs each program through autodiff.interpreter.reference.run_with_torch. torch is
needed only here, never by the tool or its tests. Exit codes: 0 done / up to date,
1 stale goldens (--check) or a sample that could not be run, 2 usage error or torch
missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autodiff.cli import golden
from autodiff.interpreter.reference import torch_available

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


def _select(names: list[str]) -> list[Path]:
    if not names:
        return sorted(SAMPLES.glob("*.tg"))
    chosen = []
    for name in names:
        stem = Path(name).name
        if stem.endswith(".tg"):
            stem = stem[: -len(".tg")]
        path = SAMPLES / f"{stem}.tg"
        if not path.is_file():
            raise SystemExit(f"make_goldens: no sample {path.relative_to(ROOT)}")
        chosen.append(path)
    return chosen


def _orphans() -> list[Path]:
    """Goldens whose sample is gone."""
    return [p for p in sorted(SAMPLES.glob("*")) if p.suffix in (".out", ".err")
            and not p.with_suffix(".tg").exists()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="samples to run (default: all)")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 listing goldens that differ"
    )
    parser.add_argument("-j", "--jobs", type=int, default=None,
                        help="samples run at once (default: the number of cores)")
    args = parser.parse_args(argv)

    if not torch_available():
        print(
            "make_goldens: torch is not installed for this Python "
            f"({sys.executable}); the goldens come from real PyTorch: "
            "pip install torch==2.13.0 (the CPU build)",
            file=sys.stderr,
        )
        return 2
    try:
        samples = _select(args.names)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    if not samples:
        print("make_goldens: no samples/*.tg found", file=sys.stderr)
        return 2

    # our own samples: a misspelling among them shows PyTorch's own error for it
    results = golden.update_expected(samples, reference="torch", jobs=args.jobs,
                                     check=args.check, misspellings="fail")
    stale: list[str] = []
    broken = 0
    for sample, result in zip(samples, results):
        if result.error:
            print(f"{sample.name}: cannot run under torch: {result.error}", file=sys.stderr)
            broken += 1
            continue
        for path, state in result.changes:
            rel = str(Path(path).relative_to(ROOT))
            if args.check:
                stale.append(f"{rel} ({state})")
            else:
                print(f"{state} {rel}")
        if not args.check:
            err = sample.with_suffix(".err")
            note = f"  (raises: {err.read_text().strip()})" if err.exists() else ""
            print(f"ok {sample.name}{note}")

    if not args.names:
        for path in _orphans():
            rel = str(path.relative_to(ROOT))
            if args.check:
                stale.append(f"{rel} (no such sample)")
            else:
                path.unlink()
                print(f"removed {rel} (no such sample)")

    if args.check:
        if stale:
            print("goldens out of date (run python tests/make_goldens.py):", file=sys.stderr)
            for line in stale:
                print(f"  {line}", file=sys.stderr)
            return 1
        print(f"goldens up to date ({len(samples)} samples)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
