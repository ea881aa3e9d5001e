"""Hostile programs whose outcome PyTorch (and Python) define: autodiff must print the same and
fail with the same error line — values assigned to tensor attributes, integers beyond int64,
torch.Size, class objects called with any `self`, malformed string literals.

Run live against real torch (one subprocess for all); skipped when torch is not installed."""

from __future__ import annotations

import pytest

from autodiff.interpreter.reference import run_many_with_torch, torch_available

from test_differential import mismatch

needs_torch = pytest.mark.skipif(not torch_available(), reason="torch is not installed")

LEAF = "x = torch.ones(3, requires_grad=True)\n"
NONLEAF = "z = torch.ones(3, requires_grad=True) * 2\n"

PROGRAMS = [
    # requires_grad = ...
    LEAF + "x.requires_grad = torch.ones(3)\n",
    LEAF + "x.requires_grad = 1\n",
    LEAF + "x.requires_grad = None\n",
    LEAF + "x.requires_grad = False\nprint(x.requires_grad, x)\n",
    "x = torch.ones(3, dtype=torch.int64)\nx.requires_grad = True\n",
    "x = torch.ones(3, dtype=torch.int64)\nx.requires_grad = False\nprint(x)\n",
    NONLEAF + "z.requires_grad = True\n",
    NONLEAF + "z.requires_grad = False\n",
    NONLEAF + "z.requires_grad = 0\n",
    # data = ...
    LEAF + "x.data = 5\n",
    LEAF + "x.data = [1.0, 2.0]\n",
    LEAF + "x.data = torch.ones(3, dtype=torch.int64)\n",
    "x = torch.ones(3)\nx.data = torch.ones(3, dtype=torch.int64)\nprint(x)\n",
    LEAF + "y = x * 2\nx.data = torch.ones(2)\nprint(x)\n",
    NONLEAF + "z.data = torch.zeros(3)\nprint(z)\n",
    # grad = ...
    LEAF + "x.grad = torch.ones(2)\n",
    LEAF + "x.grad = torch.ones(3, dtype=torch.float64)\n",
    LEAF + "x.grad = torch.ones(3, dtype=torch.int64)\n",
    "x = torch.ones(3, dtype=torch.int64)\nx.grad = torch.ones(3)\n",
    "x = torch.ones(3, dtype=torch.int64)\nx.grad = torch.ones(3, dtype=torch.int64)\nprint(x.grad)\n",
    LEAF + "x.grad = [1.0, 2.0, 3.0]\n",
    LEAF + "x.grad = torch.ones(3) * 2\nprint(x.grad)\nx.grad = None\nprint(x.grad)\n",
    NONLEAF + "z.grad = torch.ones(3)\nprint(z.grad)\n",
    # integers beyond int64
    "x = torch.tensor([2**63])\n",
    "x = torch.tensor([-2**63 - 1])\n",
    "x = torch.tensor([2**63 - 1, -2**63])\nprint(x)\n",
    "x = torch.tensor(2**64)\n",
    "x = torch.tensor([[1], [2**63]])\n",
    "x = torch.tensor([True, 2**63])\n",
    "x = torch.tensor([10**4000])\n",
    "print(torch.tensor([1.0, 2**63]))\n",
    "print(torch.tensor([[1.0], [2**63]]))\n",
    "print(torch.tensor([1, 2**63, 1.0]))\n",
    "print(torch.tensor([2**63], dtype=torch.float32))\n",
    "print(torch.tensor(2**63, dtype=torch.float64))\n",
    "x = torch.tensor([1.0, 10**400])\n",
    # torch.Size
    "print(torch.Size([2, 3]), torch.Size((1,)), torch.Size())\n",
    "print(torch.Size([True, 2]))\n",
    "print(torch.Size([torch.tensor(2)]))\n",
    "x = torch.Size([2.0])\n",
    "x = torch.Size('ab')\n",
    "x = torch.Size(5)\n",
    "x = torch.Size([2**63])\nprint(len(x), x[0] == 2**63)\nprint(x)\n",
    "x = torch.Size([10**30000] * 20)\nprint(x.numel())\n",
    "x = torch.Size([2**63, 3])\nprint(x[1], x.count(3))\nprint(x[1:])\nprint(x[0:1])\n",
    "print(torch.Size([1]) + torch.Size([2]), (1,) + torch.Size([2]))\n",
    "print(torch.Size([2**63]) + torch.Size([2]))\n",
    "print(torch.Size([2**62] * 20).numel(), torch.Size([2**40] * 2).numel())\n",
    "print(torch.Size([-5, 3]).numel(), torch.Size([2, 3])[1:], torch.Size([2, 3]).count(3))\n",
    "print(isinstance(torch.ones(2).shape, torch.Size), torch.ones(2, 3).size())\n",
    # class objects and their functions
    "x = torch.Tensor.add(1, 2)\n",
    "x = torch.Tensor.sum('a')\n",
    "x = torch.Size.numel([1, 2])\n",
    "print(torch.Tensor.add(torch.ones(2), 1), torch.Size.numel(torch.Size([2, 3])))\n",
    "print(torch.Size.count((1, 2), 1))\n",
    "x = torch.Tensor.add()\n",
    # ... where torch's class is Python: its function runs, and fails at the first attribute
    # it reads of that `self` (a generator, when it is first iterated)
    "import torch.nn as nn\nprint(nn.Module.parameters(5))\nprint(list(nn.Module.parameters(5)))\n",
    "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "print(super(Net, Net).parameters(5))\nprint(list(super(Net, Net).parameters(5)))\n",
    "import torch.nn as nn\nx = nn.Linear.forward(5, torch.ones(2))\n",
    "import torch.nn as nn\nx = nn.Module.train(5)\n",
    "import torch.nn as nn\nx = nn.Module.parameters()\n",
    "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "x = super(Net, Net).forward(5, torch.ones(2))\n",
    """import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.fc(x)
class Plain:
    def f(self, k=1):
        return k
    @staticmethod
    def s(v):
        return v
x = torch.ones(2)
print(Plain.f(5), Plain.f(5, k=3), Plain.s(4))
for make in (lambda: nn.Module.parameters(5), lambda: super(Net, Net).parameters(5),
             lambda: nn.Module.parameters(self=5), lambda: nn.Module.named_parameters(5),
             lambda: nn.Module.children(5), lambda: nn.Conv2d.modules(5)):
    it = make()
    print(type(it).__name__)
    try:
        print(list(it))
    except AttributeError as e:
        print("AttributeError:", e)
for call in (lambda: nn.Linear.forward(5, x), lambda: Net.forward(5, x),
             lambda: nn.Module.zero_grad(5), lambda: nn.Module.train(5),
             lambda: nn.Module.train(5, 2), lambda: nn.Module.eval(5),
             lambda: nn.Module.parameters(), lambda: torch.Tensor.add(5, 1),
             lambda: torch.Tensor.add(), lambda: torch.Size.numel([2])):
    try:
        print(call())
    except (AttributeError, TypeError, ValueError) as e:
        print(type(e).__name__ + ":", e)
print(len(list(nn.Module.parameters(Net()))), nn.Linear.forward(nn.Linear(2, 1), x).shape)
""",
    # sizes of results
    "print(torch.ones(1).expand(3, 2).clone())\n",
    "print(torch.where(torch.ones(3, 1) > 0, torch.ones(1, 2), 0.0))\n",
    "x = torch.full((2,), 2**63)\n",
    "x = torch.full((2,), 2**40, dtype=torch.int32)\n",
    "x = torch.zeros(2, dtype=torch.int64).fill_(2**63)\n",
    "print(torch.full((2,), 2**62), torch.zeros(2, dtype=torch.int32).fill_(-5))\n",
    # string literals Python accepts
    'print("\\N{DEGREE SIGN}", "\\777", "\\8", "a\\qb")\n',
    'print(f"\\N{DEGREE SIGN} {1}")\n',
    "print(f'{3:{4}}', f'{1.5:{6}.{2}}')\n",
    # long chains Python runs
    "x = 0\nif x == 1:\n    pass\n" + "".join(f"elif x == {i}:\n    print({i})\n"
                                                  for i in range(2, 1000)) + "else:\n    print('no')\n",
    "print(0 < 1 < 2 < 3, 1 and 2 and 3, 0 or 0 or 5, 2 ** 3 ** 2)\n",
]

# Texts Python itself refuses: autodiff must refuse them with Python's own SyntaxError text
# (and the reference gate refuses them before torch runs, so Python's compile() decides)
SYNTAX = [
    'x = "\\N"\n',
    'x = "\\N{bogus}"\n',
    'x = "\\U00110000"\n',
    'x = "\\x4"\n',
    'x = "\\u12"\n',
    "x = f'{1:{2:{3}}}'\n",
    "x = " + "7" * 5000 + "\n",
]


@pytest.fixture(scope="module")
def torch_results():
    return run_many_with_torch(PROGRAMS, misspellings="fail")


@needs_torch
@pytest.mark.parametrize("index", range(len(PROGRAMS)))
def test_hostile_program_fails_as_torch_does(index, torch_results):
    source = PROGRAMS[index]
    why = mismatch(source, torch_results[index])
    assert why is None, f"{why}\n--- program:\n{source}"


@pytest.mark.parametrize("source", SYNTAX)
def test_text_python_refuses_is_refused_with_pythons_words(source):
    import warnings

    from autodiff.parser import TgError, parse

    with pytest.raises(SyntaxError) as python:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<python>", "exec")
    with pytest.raises(TgError) as ours:
        parse(source, "<program>")
    assert (ours.value.error_class, ours.value.message) == ("SyntaxError", python.value.msg)
