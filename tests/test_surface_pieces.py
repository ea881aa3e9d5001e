"""Small pieces of the surface tutorials use, against live torch (skipped without it):
str's and set's pure methods, Tensor.get_device, torch.seed, nn.init's deprecated names,
the lazy modules' uninitialised parameters and nn.LazyBatchNorm1d/2d, torch.multinomial and
Tensor.exponential_ (torch's draws, with and without replacement, and their errors),
nn.ParameterList and nn.ParameterDict."""

from __future__ import annotations


import pytest

from torch_programs import assert_prints_as_torch, run_under_torch

pytest.importorskip("torch")

PROGRAMS = {
    "str_and_set_methods": """s = "a b\\nc,d\\r\\ne\\n"
print(s.splitlines(), s.splitlines(True), s.rsplit(None, 1), s.rsplit(",", 1), s.partition(","))
print(s.rpartition("x"), "ab1".isalnum(), "ab".isalpha(), " \\t".isspace(), "ab".islower())
print("AB".isupper(), "12".isnumeric(), "1.2".isdecimal(), "x_1".isidentifier(), "Ab Cd".istitle())
print("Ab".swapcase(), "Straße".casefold(), "abcb".index("b"), "abcb".rfind("b"), "abcb".rindex("b", 0, 3))
print("a\\tb".expandtabs(4), "pre_x".removeprefix("pre_"), "x.py".removesuffix(".py"), "é".isascii())
t = {1, 2, 3}
print({1}.issubset(t), t.issuperset({2, 5}), t.isdisjoint({5}), sorted(t.symmetric_difference({3, 4})))
try:
    "abc".index("z")
except ValueError as e:
    print(type(e).__name__, e)
""",
    "device_seed_and_init": """import torch
import torch.nn as nn
print(torch.zeros(2).get_device(), torch.tensor(1.0).get_device())
g = torch.Generator()
s = g.seed()
print(type(s).__name__, g.initial_seed() == s)
torch.manual_seed(0)
w = torch.empty(2, 3)
print(nn.init.normal(w) is w, w)
nn.init.uniform(w, -1, 1)
nn.init.constant(w[0], 0.5)
print(w)
nn.init.xavier_uniform(w)
nn.init.xavier_normal(w, gain=2)
nn.init.kaiming_normal(w, mode="fan_out")
nn.init.kaiming_uniform(w, a=1)
print(w)
""",
    "lazy_modules": """import torch
import torch.nn as nn
torch.manual_seed(0)
m = nn.LazyBatchNorm2d()
print(m, m.weight, m.running_mean, m.num_batches_tracked, m.num_features)
print(list(m.parameters()), m.state_dict())
opt = torch.optim.SGD(m.parameters(), lr=0.1)
y = m(torch.randn(2, 3, 2, 2) * 3 + 1)
print(type(m).__name__, m, m.weight, m.running_mean, m.running_var, m.num_batches_tracked)
(y ** 2).sum().backward()
opt.step()
print(m.weight, m.bias)
m.eval()
print(m(torch.ones(1, 3, 1, 1)))
for lazy in (nn.LazyBatchNorm1d(affine=False, momentum=0.2),
             nn.LazyBatchNorm1d(track_running_stats=False), nn.LazyBatchNorm1d(momentum=None)):
    print(lazy)
    lazy(torch.randn(4, 3, 2))
    print(lazy, lazy.running_mean, lazy.state_dict().keys())
l = nn.LazyLinear(2)
c = nn.LazyConv2d(2, 3)
print(l.weight, l.bias, c.weight, c.bias, l.state_dict())
l(torch.ones(1, 3))
print(l.weight.shape, l)
try:
    nn.LazyBatchNorm2d()(torch.randn(2, 3))
except ValueError as e:
    print(type(e).__name__, e)
""",
    "multinomial_and_exponential": """import torch
torch.manual_seed(0)
print(torch.empty(5).exponential_(), torch.empty(3, dtype=torch.float64).exponential_(2.0))
p = torch.tensor([0.1, 0.2, 0.3, 0.4])
print(torch.multinomial(p, 2), torch.multinomial(p, 4), torch.multinomial(p, 1))
print(torch.multinomial(p, 10, replacement=True), p.multinomial(num_samples=6, replacement=True))
w = torch.rand(3, 5, dtype=torch.float64)
print(torch.multinomial(w, 3), torch.multinomial(w, 7, True), w.multinomial(1))
g = torch.Generator().manual_seed(5)
print(torch.multinomial(torch.tensor([1.0, 5.0, 2.0]), 2, generator=g))
probs = torch.softmax(torch.randn(27), dim=0)
print(torch.multinomial(probs, num_samples=20, replacement=True).tolist())
ix = torch.multinomial(probs, 1, replacement=True, generator=g).item()
print(ix)
x = torch.zeros(4, requires_grad=True) * 2
y = x.exponential_(3)
print(y, y.grad_fn)
for bad in (lambda: torch.empty(3).exponential_(0), lambda: torch.empty(3, dtype=torch.int64).exponential_(),
            lambda: torch.multinomial(p, 0), lambda: torch.multinomial(p, 5), lambda: torch.multinomial(torch.tensor([1, 2]), 1),
            lambda: torch.multinomial(torch.tensor([-1., 2]), 1), lambda: torch.multinomial(torch.tensor([-1., 2]), 2, True),
            lambda: torch.multinomial(torch.tensor([0., 0]), 1), lambda: torch.multinomial(torch.tensor([0., 0]), 2, True),
            lambda: torch.multinomial(torch.tensor(1.), 1), lambda: torch.multinomial(torch.tensor([float('inf'), 1.]), 2, True),
            lambda: torch.multinomial(torch.tensor([float('nan'), 1.]), 2, True), lambda: torch.multinomial(p, 2.0)):
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)
""",
    "parameter_containers": """import torch
import torch.nn as nn
pl = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(2, 3))])
print(pl)
print(len(pl), pl[0], type(pl[1]).__name__)
pl.append(nn.Parameter(torch.ones(1)))
pl.extend([torch.zeros(2)])
print(pl, [type(p).__name__ for p in pl], pl[3].requires_grad)
print(list(dict(pl.named_parameters()).keys()))
print(pl[-1], pl[1:])
pd = nn.ParameterDict({"a": nn.Parameter(torch.ones(2)), "b": torch.zeros(3)})
print(pd)
print(pd["a"], list(pd.keys()), len(pd), "a" in pd)
pd["c"] = nn.Parameter(torch.ones(1, 2))
pd.update({"d": nn.Parameter(torch.ones(2, dtype=torch.float64))})
print(pd, [k for k, v in pd.items()])
print(list(dict(pd.named_parameters()).keys()))
print(pd.pop("a"), pd)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = nn.ParameterList([nn.Parameter(torch.randn(2, 2)) for _ in range(3)])
        self.bs = nn.ParameterDict({"first": nn.Parameter(torch.zeros(2))})
    def forward(self, x):
        for w in self.ws:
            x = x @ w
        return x + self.bs["first"]
torch.manual_seed(0)
m = M()
print(m)
print([n for n, _ in m.named_parameters()])
print(m.state_dict().keys())
opt = torch.optim.SGD(m.parameters(), lr=0.1)
loss = m(torch.ones(1, 2)).pow(2).sum()
loss.backward()
opt.step()
print(m.ws[0], m.bs["first"].grad)
pl2 = nn.ParameterList([1, "x", torch.ones(1)])
print(pl2, [type(p).__name__ for p in pl2])
print(nn.ParameterList(), nn.ParameterDict())
pl[0] = nn.Parameter(torch.zeros(5))
print(pl)
for k in pd:
    print(k, pd.get(k).shape)
print(pd.get("zz"), pd.setdefault("e", torch.ones(1)))

""",
}


@pytest.fixture(scope="module")
def reference():
    return run_under_torch(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_as_torch(name, reference):
    assert_prints_as_torch(name, PROGRAMS[name], reference[name])