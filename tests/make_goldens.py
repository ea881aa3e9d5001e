"""Regenerate (or check) the golden outputs of samples/*.tg under real PyTorch.

    python tests/make_goldens.py              # every samples/*.tg
    python tests/make_goldens.py NAME ...     # only these (NAME, NAME.tg or a path)
    python tests/make_goldens.py --check      # exit 1, listing goldens that are stale

For each sample NAME.tg this writes tests/goldens/NAME.out (the program's stdout
with object addresses replaced by 0xADDR, exact bytes) and, when the program
raises, tests/goldens/NAME.err holding the single line "ErrorClass: message"
(a stale .err is removed once the program no longer fails).  The programs run
through autodiff.interpreter.reference.run_with_torch; torch is needed only
here, never by the tool or its tests.  Exit codes: 0 done / up to date,
1 stale goldens (--check) or a sample that could not be run, 2 usage error or
torch missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
GOLDENS = ROOT / "tests" / "goldens"


def _load_reference():
    """autodiff.interpreter.reference, or the file itself when the package
    cannot be imported (not installed, or a sibling module mid-edit)."""
    try:
        from autodiff.interpreter import reference  # type: ignore[import-not-found]

        return reference
    except Exception:
        pass
    name = "autodiff.interpreter.reference"
    spec = importlib.util.spec_from_file_location(name, ROOT / "interpreter" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


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


def expected_files(reference, sample: Path) -> dict[Path, bytes | None]:
    """The golden files of one sample: path -> bytes, or None for 'must not exist'."""
    result = reference.run_with_torch(
        sample.read_text(encoding="utf-8"), filename=f"samples/{sample.name}"
    )
    stem = sample.stem
    err = (result.error + "\n").encode("utf-8") if result.exit_code != 0 else None
    return {
        GOLDENS / f"{stem}.out": result.stdout.encode("utf-8"),
        GOLDENS / f"{stem}.err": err,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="samples to run (default: all)")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 listing goldens that differ"
    )
    args = parser.parse_args(argv)

    reference = _load_reference()
    if not reference.torch_available():
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

    GOLDENS.mkdir(parents=True, exist_ok=True)
    stale: list[str] = []
    broken = 0
    for sample in samples:
        try:
            files = expected_files(reference, sample)
        except reference.ReferenceRunError as exc:
            print(f"{sample.name}: cannot run under torch: {exc}", file=sys.stderr)
            broken += 1
            continue
        failed = files[GOLDENS / f"{sample.stem}.err"] is not None
        for path, want in files.items():
            have = path.read_bytes() if path.exists() else None
            if have == want:
                continue
            rel = str(path.relative_to(ROOT))
            if args.check:
                state = "missing" if have is None else ("stale, should not exist" if want is None else "differs")
                stale.append(f"{rel} ({state})")
            elif want is None:
                path.unlink()
                print(f"removed {rel}")
            else:
                path.write_bytes(want)
                print(f"wrote {rel}")
        if not args.check:
            note = "  (raises: " + files[GOLDENS / f"{sample.stem}.err"].decode().strip() + ")" if failed else ""
            print(f"ok {sample.name}{note}")

    if not args.names:
        # goldens whose sample is gone
        for path in sorted(GOLDENS.glob("*")):
            if path.suffix in (".out", ".err") and not (SAMPLES / f"{path.stem}.tg").exists():
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
