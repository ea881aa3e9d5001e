"""The escape suite: every attempt to reach host Python from a .tg program is refused.

Each entry runs against the real engine; it must stop with a clear diagnostic (no
traceback of ours), and none may leave a trace on the machine.
"""

import io

import pytest

from autodiff.interpreter import run_source

T = "t = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (t * t).sum()\n"

DUNDER_CHAINS = [
    "t.__class__", "t.__class__.__mro__", "t.__dict__", "t.__init__.__globals__",
    "y.grad_fn.__class__", "y.grad_fn.__init__", "y.grad_fn.next_functions[0][0].__class__",
    "y.grad_fn.next_functions[0][0].variable.__class__", "t.dtype.__class__", "t.shape.__class__",
    "t.backward.__func__", "t.backward.__globals__", "t.sum.__self__", "torch.__dict__",
    "torch.tensor.__globals__", "torch.autograd.__dict__", "torch.Tensor.__subclasses__",
    "torch.Tensor.__mro__", "torch.nn.__class__", "math.__dict__", "math.sqrt.__self__",
    "print.__self__", "len.__module__", "range(3).__class__", "range.__subclasses__",
    "[].__class__.__base__", "().__class__", "''.__class__.__mro__", "'a'.join.__self__",
    "(1).__class__", "(1.5).__class__", "True.__class__", "None.__class__",
    "f.__globals__", "f.__code__", "f.__closure__", "f.__builtins__", "f.__defaults__",
    "isinstance.__self__", "str.__dict__", "list.__dict__", "t._version", "t._grad", "t.array",
    "y.grad_fn.op", "y.grad_fn.saved", "y.grad_fn.params", "t.dtype.np", "t.storage",
    "str.format", "t.__reduce__", "t.__reduce_ex__(2)", "t.__getattribute__('array')",
    "torch.Tensor._wrap", "torch.tensor.__code__", "(t.sum).__func__",
]
FORBIDDEN_NAMES = ["getattr(t, 'array')", "setattr(t, 'x', 1)", "eval('1')", "exec('x = 1')",
                   "compile('1', 'f', 'eval')", "open('/etc/passwd')", "__import__('os')",
                   "globals()", "vars()", "locals()", "type(t)", "dir(t)", "input()",
                   "breakpoint()", "help()", "memoryview(b'x')", "object()", "super()",
                   "__builtins__", "exit()", "quit()", "delattr(t, 'grad')", "hasattr(t, 'x')",
                   "classmethod(len)", "staticmethod(len)", "property()", "id(t)", "hash(t)"]
IMPORTS = ["import os", "import sys", "import subprocess", "import numpy", "import numpy as np",
           "import torch.utils", "import builtins", "from os import system",
           "from torch import tensor", "import importlib", "import torch.nn.functional.os",
           "import math as os\nimport os"]
FORMAT_STRINGS = ["'{0.__class__}'.format(t)", "'{0.grad_fn.__init__}'.format(y)",
                  "'{0[0].__class__}'.format([t])", "'{x.__class__}'.format(x=t)",
                  "f'{t.__class__}'", "f'{y.grad_fn.__class__.__mro__}'",
                  "f'{t.array}'", "'{0.array}'.format(t)"]
TORCH_IO = ["torch.load('x.pt')", "torch.save(t, 'x.pt')", "torch.from_numpy(t)",
            "torch.utils", "torch.ops", "torch.numpy()", "t.numpy()", "torch.hub",
            "torch.compile(f)", "torch.jit"]
# random numbers: the Generator object, torch.nn.init and the functions behind them
RANDOM = ["torch.manual_seed(0).__class__", "torch.manual_seed(0)._stream",
          "torch.manual_seed(0)._words(3)", "torch.Generator()._next_normal",
          "torch.Generator().__init__", "torch.Generator.__dict__", "torch.Generator.__mro__",
          "torch.Generator().manual_seed.__self__", "torch.nn.init.__dict__",
          "torch.nn.init._fans", "torch.nn.init.math", "torch.nn.init.uniform_.__globals__",
          "torch.rand.__globals__", "torch.nn.functional.dropout.__code__",
          "torch.randn(2).normal_.__func__", "import torch.nn.init.os",
          "g = torch.Generator()\ng._seed = 1", "g = torch.Generator()\ng.initial_seed = len",
          "torch.nn.init.uniform_ = print"]
# nn, optim, autograd.Function, functional autograd, hooks: the classes and the objects they make
NN = ["torch.nn.Linear(2, 1).__dict__", "torch.nn.Linear(2, 1).__class__",
      "torch.nn.Linear(2, 1)._parameters", "torch.nn.Linear(2, 1)._modules",
      "torch.nn.Linear(2, 1).weight.__class__", "torch.nn.Linear(2, 1).forward.__func__",
      "torch.nn.Linear(2, 1).forward.__globals__", "torch.nn.Linear.__subclasses__",
      "torch.nn.Module.__subclasses__()", "torch.nn.Linear.__mro__", "torch.nn.Linear.__base__",
      "torch.nn.Module.tg_subclass", "torch.nn.Module.tg_subclass('X', {})",
      "torch.nn.Module.tg_super_init", "torch.nn.Linear(2, 1)._tg_readable",
      "torch.nn.Sequential(torch.nn.ReLU())[0].__dict__", "torch.nn.Sequential()._forget",
      "torch.nn.Linear(2, 1).parameters().gi_frame", "torch.nn.Linear(2, 1).parameters().send",
      "torch.nn.Linear(2, 1).state_dict().__class__", "torch.nn.Linear(2, 1).state_dict().fromkeys",
      "torch.nn.Linear(2, 1).state_dict().move_to_end", "torch.nn.Parameter.__new__",
      "torch.nn.Parameter(t).__class__", "torch.nn.Parameter(t)._parameter",
      "torch.nn.MSELoss().__dict__", "torch.nn.Linear(2, 1).__init__",
      "torch.optim.SGD([t], lr=0.1).__dict__", "torch.optim.SGD([t], lr=0.1)._update_group",
      "torch.optim.SGD([t], lr=0.1).state.default_factory", "torch.optim.SGD.__init__",
      "torch.optim.Optimizer.__subclasses__", "torch.optim.Adam([t]).step.__func__",
      "torch.autograd.Function.__subclasses__", "torch.autograd.Function.tg_subclass",
      "torch.autograd.Function.apply.__func__", "torch.autograd.Function.apply.__self__",
      "torch.autograd.functional.jacobian.__globals__", "torch.func.grad(f).__closure__",
      "torch.func.grad(f).__wrapped__", "torch.func.grad.__code__", "t.register_hook(f).__dict__",
      "t.register_hook(f)._hooks", "t.register_hook.__self__", "torch.autograd.Variable.__new__",
      "torch.autograd.Variable(t).__class__", "torch.nn.functional.linear.__globals__",
      "m = torch.nn.Linear(2, 1)\nm.forward = print", "m = torch.nn.Linear(2, 1)\nm.__class__ = int",
      "m = torch.nn.Linear(2, 1)\nm._parameters = {}", "m = torch.nn.Linear(2, 1)\nm.parameters = len",
      "m = torch.nn.Linear(2, 1)\nm.__dict__ = {}", "o = torch.optim.SGD([t], lr=0.1)\no.step = print",
      "o = torch.optim.SGD([t], lr=0.1)\no.param_groups = []", "torch.nn.Linear = print",
      "torch.optim.SGD = print", "torch.autograd.Function.apply = print"]
ASSIGNMENTS = ["t.__class__ = int", "t.array = 1", "y.grad_fn.op = None", "torch.tensor = len",
               "math.pi = 3", "f.__code__ = None", "t.backward = print", "torch.Tensor.sum = len"]
# a class's plain functions, reached through the class, with a `self` of another type
CLASS_FUNCTIONS = ["torch.Tensor.add(f, 1)", "torch.Tensor.backward(print)",
                   "torch.Tensor.detach_(math)", "torch.Tensor.requires_grad_(torch)",
                   "torch.Tensor.zero_([1.0])", "torch.Size.numel(f)", "torch.Tensor.sum()",
                   "torch.Tensor.retain_grad(y.grad_fn)", "torch.Tensor.item(t.dtype)"]

ATTEMPTS = ([("dunder", e) for e in DUNDER_CHAINS] + [("builtin", e) for e in FORBIDDEN_NAMES]
            + [("import", e) for e in IMPORTS] + [("format", e) for e in FORMAT_STRINGS]
            + [("torch-io", e) for e in TORCH_IO] + [("assign", e) for e in ASSIGNMENTS]
            + [("random", e) for e in RANDOM] + [("class", e) for e in CLASS_FUNCTIONS]
            + [("nn", e) for e in NN])


def _as_statement(attempt: str) -> str:
    prelude = "import math\ndef f(a):\n    return a\n" + T
    if attempt.startswith(("import ", "from ")) or " = " in attempt:
        return prelude + attempt + "\n"
    return prelude + f"print({attempt})\n"


@pytest.mark.parametrize("kind,attempt", ATTEMPTS, ids=[f"{k}:{a}" for k, a in ATTEMPTS])
def test_escape_attempt_is_refused(kind, attempt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = _as_statement(attempt)
    out = io.StringIO()
    result = run_source(source, "escape.tg", out=out, err=io.StringIO())
    assert result.error is not None, f"not refused: {attempt!r} printed {out.getvalue()!r}"
    assert result.error.error_class in {"AttributeError", "NameError", "ValueError",
                                        "SyntaxError", "ImportError", "TypeError"}
    rendered = result.error.render(source)
    assert rendered.startswith("escape.tg:") and "Traceback" not in rendered
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_a_module_whose_forward_reaches_a_dunder_is_refused():
    """A program's method runs in the sandbox wherever it is called from: a Module made from
    a .tg forward (as the interpreter's class statement makes it) cannot reach `__class__`."""
    from autodiff.engine.api import torch
    from autodiff.engine.function import Function
    from autodiff.engine.nn_module import Module
    from autodiff.parser.diagnostics import TgError

    source = ("def forward(self, x):\n    return x.__class__\n"
              "def backward(ctx, g):\n    return ctx.__dict__\n")
    result = run_source(source, "methods.tg", out=io.StringIO())
    assert result.error is None
    net = Module.tg_subclass("Net", {"forward": result.globals["forward"]})()
    with pytest.raises(TgError, match="has no attribute '__class__'"):
        net(torch.ones(1))
    fn = Function.tg_subclass("Fn", {"forward": lambda ctx, x: x * 2,
                                     "backward": result.globals["backward"]})
    with pytest.raises(TgError, match="has no attribute '__dict__'"):
        fn.apply(torch.ones(1, requires_grad=True)).sum().backward()


def test_the_suite_is_large():
    assert len(ATTEMPTS) >= 100


def test_legitimate_programs_still_run():
    out = io.StringIO()
    result = run_source("import math\n" + T + "y.backward()\nprint(t.grad, y.grad_fn.name(), t.shape, "
                        "'{:.2f}'.format(1.5), f'{y:.1f}', [1].pop(), math.sqrt(4.0))\n",
                        "ok.tg", out=out)
    assert result.error is None, result.error
    assert out.getvalue() == "tensor([2., 4.]) SumBackward0 torch.Size([2]) 1.50 5.0 1 2.0\n"


@pytest.mark.parametrize("value", ["print", "math", "f", "torch", "y.grad_fn", "t.dtype", "[t]"])
@pytest.mark.parametrize("attribute", ["requires_grad", "data", "grad"])
def test_a_writable_attribute_takes_only_what_torch_takes(attribute, value):
    source = "import math\ndef f(a):\n    return a\n" + T + f"t.{attribute} = {value}\n"
    result = run_source(source, "assign.tg", out=io.StringIO(), err=io.StringIO())
    assert result.error is not None and result.error.line == 6
    assert result.error.error_class in {"TypeError", "RuntimeError"}
