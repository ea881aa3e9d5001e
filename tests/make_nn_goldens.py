"""Write what each case of tests/nn_cases.py prints under real PyTorch (torch 2.13, CPU).

    python tests/make_nn_goldens.py            # writes tests/goldens/nn/cases.json
    python tests/make_nn_goldens.py --check    # exit 1 when it is stale
    python tests/make_nn_goldens.py --diff     # show where autodiff prints otherwise

tests/test_nn.py runs the same cases on autodiff's engine and compares with this file.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import nn_cases  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "goldens" / "nn" / "cases.json"


def main(argv: list[str]) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    modules = nn_cases.torch_modules()
    modules["torch"].set_num_threads(1)
    outputs = {name: nn_cases.run_case(source, modules) for name, source in nn_cases.CASES.items()}
    text = json.dumps(outputs, indent=1, ensure_ascii=False) + "\n"
    if "--diff" in argv:
        ours = nn_cases.autodiff_modules()
        for name, source in nn_cases.CASES.items():
            got = nn_cases.run_case(source, ours)
            if got != outputs[name]:
                print(f"=== {name}")
                sys.stdout.writelines(difflib.unified_diff(
                    outputs[name].splitlines(True), got.splitlines(True), "torch", "autodiff"))
        return 0
    if "--check" in argv:
        if not GOLDEN.exists() or GOLDEN.read_text(encoding="utf-8") != text:
            print(f"{GOLDEN} is stale: run python tests/make_nn_goldens.py", file=sys.stderr)
            return 1
        return 0
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(text, encoding="utf-8")
    print(f"wrote {len(outputs)} cases to {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
