"""Write (or check) the goldens of the tutorial-patterns corpus, corpus/*.tg, under real PyTorch.

    python tests/make_corpus_goldens.py                 # every corpus/*.tg
    python tests/make_corpus_goldens.py NAME ...        # only these (NAME, NAME.tg or a path)
    python tests/make_corpus_goldens.py --check         # exit 1, listing goldens that are stale
    python tests/make_corpus_goldens.py --cross-check   # also compare with `--reference torch`

For each program NAME.tg this writes corpus/NAME.out (its stdout, object addresses written
0xADDR, exact bytes) and, when the program raises, corpus/NAME.err holding the one line
"ErrorClass: message" (a stale .err is removed), through autodiff.cli.golden.sync_expected,
the function `autodiff test --reference torch` writes with.

Why not `autodiff test --reference torch corpus/` itself: that command first refuses any
program autodiff's parser and compiler reject, and the corpus is made of what real
tutorials write, much of which autodiff cannot parse yet. So the programs run through
tests/corpus_runner.py: real Python with PyTorch, each in a fresh process, the way
interpreter/reference.py runs one, minus its .tg gate and restricted builtins (these are
our own programs). --check reruns them all in one process and compares; --cross-check
also runs every program the .tg gate accepts through interpreter/reference.py itself and
reports any difference from the corpus runner's output.

torch is needed only here (and in the test's live check), never by the tool. Exit codes:
0 done / up to date, 1 stale goldens or a program that could not be run, 2 usage error or
torch missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from corpus_runner import run_programs, torch_python_available

from autodiff.cli import golden

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"


def corpus_programs() -> list[Path]:
    return sorted(CORPUS.glob("*.tg"))


def _select(names: list[str]) -> list[Path]:
    if not names:
        return corpus_programs()
    chosen = []
    for name in names:
        stem = Path(name).name.removesuffix(".tg")
        path = CORPUS / f"{stem}.tg"
        if not path.is_file():
            raise SystemExit(f"make_corpus_goldens: no program {path.relative_to(ROOT)}")
        chosen.append(path)
    return chosen


def _orphans() -> list[Path]:
    """Goldens whose program is gone."""
    return [p for p in sorted(CORPUS.glob("*")) if p.suffix in (".out", ".err")
            and not p.with_suffix(".tg").exists()]


def _cross_check(programs: list[Path],
                 expected: dict[Path, golden.Expected]) -> tuple[int, list[str]]:
    """How many programs the .tg gate accepts, and those whose `--reference torch` output
    differs from the corpus runner's."""
    from autodiff.interpreter.reference import ReferenceRefused

    compared, differ = 0, []
    for program in programs:
        try:
            reference = golden.expected_from_torch(program)
        except ReferenceRefused:
            continue
        compared += 1
        if reference != expected[program]:
            differ.append(program.name)
    return compared, differ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="programs (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 listing goldens that differ")
    parser.add_argument("--cross-check", action="store_true",
                        help="also compare with interpreter/reference.py where it runs them")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="programs run at once")
    args = parser.parse_args(argv)

    if not torch_python_available():
        print(f"make_corpus_goldens: torch is not installed for this Python ({sys.executable});"
              " the goldens come from real PyTorch: pip install torch==2.13.0 (CPU build)",
              file=sys.stderr)
        return 2
    try:
        programs = _select(args.names)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2

    results = run_programs(programs, fresh=not args.check, jobs=args.jobs)
    expected = {p: golden.Expected(r.stdout, r.error) for p, r in zip(programs, results)}
    stale = []
    for program in programs:
        for path, state in golden.sync_expected(program, expected[program], check=args.check):
            rel = str(Path(path).relative_to(ROOT))
            if args.check:
                stale.append(f"{rel} ({state})")
            else:
                print(f"{state} {rel}")
        if not args.check:
            error = expected[program].error
            print(f"ok {program.name}" + (f"  (raises: {error})" if error else ""))
    if not args.names:
        for path in _orphans():
            rel = str(path.relative_to(ROOT))
            if args.check:
                stale.append(f"{rel} (no such program)")
            else:
                path.unlink()
                print(f"removed {rel} (no such program)")

    status = 0
    if args.cross_check:
        compared, differ = _cross_check(programs, expected)
        for name in differ:
            print(f"cross-check: {name}: interpreter/reference.py prints something else",
                  file=sys.stderr)
        print(f"cross-check: {compared} programs also run by interpreter/reference.py, "
              f"{len(differ)} differ")
        status = 1 if differ else 0
    if args.check:
        if stale:
            print("corpus goldens out of date (run python tests/make_corpus_goldens.py):",
                  file=sys.stderr)
            for line in stale:
                print(f"  {line}", file=sys.stderr)
            return 1
        print(f"corpus goldens up to date ({len(programs)} programs)")
    return status


if __name__ == "__main__":
    sys.exit(main())
