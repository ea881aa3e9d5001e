"""The torch reference's escape suite, against real torch (skipped without it).

`--reference torch` runs program text as real Python, so every escape attempt the sandbox's
own suite makes (tests/test_escapes.py) is made here too, with attempts aimed at what a
static gate cannot know (whose object `self` is, names the program spells out itself).
Each attempt is followed by a line that says it got through: whatever the attempt does, it
must be refused before it runs, stopped while it runs, or fail in Python itself before that
line, and nothing may be written anywhere (the child's folder is checked by the reference
itself, the marker's folder here, where the attempts of this file aim).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from tiers import slow

from autodiff.interpreter.reference import (
    ReferenceLimit,
    ReferenceRefused,
    ReferenceResult,
    ReferenceTimeout,
    reference_outcomes,
    run_with_torch,
    torch_available,
)
from test_escapes import ATTEMPTS, CLASS_PRELUDE, CLASSES, FILE_ESCAPES, _as_statement

pytestmark = pytest.mark.skipif(not torch_available(), reason="torch is not installed")

# attempts at the gate's own ideas: which object is the program's, which names are its own
OWN_OBJECTS = {
    "a torch name taken for a misspelling": (
        'print(torch.utils.collect_env.subprocess.getoutput("touch {marker}"))\n'),
    "torch passed as self": (
        "class Net:\n    def __init__(self):\n        self.os = 0\n        self.system = 0\n"
        '    def run(self):\n        self.os.system("touch {marker}")\nNet.run(torch)\n'),
    "torch passed as self of an nn.Module": (
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.jit = 1\n    def keep(self, x):\n"
        '        self.jit.save(x, "{marker}")\nNet.keep(torch, torch.ones(1))\n'),
    "numpy passed as self": (
        "import numpy as np\nclass A:\n    def __init__(self):\n        self.save = 0\n"
        '    def keep(self):\n        self.save("{marker}", [1])\nA.keep(np)\n'),
    "a module kept on the program's object": (
        "class A:\n    def __init__(self):\n        self.t = torch\n        self.os = 1\n"
        "a = A()\nprint(a.t.os)\n"),
    "a module put on the program's class": (
        "class A:\n    pass\nA.helper = torch\nA.hub = 1\nprint(A.helper.hub)\n"),
    "a name spelt out in a string": ('name = "os"\nprint(torch.os.getcwd())\n'),
    "a name spelt out in a string, on a tensor": (
        'name = "storage_type"\nprint(torch.ones(1).storage_type())\n'),
    "a torch class's own member through a string": (
        'name = "register_state_dict_pre_hook"\nimport torch.nn as nn\n'
        "print(nn.Linear(1, 1).register_state_dict_pre_hook)\n"),
    "a submodule through a readable name": ("import torch.nn as nn\nprint(nn.modules.linear)\n"),
    "a submodule of numpy": ("import numpy as np\nprint(np.random.mtrand)\n"),
    "super() of another object": (
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.os = 1\n    def go(self):\n"
        "        return super(Net, self).os\nprint(Net().go())\n"),
    "worker processes": (
        "from torch.utils.data import DataLoader\n"
        "print(list(DataLoader([1.0, 2.0], batch_size=1, num_workers=2)))\n"),
    "a registered name on a module the program did not make": (
        "import torch.nn as nn\nm = nn.Sequential()\nm.add_module('os', nn.ReLU())\n"
        "print(m.os)\nprint(nn.Sequential().os)\n"),
    "type() under another name": ('t = type\nX = t("X", (), {{}})\n'),
    "a class with a metaclass": ("class A(metaclass=type):\n    pass\n"),
    # getattr, hasattr, setattr: a name given as a string meets the guard the text's own meet
    "getattr of a host module": ('print(getattr(torch, "os").system("touch {marker}"))\n'),
    "getattr of a name built at run time": (
        'name = "o" + "s"\nprint(getattr(torch, name).system("touch {marker}"))\n'),
    "getattr of a dunder built at run time": (
        'print(getattr(torch.ones(1), "__di" + "ct__"))\n'),
    "getattr of a dunder, with a default": (
        'print(getattr(torch.ones(1), "__di" + "ct__", 0).keys())\n'),
    "hasattr probing a host name": ('print(hasattr(torch, "o" + "s"))\n'),
    "setattr on a module": ('setattr(torch, "ones", print)\n'),
    "setattr of a dunder": ('class A:\n    pass\nsetattr(A(), "__cl" + "ass__", int)\n'),
    "setattr on a torch object": ('setattr(torch.nn.Linear(1, 1), "forward", print)\n'),
    "a cudnn flag's name on another module": ("torch.nn.deterministic = True\n"),
    "a cudnn flag's name on a tensor": ("torch.ones(1).benchmark = True\n"),
    "the class of a class": ("print(torch.ones(1).__class__.__class__)\n"),
    # the run's files: the program's os, open and file objects answer the language's names
    "os.system through the program's os": ('import os\nos.system("touch {marker}")\n'),
    "a host function of os by a readable name": (
        'import os\nname = "popen"\nprint(os.popen("touch {marker}"))\n'),
    "a host function of os.path": ('import os\nname = "expanduser"\nprint(os.path.expanduser("~"))\n'),
    "a file object's buffer": ('f = open("a.txt", "w")\nname = "buffer"\nprint(f.buffer.raw)\n'),
    "a file object's descriptor": ('f = open("a.txt", "w")\nname = "fileno"\nprint(f.fileno())\n'),
    "a tensor method's name on a file object": ('print(open("a.txt", "w").detach())\n'),
    "the real open through torch": ('name = "serialization"\nprint(torch.serialization)\n'),
    "the class of a class through getattr": (
        'print(getattr(int, "__class__")("X", (), {{}}))\n'),
}
# what gets through to its last line, and why that is harmless: each takes nothing of the host
# (autodiff refuses them for being outside its narrower model of these objects)
HARMLESS = {
    "sandbox storage: t.untyped_storage().__class__([1])":
        "torch's UntypedStorage made from a list of bytes: data only",
    "sandbox data: torch.utils.data.DataLoader(torch.utils.data.TensorDataset(t), 1, "
    "collate_fn=print)": "a builtin of the language passed as a callback",
    "sandbox nn: torch.nn.Linear(2, 1).state_dict().move_to_end":
        "an OrderedDict method of the language, on torch's OrderedDict",
    "class: class A(nn.Module):\n    def _parameters(self):\n        return 1":
        "a method of the program's own class shadowing a Module internal by name: it breaks "
        "that module (autodiff refuses the name as its engine's), it reaches nothing",
    "sandbox numpy: np.ones(2).dtype.type": "NumPy's scalar class, whose names are data only",
    "sandbox numpy: np.array([print])": "an array holding a builtin of the language",
    "sandbox numpy: np.array(['a'])": "an array of strings",
    "sandbox files: torch.save(torch.nn.Linear(1, 1), 'm.pt')":
        "torch pickles the module into the run's in-memory files (autodiff saves only "
        "tensors and containers of them); loading is weights-only",
    "sandbox import: from torch import save\nsave(print, 'x.pt')":
        "pickle writes a reference to a builtin into the run's in-memory files",
    "sandbox files: torch.save(print, 'p.pt')":
        "pickle writes a reference to a builtin into the run's in-memory files",
    # the standard modules: limits of autodiff's (sizes, nesting) that real Python need not
    # keep, and what torch supports and autodiff does not yet
    "sandbox standard: import itertools\nit = iter([1])\nfor i in range(2000):\n"
    "    it = itertools.chain(it)\nlist(it)": "iterators 2,000 deep, which CPython runs",
    "sandbox standard: import copy\ncopy.deepcopy(t)": "torch's deepcopy of a leaf tensor",
    "sandbox standard: import re\nre.sub('', 'x' * 10000, 'y' * 10000)":
        "a 100-megabyte string, within the child's memory limit",
    "sandbox standard: import re\nre.compile('').sub('x' * 10000, 'y' * 10000)":
        "a 100-megabyte string, within the child's memory limit",
    "sandbox standard: import typing\ntyping.List['os.system(1)']":
        "a forward reference typing compiles and never evaluates",
}
PAYLOAD = 'print("the attempt got through")\n'


def _programs(marker: Path) -> dict[str, str]:
    programs = {f"sandbox {kind}: {attempt}": _as_statement(attempt, kind)
                for kind, attempt in ATTEMPTS}
    programs |= {f"class: {attempt}": CLASS_PRELUDE + attempt + "\n" for attempt in CLASSES}
    programs |= {f"gate: {name}": text.format(marker=marker) for name, text in OWN_OBJECTS.items()}
    return {name: text + PAYLOAD.format(marker=marker) for name, text in programs.items()}


def _outcomes(programs: dict[str, str]) -> dict[str, object]:
    """Each program's outcome, from one child (each program in a process forked for it)."""
    names = list(programs)
    outcomes = reference_outcomes([programs[n] for n in names], filenames=names, timeout=600,
                                  max_memory=512 << 20)
    assert None not in outcomes  # a stop ends the program's own process, not the run
    return dict(zip(names, outcomes))


def _kind(outcome) -> str:
    if isinstance(outcome, ReferenceRefused):
        return outcome.error.error_class  # refused (before it ran) or stopped (while it ran)
    if isinstance(outcome, ReferenceLimit):
        return "memory limit"
    assert isinstance(outcome, ReferenceResult), outcome
    return "failed in Python" if outcome.exit_code == 1 else "ran"


@slow
def test_every_escape_attempt_is_refused_or_stopped(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    programs = _programs(marker)
    outcomes = _outcomes(programs)
    counts: dict[str, int] = {}
    for name, outcome in outcomes.items():
        kind = _kind(outcome)
        counts[kind] = counts.get(kind, 0) + 1
        # else an error raised before the last line, in Python itself
        got_through = kind == "ran" or "got through" in getattr(outcome, "stdout", "")
        assert got_through == (name in HARMLESS), f"{name}: {kind}, printing " \
                                                  f"{getattr(outcome, 'stdout', '')!r}"
    print(f"\n{len(programs)} escape attempts under torch: {counts}")
    assert not marker.exists() and list(tmp_path.iterdir()) == []
    assert len(programs) >= 500 and counts["stopped"] >= 30 and counts["refused"] >= 350


@pytest.fixture(scope="module")
def own_object_outcomes(tmp_path_factory):
    """Every OWN_OBJECTS attempt in one batch (each in a process of its own), with its marker."""
    folder = tmp_path_factory.mktemp("own")
    markers = {name: folder / f"ran{i}" for i, name in enumerate(OWN_OBJECTS)}
    programs = [OWN_OBJECTS[name].format(marker=markers[name]) +
                PAYLOAD.format(marker=markers[name]) for name in OWN_OBJECTS]
    outcomes = reference_outcomes(programs, filenames=["evil.tg"] * len(programs))
    return {name: (outcome, markers[name]) for name, outcome in zip(OWN_OBJECTS, outcomes)}


@pytest.mark.parametrize("name", list(OWN_OBJECTS))
def test_the_gates_own_ideas_cannot_be_turned(name: str, own_object_outcomes) -> None:
    """What a static gate cannot know is checked on the object itself: each is refused or
    stopped by the gate, not failed by Python."""
    outcome, marker = own_object_outcomes[name]
    assert isinstance(outcome, ReferenceRefused), outcome
    assert str(outcome).startswith("evil.tg:")
    assert not marker.exists()


def test_the_escapes_of_the_report_are_stopped_where_they_ran() -> None:
    """The two programs that once ran `id` as the user: the first is refused before it runs
    (`collect_env` is no name of the language), the second stopped at the line that reached
    past `self`, under torch's own `os`."""
    first, second = (OWN_OBJECTS[n].format(marker="/nonexistent/x")
                     for n in ("a torch name taken for a misspelling", "torch passed as self"))
    with pytest.raises(ReferenceRefused) as refused:
        run_with_torch(first, filename="one.tg")
    assert str(refused.value).splitlines()[0] == (
        "one.tg:1:19: refused: attribute 'collect_env' is not part of the .tg language "
        "(autodiff run says what PyTorch says of it)")
    with pytest.raises(ReferenceRefused) as stopped:
        run_with_torch(second, filename="two.tg")
    assert str(stopped.value).split("\n") == [
        "two.tg:6:14: stopped: attribute 'os' of module 'torch' is not part of the .tg language",
        '            self.os.system("touch /nonexistent/x")', "                 ^^"]


def test_legitimate_programs_meet_no_wall() -> None:
    """The language's own objects and names pass every wall: modules, a program's class and
    its attributes, a custom Function's ctx, registries, super(), optimizers, numpy."""
    program = (
        "import torch.nn as nn\nimport torch.optim as optim\nimport numpy as np\n"
        "from collections import OrderedDict\n"
        "class Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.k = 2\n        ctx.save_for_backward(x)\n        return x * x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n"
        "        return ctx.k * x * g\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 1)\n        self.scale = 2\n"
        "    def forward(self, x):\n        return self.fc(x) * self.scale\n"
        "torch.manual_seed(0)\nnet = Net()\nseq = nn.Sequential(OrderedDict([('lin', nn.Linear(2, 2))]))\n"
        "opt = optim.SGD(net.parameters(), lr=0.1)\nx = torch.ones(1, 2)\n"
        "loss = Sq.apply(net(seq(x))).sum()\nloss.backward()\nopt.step()\n"
        "print(net.fc.weight.shape, seq.lin.out_features, net.scale, type(net).__name__)\n"
        "print(np.ones(2).sum(), torch.__version__[:4], torch.nn.functional.relu(-x))\n")
    result = run_with_torch(program, filename="ok.tg")
    assert (result.exit_code, result.error) == (0, None), result.stderr
    assert result.stdout.splitlines()[0] == "torch.Size([1, 2]) 2 2 Net"


def test_the_memory_limit_holds_in_the_torch_child() -> None:
    with pytest.raises(ReferenceLimit, match="memory limit"):
        run_with_torch("x = torch.ones(400000000)\nprint(x.sum())\n", max_memory=200 << 20)
    assert run_with_torch("print(torch.ones(1000).sum())\n",
                          max_memory=200 << 20).stdout == "tensor(1000.)\n"


def test_an_endless_program_is_ended() -> None:
    with pytest.raises(ReferenceTimeout):
        run_with_torch("while True:\n    pass\n", timeout=15)


@pytest.mark.skipif(shutil.which("autodiff") is None, reason="no autodiff console script")
def test_a_teachers_folder_through_the_console_script(tmp_path: Path) -> None:
    """`autodiff test --reference torch` over the two programs that once ran a command, a
    program past the memory limit and a good one: the good one gets its golden, the others
    a diagnostic each, and nothing else is written."""
    marker, folder = tmp_path / "ran", tmp_path / "class"
    folder.mkdir()
    for name, key in (("one", "a torch name taken for a misspelling"),
                      ("two", "torch passed as self")):
        (folder / f"{name}.tg").write_text(OWN_OBJECTS[key].format(marker=marker))
    (folder / "big.tg").write_text("x = torch.ones(400000000)\nprint(x.sum())\n")
    (folder / "good.tg").write_text("x = torch.ones(2, requires_grad=True)\n"
                                    "(x * 3).sum().backward()\nprint(x.grad)\n")
    done = subprocess.run(["autodiff", "test", "--reference", "torch", "--max-memory", "200M",
                           "-j", "2", str(folder)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    report = done.stdout
    assert f"{folder / 'one.tg'}:1:19: refused: attribute 'collect_env'" in report
    assert f"{folder / 'two.tg'}:6:14: stopped: attribute 'os' of module 'torch'" in report
    assert "big.tg: the program reached the memory limit under torch" in report
    assert report.endswith("1 updated, 0 unchanged, 3 failed\n") and "Traceback" not in done.stderr
    assert (folder / "good.out").read_text() == "tensor([3., 3.])\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(
        ["class", "one.tg", "two.tg", "big.tg", "good.tg", "good.out"])


def test_the_run_s_files_are_the_same_in_memory_files_under_torch(tmp_path: Path) -> None:
    """Each of test_escapes' FILE_ESCAPES prints under torch what it prints under autodiff,
    fails the same way, and nothing reaches the disk."""
    names = list(FILE_ESCAPES)
    outcomes = reference_outcomes([FILE_ESCAPES[n][0] for n in names], filenames=names,
                                  timeout=600)
    for name, outcome in zip(names, outcomes):
        _, printed, error = FILE_ESCAPES[name]
        assert isinstance(outcome, ReferenceResult), (name, outcome)
        assert outcome.stdout == printed, name
        assert (outcome.error is None) if error is None else error in outcome.error, \
            (name, outcome.error)
    assert not Path("/tmp/x/marker").exists() and not Path("/tmp/x").exists()
