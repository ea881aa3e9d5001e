"""Write the random-number goldens from real PyTorch (run under torch 2.13, CPU).

    python tests/make_random_goldens.py            # writes tests/goldens/random/*
    python tests/make_random_goldens.py --live SEED ...  # prints those seeds' cases as JSON
                                                         # (tests/test_random.py's live check)

cases.json.xz lists every case of tests/random_cases.py (its code, and the dtype and shape
of each tensor it makes), values.bin.xz holds torch's values one after another (exact
little-endian bytes), readable.json a few cases as decimal numbers, to read by eye, and
api.json what each program of tests/random_api_programs.txt prints under torch (argument
forms and errors).
"""

from __future__ import annotations

import argparse
import json
import lzma
import platform
import sys
from pathlib import Path

import random_cases

OUT = Path(__file__).resolve().parent / "goldens" / "random"
READABLE = {  # name: code, printed as decimals
    "rand(5), seed 0": "torch.manual_seed(0); out = [torch.rand(5)]",
    "randn(3) then randn(17), seed 0": "torch.manual_seed(0); out = [torch.randn(3), "
                                       "torch.randn(17)]",
    "randn(4, dtype=float64), seed 42": "torch.manual_seed(42); out = [torch.randn(4, "
                                        "dtype=torch.float64)]",
    "randint(0, 10, (6,)) and randperm(8), seed 1": "torch.manual_seed(1); out = "
                                                    "[torch.randint(0, 10, (6,)), "
                                                    "torch.randperm(8)]",
    "nn.Linear(4, 3)'s default init, seed 0": "torch.manual_seed(0); out = []; "
    "w = torch.empty(3, 4); torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5)); "
    "b = torch.empty(3); torch.nn.init.uniform_(b, -0.5, 0.5); out += [w, b]",
    "dropout(ones(8), 0.5), seed 3": "torch.manual_seed(3); out = "
                                     "[torch.nn.functional.dropout(torch.ones(8), 0.5)]",
}


def _arrays(code: str, torch) -> list:
    return [t.detach().numpy() for t in random_cases.run_case(code, torch)]


def _describe(arrays) -> list[dict]:
    return [{"dtype": a.dtype.name, "shape": list(a.shape)} for a in arrays]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", nargs="*", type=int, metavar="SEED",
                        help="print the cases for these seeds as JSON instead")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("make_random_goldens: torch is not installed for this Python", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    if args.live is not None:
        found = {}
        for name, code in random_cases.cases(args.live, args.live[:1]):
            arrays = _arrays(code, torch)
            found[name] = {"arrays": _describe(arrays),
                           "hex": b"".join(random_cases.little_endian(a) for a in arrays).hex()}
        json.dump({"cpu_capability": torch.backends.cpu.get_cpu_capability(), "cases": found},
                  sys.stdout)
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "machine": platform.machine(), "processor": platform.processor()}
    cases, blob = [], []
    for name, code in random_cases.cases():
        arrays = _arrays(code, torch)
        cases.append({"name": name, "code": code, "arrays": _describe(arrays)})
        blob += [random_cases.little_endian(a) for a in arrays]
    (OUT / "cases.json.xz").write_bytes(lzma.compress(json.dumps({**meta, "cases": cases},
                                                                 indent=0).encode()))
    (OUT / "values.bin.xz").write_bytes(lzma.compress(b"".join(blob), preset=9))
    readable = {name: [{"dtype": str(t.dtype), "shape": list(t.shape),
                        "values": t.detach().double().flatten().tolist()}
                       for t in random_cases.run_case(code, torch)]
                for name, code in READABLE.items()}
    (OUT / "readable.json").write_text(json.dumps({**meta, "cases": readable}, indent=1) + "\n")
    from autodiff.interpreter.reference import run_many_with_torch
    programs = random_cases.api_programs()
    results = run_many_with_torch([program for _, program in programs])
    api = [{"line": line, "stdout": result.stdout, "error": result.error or None}
           for (line, _), result in zip(programs, results)]
    (OUT / "api.json").write_text(json.dumps(api, indent=1) + "\n")
    print(f"wrote {len(cases)} cases and {len(api)} programs to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
