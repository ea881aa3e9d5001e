"""nn, optim, custom autograd.Function, functional autograd and hooks, against PyTorch.

The cases of tests/nn_cases.py run on autodiff's engine and must print what real PyTorch
printed for them (tests/goldens/nn/cases.json, made by tests/make_nn_goldens.py). The rest
checks the class interface the interpreter uses (tg_subclass, tg_super_init) and what the
sandbox lets a program reach on a module, a ctx and a Function class.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import nn_cases  # noqa: E402

from autodiff.engine.api import nn, optim_namespace, torch  # noqa: E402
from autodiff.engine.autograd.function import Function  # noqa: E402
from autodiff.engine.nn.module import Module  # noqa: E402
from autodiff.engine.core.unsupported import Unsupported  # noqa: E402
from autodiff.interpreter.sandbox import default_policy, get_attribute, set_attribute  # noqa: E402

GOLDEN = json.loads((Path(__file__).resolve().parent / "goldens" / "nn" / "cases.json")
                    .read_text(encoding="utf-8"))


def test_every_case_has_a_golden():
    assert set(GOLDEN) == set(nn_cases.CASES)


_MODULE_CLASSES = sorted(name for name in nn._tg_public if isinstance(getattr(nn, name), type)
                         and issubclass(getattr(nn, name), Module))


@pytest.mark.parametrize("name", _MODULE_CLASSES)
def test_every_module_class_has_a_printing_and_forward_case(name):
    """Each nn module class a program can reach is printed and called (forward and backward)
    by a case of its own, compared with torch's output like every case."""
    assert name in nn_cases.MODULE_FORMS, f"nn.{name}: add it to MODULE_FORMS in tests/nn_cases.py"
    assert f"module_{name}" in GOLDEN, "run python tests/make_nn_goldens.py"


@pytest.mark.parametrize("name", sorted(nn_cases.CASES))
def test_case_prints_what_torch_printed(name):
    assert nn_cases.run_case(nn_cases.CASES[name], nn_cases.autodiff_modules()) == GOLDEN[name]


# --- the class interface of the interpreter --------------------------------------------------

def _net_class():
    def __init__(self, hidden):
        Module.tg_super_init(self)
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, 1)
        self.scale = 2

    def forward(self, x):
        return self.fc2(self.fc1(x).relu()) * self.scale

    return Module.tg_subclass("Net", {"__init__": __init__, "forward": forward, "kind": "mlp"})


def test_module_subclass_from_members():
    Net = _net_class()
    torch.manual_seed(0)
    net = Net(3)
    assert repr(Net) == "<class '__main__.Net'>"
    assert repr(net) == ("Net(\n  (fc1): Linear(in_features=2, out_features=3, bias=True)\n"
                         "  (fc2): Linear(in_features=3, out_features=1, bias=True)\n)")
    out = net(torch.ones(4, 2))
    assert out.shape == (4, 1) and net.forward(torch.ones(4, 2)).tolist() == out.tolist()
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                      "fc2.bias"]
    assert net.kind == "mlp" and isinstance(net, nn.Module)


@pytest.mark.parametrize("members", [{"__getattr__": lambda self, name: 0},
                                     {"__dict__": {}}, {"__class__": object},
                                     {"__del__": lambda self: None}])
def test_subclass_members_may_not_be_dunders(members):
    with pytest.raises(TypeError, match="starts with '__'"):
        Module.tg_subclass("Net", members)
    with pytest.raises(TypeError, match="starts with '__'"):
        Function.tg_subclass("Fn", members)


@pytest.mark.parametrize("base, name", [(Module, "_registered"), (Module, "_modules"),
                                        (Module, "_tg_public"), (Function, "_tg_public"),
                                        (Function, "_tg_anything")])
def test_subclass_members_may_not_replace_engine_internals(base, name):
    with pytest.raises(Unsupported, match="is not supported by autodiff"):
        base.tg_subclass("Net", {name: 1})


def test_a_single_underscore_member_is_the_programs_own():
    cls = Module.tg_subclass("Net", {"_secret": 1})
    assert cls._secret == 1 and "_secret" not in cls._tg_public


def test_function_subclass_from_plain_functions():
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g

    Square = Function.tg_subclass("Square", {"forward": forward, "backward": backward})
    x = torch.tensor([1.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    assert repr(y) == "tensor([1., 9.], grad_fn=<SquareBackward>)"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 6.0]
    assert repr(y.grad_fn).startswith("<torch.autograd.function.SquareBackward object at 0x")


def test_module_init_arguments_are_refused_as_torch_refuses_them():
    with pytest.raises(TypeError, match=r"Module.__init__\(\) takes 1 positional argument"):
        Module(3)


# --- what the sandbox allows on instances ----------------------------------------------------

def test_sandbox_reads_what_a_module_registered_and_the_program_set():
    net = _net_class()(2)
    for name in ("fc1", "fc2", "scale", "kind", "forward", "parameters", "training", "zero_grad",
                 "_parameters", "_modules", "_buffers"):  # (the registries: plain dicts, as torch's)
        assert default_policy(net, name), name
    for name in ("__dict__", "__class__", "tg_subclass", "tg_super_init", "_tg_readable",
                 "_registered", "_non_persistent", "_forget", "missing"):
        assert not default_policy(net, name), name
    net._modules["extra"] = nn.Linear(1, 1)  # filled directly: readable as torch's __getattr__ finds it
    assert default_policy(net, "extra") and get_attribute(net, "extra", default_policy) is \
        net._modules["extra"]
    assert get_attribute(net.fc1, "weight", default_policy) is net.fc1.weight


def test_sandbox_writes_attributes_but_not_methods():
    net = _net_class()(2)
    set_attribute(net, "scale", 5, default_policy)
    set_attribute(net, "fc3", nn.Linear(1, 1), default_policy)
    assert net.scale == 5 and "fc3" in dict(net.named_children())
    for name in ("forward", "parameters", "zero_grad", "__dict__", "_modules"):
        with pytest.raises(AttributeError):
            set_attribute(net, name, 1, default_policy)


def test_sandbox_on_ctx_and_function_classes():
    seen = {}

    def forward(ctx, x):
        set_attribute(ctx, "k", 3, default_policy)
        seen["k"] = get_attribute(ctx, "k", default_policy)
        for name in ("save_for_backward", "saved_tensors", "needs_input_grad", "k"):
            assert default_policy(ctx, name), name
        for name in ("_saved", "_node", "__dict__", "_function"):
            assert not default_policy(ctx, name), name
        with pytest.raises(AttributeError):
            set_attribute(ctx, "save_for_backward", 1, default_policy)
        return x * 2

    Twice = Function.tg_subclass("Twice", {"forward": forward,
                                            "backward": lambda ctx, g: g * 2})
    assert default_policy(Twice, "apply") and not default_policy(Twice, "mro")
    assert not default_policy(Twice, "tg_subclass") and not default_policy(Twice, "__subclasses__")
    Twice.apply(torch.ones(1, requires_grad=True))
    assert seen == {"k": 3}


# --- optimizers: the arithmetic is torch's, bit for bit ----------------------------------------

def test_fused_multiply_add_matches_exact_rounding_on_ties():
    """The fast path (double sum, rounded once more) defers to the exact one on midpoints."""
    from autodiff.engine.numerics.fma import fma32
    from autodiff.engine.optim.optimizers import fma

    rng = np.random.default_rng(0)
    a = (np.round(rng.standard_normal(4096) * 8) / 8).astype(np.float32)  # short values: ties
    c = rng.standard_normal(4096).astype(np.float32)
    for b in (np.float32(0.375), np.float32(-0.1), np.float32(3e-39)):
        assert np.array_equal(fma(a, b, c).view(np.int32), fma32(a, b, c).view(np.int32))


def test_optimizer_changes_parameters_in_place_and_moves_versions():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    alias = w.detach()
    opt = optim_namespace.SGD([w], lr=0.5)
    (w * w).sum().backward()
    opt.step()
    assert alias.tolist() == [0.0, 0.0] and w._version == 1


def _torch_installed() -> bool:
    from autodiff.interpreter.reference import torch_available
    return torch_available()


@pytest.mark.skipif(not _torch_installed(), reason="torch is not installed")
def test_goldens_are_current_under_torch():
    import subprocess
    script = Path(__file__).resolve().parent / "make_nn_goldens.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
