"""A long fuzz campaign: `python tests/fuzz_campaign.py --count 100000 --seed 1`.

Prints the count, the seed, the time and every input that broke the invariant (also
saved under --save), so each can become a regression test.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzgen import check_invariant, fuzz_input  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--save", type=Path, default=Path("fuzz-failures"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    start = time.perf_counter()
    failures = 0
    for index in range(args.count):
        text = fuzz_input(rng)
        problem = check_invariant(text, args.timeout)
        if problem:
            failures += 1
            args.save.mkdir(exist_ok=True)
            (args.save / f"case{index}.tg").write_text(text, errors="surrogateescape")
            print(f"[{index}] {problem}", flush=True)
        if (index + 1) % 10_000 == 0:
            print(f"... {index + 1} inputs, {failures} violations, "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    elapsed = time.perf_counter() - start
    print(f"{args.count} inputs, seed {args.seed}, {elapsed:.0f} s, {failures} invariant violations")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
