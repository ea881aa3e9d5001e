"""The random-number cases whose values must equal PyTorch's, shared by the golden maker
(tests/make_random_goldens.py, run under real torch) and tests/test_random.py.

A case is Python text run with `torch` bound to either real PyTorch or autodiff's engine
namespace; it seeds, makes its calls in order and leaves the tensors in `out`. Calls of
several sizes share one case, so the stream must stay in step with torch from call to call.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

SEEDS = [0, 1, 2, 3, 5, 7, 11, 42, 123, 1234, 9999, 31337, 65535, 2 ** 31 - 1, 2 ** 32 - 1,
         2 ** 32 + 5, 123456789012, 2 ** 63 + 11, 2 ** 64 - 1, -7]
SIZES = [1, 2, 15, 16, 17, 31, 32, 33, 100, (3, 7), (4, 1, 5)]
FULL_SEEDS = SEEDS[:3]  # these also run each function at size 1000 (float32) and init in float64
DTYPES = ["torch.float32", "torch.float64"]

# one call per size: `{s}` is the size, `{t}` the same as a tuple, `{n}` its element count,
# `{d}` the dtype
CALLS = {
    "rand": "torch.rand({s}, dtype={d})",
    "randn": "torch.randn({s}, dtype={d})",
    "uniform_": "torch.empty({s}, dtype={d}).uniform_(-2.5, 4.0)",
    "normal_": "torch.empty({s}, dtype={d}).normal_(0.5, 2.0)",
    "normal_floats": "torch.normal(1.0, 0.25, {t}, dtype={d})",
    # the tensor arguments are exact in both dtypes (no linspace rounding to differ in)
    "normal_tensors": "torch.normal(torch.arange({n}, dtype={d}).reshape({s}) - 4.0, "
                      "torch.arange({n}, dtype={d}).reshape({s}) * 0.125 + 0.5)",
    "normal_tensor_mean": "torch.normal(torch.arange({n}, dtype={d}).reshape({s}) * 0.5, 1.5)",
    "bernoulli_p": "torch.empty({s}, dtype={d}).bernoulli_(0.3)",
    "bernoulli_tensor": "torch.bernoulli(torch.arange({n}, dtype={d}).reshape({s}) / {n})",
    "dropout": "torch.nn.functional.dropout(torch.ones({s}, dtype={d}), 0.4)",
    "randint": "torch.randint(-5, 7, {t})",
    "randint_mid": "torch.randint(-2 ** 29, 2 ** 29 + 7, {t})",  # 64-bit draws from 2**28
    "randint_wide": "torch.randint(-2 ** 40, 2 ** 41, {t})",
    "randint_dtype": "torch.randint(3, 100, {t}, dtype={d})",
    "randperm": "torch.randperm({n})",
    "randperm_dtype": "torch.randperm({n}, dtype={d})",
}
# run once, with the default dtype
NO_DTYPE = {"randint", "randint_mid", "randint_wide", "randperm"}
# beyond the functions of the contract: float64 for the FULL_SEEDS only (keeps the file small)
EXTRA = {"normal_tensor_mean", "bernoulli_p", "bernoulli_tensor", "dropout", "randint_dtype",
         "randperm_dtype"}

INIT_SHAPES = [(3, 7), (16, 8), (7, 3, 5), (1, 1)]
FULL_INIT_SHAPES = INIT_SHAPES + [(100, 10)]
INIT_CALLS = {
    "linear_default": "w = torch.empty({s}, dtype={d}); "
                      "torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5)); "
                      "b = torch.empty({s}[0], dtype={d}); bound = 1 / math.sqrt({s}[1]); "
                      "torch.nn.init.uniform_(b, -bound, bound); out += [w, b]",
    "kaiming_uniform_": "out.append(torch.nn.init.kaiming_uniform_(torch.empty({s}, dtype={d}), "
                        "nonlinearity='relu'))",
    "kaiming_normal_": "out.append(torch.nn.init.kaiming_normal_(torch.empty({s}, dtype={d}), "
                       "mode='fan_out'))",
    "xavier_uniform_": "out.append(torch.nn.init.xavier_uniform_(torch.empty({s}, dtype={d})))",
    "xavier_normal_": "out.append(torch.nn.init.xavier_normal_(torch.empty({s}, dtype={d}), "
                      "gain=torch.nn.init.calculate_gain('tanh')))",
    "init_normal_": "out.append(torch.nn.init.normal_(torch.empty({s}, dtype={d}), std=0.02))",
}

# calls of every kind, one after another, checking the stream stays in step between them
MIXED = ("torch.rand(5)", "torch.randn(3)", "torch.randint(0, 10, (4,))", "torch.randn(20)",
         "torch.randperm(7)", "torch.randn(1)", "torch.empty(18).normal_(2, 3)",
         "torch.rand(17, dtype=torch.float64)", "torch.randn(1, dtype=torch.float64)",
         "torch.bernoulli(torch.full((6,), 0.5))", "torch.randn(2, 3)", "torch.rand(1)",
         "torch.normal(0.0, 1.0, (33,))", "torch.randint(0, 2 ** 30, (3,))",
         "torch.empty(4, 5).t().normal_()", "torch.randn(1)", "torch.rand(2)")


def _shape(size) -> str:
    return repr(size) if isinstance(size, tuple) else str(size)


def _tuple(size) -> str:
    return repr(size) if isinstance(size, tuple) else f"({size},)"


def _count(size) -> int:
    return math.prod(size) if isinstance(size, tuple) else size


def cases(seeds=SEEDS, full_seeds=FULL_SEEDS) -> list[tuple[str, str]]:
    """(name, code) for every case."""
    found = []
    for seed in seeds:
        for kind, call in CALLS.items():
            full = seed in full_seeds
            for d in DTYPES[:1] if kind in NO_DTYPE or (kind in EXTRA and not full) else DTYPES:
                sizes = SIZES + [1000] * (full and d == "torch.float32")
                calls = [call.format(s=_shape(s), t=_tuple(s), n=_count(s), d=d) for s in sizes]
                found.append((f"{kind} {d[6:]} seed={seed}",
                              f"torch.manual_seed({seed}); out = [{', '.join(calls)}]"))
        found.append((f"randn 1000 seed={seed}",  # float32 Box–Muller blocks, every seed
                       f"torch.manual_seed({seed}); out = [torch.randn(10, 100)]"))
        for kind, call in INIT_CALLS.items():
            for d in DTYPES if full else DTYPES[:1]:
                shapes = FULL_INIT_SHAPES if full else INIT_SHAPES
                body = "; ".join(call.format(s=repr(s), d=d) for s in shapes)
                found.append((f"{kind} {d[6:]} seed={seed}",
                              f"torch.manual_seed({seed}); out = []; {body}"))
        found.append((f"mixed seed={seed}",
                      f"torch.manual_seed({seed}); out = [{', '.join(MIXED)}]"))
    return found


API_PRELUDE = ("import math\nimport torch\nimport torch.nn.functional as F\n"
               "import torch.nn.init as init\ntorch.manual_seed(0)\n")


def api_programs() -> list[tuple[str, str]]:
    """(line, whole .tg program) for each line of tests/random_api_programs.txt."""
    lines = Path(__file__).with_name("random_api_programs.txt").read_text().splitlines()
    return [(line, API_PRELUDE + line.replace("; ", "\n") + "\n") for line in lines
            if line.strip() and not line.startswith("#")]


def run_case(code: str, torch) -> list:
    """The tensors a case leaves in `out`."""
    scope = {"torch": torch, "math": math}
    exec(code, scope)  # noqa: S102 - our own case text, run by tests
    return scope["out"]


def little_endian(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()


def from_little_endian(data: bytes, dtype: str, shape) -> np.ndarray:
    return np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype) \
        .reshape(shape)
