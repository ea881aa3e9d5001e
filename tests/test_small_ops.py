"""torch's constants (pi, e, inf, nan), promote_types and result_type: each program prints
under autodiff exactly as under real PyTorch (skipped without torch)."""

from __future__ import annotations


import pytest

from autodiff.engine.api import torch as T
from torch_programs import assert_prints_as_torch, run_under_torch

PROGRAMS = {"constants_promotion": """
import torch
print(torch.pi, torch.e, torch.inf, torch.nan, type(torch.pi), -torch.inf < 0)
print(torch.tensor([torch.pi, torch.inf, -torch.inf, torch.nan]))
ds = [torch.bool, torch.int32, torch.int64, torch.float32, torch.float64]
for a in ds:
    print([torch.promote_types(a, b) for b in ds])
print(torch.result_type(1, 2.0), torch.result_type(torch.tensor(1), 2.0), torch.result_type(torch.ones(2, dtype=torch.int32), torch.tensor(1.0, dtype=torch.float64)))
print(torch.result_type(torch.tensor([1, 2]), True), torch.result_type(3, torch.tensor(True)), torch.result_type(torch.tensor([True]), torch.tensor(2.5, dtype=torch.float64)))
for args in ((1, torch.float32), (torch.float32, "x")):
    try:
        torch.promote_types(*args)
    except TypeError as e:
        print(e)
for args in (("a", 1), (torch.ones(1), [1]), (None, torch.ones(1))):
    try:
        torch.result_type(*args)
    except TypeError as e:
        print(e)
"""}


@pytest.fixture(scope="module")
def reference():
    return run_under_torch(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_as_torch(name, reference):
    assert_prints_as_torch(name, PROGRAMS[name], reference[name])


def test_promotion_without_torch():
    assert repr(T.promote_types(T.int32, T.float32)) == "torch.float32"
    assert repr(T.result_type(T.tensor([1, 2]), 2.5)) == "torch.float32"
    assert repr(T.result_type(T.tensor(1.0, dtype=T.float64), T.tensor([1]))) == "torch.float64"
