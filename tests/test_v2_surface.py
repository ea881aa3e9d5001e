"""The v2 surface around the engine: imports (and the names autodiff lacks), grad-mode
decorators, `type()`, the class statement's interface, NumPy data with tensors. What PyTorch
prints for these is checked by the samples' goldens (samples/v2_*.tg); here, the behaviour
that needs no torch to check."""

from __future__ import annotations

import io

import pytest

from autodiff.interpreter import run_source
from autodiff.parser import parse



def run(source: str, modules: dict | None = None) -> tuple[str, object]:
    out = io.StringIO()
    result = run_source(source, "prog.tg", out=out, err=io.StringIO(), modules=modules)
    return out.getvalue(), result.error


# ---- imports ----

@pytest.mark.parametrize("source, printed", [
    ("from torch import tensor, ones as o\nprint(tensor([1.0]), o(1))\n", "tensor([1.]) tensor([1.])\n"),
    ("from torch.nn import functional as F\nprint(F.relu(torch.tensor(-1.0)))\n", "tensor(0.)\n"),
    ("import torch.nn.functional as F\nfrom torch.nn.functional import relu\nprint(relu is F.relu)\n",
     "True\n"),
    ("from math import pi, sqrt\nprint(sqrt(pi) > 1)\n", "True\n"),
    ("from math import *\nprint(sqrt(4.0), e > 2)\n", "2.0 True\n"),
    ("import torch.nn\nprint(torch.nn.functional.relu(torch.tensor(-1.0)))\n", "tensor(0.)\n"),
    ("from torch.autograd import grad\nx = torch.tensor(2.0, requires_grad=True)\n"
     "print(grad(x * x, x))\n", "(tensor(4.),)\n"),
    ("import numpy as np\nfrom numpy import array\nprint(array([1, 2]))\n", "[1 2]\n"),
    ("from numpy.random import seed, rand\nseed(0)\nprint(rand() < 1)\n", "True\n"),
    ("import torch.optim as optim\nimport torch.autograd.functional\nfrom torch.func import grad\n"
     "print('imported')\n", "imported\n"),
])
def test_import_forms(source, printed):
    out, error = run(source)
    assert error is None, error
    assert out == printed


@pytest.mark.parametrize("source, message", [
    ("import torch.optim as optim\noptim.LBFGS([], lr=0.1)\n", "torch.optim.LBFGS is not supported by autodiff"),
    ("from torch.func import linearize\nlinearize(len, 1)\n",
     "torch.func.linearize is not supported by autodiff"),
    ("from torch.func import functional_call\nfunctional_call(len, {}, ())\n",
     "torch.func.functional_call is not supported by autodiff"),
    ("x = torch.ones(2)\nx.share_memory_()\n", "Tensor.share_memory_ is not supported by autodiff"),
    ("import torch.nn as nn\nnn.LazyConvTranspose2d(1, 3)\n",
     "torch.nn.LazyConvTranspose2d is not supported by autodiff"),
    ("torch.linalg.inv(torch.eye(2))\n", "torch.linalg.inv is not supported by autodiff"),
    ("import math\nmath.fsum([1.0])\n", "math.fsum is not supported by autodiff"),
    ("import numpy as np\nnp.fft.fft([1.0])\n", "numpy.fft is not supported in .tg programs"),
    ("print(torch.fft)\n", "torch.fft is not supported by autodiff"),
])
def test_names_pytorch_has_stop_where_used(source, message):
    out, error = run(source)
    assert error is not None and error.error_class == "NotImplementedError"
    assert error.message == message and error.exit_code == 2


@pytest.mark.parametrize("source, line", [
    ("from torch.nn import Linaer\n", "ImportError: cannot import name 'Linaer' from 'torch.nn' (unknown location)"),
    ("from torch import tensr\n", "ImportError: cannot import name 'tensr' from 'torch' (unknown location)"),
    ("import torch.optim as optim\noptim.SGDD\n", "AttributeError: module 'torch.optim' has no attribute 'SGDD'"),
    ("torch.onse(3)\n", "AttributeError: module 'torch' has no attribute 'onse'"),
    ("torch.ones(2).sizee()\n", "AttributeError: 'Tensor' object has no attribute 'sizee'"),
])
def test_misspelt_names_fail_as_python(source, line):
    out, error = run(source)
    assert f"{error.error_class}: {error.message}" == line


@pytest.mark.parametrize("source", ["import subprocess\n", "import torch.utils.hipify\n", "from scipy import stats\n",
                                    "import numpy.linalg as la\n", "from torch import *\n"])
def test_other_modules_are_refused_before_running(source):
    out, error = run("print('ran')\n" + source)
    assert out == "" and error.exit_code == 2 and "not supported by autodiff" in error.message


def test_an_unsupported_name_is_not_caught_by_except():
    out, error = run("import torch.optim as optim\ntry:\n    optim.LBFGS([])\nexcept Exception:\n"
                     "    print('caught')\n")
    assert out == "" and error.error_class == "NotImplementedError"


# ---- grad-mode decorators ----

def test_grad_mode_decorators():
    out, error = run(
        "x = torch.ones(2, requires_grad=True)\n"
        "@torch.no_grad()\ndef a(t):\n    return t * 2\n"
        "@torch.no_grad\ndef b(t):\n    return t * 2\n"
        "@torch.inference_mode()\ndef c(t):\n    return t * 2\n"
        "@torch.inference_mode\ndef d(t):\n    return t * 2\n"
        "@torch.enable_grad()\ndef e(t):\n    return t * 2\n"
        "print([f(x).requires_grad for f in (a, b, c, d)], torch.is_grad_enabled())\n"
        "with torch.no_grad():\n    print(e(x).requires_grad, torch.is_grad_enabled())\n"
        "with torch.inference_mode(False):\n    print((x * 2).requires_grad)\n"
        "print(a.__name__ if False else a)\n")
    assert error is None, error
    lines = out.splitlines()
    assert lines[:3] == ["[False, False, False, False] True", "True False", "True"]
    assert lines[3].startswith("<function a at 0x")


# ---- type() ----

def test_type_prints_as_python_and_torch_print_it():
    out, error = run(
        "x = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n"
        "print(type(x), type(y.grad_fn), type(y.grad_fn.next_functions[0][0]), type(x.dtype))\n"
        "print(type(x.shape), type(torch), type(torch.max(torch.ones(2, 2), 0)), type(x.sum))\n"
        "print(type(x) == torch.Tensor, isinstance(x, type(y)), type(1) is int, type(type(1)))\n"
        "print(type(torch.no_grad()), type(torch.Generator()), type(print), type(lambda: 0))\n")
    assert error is None, error
    assert out.splitlines() == [
        "<class 'torch.Tensor'> <class 'SumBackward0'> <class 'MulBackward0'> <class 'torch.dtype'>",
        "<class 'torch.Size'> <class 'module'> <class 'torch.return_types.max'> "
        "<class 'builtin_function_or_method'>",
        "True True True <class 'type'>",
        "<class 'torch.autograd.grad_mode.no_grad'> <class 'torch._C.Generator'> "
        "<class 'builtin_function_or_method'> <class 'function'>"]


# ---- classes ----

NET = '''
import torch.nn as nn
class Net(nn.Module):
    """A shifting layer."""
    def __init__(self, extra):
        super().__init__()
        self.extra = extra
        self.factor = 2
    def forward(self, x):
        return x * self.factor + self.extra
    @staticmethod
    def describe(n):
        return f"{n} layers"
class Deeper(Net):
    def __init__(self):
        super(Deeper, self).__init__(10)
        self.extra += 5
    def forward(self, x):
        return super().forward(x) - 1
'''


def test_class_statement_makes_the_class_through_its_base():
    out, error = run(NET + "n = Net(1)\nprint(n(3), n.forward(1), Net.describe(2), n.describe(3))\n"
                     "d = Deeper()\nprint(d(1), d.extra, isinstance(d, Net), type(d), Net)\n"
                     "print(n.forward, Net.forward)\n")
    assert error is None, error
    lines = out.splitlines()
    assert lines[0] == "7 3 2 layers 3 layers"
    assert lines[1] == "16 15 True <class '__main__.Deeper'> <class '__main__.Net'>"
    assert lines[2].startswith("<bound method Net.forward of Net()> <function Net.forward at 0x")


def test_members_reach_tg_subclass(monkeypatch):
    from autodiff.engine.nn.module import Module

    seen = []
    made = Module.tg_subclass.__func__

    def recording(cls, name, members):
        seen.append((cls.__name__, name, sorted(members)))
        return made(cls, name, members)

    monkeypatch.setattr(Module, "tg_subclass", classmethod(recording))
    out, error = run(NET)
    assert error is None, error
    assert seen == [("Module", "Net", ["__init__", "describe", "forward"]),
                    ("Net", "Deeper", ["__init__", "forward"])]


def test_a_function_subclass_runs_forward_and_backward():
    out, error = run("class Cube(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                     "        ctx.save_for_backward(x)\n        return x ** 3\n    @staticmethod\n"
                     "    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        return 3 * x ** 2 * g\n"
                     "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = Cube.apply(x).sum()\n"
                     "y.backward()\nprint(x.grad)\n")
    assert (out, error) == ("tensor([ 3., 12.])\n", None)


def test_classes_in_functions_close_over_their_locals():
    out, error = run("import torch.nn as nn\ndef make(k):\n    class Scaled(nn.Module):\n"
                     "        def forward(self, x):\n            return [x * k for _ in range(2)]\n"
                     "    return Scaled()\nm = make(3)\nprint(m(2), m)\n")
    assert error is None, error
    assert out == "[6, 6] Scaled()\n"


def test_a_class_body_is_not_a_scope_its_methods_see():
    out, error = run("import torch.nn as nn\nclass A(nn.Module):\n    def helper(self):\n        return 1\n"
                     "    def forward(self):\n        return helper(self)\nA()()\n")
    assert (error.error_class, error.message) == ("NameError", "name 'helper' is not defined")


@pytest.mark.parametrize("body, says", [
    ("    scale, shift = 2, 1\n", "assignments are not supported in a class body by autodiff"),
    ("    __scale = 2\n", "the class attribute name '__scale' is not supported"),
    ("    _tg_scale = 2\n", "the class attribute name '_tg_scale' is not supported"),
    ("    print(1)\n", "expression statements are not supported in a class body by autodiff"),
    ("    def __helper(self):\n        pass\n", "the method name '__helper' is not supported"),
    ("    def tg_subclass(self):\n        pass\n", "the method name 'tg_subclass' is not supported"),
])
def test_a_class_body_holds_only_methods(body, says):
    out, error = run("import torch.nn as nn\nprint('ran')\nclass A(nn.Module):\n" + body)
    assert out == "" and error.exit_code == 2 and error.message.startswith(says)


# ---- NumPy and tensors ----

def test_numpy_and_tensors_share_memory_as_pytorch_does():
    out, error = run("import numpy as np\na = np.ones(3)\nt = torch.from_numpy(a)\na += 1\nprint(t)\n"
                     "t.add_(1)\nprint(a)\nb = torch.ones(2)\nn = b.numpy()\nb += 1\nprint(n)\n"
                     "print(torch.tensor(np.arange(3)), torch.tensor(np.ones(2, dtype=np.float32)))\n")
    assert error is None, error
    assert out.splitlines() == ["tensor([2., 2., 2.], dtype=torch.float64)", "[3. 3. 3.]", "[2. 2.]",
                                "tensor([0, 1, 2]) tensor([1., 1.])"]


@pytest.mark.parametrize("source, line", [
    ("torch.ones(1, requires_grad=True).numpy()\n",
     "RuntimeError: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."),
    ("torch.from_numpy([1.0])\n", "TypeError: expected np.ndarray (got list)"),
    ("torch.from_numpy(torch.ones(1))\n", "TypeError: expected np.ndarray (got Tensor)"),
])
def test_numpy_bridge_errors_are_pytorchs(source, line):
    out, error = run(source)
    assert f"{error.error_class}: {error.message}" == line


def test_each_run_has_its_own_numpy_random_state():
    source = "import numpy as np\nprint(np.random.rand())\nnp.random.seed(1)\n"
    assert run(source)[0] == run(source)[0]


# ---- the grammar ----

def test_lambda_takes_every_operator_after_it():
    body = parse("f = lambda x: x + 1 if x else x * 2\n").body[0].value.body
    assert type(body).__name__ == "IfExp" and type(body.body).__name__ == "BinOp"


def test_comprehension_conditions_are_not_conditional_expressions():
    comp = parse("y = [x for x in xs if x if not x]\n").body[0].value.generators[0]
    assert len(comp.ifs) == 2


def test_the_engines_classes_print_as_pytorchs_classes():
    """`print(nn.Linear)`, `type(model)`: PyTorch's class paths, never the engine's modules."""
    torch = pytest.importorskip("torch")
    import importlib

    from autodiff.engine import api

    checked = 0
    for namespace in (api.nn, api.optim_namespace, api.optim_namespace.lr_scheduler,
                      api.utils.data, api.autograd):
        module = importlib.import_module(namespace._tg_module_name)
        for name in sorted(namespace._tg_public):
            ours = getattr(namespace, name)
            if isinstance(ours, type) and ours.__module__.startswith("autodiff."):
                theirs = getattr(module, name, None)
                assert theirs is not None, f"{namespace._tg_module_name}.{name}"
                assert repr(ours) == repr(theirs), name
                checked += 1
    assert checked >= 40
    out, error = run("import torch\nfrom torch import nn\nm = nn.Linear(1, 1)\n"
                     "print(type(m), nn.ReLU, type(torch.optim.SGD(m.parameters(), lr=0.1)))\n")
    assert error is None and "autodiff" not in out
    assert out == f"{type(torch.nn.Linear(1, 1))} {torch.nn.ReLU} {torch.optim.SGD}\n"


def test_a_dataloaders_epoch_prints_and_refuses_as_torchs():
    torch = pytest.importorskip("torch")
    source = ("from torch.utils import data\nimport torch\n"
              "it = iter(data.DataLoader(data.TensorDataset(torch.arange(6.)), 4))\n"
              "print(type(it))\n")
    out, error = run(source)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(6.)), 4)
    assert error is None and out == f"{type(iter(loader))}\n"
    out, error = run(source + "it._loader\n")
    assert error is not None and "_loader" in str(error) and "autodiff" not in str(error)
