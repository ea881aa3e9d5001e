"""Names Python and PyTorch have that a learner's program uses as they are: the builtins
print as CPython's, the classes a program reaches print as torch's, getattr/setattr/hasattr
meet the same attribute policy as `obj.name`, `x.__class__` is `type(x)`, torch.cuda and
torch.backends.cudnn answer as a CPU build of torch 2.13 does. Each is compared with CPython
(run here by `exec`) or with torch itself where torch is installed."""

from __future__ import annotations

import contextlib
import importlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from autodiff.interpreter import default_modules, run_source
from autodiff.interpreter.pybuiltins import TypeView
from autodiff.interpreter.reference import normalize_addresses
from autodiff.interpreter.runtime import Runtime, make_builtins


def autodiff(source: str) -> tuple[str, str | None]:
    out = io.StringIO()
    result = run_source(source, "program.tg", out=out, err=io.StringIO())
    error = result.error
    return out.getvalue(), None if error is None else f"{error.error_class}: {error.message}"


def cpython(source: str, namespace: dict | None = None) -> tuple[str, str | None]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<program>", "exec"), {"__name__": "__main__", **(namespace or {})})
    except Exception as exc:  # noqa: BLE001 - the reference's own error
        return out.getvalue(), f"{type(exc).__name__}: {exc}"
    return out.getvalue(), None


BUILTIN_NAMES = sorted(set(make_builtins(Runtime())) - {"__name__"})


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_every_builtin_prints_as_cpythons(name: str) -> None:
    source = f"print({name})\nprint(str({name}), repr({name}), {name}.__name__)\nprint(type({name}))\n"
    assert autodiff(source) == cpython(source)


def test_the_new_builtins_are_there() -> None:
    assert {"getattr", "setattr", "hasattr", "id", "slice", "open"} <= set(BUILTIN_NAMES)
    assert not {"delattr", "vars", "dir", "globals", "eval"} & set(BUILTIN_NAMES)


# --- getattr, setattr, hasattr: the attribute syntax's policy, given a string ------------

OBJECTS = {
    "t": "torch.ones(2, requires_grad=True)", "g": "(torch.ones(2, requires_grad=True) * 2).grad_fn",
    "m": "nn.Linear(2, 1)", "net": "Net()", "a": "A()", "torch": "torch", "math": "math",
    "items": "[1, 2]", "text": "'ab'", "n": "1", "p": "print", "f": "f", "cls": "type(torch.ones(1))",
    "size": "torch.ones(2).shape", "opt": "torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)",
}
NAMES = ["shape", "grad", "weight", "append", "sqrt", "fc", "scale", "own", "nope", "__dict__",
         "__class__", "__name__", "__init__", "__globals__", "__subclasses__", "_tg_public",
         "tg_type_name", "tg_subclass", "array", "_grad", "_forward_hooks", "_modules", "_own",
         "register_forward_hook", "untyped_storage", "real", "param_groups"]
PRELUDE = ("import math\nimport torch.nn as nn\ndef f(x):\n    return x\n"
           "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.fc = nn.Linear(2, 1)\n        self.scale = 2\n"
           "class A:\n    def __init__(self):\n        self.own = 1\n        self._own = 2\n")


def _outcome(source: str) -> tuple[str, str | None, bool]:
    out = io.StringIO()
    result = run_source(source, "program.tg", out=out, err=io.StringIO())
    error = result.error
    if error is None:
        return normalize_addresses(out.getvalue()), None, False
    return "", f"{error.error_class}: {error.message}", error.exception is not None


@pytest.mark.parametrize("obj", list(OBJECTS))
def test_getattr_hasattr_and_setattr_answer_as_the_syntax(obj: str) -> None:
    """For every object and name: getattr is `obj.name` (its value, or the same error, as
    catchable or not); hasattr is True, False where the syntax raises AttributeError, or the
    syntax's refusal where that says 'not supported'; getattr's default stands in for
    exactly what hasattr answers False for; setattr is `obj.name = value`."""
    head = PRELUDE + f"obj = {OBJECTS[obj]}\n"
    for name in NAMES:
        syntax = _outcome(head + f"print(obj.{name})\n")
        assert _outcome(head + f"print(getattr(obj, '{name}'))\n") == syntax, name
        has = _outcome(head + f"print(hasattr(obj, '{name}'))\n")
        default = _outcome(head + f"x = getattr(obj, '{name}', 'fallback')\nprint(x == 'fallback')\n")
        read = _outcome(head + f"x = obj.{name}\nprint(False)\n")  # (a stand-in reads, fails in use)
        if read[1] is None:
            assert has == ("True\n", None, False) and default == read, name
        elif read[1].startswith("AttributeError") and "is not supported" not in read[1]:
            assert has == ("False\n", None, False), name
            assert default == ("True\n", None, False), name
        else:  # autodiff's own limit stays one, whichever way the name is given
            assert has[1] == default[1] == read[1] and not has[2], (name, has, read)
        written = _outcome(head + f"obj.{name} = 3\nprint(obj.{name})\n")
        assert _outcome(head + f"setattr(obj, '{name}', 3)\nprint(obj.{name})\n") == written, name


def test_setattr_registers_what_a_module_holds() -> None:
    source = ("import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        for i in range(2):\n"
              "            setattr(self, 'layer' + str(i), nn.Linear(2, 2))\n"
              "        setattr(self, 'w', nn.Parameter(torch.ones(1)))\n"
              "    def forward(self, x):\n        return getattr(self, 'layer1')(self.layer0(x))\n"
              "net = Net()\nprint(net)\nprint([n for n, _ in net.named_parameters()])\n"
              "print(hasattr(net, 'layer1'), hasattr(net, 'layer2'), getattr(net, 'w').shape)\n")
    out, error = autodiff(source)
    assert error is None and "(layer1): Linear(in_features=2, out_features=2, bias=True)" in out
    assert "['w', 'layer0.weight', 'layer0.bias', 'layer1.weight', 'layer1.bias']" in out
    assert out.endswith("True False torch.Size([1])\n")


# --- x.__class__ -----------------------------------------------------------------------

CLASS_OF = ["torch.ones(1)", "torch.ones(1).shape", "torch.ones(1).dtype", "torch.device('cpu')",
            "(torch.ones(1, requires_grad=True) * 2).grad_fn", "nn.Linear(1, 1)", "Net()", "A()",
            "1", "1.5", "'s'", "[1]", "(1,)", "{}", "{1}", "None", "True", "print", "len", "A",
            "nn.Linear", "torch.Tensor", "range(2)", "nn.Linear(1, 1).weight", "slice(1, 2)",
            "torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)", "torch.Generator()",
            "torch.no_grad()", "torch.ones(2).max(0)", "ValueError('x')", "math", "f"]


@pytest.mark.parametrize("expression", CLASS_OF)
def test_class_is_what_type_gives(expression: str) -> None:
    source = PRELUDE + (f"x = {expression}\nprint(x.__class__, x.__class__ is type(x), "
                        "x.__class__.__name__ == type(x).__name__, x.__class__.__class__)\n")
    out, error = autodiff(source)
    assert error is None, error
    assert " True True <class " in out


# every name of a class that could lead out of the sandbox, read from `x.__class__`
CLASS_TAILS = ["__subclasses__()", "__dict__", "__mro__", "__init__", "__bases__", "__base__",
               "__new__", "__call__", "__getattribute__", "__qualname__", "mro()",
               "__init__.__globals__", "__reduce_ex__(2)", "cls", "display", "_wrap", "tg_subclass",
               "__class__.__subclasses__()", "__class__('X', (), {})", "__class__.__dict__"]


@pytest.mark.parametrize("tail", CLASS_TAILS)
@pytest.mark.parametrize("expression", ["torch.ones(1)", "A()", "Net()", "(1)", "[1]", "'s'",
                                        "print", "(torch.ones(1, requires_grad=True) * 2).grad_fn",
                                        "torch.ones(1).shape", "torch.device('cpu')"])
def test_nothing_escapes_through_the_class(expression: str, tail: str, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = PRELUDE + f"print({expression}.__class__.{tail})\n"
    out, error = autodiff(source)
    assert error is not None, f"not refused: {expression}.__class__.{tail} printed {out!r}"
    assert error.split(":")[0] in {"AttributeError", "NotImplementedError", "TypeError"}, error
    assert list(tmp_path.iterdir()) == []


def test_a_scripts_functions_and_classes_are_in_main():
    source = ("class A:\n    pass\ndef f():\n    pass\n"
              "print(A.__module__, A().__class__.__module__, f.__module__, (lambda: 1).__module__)\n")
    assert autodiff(source) == cpython(source) == ("__main__ __main__ __main__ __main__\n", None)


@pytest.mark.parametrize("source", [
    "t = torch.ones(1)\nt.__class__ = int\n", "class A:\n    pass\nsetattr(A(), '__class__', int)\n",
    "del torch.ones(1).__class__\n", "t = torch.ones(1)\nt.__class__ += 1\n",
    "print(getattr(torch.ones(1), '__class__').__dict__)\n",
    "print(getattr(getattr(torch.ones(1), '__class__'), '__subclasses__')())\n",
    "print(getattr(torch.ones(1), '__dict__', None) is None, getattr(torch.ones(1), '__dict__'))\n",
])
def test_the_class_is_read_only(source: str) -> None:
    out, error = autodiff(source)
    assert error is not None and error.split(":")[0] in {
        "AttributeError", "NotImplementedError", "TypeError"}, (out, error)


# --- torch: the classes a program reaches, torch.cuda, torch.backends.cudnn --------------

def _class_paths() -> list[str]:
    """Every class-valued public name of the torch namespaces a program imports."""
    found = []
    for path, namespace in sorted(default_modules().items()):
        if path.startswith("torch"):
            found += [f"{path}.{name}" for name in sorted(getattr(namespace, "_tg_public", ()))
                      if isinstance(getattr(namespace, name), (type, TypeView))]
    return found


OBJECT_TYPES = ["torch.ones(1)", "torch.ones(1).shape", "torch.ones(1).dtype", "torch.device('cpu')",
                "(torch.ones(1, requires_grad=True) * 2).grad_fn",
                "(torch.ones(1, requires_grad=True) * 2).grad_fn.next_functions[0][0]",
                "torch.nn.Linear(1, 1)", "torch.nn.Linear(1, 1).weight", "torch.Generator()",
                "torch.manual_seed(0)", "torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), lr=0.1)",
                "torch.optim.lr_scheduler.StepLR(torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), "
                "lr=0.1), 1)", "torch.utils.data.TensorDataset(torch.ones(2))",
                "torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(2)))",
                "iter(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(2))))",
                "torch.no_grad()", "torch.enable_grad()", "torch.ones(2).max(0)", "torch.ones(2).sort()",
                "torch.ones(1, requires_grad=True).register_hook(print)", "torch.nn.MSELoss()",
                "torch.nn.Sequential()", "torch.backends.cudnn", "torch.nn.Parameter(torch.ones(1))",
                "torch.float32", "torch.Size([1])", "torch.Tensor", "torch.nn.Module", "torch.device",
                "torch.cuda.is_available", "print", "len"]


def test_every_class_a_program_reaches_prints_as_torchs() -> None:
    torch = pytest.importorskip("torch")
    paths = _class_paths()
    assert len(paths) > 60 and {"torch.device", "torch.Size", "torch.Generator", "torch.Tensor",
                                "torch.nn.Linear", "torch.optim.SGD",
                                "torch.utils.data.DataLoader"} <= set(paths)
    lines = [f"print({p})" for p in paths] + [f"print(type({e}))\nprint({e}.__class__)"
                                             for e in OBJECT_TYPES]
    source = "import torch\n" + "\n".join(lines) + "\n"
    ours, theirs = autodiff(source), cpython(source, {"torch": torch})
    assert theirs[1] is None, theirs[1]
    assert ours[1] is None, ours[1]
    for mine, real in zip(ours[0].splitlines(), theirs[0].splitlines(), strict=True):
        assert mine == real


CUDA = """
import torch
print(torch.cuda.is_available(), torch.cuda.device_count())
print(torch.cuda.manual_seed(0), torch.cuda.manual_seed_all(0), torch.cuda.manual_seed(1.5),
      torch.cuda.manual_seed(2 ** 70), torch.cuda.manual_seed_all(torch.tensor(3)))
print(torch.cuda.set_device(-1))
for args in [(0,), ("cpu",), ("cuda",), ("cuda:0",), (None,), (1.5,), (True,),
             (torch.device("cpu"),), (torch.device("cuda", 1),), (), (0, 1)]:
    try:
        torch.cuda.set_device(*args)
    except (AttributeError, ValueError, TypeError) as e:
        print(type(e).__name__, e)
for seed in ["a", None]:
    try:
        torch.cuda.manual_seed(seed)
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
for args in [(), (0,), ("cpu",)]:
    try:
        torch.cuda.synchronize(*args)
    except AssertionError as e:
        print("AssertionError", e)
print(torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark,
      torch.backends.cudnn.enabled, torch.backends.cudnn.allow_tf32)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
print(torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark,
      torch.backends.cudnn.is_available(), torch.backends.cudnn.version())
for v in [1, "x", None, 1.0]:
    try:
        torch.backends.cudnn.benchmark = v
    except RuntimeError as e:
        print("RuntimeError", e)
print(type(torch.backends.cudnn), hasattr(torch.backends.cudnn, "deterministic"))
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(device, torch.cuda.synchronize, torch.cuda.is_available)
"""


def test_cuda_answers_as_a_cpu_build_of_torch() -> None:
    torch = pytest.importorskip("torch")
    ours = autodiff(CUDA.lstrip())
    assert ours[1] is None, ours[1]
    assert normalize_addresses(ours[0]) == normalize_addresses(cpython(CUDA.lstrip(), {"torch": torch})[0])


def test_each_run_starts_with_cudnns_defaults() -> None:
    assert autodiff("torch.backends.cudnn.deterministic = True\n") == ("", None)
    assert autodiff("print(torch.backends.cudnn.deterministic)\n") == ("False\n", None)


def test_the_reference_runs_these_programs() -> None:
    """`--reference torch` runs a program using each name, printing what autodiff prints."""
    from autodiff.interpreter.reference import run_with_torch, torch_available

    if not torch_available():
        pytest.skip("torch is not installed")
    program = (CUDA.lstrip() + "import torch.nn as nn\nclass Net(nn.Module):\n"
               "    def __init__(self):\n        super().__init__()\n"
               "        setattr(self, 'fc', nn.Linear(2, 1))\n"
               "net = Net()\nprint(getattr(net, 'fc'), hasattr(net, 'fc'), hasattr(net, 'nope'),\n"
               "      getattr(net, 'nope', 0), id(net) == id(net), slice(1, None, 2),\n"
               "      torch.arange(5)[slice(1, None, 2)], net.__class__, torch.ones(1).__class__,\n"
               "      print, getattr, torch.device, torch.Size, torch.Generator)\n")
    result = run_with_torch(program, filename="names.tg")
    assert (result.exit_code, result.error) == (0, None), result.stderr
    assert result.stdout == normalize_addresses(autodiff(program)[0])


SAMPLE = ("import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
          "        super().__init__()\n        setattr(self, 'fc', nn.Linear(2, 1))\n"
          "    def forward(self, x):\n        return getattr(self, 'fc')(x)\n"
          "torch.backends.cudnn.deterministic = True\ntorch.cuda.manual_seed_all(0)\n"
          "net = Net()\nx = torch.ones(1, 2, requires_grad=True)\ny = net(x)[:, slice(0, 1)].sum()\n"
          "y.backward()\nprint(hasattr(net, 'fc'), id(x) == id(x), x.__class__, print, torch.Size)\n")


@pytest.mark.parametrize("command", [["run"], ["explain"], ["graph"], ["check"], ["repl"]])
def test_the_commands_take_a_program_using_them(command: list[str], tmp_path: Path) -> None:
    path = tmp_path / "names.tg"
    path.write_text(SAMPLE)
    args = command + ([] if command == ["repl"] else [str(path)])
    done = subprocess.run([sys.executable, "-c", "from autodiff.cli.main import app; app()", *args],
                          input=SAMPLE + "\n" if command == ["repl"] else None, capture_output=True,
                          text=True, timeout=300, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    if command in (["run"], ["repl"]):  # (the others show their views, not the program's output)
        assert "True True <class 'torch.Tensor'> <built-in function print> <class 'torch.Size'>" \
            in done.stdout


def test_the_generated_class_paths_name_torchs_classes() -> None:
    torch = pytest.importorskip("torch")
    from autodiff.engine.core.torch_class_paths import CLASS_PATHS

    assert torch.__version__.startswith("2.13")
    for path in CLASS_PATHS.values():
        module, _, name = path.rpartition(".")
        assert repr(getattr(importlib.import_module(module), name)) == f"<class '{path}'>", path


def test_a_script_knows_its_own_file(tmp_path):
    path = tmp_path / "prog.tg"
    out = io.StringIO()
    result = run_source("print(__file__)\n", str(path), out=out, err=io.StringIO())
    assert result.error is None and out.getvalue() == f"{path.resolve()}\n"
    out = io.StringIO()
    assert run_source("print(__file__)\n", "<stdin>", out=out, err=io.StringIO()).error is not None
