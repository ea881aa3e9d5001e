"""torch.nn.utils: clip_grad_norm_ and clip_grad_value_, the gradient clipping of training loops.

Both change the gradients in place (their version counters move) and record nothing, as
torch's run under no_grad. The total norm follows torch's arithmetic step for step: each
gradient's vector norm (grouped by dtype, in order of first appearance), the norm of those
norms, the coefficient max_norm / (total + 1e-6) — a float over a tensor, which torch computes
as the tensor's reciprocal times the float — clamped to 1, and every gradient multiplied by
it, even when it is 1.
"""

from __future__ import annotations

import types
import warnings

import numpy as np

from ..ops.reduce import _vector_norm as vector_norm_array
from ..core.session import no_grad
from ..tensors.tensor import Tensor


def _gradients(parameters) -> list:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for param in params:
        if not isinstance(param, Tensor):
            raise AttributeError(f"'{type(param).__name__}' object has no attribute 'grad'")
    return [p._grad for p in params if p._grad is not None]


def _vector_norm(array: np.ndarray, p: float) -> np.ndarray:
    """torch.linalg.vector_norm of all of `array`, in its dtype (the engine's own norm)."""
    return np.asarray(vector_norm_array(np.ascontiguousarray(array), p, None, False),
                      dtype=array.dtype)[()]


def _total_norm(grads: list, p: float) -> np.ndarray:
    groups: dict = {}
    for g in grads:
        groups.setdefault(g.array.dtype, []).append(g.array)
    norms = [_vector_norm(a, p) for arrays in groups.values() for a in arrays]
    stacked = np.array(norms, dtype=np.result_type(*groups))
    return np.asarray(_vector_norm(stacked, p))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients so that their norm, taken together, is at most max_norm; return
    that norm (before scaling), a tensor."""
    from ..tensors.creation import tensor  # noqa: PLC0415 - creation needs the tensor class first

    if not isinstance(parameters, Tensor) and isinstance(parameters, types.GeneratorType):
        parameters = list(parameters)
        if not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          UserWarning, stacklevel=2)
    grads = _gradients(parameters)
    norm_type = float(norm_type)
    if not grads:
        return tensor(0.0)
    total = _total_norm(grads, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`")
    dt = total.dtype.type
    max_norm = float(max_norm)
    coefficient = dt(1) / (total + dt(1e-6)) * dt(max_norm)
    coefficient = Tensor._wrap(np.minimum(coefficient, dt(1.0)))
    with no_grad():  # (in place, as torch's g.mul_: an alias of a gradient sees the change)
        for g in grads:
            g.mul_(coefficient.to(g.dtype))
    return Tensor._wrap(total)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient into [-clip_value, clip_value], in place."""
    params = [parameters] if isinstance(parameters, Tensor) else parameters
    clip_value = float(clip_value)
    with no_grad():
        for g in _gradients(params):
            g.clamp_(-clip_value, clip_value)


FUNCTIONS = {f.__name__: f for f in (clip_grad_norm_, clip_grad_value_)}
