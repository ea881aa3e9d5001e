"""torch.func's transforms (jacrev, jacfwd, hessian, vmap, grad, grad_and_value, vjp, jvp;
engine/autograd/func_transforms.py) print under autodiff, byte for byte, what they print under
real PyTorch (skipped without torch): several functions, argnums as an int, a negative int and
a tuple, has_aux, tuple outputs, errors, and vmap's grad_fn chains (pointwise functions, dot and
matmul, sum and mean, in_dims and out_dims). The jacobians and hessians are also checked
against float64 central differences of the function, without torch."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from autodiff.engine.api import torch
from torch_programs import assert_prints_as_torch, run_under_torch

PROGRAMS = {
    'jac': 'import torch\nfrom torch.func import jacrev, jacfwd, hessian\nx = torch.tensor([0.5, -1.0, 2.0])\ny = torch.tensor([1.5, 0.25])\ndef f(a):\n    return a.sin() * a\ndef g(a, b):\n    return a.sum() * b ** 2 + b.exp()\ndef h(a):\n    return (a ** 3).sum() + a.prod()\ndef with_aux(a):\n    out = a.cos() * 2\n    return out, out.sum()\ndef two(a, b):\n    return a * 2, b.sum() * a\nfor jac in (jacrev, jacfwd):\n    print(jac(f)(x))\n    print(jac(g)(x, y))\n    print(jac(g, argnums=1)(x, y))\n    print(jac(g, argnums=(0, 1))(x, y))\n    print(jac(with_aux, has_aux=True)(x))\n    print(jac(two, argnums=(0, 1))(x, y))\n    print(jac(torch.sin)(torch.tensor(0.5)))\nprint(hessian(h)(x))\nprint(hessian(lambda a: (a.sin() * a).sum())(x))\nprint(hessian(g, argnums=1)(x, y))\nprint(hessian(lambda a, b: (a * b).sum(), argnums=(0, 1))(y, y * 3))\nw = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\nj = jacrev(f)(w)\nprint(j)\nj.sum().backward()\nprint(w.grad)\ntry:\n    print(jacrev(f, argnums=2)(x))\nexcept Exception as e:\n    print(type(e).__name__, e)\ntry:\n    print(jacrev(with_aux, has_aux=True)(x)[0].shape, jacrev(lambda a: a, has_aux=True)(x))\nexcept Exception as e:\n    print(type(e).__name__, e)\n',
    'vmap': "import torch\nfrom torch.func import vmap\nx = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)\ny = torch.tensor([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]], requires_grad=True)\nw = torch.tensor([1.0, 2.0], requires_grad=True)\nw3 = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\nc = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])\ndef chain(n):\n    if n is None:\n        return 'None'\n    s = n.name()\n    if len(n.next_functions) > 0:\n        s += '(' + ', '.join([chain(m) for m, _ in n.next_functions]) + ')'\n    return s\ndef show(r):\n    print(r)\n    print(tuple(r.shape), chain(r.grad_fn))\nshow(vmap(torch.sin)(x))\nshow(vmap(lambda a: a * 2)(x))\nshow(vmap(lambda a, b: a * b)(x, y))\nshow(vmap(lambda a: torch.sin(a) + a)(x))\nshow(vmap(lambda a, b: a + b, in_dims=(0, None))(x, w))\nshow(vmap(lambda a: a * 2 + 1)(x))\nshow(vmap(torch.sigmoid)(x))\nshow(vmap(torch.tanh)(x))\nshow(vmap(torch.relu)(x - 3))\nshow(vmap(lambda a: a ** 2)(x))\nshow(vmap(lambda a, b: a / b)(x, y + 1))\nshow(vmap(torch.dot)(x, y))\nshow(vmap(torch.matmul)(x, y))\nshow(vmap(torch.sum)(x))\nshow(vmap(torch.mean)(x))\nshow(vmap(torch.sum, in_dims=1)(x))\nshow(vmap(torch.sin, in_dims=1)(x))\nshow(vmap(torch.sin, out_dims=1)(x))\nshow(vmap(torch.sin, in_dims=1, out_dims=1)(x))\nshow(vmap(lambda a: a * 2, in_dims=1, out_dims=1)(x))\nshow(vmap(lambda a: a * 2, in_dims=1)(x))\nshow(vmap(lambda a, b: a * b, in_dims=1)(x, y))\nshow(vmap(lambda a, b: a * b, in_dims=(1, None))(x, w3))\nshow(vmap(lambda a: torch.relu(a) - a, out_dims=1)(x))\nshow(vmap(torch.sin)(c))\nshow(vmap(lambda a, b: a * b)(c, y))\nr = vmap(lambda a: (a.sin(), a * 2))(x)\nprint(r[0].grad_fn.name(), r[1].grad_fn.name())\nprint(vmap(lambda a: a)(x) is x)\nz = vmap(lambda a, b: a * b + a.exp())(x, y)\nz.sum().backward()\nprint(x.grad, y.grad)\nd = vmap(torch.dot, in_dims=(0, None))(x, w)\nprint(d)\nshow(vmap(torch.dot, in_dims=(None, 0))(w, x))\nshow(vmap(torch.matmul, in_dims=(0, None))(x, w))\nshow(vmap(torch.dot, in_dims=(1, 1))(x.t(), y.t()))\nshow(vmap(torch.dot, in_dims=(1, None))(x.t(), w))\ns = vmap(lambda a: (a ** 2).sum())(x)\nprint(s.detach())\nx.grad = None\ns.sum().backward()\nprint(x.grad)\n",
    'grad': 'import torch\nfrom torch.func import grad, grad_and_value, vjp, jvp\nx = torch.tensor([0.5, -1.0, 2.0])\ny = torch.tensor([1.5, 0.25, 3.0])\ndef f(a):\n    return (a.sin() * a).sum()\ndef g(a, b):\n    return (a * b ** 2).sum() + b.exp().sum()\ndef aux(a):\n    out = (a ** 2).sum()\n    return out, a.cos()\nprint(grad(f)(x))\nprint(grad(g)(x, y), grad(g, argnums=1)(x, y))\nprint(grad(g, argnums=(0, 1))(x, y))\nprint(grad(aux, has_aux=True)(x))\nprint(grad(grad(lambda a: a ** 3))(torch.tensor(2.0)))\nprint(grad_and_value(f)(x))\nprint(grad_and_value(g, argnums=(0, 1))(x, y))\nprint(grad_and_value(aux, has_aux=True)(x))\nout, fn = vjp(torch.sin, x)\nprint(out, fn(torch.ones(3)))\nout, fn = vjp(lambda a, b: a * b, x, y)\nprint(out, fn(torch.tensor([1.0, 2.0, 3.0])))\nout, fn, a = vjp(lambda a: (a.exp(), a.sum()), x, has_aux=True)\nprint(out, fn(torch.ones(3)), a)\nout, fn = vjp(lambda a: (a * 2, a.sum()), x)\nprint(out, fn((torch.ones(3), torch.tensor(2.0))))\nprint(jvp(torch.sin, (x,), (torch.ones(3),)))\nprint(jvp(lambda a, b: a * b, (x, y), (torch.ones(3), torch.zeros(3))))\nprint(jvp(lambda a: (a.exp(), a.sum()), (x,), (torch.ones(3),), has_aux=True))\nprint(jvp(g, (x, y), (y, x)))\nw = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ngw = grad(f)(w)\nprint(gw)\ngw.sum().backward()\nprint(w.grad)\ntry:\n    print(grad(f, argnums=1)(x))\nexcept Exception as e:\n    print(type(e).__name__, e)\ntry:\n    print(grad(lambda a: a * 2)(x))\nexcept Exception as e:\n    print(type(e).__name__, e)\ntry:\n    print(jvp(torch.sin, (x,), (torch.ones(2),)))\nexcept Exception as e:\n    print(type(e).__name__, e)\n',
}


@pytest.fixture(scope="module")
def reference():
    return run_under_torch(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_as_torch(name, reference):
    assert_prints_as_torch(name, PROGRAMS[name], reference[name])


# --- against central differences (no torch) ---------------------------------------------

_H = 1e-6


def _numeric_jacobian(func, point: np.ndarray) -> np.ndarray:
    """d func / d point by central differences, func evaluated in float64."""
    def value(p):
        return np.asarray(func(torch.tensor(p.tolist(), dtype=torch.float64)).tolist())

    base = value(point)
    jac = np.zeros(base.shape + point.shape)
    for index in itertools.product(*map(range, point.shape)):
        step = np.zeros_like(point)
        step[index] = _H
        jac[(...,) + index] = (value(point + step) - value(point - step)) / (2 * _H)
    return jac


FUNCTIONS = {
    "sin times x": lambda a: a.sin() * a,
    "exp of a sum": lambda a: a.exp() * a.sum(),
    "matrix": lambda a: torch.tanh(a @ a.t()),
    "power": lambda a: a ** 3 - 2 * a,
}
POINTS = {"sin times x": [0.5, -1.0, 2.0], "exp of a sum": [0.1, 0.2, -0.3],
          "matrix": [[0.5, -1.0], [0.25, 0.75]], "power": [[1.5, -0.5, 2.0]]}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_matches_central_differences(name, jac):
    point = np.array(POINTS[name])
    got = getattr(torch.func, jac)(FUNCTIONS[name])(torch.tensor(POINTS[name], dtype=torch.float64))
    np.testing.assert_allclose(np.asarray(got.tolist()),
                               _numeric_jacobian(FUNCTIONS[name], point), rtol=1e-6, atol=1e-8)


SCALARS = {
    "sum of sin times x": lambda a: (a.sin() * a).sum(),
    "cubes and a product": lambda a: (a ** 3).sum() + a.prod(),
    "log sum exp": lambda a: a.exp().sum().log(),
}


@pytest.mark.parametrize("name", sorted(SCALARS))
def test_hessian_matches_central_differences(name):
    """H[i, j] = (f(x+ei+ej) - f(x+ei-ej) - f(x-ei+ej) + f(x-ei-ej)) / 4h², in float64."""
    point, h, func = np.array([0.5, -1.0, 2.0]), 1e-4, SCALARS[name]

    def value(p):
        return func(torch.tensor(p.tolist(), dtype=torch.float64)).item()

    eye = np.eye(3) * h
    want = np.array([[(value(point + eye[i] + eye[j]) - value(point + eye[i] - eye[j])
                       - value(point - eye[i] + eye[j]) + value(point - eye[i] - eye[j]))
                      / (4 * h * h) for j in range(3)] for i in range(3)])
    got = torch.func.hessian(func)(torch.tensor(point.tolist(), dtype=torch.float64))
    np.testing.assert_allclose(np.asarray(got.tolist()), want, rtol=1e-5, atol=1e-6)


def test_hessian_of_a_second_argument_matches_central_differences():
    x = np.array([0.5, -1.0])
    y = np.array([1.5, 0.25])

    def g(a, b):
        return (a.sum() * b ** 2 + b.exp()).sum()

    def grad_y(b):
        return torch.func.grad(g, argnums=1)(torch.tensor(x.tolist(), dtype=torch.float64), b)

    got = torch.func.hessian(g, argnums=1)(torch.tensor(x.tolist(), dtype=torch.float64),
                                           torch.tensor(y.tolist(), dtype=torch.float64))
    np.testing.assert_allclose(np.asarray(got.tolist()), _numeric_jacobian(grad_y, y),
                               rtol=1e-6, atol=1e-8)
