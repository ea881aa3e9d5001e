"""Python-level cases for nn, optim, custom autograd.Function, functional autograd and hooks.

Each case is Python source run with the names `torch`, `nn`, `F` and `optim` bound either to
real PyTorch (tests/make_nn_goldens.py writes what it prints to tests/goldens/nn/cases.json)
or to autodiff's engine (tests/test_nn.py compares). Classes are plain Python `class`
statements here: the interpreter's `class` makes the same classes through tg_subclass.
A case that raises ends its output with one line `ErrorClass: message`.
"""

from __future__ import annotations

import contextlib
import io
import re

CASES: dict[str, str] = {}


def case(name: str, source: str) -> None:
    assert name not in CASES, name
    CASES[name] = source


# --- printed forms ----------------------------------------------------------------------------

case("linear_default_init", """
torch.manual_seed(0)
l = nn.Linear(3, 1)
print(l); print(l.weight); print(l.bias)
print(l.in_features, l.out_features, l.weight.shape, l.bias.shape, l.weight.is_leaf)
print(nn.Linear(4, 2, bias=False), nn.Linear(4, 2, bias=False).bias)
print(l.extra_repr())
torch.manual_seed(1)
print(nn.Linear(2, 3, dtype=torch.float64).weight)
""")

case("parameter_forms", """
p = nn.Parameter(torch.ones(2))
print(p); print(p * 2); print([p]); print(f"{p}")
print(nn.Parameter(torch.ones(2), requires_grad=False))
print(nn.Parameter(torch.tensor(3.)))
print(nn.Parameter())
print(isinstance(p, nn.Parameter), isinstance(p, torch.Tensor), isinstance(p * 2, nn.Parameter))
print(isinstance(torch.ones(1), nn.Parameter), nn.Parameter)
print(p.data, p.detach(), p.clone(), p.is_leaf, p.requires_grad, p.grad_fn)
t = torch.zeros(2)
q = nn.Parameter(t)
q.data.add_(1)
print(t, q)
x = torch.ones(2, requires_grad=True)
r = nn.Parameter(x * 2)
print(r.is_leaf, r.grad_fn, r)
print(nn.Parameter(torch.ones(2, dtype=torch.int64), requires_grad=False))
nn.Parameter(torch.ones(2, dtype=torch.int64))
""")

case("parameter_format_spec", """
p = nn.Parameter(torch.tensor(3.))
print(f"{p:.2f}")
""")

case("sequential_printing", """
torch.manual_seed(0)
s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1), nn.Sigmoid()))
print(s); print(s[0]); print(len(s)); print(s[1:]); print(s[-1])
print(s.state_dict())
print(list(s.state_dict().keys()))
print([name for name, _ in s.named_parameters()])
print(len(list(s.parameters())), list(s.children())[1], len(list(s.modules())))
print(nn.Sequential())
print(nn.Sequential(nn.ReLU()).append(nn.Tanh()))
print(nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)]))
s[7]
""")

case("layer_printing", """
print(nn.Softmax(dim=1), nn.Softmax(), nn.LogSoftmax(dim=1), nn.Tanh(), nn.Sigmoid(), nn.ReLU())
print(nn.ReLU(inplace=True), nn.Flatten(), nn.Flatten(0), nn.Dropout(), nn.Dropout(0.2), nn.Identity())
print(nn.MSELoss(), nn.CrossEntropyLoss(), nn.BCELoss(), nn.BCEWithLogitsLoss(), nn.L1Loss(), nn.NLLLoss())
print(nn.MSELoss(reduction='sum'), nn.MSELoss().reduction, nn.MSELoss(reduction='none').reduction)
print(nn.Softmax(dim=1).dim, nn.Dropout(0.3).p, nn.Module(), nn.Sequential())
print(nn.LeakyReLU(), nn.LeakyReLU(0.2, inplace=True), nn.GELU(), nn.GELU('tanh'), nn.Softplus(beta=2))
print(nn.ELU(), nn.ELU(alpha=0.5, inplace=True), nn.SiLU(), nn.LogSigmoid(), nn.Hardtanh(-2, 2), nn.ReLU6())
print(nn.LeakyReLU().negative_slope, nn.GELU().approximate, nn.Softplus().beta, nn.Hardtanh().min_val)
x = torch.tensor([-2., -0.5, 0.5, 2.5], requires_grad=True)
for m in (nn.LeakyReLU(0.1), nn.GELU(), nn.Softplus(), nn.ELU(), nn.SiLU(), nn.LogSigmoid(), nn.Hardtanh(), nn.ReLU6()):
    print(m(x))
nn.LeakyReLU(0.1, True, 3)
""")

case("module_subclass", """
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 3)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(3, 1)
        self.w = nn.Parameter(torch.ones(2))
        self.k = 3
    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))
net = Net()
print(net)
print([n for n, _ in net.named_parameters()])
print(net.state_dict().keys())
print(list(net.children()))
print(net.training, net.fc1.training)
print(net.eval() is net, net.training, net.fc1.training)
print(net.train())
out = net(torch.ones(4, 2))
print(out.shape, out.grad_fn)
out.sum().backward()
print(net.fc1.weight.grad)
net.zero_grad()
print(net.fc1.weight.grad, net.k)
net.fc1 = None
print(net)
net.w = None
print(list(net.state_dict().keys()))
print(net.requires_grad_(False).fc2.weight.requires_grad)
""")

case("module_errors_no_forward", """
class Empty(nn.Module):
    pass
print(Empty())
Empty()(torch.ones(1))
""")

case("module_errors_before_init", """
class NoInit(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(1, 1)
NoInit()
""")

case("module_errors_assign_tensor", """
net = nn.Sequential(nn.Linear(1, 1))
net.extra = 5
print(net.extra)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))
m = M()
m.w = torch.ones(1)
""")

case("module_errors_missing_attribute", """
nn.Linear(2, 2).nothing
""")

case("module_apply_and_init", """
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)
model.apply(init_weights)
print(model[0].weight, model[2].bias)
sd = model.state_dict()
other = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))
print(other.load_state_dict(sd))
print(other[0].weight)
print(model.to(torch.float64)[0].weight.dtype, model.float()[0].weight.dtype, model.cpu() is model)
""")

case("linear_graphs", """
torch.manual_seed(0)
l = nn.Linear(3, 2)
x = torch.ones(4, 3, requires_grad=True)
y = l(x)
print(y.grad_fn, y.grad_fn.next_functions)
gw, gb, gx = torch.autograd.grad(y.sum(), (l.weight, l.bias, x), create_graph=True)
print(gw.grad_fn, gw.grad_fn.next_functions, gb.grad_fn, gx.grad_fn, gx.grad_fn.next_functions)
y1 = l(torch.ones(3))
print(y1, y1.grad_fn, y1.grad_fn.next_functions, y1.grad_fn.next_functions[0][0].next_functions)
y3 = l(torch.ones(2, 2, 3))
print(y3.shape, y3.grad_fn, y3.grad_fn.next_functions[0][0].next_functions)
print(nn.Linear(3, 2, bias=False)(torch.ones(2, 3)).grad_fn, nn.Linear(3, 2, bias=False)(torch.ones(3)).grad_fn)
print(F.linear(torch.ones(2, 3), l.weight, l.bias).grad_fn, torch.addmm(l.bias, torch.ones(2, 3), l.weight.t()))
l(torch.ones(2, 4))
""")

case("linear_errors", """
l = nn.Linear(3, 2)
for x in (torch.ones(4), torch.tensor(1.), torch.ones(2, 3, dtype=torch.float64)):
    try:
        l(x)
    except RuntimeError as e:
        print(e)
""")

case("layers_forward", """
torch.manual_seed(0)
d = nn.Dropout(0.5)
print(d(torch.ones(8)))
print(d.eval()(torch.ones(8)), d.training)
x = torch.tensor([[1., 2., 3.], [0., -1., 1.]], requires_grad=True)
print(nn.Softmax(dim=1)(x), nn.LogSoftmax(dim=1)(x), nn.ReLU()(x - 1), nn.Sigmoid()(x), nn.Tanh()(x))
print(nn.Flatten()(torch.ones(2, 3, 4)).shape, nn.Flatten(0)(torch.ones(2, 3)).shape, nn.Identity()(x) is x)
print(list(nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU())).named_modules())[2])
print(nn.Sequential(nn.Linear(2, 2), nn.ReLU()).requires_grad_(False)[0].weight.requires_grad)
""")

case("adam_state", """
torch.manual_seed(0)
w = nn.Parameter(torch.tensor([0.5, -1.0]))
opt = optim.Adam([w], lr=0.1, amsgrad=True)
for i in range(3):
    opt.zero_grad()
    ((w - 1) ** 2).sum().backward()
    opt.step()
print(w)
print(opt.state)
print(opt.state_dict())
""")

# --- losses -------------------------------------------------------------------------------------

case("bce_losses", """
p = torch.tensor([0.2, 0.7, 0.9], requires_grad=True)
t = torch.tensor([0., 1., 1.])
l = F.binary_cross_entropy(p, t); print(l, l.grad_fn.next_functions)
g, = torch.autograd.grad(l, p, create_graph=True); print(g, g.grad_fn.next_functions)
print(torch.autograd.grad(g.sum(), p, create_graph=True))
z = torch.tensor([-1., 0.5, 2.], requires_grad=True)
l = F.binary_cross_entropy_with_logits(z, t); print(l, l.grad_fn.next_functions)
g, = torch.autograd.grad(l, z, create_graph=True); print(g, g.grad_fn, g.grad_fn.next_functions)
print(torch.autograd.grad(g.sum(), z, create_graph=True))
l = F.l1_loss(z, t); print(l, l.grad_fn.next_functions)
for r in ("none", "sum", "mean"):
    print(F.binary_cross_entropy(p, t, reduction=r), F.binary_cross_entropy_with_logits(z, t, reduction=r), F.l1_loss(z, t, reduction=r))
tt = torch.tensor([0., 1., 1.], requires_grad=True)
print(torch.autograd.grad(F.binary_cross_entropy(p, tt), tt))
print(torch.autograd.grad(F.binary_cross_entropy_with_logits(z, tt), tt))
w = torch.tensor([1., 2., 3.])
print(F.binary_cross_entropy(p, t, weight=w), F.binary_cross_entropy_with_logits(z, t, weight=w, pos_weight=torch.tensor([2., 2., 2.])))
l = F.binary_cross_entropy_with_logits(z, t, pos_weight=torch.tensor([2., 1., 3.]))
print(l, torch.autograd.grad(l, z))
print(F.binary_cross_entropy(torch.tensor([0., 1.]), torch.tensor([1., 0.]), reduction='none'))
print(F.binary_cross_entropy_with_logits(torch.tensor([100., -100.]), torch.tensor([0., 1.]), reduction='none'))
print(nn.BCELoss()(p, t), nn.BCEWithLogitsLoss()(z, t), nn.L1Loss()(z, t), nn.MSELoss(reduction='sum')(z, t))
print(nn.CrossEntropyLoss()(torch.tensor([[1., 2., 3.], [1., 0., -1.]]), torch.tensor([2, 0])))
print(nn.NLLLoss()(torch.tensor([[-1., -2.]]), torch.tensor([1])))
print(torch.logit(torch.tensor([0.25, 0.5])), torch.tensor([0.1]).logit())
""")

case("bce_errors_range", """
F.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.]))
""")

case("bce_errors_size", """
F.binary_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([1.]))
""")

case("bce_logits_errors_size", """
nn.BCEWithLogitsLoss()(torch.tensor([0.5, 0.5]), torch.tensor([1.]))
""")

# --- optimizers ---------------------------------------------------------------------------------

case("optimizer_printing", """
torch.manual_seed(0)
l = nn.Linear(3, 1)
print(optim.SGD(l.parameters(), lr=0.1))
print(optim.SGD(l.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4, nesterov=True))
print(optim.Adam(l.parameters()))
print(optim.Adam(l.parameters(), lr=1e-3, betas=(0.8, 0.9), amsgrad=True))
print(optim.AdamW(l.parameters()))
o = optim.SGD([{'params': [l.weight]}, {'params': [l.bias], 'lr': 0.5}], lr=0.1, momentum=0.9)
print(o)
print(o.param_groups[1]['lr'], list(o.param_groups[0].keys()), len(o.param_groups[0]['params']))
print(o.defaults)
print(o.state_dict())
print(optim.SGD([l.weight]))
""")

case("optimizer_errors", """
l = nn.Linear(2, 1)
for make in (lambda: optim.SGD([], lr=0.1), lambda: optim.SGD(l.weight, lr=0.1),
             lambda: optim.SGD([l.weight, 3], lr=0.1), lambda: optim.SGD([l.weight * 2], lr=0.1),
             lambda: optim.SGD([l.weight], lr=-1), lambda: optim.SGD([l.weight], lr=0.1, nesterov=True),
             lambda: optim.Adam([l.weight], betas=(1.0, 0.9)), lambda: optim.Adam([l.weight], eps=-1),
             lambda: optim.SGD([{'params': [l.weight]}, {'params': [l.weight]}])):
    try:
        make()
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
""")

case("sgd_training", """
torch.manual_seed(0)
X = torch.linspace(-1, 1, 32).reshape(32, 1)
Y = X ** 2 * 3 - 1
model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
loss_fn = nn.MSELoss()
opt = optim.SGD(model.parameters(), lr=0.1)
for step in range(300):
    opt.zero_grad()
    loss = loss_fn(model(X), Y)
    loss.backward()
    opt.step()
    if step % 100 == 0:
        print(step, f"{loss.item():.5f}")
print(f"{loss.item():.5f}", model[2].bias, opt.state)
""")

case("sgd_momentum_state", """
torch.manual_seed(0)
w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
for i in range(5):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
    print(w, w.grad)
print(opt.state)
print(opt.state_dict())
opt.zero_grad(set_to_none=False)
print(w.grad)
""")

case("sgd_bits", """
# every bit of the parameters after SGD steps (torch's add_(alpha=) is a fused multiply-add);
# the gradients are elementwise, so they are the same bits in both
for dtype in (torch.float32, torch.float64):
    for options in ({}, {"momentum": 0.9}, {"momentum": 0.5, "dampening": 0.25, "weight_decay": 0.125},
                    {"momentum": 0.9, "nesterov": True, "maximize": True}, {"weight_decay": 0.01}):
        torch.manual_seed(0)
        w = torch.randn(6, dtype=dtype, requires_grad=True)
        c = torch.randn(6, dtype=dtype)
        opt = optim.SGD([w], lr=0.3, **options)
        for step in range(8):
            opt.zero_grad()
            loss = ((w - 0.5) ** 2).sum() * 0.5 + (w * c).sum() if step % 2 else (w * c * 0.25).sum()
            loss.backward()
            opt.step()
        print(dtype, options, w.tolist())
""")

case("adam_training", """
torch.manual_seed(0)
X = torch.linspace(-1, 1, 16).reshape(16, 1)
Y = torch.sin(3 * X)
model = nn.Sequential(nn.Linear(1, 8), nn.Sigmoid(), nn.Linear(8, 1))
opt = optim.Adam(model.parameters(), lr=0.05)
for step in range(200):
    opt.zero_grad()
    loss = F.mse_loss(model(X), Y)
    loss.backward()
    opt.step()
print(f"{loss.item():.4f}")
print(opt.state_dict()['state'][3]['step'], len(opt.state))
""")

case("classifier_training", """
torch.manual_seed(0)
X = torch.randn(20, 2)
y = (X[:, 0] + X[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
opt = optim.SGD(model.parameters(), lr=0.5)
loss_fn = nn.CrossEntropyLoss()
for step in range(50):
    opt.zero_grad()
    loss = loss_fn(model(X), y)
    loss.backward()
    opt.step()
print(f"{loss.item():.4f}", (model(X).argmax(dim=1) == y).float().mean())
bce = nn.BCEWithLogitsLoss()
lin = nn.Linear(2, 1)
opt = optim.Adam(lin.parameters(), lr=0.1)
for step in range(50):
    opt.zero_grad()
    loss = bce(lin(X).squeeze(1), y.float())
    loss.backward()
    opt.step()
print(f"{loss.item():.4f}")
""")

# --- custom autograd.Function -------------------------------------------------------------------

case("function_basic", """
class MyFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        print("needs", ctx.needs_input_grad)
        return x * k
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        print("backward got", g)
        return g * ctx.k * x.sign(), None
x = torch.tensor([1., -2.], requires_grad=True)
y = MyFn.apply(x, 3)
print(y); print(y.grad_fn); print(y.grad_fn.name()); print(y.grad_fn.next_functions)
y.sum().backward(); print(x.grad)
print(MyFn)
with torch.no_grad():
    print(MyFn.apply(x, 2))
print(MyFn.apply(torch.tensor([1., 2.]), 2))
y = MyFn.apply(x, 2)
y.sum().backward()
y.sum().backward()
""")

case("function_create_graph_and_outputs", """
class Sq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([1., 2.], requires_grad=True)
y = Sq.apply(x); print(y)
g, = torch.autograd.grad(y.sum(), x, create_graph=True); print(g)
g.sum().backward(); print(x.grad)
class Multi(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3
    @staticmethod
    def backward(ctx, ga, gb):
        print("multi", ga, gb)
        return ga * 2 + gb * 3
x.grad = None
a, b = Multi.apply(x); print(a, b, a.grad_fn is b.grad_fn)
a.sum().backward(); print(x.grad)
class Same(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 5
z = Same.apply(x); print(z, z is x)
z.sum().backward(); print(x.grad)
class Saves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y
x.grad = None
Saves.apply(x).sum().backward(); print(x.grad)
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.double()
    @staticmethod
    def backward(ctx, g):
        print(g.dtype)
        return g
x.grad = None
Double.apply(x).sum().backward(); print(x.grad.dtype, x.grad)
class Reduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum()
    @staticmethod
    def backward(ctx, g):
        return g.expand(2)
x.grad = None
Reduce.apply(x).backward(); print(x.grad)
""")

case("function_errors_count", """
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return g, g
Bad.apply(torch.ones(2, requires_grad=True)).sum().backward()
""")

case("function_errors_shape", """
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g.sum()
Bad.apply(torch.ones(2, requires_grad=True)).sum().backward()
""")

case("function_errors_non_tensor_grad", """
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, n):
        return x * n
    @staticmethod
    def backward(ctx, g):
        return g, g
Bad.apply(torch.ones(2, requires_grad=True), 2).sum().backward()
""")

case("function_errors_save", """
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(3)
        return x
Bad.apply(torch.ones(2, requires_grad=True))
""")

case("function_errors_no_backward", """
class NoBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
NoBackward.apply(torch.ones(2, requires_grad=True)).sum().backward()
""")

case("function_errors_modified_saved", """
class Keep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x
a = torch.ones(2, requires_grad=True)
b = a * 1
y = Keep.apply(b)
b.add_(1)
y.sum().backward()
""")

# --- functional autograd ------------------------------------------------------------------------

case("functional_jacobian_hessian", """
from_f = torch.autograd.functional
def f(x):
    return x ** 2 * 3
x = torch.tensor([1., 2., 3.])
print(from_f.jacobian(f, x))
print(from_f.jacobian(lambda a, b: a * b, (x, x)))
print(from_f.jacobian(lambda a: (a * 2, a.sum()), x))
print(from_f.jacobian(lambda a, b: (a * b, a + b), (x, x)))
print(from_f.hessian(lambda a: (a ** 3).sum(), x))
print(from_f.hessian(lambda a, b: (a * b).sum(), (x, x)))
xr = torch.tensor([1., 2.], requires_grad=True)
print(from_f.jacobian(f, xr))
print(from_f.jacobian(f, xr, create_graph=True))
print(from_f.jacobian(lambda a: torch.tensor(1.), x))
print(from_f.jacobian(lambda a: a.sum(), torch.tensor(2.)), from_f.jacobian(lambda a: a * 2, torch.tensor(2.)))
print(from_f.jacobian(lambda a: a @ a.T, torch.ones(2, 2)))
print(from_f.jacobian(f, x, vectorize=True))
print(from_f.hessian(lambda a: (a.sin() * a).sum(), torch.tensor([0.5, 1.0]), create_graph=True))
""")

case("functional_products", """
from_f = torch.autograd.functional
def f(x):
    return x ** 2 * 3
x = torch.tensor([1., 2., 3.])
print(from_f.vjp(f, x, torch.ones(3)))
print(from_f.vjp(lambda a: a.sum(), x))
print(from_f.jvp(f, x, torch.ones(3)))
print(from_f.hvp(lambda a: (a ** 3).sum(), x, torch.ones(3)))
print(from_f.vhp(lambda a: (a ** 3).sum(), x, torch.ones(3)))
print(from_f.vjp(lambda a, b: a * b, (x, x * 2), torch.ones(3)))
print(from_f.jvp(lambda a, b: (a * b, a - b), (x, x * 2), (torch.ones(3), torch.ones(3))))
print(from_f.hvp(lambda a, b: (a * a * b).sum(), (x, x), (torch.ones(3), torch.zeros(3))))
xr = torch.tensor([1., 2.], requires_grad=True)
out, v = from_f.vjp(f, xr, torch.ones(2), create_graph=True)
print(out, v)
""")

case("functional_errors_v", """
torch.autograd.functional.vjp(lambda a: a * 2, torch.ones(3))
""")

case("functional_errors_output_type", """
torch.autograd.functional.jacobian(lambda a: 3.0, torch.ones(3))
""")

case("functional_errors_hessian_scalar", """
torch.autograd.functional.hessian(lambda a: a * 2, torch.ones(3))
""")

case("functional_errors_strict", """
torch.autograd.functional.jacobian(lambda a: torch.ones(2), torch.ones(3), strict=True)
""")

case("func_grad", """
g = torch.func.grad(lambda a: (a ** 2).sum())
x = torch.tensor([1., 2., 3.])
print(g(x))
print(torch.func.grad(lambda a, b: (a * b).sum(), argnums=1)(x, x * 2))
print(torch.func.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x * 2))
print(torch.func.grad(lambda a: ((a ** 2).sum(), a * 2), has_aux=True)(x))
print(torch.func.grad(torch.func.grad(lambda a: a ** 3))(torch.tensor(2.)))
print(torch.func.grad(lambda a: (a.detach() ** 2).sum())(x))
xr = torch.tensor([1., 2.], requires_grad=True)
print(torch.func.grad(lambda a: (a ** 2).sum())(xr))
def cube(a):
    return (a ** 3).sum()
print(torch.func.grad(cube)(x))
torch.func.grad(lambda a: a ** 2)(x)
""")

# --- hooks and Variable -------------------------------------------------------------------------

case("tensor_hooks", """
x = torch.tensor([1., 2.], requires_grad=True)
h = x.register_hook(lambda g: print("leaf hook", g))
y = x * 3
h2 = y.register_hook(lambda g: g * 10)
y.register_hook(lambda g: print("y hook2", g))
y.sum().backward(); print(x.grad)
h2.remove(); h2.remove()
x.grad = None
y = x * 3
y.register_hook(lambda g: print("y2", g))
y.retain_grad()
y.register_hook(lambda g: g * 2)
y.sum().backward(); print(x.grad, y.grad)
print(torch.autograd.grad((x * 2).sum(), x))
z = x * 2
z.register_hook(lambda g: print("z hook in grad", g))
print(torch.autograd.grad((z * z).sum(), z))
h.remove()
x.register_hook(lambda g: g + 100)
print(torch.autograd.grad((x * 1).sum(), x))
ab = torch.tensor([1., 2.], requires_grad=True)
a, b = ab.unbind()
b.register_hook(lambda g: g * 7)
(a + b * 2).backward()
print(ab.grad)
w = torch.tensor([1.], requires_grad=True)
w.register_hook(lambda g: torch.ones(3))
(w * 2).sum().backward()
""")

case("tensor_hook_errors", """
torch.ones(2).register_hook(lambda g: g)
""")

case("tensor_hook_errors_type", """
w = torch.tensor([1.], requires_grad=True)
w.register_hook(lambda g: 5)
(w * 2).sum().backward()
""")

case("variable", """
v = torch.autograd.Variable(torch.ones(2), requires_grad=True)
print(v, v.is_leaf, isinstance(v, torch.autograd.Variable), isinstance(3, torch.autograd.Variable))
print(torch.autograd.Variable(torch.ones(2)))
t = torch.ones(2)
u = torch.autograd.Variable(t)
u.add_(1)
print(t, torch.autograd.Variable)
""")

# --- more containers, lazy layers, RMSprop, gradcheck, legacy type names -------------------------

case("module_dict", """
torch.manual_seed(0)
d = nn.ModuleDict({'linear': nn.Linear(3, 2), 'act': nn.ReLU()})
d['output'] = nn.Linear(2, 1)
print(d, len(d), 'act' in d, list(d.keys()))
for k, m in d.items():
    print(k, m)
print(d.output, d['linear'].weight.shape, d.pop('act'), [k for k in d])
d.update([('z', nn.Tanh())])
del d['z']
print(d, sum(p.numel() for p in d.parameters()), nn.ModuleDict())
print(d['output'](d['linear'](torch.ones(1, 3))))
d.update([('bad',)])
""")

case("lazy_linear", """
torch.manual_seed(1)
m = nn.LazyLinear(3)
print(m, m.in_features)
opt = optim.SGD(m.parameters(), lr=0.1)
s = nn.Sequential(m, nn.ReLU(), nn.LazyLinear(2, bias=False))
y = s(torch.ones(2, 4))
print(s, m.weight, y)
y.sum().backward()
opt.step()
print(m.weight, [n for n, p in s.named_parameters()], m.in_features)
print(nn.LazyLinear(4)(torch.ones(3)))
""")

case("rmsprop", """
torch.manual_seed(0)
for kw in [dict(), dict(momentum=0.9), dict(centered=True, weight_decay=0.1),
           dict(momentum=0.5, centered=True, maximize=True)]:
    w = torch.randn(3, 2, requires_grad=True)
    opt = optim.RMSprop([w], lr=0.01, **kw)
    for i in range(20):
        loss = ((w * torch.arange(6.0).reshape(3, 2) - 1) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(w, loss)
    print(opt)
    print(sorted(opt.state[w].keys()), opt.state[w]['step'])
optim.RMSprop([w], alpha=-1)
""")

case("gradcheck", """
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x
x = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)
w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(Bad.apply, (x,), raise_exception=False))
print(torch.autograd.gradcheck(lambda a, b: (a.sin(), a @ b, a * 2), (x, w)))
print(torch.autograd.gradcheck(lambda a, k: a * k, (x, 3)))
torch.manual_seed(0)
print(torch.autograd.gradgradcheck(lambda a, b: (a ** 3) @ b.exp(), (x, w)), torch.rand(2))
print(torch.autograd.gradgradcheck(Bad.apply, x, raise_exception=False))
try:
    torch.autograd.gradcheck(lambda a: a, torch.ones(2, dtype=torch.double))
except ValueError as e:
    print(e)
try:
    torch.autograd.gradcheck(Bad.apply, x)
except RuntimeError as e:
    print(str(e))
""")

case("tensor_legacy_type", """
a = torch.tensor([1, 2])
b = torch.tensor([1.0, 2.0], requires_grad=True)
print(a.type(), b.type(), b.double().type(), (a > 1).type(), a.int().type())
print(a.nelement(), torch.ones(2, 3).nelement(), b.type(torch.float) is b)
print(a.type(torch.float), a.type('torch.DoubleTensor'), a.type(torch.FloatTensor))
print(b.type(torch.double), (a == 1).type(torch.float).sum().item())
a.type('torch.Nonsense')
""")

case("one_hot", """
print(F.one_hot(torch.tensor([0, 2])), F.one_hot(torch.tensor([[1], [0]]), num_classes=3))
print(F.one_hot(torch.tensor([], dtype=torch.long), 3), F.one_hot(torch.tensor(1), 3))
for bad in [(torch.tensor([0., 1.]),), (torch.tensor([-1, 1]),), (torch.tensor([], dtype=torch.long),),
            (torch.tensor([1]), 0)]:
    try:
        F.one_hot(*bad)
    except RuntimeError as e:
        print(e)
F.one_hot(torch.tensor([0, 5]), 3)
""")

# --- every module class: its printing and a forward and backward ------------------------------
#
# One case per class torch.nn offers a program (tests/test_nn.py fails for a class missing
# here): class name -> (the module, its inputs, the call when it is not m(*inputs)).

_X = "torch.randn(2, 3, requires_grad=True)"
_IMAGE = "torch.randn(1, 2, 5, 5, requires_grad=True)"
_PROBABILITIES = "(torch.rand(2, 3, requires_grad=True), torch.rand(2, 3))"
MODULE_FORMS: dict[str, tuple] = {
    "Module": ("nn.Module()", f"({_X},)"),
    "Linear": ("nn.Linear(3, 2)", f"({_X},)"),
    "LazyLinear": ("nn.LazyLinear(2)", f"({_X},)"),
    "Sequential": ("nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))", f"({_X},)"),
    "ModuleList": ("nn.ModuleList([nn.Linear(3, 2), nn.ReLU()])", f"({_X},)",
                   "m[1](m[0](*inputs))"),
    "ModuleDict": ("nn.ModuleDict({'a': nn.Linear(3, 2), 'b': nn.Sigmoid()})", f"({_X},)",
                   "m['b'](m['a'](*inputs))"),
    "ParameterList": ("nn.ParameterList([torch.randn(3, 2), nn.Parameter(torch.randn(2))])",
                      f"({_X},)", "(inputs[0] @ m[0] + m[1]).tanh()"),
    "ParameterDict": ("nn.ParameterDict({'w': torch.randn(3, 2), 'b': torch.zeros(2)})",
                      f"({_X},)", "inputs[0] @ m['w'] + m['b']"),
    "Flatten": ("nn.Flatten()", "(torch.randn(2, 3, 2, requires_grad=True),)"),
    "Dropout": ("nn.Dropout(0.5)", f"({_X},)"),
    "Identity": ("nn.Identity(3, unused=1)", f"({_X},)"),
    "MSELoss": ("nn.MSELoss()", f"({_X}, torch.randn(2, 3))"),
    "L1Loss": ("nn.L1Loss(reduction='sum')", f"({_X}, torch.randn(2, 3))"),
    "CrossEntropyLoss": ("nn.CrossEntropyLoss()", f"({_X}, torch.tensor([0, 2]))"),
    "NLLLoss": ("nn.NLLLoss()", f"({_X}.log_softmax(1), torch.tensor([1, 2]))"),
    "BCELoss": ("nn.BCELoss()", _PROBABILITIES),
    "BCEWithLogitsLoss": ("nn.BCEWithLogitsLoss()", f"({_X}, torch.rand(2, 3))"),
    "SmoothL1Loss": ("nn.SmoothL1Loss(beta=0.5)", f"({_X}, torch.randn(2, 3))"),
    "HuberLoss": ("nn.HuberLoss(delta=0.5)", f"({_X}, torch.randn(2, 3))"),
    "KLDivLoss": ("nn.KLDivLoss(reduction='batchmean')",
                  f"({_X}.log_softmax(1), torch.rand(2, 3).softmax(1))"),
    "CosineSimilarity": ("nn.CosineSimilarity(dim=1)", f"({_X}, torch.randn(2, 3))"),
    "ReLU": ("nn.ReLU()", f"({_X},)"),
    "Sigmoid": ("nn.Sigmoid()", f"({_X},)"),
    "Tanh": ("nn.Tanh()", f"({_X},)"),
    "Softmax": ("nn.Softmax(dim=1)", f"({_X},)"),
    "LogSoftmax": ("nn.LogSoftmax(dim=1)", f"({_X},)"),
    "LeakyReLU": ("nn.LeakyReLU(0.2)", f"({_X},)"),
    "GELU": ("nn.GELU(approximate='tanh')", f"({_X},)"),
    "Softplus": ("nn.Softplus(beta=2.0)", f"({_X},)"),
    "ELU": ("nn.ELU(alpha=0.5)", f"({_X},)"),
    "SiLU": ("nn.SiLU()", f"({_X},)"),
    "LogSigmoid": ("nn.LogSigmoid()", f"({_X},)"),
    "Hardtanh": ("nn.Hardtanh(-0.5, 0.5)", f"({_X},)"),
    "ReLU6": ("nn.ReLU6()", f"({_X},)"),
    "Embedding": ("nn.Embedding(5, 2, padding_idx=0)", "(torch.tensor([[0, 3], [4, 3]]),)",
                  "m(*inputs) * 1"),
    "BatchNorm1d": ("nn.BatchNorm1d(3)", "(torch.randn(4, 3, requires_grad=True),)"),
    "BatchNorm2d": ("nn.BatchNorm2d(2, momentum=None)",
                    "(torch.randn(2, 2, 3, 3, requires_grad=True),)"),
    # (an input without grad: layer norm's input gradient is not torch's to the last bit)
    "LayerNorm": ("nn.LayerNorm((2, 3))", "(torch.randn(4, 2, 3),)"),
    "DataParallel": ("nn.DataParallel(nn.Sequential(nn.Linear(3, 2), nn.Tanh()))",
                     "(torch.randn(4, 3, requires_grad=True),)"),
    "Conv1d": ("nn.Conv1d(2, 3, 3, padding=1)", "(torch.randn(1, 2, 5, requires_grad=True),)"),
    "Conv2d": ("nn.Conv2d(2, 3, 3, stride=2)", f"({_IMAGE},)"),
    "ConvTranspose1d": ("nn.ConvTranspose1d(2, 3, 3, stride=2, output_padding=1)",
                        "(torch.randn(1, 2, 5, requires_grad=True),)"),
    "ConvTranspose2d": ("nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, groups=2)",
                        f"({_IMAGE},)"),
    "LazyConv1d": ("nn.LazyConv1d(3, 3, padding=1)", "(torch.randn(1, 2, 5, requires_grad=True),)"),
    "LazyConv2d": ("nn.LazyConv2d(3, 3, stride=2)", f"({_IMAGE},)"),
    "MaxPool2d": ("nn.MaxPool2d(2, stride=1)", f"({_IMAGE},)"),
    "AvgPool2d": ("nn.AvgPool2d(2)", f"({_IMAGE},)"),
    "AdaptiveAvgPool2d": ("nn.AdaptiveAvgPool2d(1)", f"({_IMAGE},)"),
    "LazyBatchNorm1d": ("nn.LazyBatchNorm1d(momentum=0.3)", "(torch.randn(4, 3, requires_grad=True),)"),
    "LazyBatchNorm2d": ("nn.LazyBatchNorm2d(affine=False)", f"({_IMAGE},)"),
    # a recurrent layer returns (output, hidden): the case follows the output
    "RNN": ("nn.RNN(3, 2, num_layers=2)", "(torch.randn(4, 1, 3, requires_grad=True),)",
            "m(*inputs)[0]"),
    "GRU": ("nn.GRU(3, 2, batch_first=True)", "(torch.randn(1, 4, 3, requires_grad=True),)",
            "m(*inputs)[0]"),
    "LSTM": ("nn.LSTM(3, 2, bidirectional=True)", "(torch.randn(4, 1, 3, requires_grad=True),)",
             "m(*inputs)[0]"),
    "RNNCell": ("nn.RNNCell(3, 2)", f"({_X},)"),
    "GRUCell": ("nn.GRUCell(3, 2)", f"({_X},)"),
    "LSTMCell": ("nn.LSTMCell(3, 2)", f"({_X},)", "m(*inputs)[0]"),
}


def _module_case(construct: str, inputs: str, call: str = "m(*inputs)") -> str:
    return f"""
torch.manual_seed(0)
m = {construct}
inputs = {inputs}
print(m)
out = {call}
print(out, out.grad_fn)
out.sum().backward()
print([t.grad for t in inputs if t.is_leaf and t.requires_grad], [p.grad for p in m.parameters()])
"""


for _name, _form in MODULE_FORMS.items():
    case(f"module_{_name}", _module_case(*_form))

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def run_case(source: str, modules: dict) -> str:
    """What the case prints (addresses replaced), ending with `ErrorClass: message` if it
    raises; `modules` binds torch, nn, F and optim."""
    out = io.StringIO()
    namespace = dict(modules)
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(source, "<case>", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - the error is part of the output
            print(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    return _ADDRESS.sub("0xADDR", out.getvalue())


def torch_modules() -> dict:
    import torch  # noqa: PLC0415 - only the golden maker has torch
    import torch.autograd.functional  # noqa: F401, PLC0415
    import torch.func  # noqa: F401, PLC0415
    return {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "optim": torch.optim}


def autodiff_modules() -> dict:
    from autodiff.engine import api  # noqa: PLC0415
    return {"torch": api.torch, "nn": api.nn, "F": api.functional, "optim": api.optim_namespace}
