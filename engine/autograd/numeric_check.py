"""Compare autograd gradients with float64 central differences.

`check_gradients(fn, inputs)` is the library entry used by the tests and by the
CLI's `check` command: `fn` maps Tensors to a Tensor, `inputs` are float64
arrays. The analytic side is a vector-Jacobian product with a random direction,
the numeric side the same product through finite differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..graph import calls as autograd
from ..tensors.tensor import RULES, Tensor


@dataclass
class GradientReport:
    analytic: list[np.ndarray]
    numeric: list[np.ndarray]
    max_abs_error: float
    max_rel_error: float

    def ok(self, rtol: float = 1e-6, atol: float = 1e-7) -> bool:
        return all(np.allclose(a, n, rtol=rtol, atol=atol)
                   for a, n in zip(self.analytic, self.numeric))


def central_differences(objective, arrays, eps: float = 1e-6) -> list[np.ndarray]:
    """d objective / d arrays[i] by float64 central differences, one element at a time."""
    numeric = []
    for i, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            shifted = [v.copy() for v in arrays]
            shifted[i][idx] = a[idx] + eps
            up = objective(shifted)
            shifted[i][idx] = a[idx] - eps
            down = objective(shifted)
            grad[idx] = (up - down) / (2 * eps)
        numeric.append(grad)
    return numeric


def check_gradients(fn, arrays, *, eps: float = 1e-6, seed: int = 0) -> GradientReport:
    """Gradient of <v, fn(inputs)> by backward versus central differences, in float64."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    leaves = [Tensor._wrap(a.copy(), requires_grad=True) for a in arrays]
    out = fn(*leaves)
    direction = np.random.default_rng(seed).standard_normal(out.array.shape)
    if out.requires_grad:  # else fn is constant in its inputs: all gradients are zero
        out.backward(Tensor._wrap(direction))
    analytic = [t._grad.array if t._grad is not None else np.zeros_like(t.array) for t in leaves]

    def objective(values):
        # leaves require grad so that fn may itself differentiate (check_second_order)
        result = fn(*[Tensor._wrap(v, requires_grad=True) for v in values])
        return float(np.sum(result.array * direction))

    numeric = central_differences(objective, arrays, eps)
    abs_err = max((float(np.max(np.abs(x - y))) if x.size else 0.0)
                  for x, y in zip(analytic, numeric))
    rel_err = max((float(np.max(np.abs(x - y) / np.maximum(np.abs(y), 1e-12))) if x.size else 0.0)
                  for x, y in zip(analytic, numeric))
    return GradientReport(analytic, numeric, abs_err, rel_err)


def check_second_order(fn, arrays, *, eps: float = 1e-6, seed: int = 0) -> GradientReport:
    """Check the backward pass itself: differentiate x -> <w, d<v, fn(x)>/dx> (create_graph)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    probe = fn(*[Tensor._wrap(a.copy(), requires_grad=True) for a in arrays])
    rng = np.random.default_rng(seed + 1)
    v = Tensor._wrap(rng.standard_normal(probe.array.shape))
    weights = [Tensor._wrap(rng.standard_normal(a.shape)) for a in arrays]

    def first_derivative(*leaves):
        grads = autograd.grad(fn(*leaves), leaves, v, None, True, True, RULES)
        total = None
        for g, w in zip(grads, weights):
            if g is None:
                continue
            term = (g * w).sum()
            total = term if total is None else total + term
        return total if total is not None else (leaves[0] * 0).sum()

    return check_gradients(first_derivative, arrays, eps=eps, seed=seed)
