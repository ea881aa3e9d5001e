"""torch.optim.Adadelta, Adagrad, Adamax, NAdam and RAdam against live torch (skipped without
it): whole programs that step a small model under every keyword, print the optimizers, their
state and state_dict, and torch's errors; and the updates' float arithmetic, bit for bit."""

from __future__ import annotations


import pytest

from torch_programs import assert_prints_as_torch, run_under_torch

_HEAD = "import torch\nimport torch.nn as nn\nimport torch.optim as optim\n"

# A few steps on a small model whose gradients are elementwise arithmetic (the same bits in
# both). Adamax's update has no sqrt, so every bit of each float32 parameter is compared
# (tolist() prints them all); Adadelta's and Adagrad's take torch's sqrt, which is MKL's and
# not always correctly rounded (its last bit can differ from autodiff's), so those print as
# torch prints a tensor.
_TRAIN = _HEAD + """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.randn(3, 4))
        self.b = nn.Parameter(torch.randn(4))
    def forward(self, x):
        h = x * self.a + self.b
        return h * h * 0.5 - h

def train(make, exact, steps, seed=0):
    torch.manual_seed(seed)
    model = Model()
    x = torch.randn(3, 4)
    y = torch.randn(3, 4)
    opt = make(model.parameters())
    for i in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).sum()
        loss.backward()
        opt.step()
    for p in model.parameters():
        print(p.flatten().tolist() if exact else p)
    print(loss.item() if exact else f"{loss.item():.4f}")
    return opt
"""

_VARIANTS = {
    "Adadelta": ["", "lr=0.5", "rho=0.5", "eps=1e-3", "weight_decay=0.1", "maximize=True",
                 "lr=2.0, rho=0.95, eps=1e-8, weight_decay=0.01, foreach=False",
                 "differentiable=False, capturable=False"],
    "Adagrad": ["", "lr=0.1", "lr_decay=0.05", "weight_decay=0.1", "initial_accumulator_value=0.5",
                "eps=1e-3", "maximize=True", "foreach=False, differentiable=False",
                "lr=0.3, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1, eps=1e-6"],
    "NAdam": ["", "lr=0.01", "betas=(0.5, 0.9)", "eps=1e-3", "weight_decay=0.1",
              "momentum_decay=0.01", "weight_decay=0.1, decoupled_weight_decay=True",
              "maximize=True", "foreach=False, capturable=False, differentiable=False"],
    "RAdam": ["", "lr=0.01", "betas=(0.5, 0.9)", "betas=(0.9, 0.9)", "eps=1e-3",
              "weight_decay=0.1", "weight_decay=0.1, decoupled_weight_decay=True",
              "maximize=True", "foreach=False, capturable=False, differentiable=False"],
    "Adamax": ["", "lr=0.01", "betas=(0.5, 0.9)", "eps=1e-3", "weight_decay=0.1", "maximize=True",
               "lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.01, foreach=False",
               "differentiable=False, capturable=False"],
}

PROGRAMS = {
    f"steps_{name.lower()}": _TRAIN + "".join(
        f"o = train(lambda ps: optim.{name}(ps{', ' + kw if kw else ''}), {name == 'Adamax'}, 12)\n"
        "print(o)\n"
        for kw in variants)
    for name, variants in _VARIANTS.items()}

# fused=True: torch's fused CPU Adagrad takes a correctly rounded sqrt, so every bit is its
PROGRAMS["adagrad_fused"] = _TRAIN + """
for kw in (dict(), dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5)):
    print(train(lambda ps: optim.Adagrad(ps, fused=True, **kw), True, 12).state_dict())
"""

# float64 and float32 parameters in one group, over many steps
PROGRAMS["float64_and_long_runs"] = _HEAD + """
torch.manual_seed(1)
for make in (optim.Adadelta, optim.Adagrad, optim.Adamax, optim.NAdam, optim.RAdam):
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    v = torch.randn(4, 3, requires_grad=True)
    opt = make([w, v], lr=0.05)
    for i in range(40):
        opt.zero_grad()
        loss = ((w * w - 0.5) ** 2).sum() + ((v * 1.5 - 0.25) ** 4).sum()
        loss.backward()
        opt.step()
    print(w.tolist(), v.flatten().tolist()) if make is optim.Adamax else print(w, v)
    print(opt.state[v]['step'], opt.state[w]['step'].dtype)
"""

PROGRAMS["state_and_printing"] = _HEAD + """
torch.manual_seed(0)
l = nn.Linear(2, 1)
for make in (optim.Adadelta, optim.Adagrad, optim.Adamax, optim.NAdam, optim.RAdam):
    opt = make(l.parameters())
    print(opt)
    print(opt.defaults)
    print(opt.state_dict())
    print(dict(opt.state))
    l(torch.ones(3, 2)).sum().backward()
    opt.step()
    print(opt.state_dict())
    print(list(opt.state[l.weight].keys()), opt.state[l.bias])
    opt.zero_grad()
    print(l.weight.grad, l.bias.grad)
    l.zero_grad()
print(optim.Adagrad(l.parameters(), initial_accumulator_value=2.0).state_dict())
print(optim.Adagrad(l.parameters(), fused=True))
print(optim.Adamax([{'params': [l.weight]}, {'params': [l.bias], 'lr': 0.1, 'betas': (0.5, 0.6)}]))
print(optim.Adadelta([{'params': [l.weight], 'rho': 0.3}, {'params': l.bias}], lr=0.1).param_groups[1])
"""

PROGRAMS["groups_and_schedulers"] = _HEAD + """
torch.manual_seed(0)
for make in (optim.Adadelta, optim.Adagrad, optim.Adamax, optim.NAdam, optim.RAdam):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(2, 2, requires_grad=True)
    opt = make([a], lr=0.2, weight_decay=0.01)
    opt.add_param_group({'params': [b], 'lr': 0.05})
    print(opt)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for i in range(5):
        opt.zero_grad()
        loss = (a.sin().sum() * b).pow(2).sum()
        loss.backward()
        opt.step()
        sched.step()
        print(i, [g['lr'] for g in opt.param_groups], sched.get_last_lr())
    print(a, b)
    print(opt.state_dict())
# a group added later takes its state's initial value from the defaults, as torch's does
a = torch.ones(2, requires_grad=True)
b = torch.ones(2, requires_grad=True)
opt = optim.Adagrad([a], initial_accumulator_value=0.25)
opt.add_param_group({'params': [b], 'initial_accumulator_value': 3.0})
print(opt.state_dict())
(a * b).sum().backward()
opt.step()
print(opt.state_dict(), a, b)
# a parameter without a gradient is skipped
c = torch.ones(2, requires_grad=True)
d = torch.ones(2, requires_grad=True)
opt = optim.Adamax([c, d])
c.sum().backward()
opt.step()
print(opt.state, d)
opt2 = optim.Adadelta([c, d])
opt2.step()
print(opt2.state)
"""

PROGRAMS["errors"] = _HEAD + """
w = torch.ones(2, requires_grad=True)
for make in (lambda: optim.Adadelta([w], lr=-1), lambda: optim.Adadelta([w], rho=1.5),
             lambda: optim.Adadelta([w], rho=-0.1), lambda: optim.Adadelta([w], eps=-1),
             lambda: optim.Adadelta([w], weight_decay=-0.5),
             lambda: optim.Adagrad([w], lr=-1), lambda: optim.Adagrad([w], lr_decay=-1),
             lambda: optim.Adagrad([w], weight_decay=-1),
             lambda: optim.Adagrad([w], initial_accumulator_value=-1),
             lambda: optim.Adagrad([w], eps=-1e-3),
             lambda: optim.Adagrad([w], fused=True, differentiable=True),
             lambda: optim.Adagrad([w], fused=True, foreach=True),
             lambda: optim.Adamax([w], lr=-0.1), lambda: optim.Adamax([w], eps=-1),
             lambda: optim.Adamax([w], betas=(1.0, 0.9)), lambda: optim.Adamax([w], betas=(0.9, -1)),
             lambda: optim.Adamax([w], weight_decay=-1),
             lambda: optim.NAdam([w], lr=-1), lambda: optim.NAdam([w], eps=-1),
             lambda: optim.NAdam([w], betas=(0.9, 1.0)), lambda: optim.NAdam([w], weight_decay=-1),
             lambda: optim.NAdam([w], momentum_decay=-1),
             lambda: optim.RAdam([w], lr=-1), lambda: optim.RAdam([w], eps=-1),
             lambda: optim.RAdam([w], betas=(-0.1, 0.9)), lambda: optim.RAdam([w], weight_decay=-1),
             lambda: optim.Adagrad([]), lambda: optim.Adamax(w),
             lambda: optim.Adadelta([w, 3]), lambda: optim.Adagrad([w * 2]),
             lambda: optim.Adamax([{'params': [w]}, {'params': [w]}])):
    try:
        make()
    except (ValueError, TypeError, RuntimeError) as e:
        print(type(e).__name__, e)
print(optim.Adadelta([w], rho=1.0), optim.Adadelta([w], rho=0.0).defaults['rho'])
w.grad = torch.ones(2)
for make in (optim.Adadelta, optim.Adamax, optim.NAdam, optim.RAdam):
    opt = make([w], capturable=True)
    try:
        opt.step()
    except AssertionError as e:
        print(type(e).__name__, e)
    print(opt.state, w)
"""


@pytest.fixture(scope="module")
def reference():
    return run_under_torch(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_and_errs_as_torch(name, reference):
    assert_prints_as_torch(name, PROGRAMS[name], reference[name], may_fail=True)


# --- the arithmetic of each update, with torch's own sqrt ---------------------------------------

_CASES = [("Adadelta", {}), ("Adadelta", dict(rho=0.5, eps=1e-3, weight_decay=0.1, lr=0.5)),
          ("Adagrad", {}), ("Adagrad", dict(lr_decay=0.05, weight_decay=0.1,
                                            initial_accumulator_value=0.5, eps=1e-6)),
          ("Adamax", {}), ("Adamax", dict(betas=(0.5, 0.9), weight_decay=0.1, maximize=True)),
          ("NAdam", {}), ("NAdam", dict(momentum_decay=0.01, weight_decay=0.1,
                                        decoupled_weight_decay=True)),
          ("NAdam", dict(weight_decay=0.1, maximize=True)),
          ("RAdam", {}), ("RAdam", dict(weight_decay=0.1, lr=0.01)),
          ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True, betas=(0.5, 0.6)))]


@pytest.mark.parametrize("name, options", _CASES)
def test_updates_are_torchs_bit_for_bit_given_its_sqrt(name, options, monkeypatch):
    """torch's float32 sqrt is MKL's, not always correctly rounded; with it put in place of
    NumPy's, every bit of 24 steps on 2000 values (float32 and float64) is torch's."""
    torch = pytest.importorskip("torch")
    import numpy as np
    from autodiff.engine.api import optim_namespace, torch as ad
    import autodiff.engine.optim.optimizers as optimizers

    class TorchSqrt:
        def __getattr__(self, attribute):
            return getattr(np, attribute)

        @staticmethod
        def sqrt(a):
            return torch.from_numpy(np.array(a)).sqrt().numpy()

    monkeypatch.setattr(optimizers, "np", TorchSqrt())
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        start = rng.standard_normal(2000).astype(dtype)
        theirs = torch.tensor(start, requires_grad=True)
        ours = ad.tensor(start.tolist(), dtype=ad.float32 if dtype == np.float32 else ad.float64,
                         requires_grad=True)
        t_opt = getattr(torch.optim, name)([theirs], **options)
        o_opt = getattr(optim_namespace, name)([ours], **options)
        for scale in (1, 0.1, 3, 1e-3, 2, 1, 0.5, 1) * 3:
            g = (rng.standard_normal(2000) * scale).astype(dtype)
            theirs.grad = torch.tensor(g)
            ours.grad = ad.tensor(g.tolist(), dtype=ours.dtype)
            t_opt.step()
            o_opt.step()
            assert np.array_equal(np.asarray(ours.tolist(), dtype), theirs.detach().numpy())
