"""einsum against live PyTorch over random equations: values, the grad_fn chain torch builds
(diagonal, permute, unsqueeze, sum, mul, bmm, view) and gradients with create_graph."""

from __future__ import annotations

import io
import random

import pytest

from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses, run_many_with_torch, torch_available

LABELS = "ijkbnAB"


def random_program(seed: int) -> str:
    """One einsum over 1-3 operands: repeated labels, broadcast (size-1) dims, ellipses,
    implicit and explicit outputs, labels summed away."""
    rng = random.Random(seed)
    pool = rng.sample(LABELS, rng.randint(2, 5))
    sizes = {label: rng.randint(2, 4) for label in pool}
    ellipsis = rng.random() < 0.25
    ellipsis_shape = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    terms, shapes = [], []
    for _ in range(rng.choice([1, 2, 2, 2, 3])):
        labels = [rng.choice(pool) for _ in range(rng.choice([0, 1, 2, 2, 3, 3]))]
        shape = [sizes[label] if rng.random() > 0.1 else 1 for label in labels]
        for i, label in enumerate(labels):  # a repeated label's dims must agree
            if label in labels[:i]:
                shape[i] = shape[labels.index(label)]
        term = "".join(labels)
        if ellipsis and rng.random() < 0.7:
            covered = ellipsis_shape[len(ellipsis_shape) - rng.randint(0, len(ellipsis_shape)):]
            term, shape = "..." + term, covered + shape
        terms.append(term)
        shapes.append(shape)
    equation = ",".join(terms)
    if rng.random() < 0.5:
        used = sorted(set(equation) - {".", ","})
        output = "".join(rng.sample(used, rng.randint(0, len(used))))
        if ellipsis and rng.random() < 0.6:
            output = "..." + output
        equation += "->" + output
    names = [f"t{i}" for i in range(len(shapes))]
    lines = [f"torch.manual_seed({seed})"]
    lines += [f"{n} = torch.randn({tuple(s)!r}, dtype=torch.float64, requires_grad=True)"
              for n, s in zip(names, shapes)]
    lines += [f"r = torch.einsum({equation!r}, {', '.join(names)})",
              "print(r, r.shape)",
              "f = r.grad_fn",
              "while f is not None and len(f.next_functions) > 0:",
              "    print(f.name())",
              "    f = f.next_functions[0][0]",
              f"gs = torch.autograd.grad((r * r).sum(), [{', '.join(names)}], create_graph=True)",
              "for g in gs:",
              "    print(g, g.grad_fn)"]
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(not torch_available(), reason="torch is not installed")
def test_einsum_matches_torch_on_random_equations():
    programs = [random_program(seed) for seed in range(200)]
    references = run_many_with_torch(programs)
    differ = []
    for program, reference in zip(programs, references):
        out = io.StringIO()
        result = run_source(program, "einsum.tg", out=out, err=io.StringIO())
        error = result.error and f"{result.error.error_class}: {result.error.message}"
        if normalize_addresses(out.getvalue()) != reference.stdout or error != reference.error:
            differ.append(program)
    assert not differ, differ[0]
