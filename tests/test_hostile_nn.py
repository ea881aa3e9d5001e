"""The model library's surfaces under hostile input, through the installed console script:
layers, functional autograd, optimisers and hooks stay bounded by the memory and time limits,
end with one diagnostic and a non-zero exit, and never crash the process."""

from __future__ import annotations

import re

import pytest
from tiers import slow

from test_hostile_commands import EXE, LIMIT, START, autodiff, clean, write

pytestmark = pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")

COMMANDS = ["run", "graph", "explain", "check"]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_layer_too_large_is_refused_at_its_line(tmp_path, command):
    program = write(tmp_path, "wide.tg", "import torch.nn as nn\nm = nn.Linear(10**6, 10**6)\n")
    proc, _ = autodiff(command, program)
    clean(proc, LIMIT, "wide.tg:2:5: MemoryError: a tensor of shape [1000000, 1000000] "
                       "(float32) needs 4,000,000,000,000 bytes")


@pytest.mark.parametrize("call,shape", [
    ("torch.autograd.functional.jacobian(lambda_free, torch.ones(10**5))", "[100000, 100000]"),
    ("torch.autograd.functional.hessian(total, torch.ones(10**5))", "[100000, 100000]"),
])
def test_a_jacobian_too_large_is_refused_before_its_rows_are_computed(tmp_path, call, shape):
    text = ("def lambda_free(x):\n    return x * 2\n"
            "def total(x):\n    return (x ** 3).sum()\n"
            f"j = {call}\n")
    proc, seconds = autodiff("run", write(tmp_path, "jac.tg", text), "--max-memory", "1G",
                             "--timeout", "30")
    assert seconds < START + 1  # at once, not after 10**5 backward passes
    clean(proc, LIMIT, f"jac.tg:5:5: MemoryError: a tensor of shape {shape} (float32)")


TRAINING = """import torch.nn as nn
model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.ones(4, 3)
for step in range(10**9):
    opt.zero_grad()
    loss = ((model(x) - 1) ** 2).mean()
    loss.backward()
    opt.step()
"""


@slow
@pytest.mark.parametrize("command", COMMANDS)
def test_an_endless_training_loop_stops_at_its_line(tmp_path, command):
    proc, seconds = autodiff(command, write(tmp_path, "train.tg", TRAINING), "--timeout", "1")
    assert seconds < 1 + 1 + START
    err = clean(proc, LIMIT, "TimeoutError: the program ran longer than 1 s (--timeout)")
    # at its line; or, when a pass of the cyclic GC (C code: seconds over explain's record of
    # every tensor) held the program past the grace, from the parent without one
    assert re.search(r"train\.tg(:\d+:\d+)?: TimeoutError", err) and err.count("Timeout") == 1


@slow
@pytest.mark.parametrize("body,where", [("    while True:\n        pass\n", "hook.tg:3:11"),
                                        ("    print(sum(range(10**15)))\n", "hook.tg")])
def test_a_hook_that_never_returns_stops_at_the_deadline(tmp_path, body, where):
    text = ("x = torch.ones(3, requires_grad=True)\ndef h(g):\n" + body + "    return g\n"
            "x.register_hook(h)\n(x * 2).sum().backward()\n")
    for command in ("run", "check"):
        proc, seconds = autodiff(command, write(tmp_path, "hook.tg", text), "--timeout", "1")
        assert seconds < 1 + 1 + START
        err = clean(proc, LIMIT, f"{where}: TimeoutError: the program ran longer than 1 s")
        assert err.count("TimeoutError") == 1


@pytest.mark.parametrize("command", COMMANDS)
def test_a_model_that_contains_itself_is_a_recursion_error_not_a_crash(tmp_path, command):
    text = ("import torch.nn as nn\ns = nn.Sequential(nn.ReLU())\ns.append(s)\n"
            "print(s(torch.ones(2)))\n")
    proc, _ = autodiff(command, write(tmp_path, "loop.tg", text))
    clean(proc, 1, "loop.tg:4:7: RecursionError: maximum recursion depth exceeded")


def test_a_program_stopped_holding_gigabytes_says_so_once_and_in_time(tmp_path):
    # freeing a gigabyte of small arrays takes longer than the guard's grace: the child must
    # end as soon as its diagnostic is written, and the parent must not add a second one
    text = ("kept = []\nfor i in range(5000):\n    kept.append(torch.ones(100000))\n"
            "while True:\n    pass\n")  # 2 GB in 5,000 arrays
    proc, seconds = autodiff("run", write(tmp_path, "hoard.tg", text), "--timeout", "2",
                             "--max-memory", "3G")
    assert seconds < 2 + 1 + START
    err = clean(proc, LIMIT, "TimeoutError: the program ran longer than 2 s")
    # at the line it ran (the endless loop, or on a busy machine still the allocating loop,
    # its header included), said once
    assert re.search(r"hoard\.tg:[234]:\d+: TimeoutError", err) and err.count("Timeout") == 1, err


def test_the_repl_shows_a_value_whose_repr_fails_as_that_inputs_error():
    # the REPL echoes `s.append(s)`'s value, a Sequential that contains itself: its repr is
    # the program's RecursionError, as in Python's REPL, and the input still ran
    proc, _ = autodiff("repl", stdin="s = torch.nn.Sequential(torch.nn.ReLU())\ns.append(s)\n"
                                     "len(s)\n")
    clean(proc, 0, "<stdin>:1:1: RecursionError: maximum recursion depth exceeded")
    assert proc.out == "2\n"  # the session went on with the Sequential grown (no prompt: piped)
