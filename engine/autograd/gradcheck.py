"""torch.autograd.gradcheck and gradgradcheck, for programs (autograd/numeric_check.py is the tests'
checker): a function's analytical Jacobian (one backward pass per output element) against
central differences, as torch computes both.

The numerical Jacobian perturbs each element of each input that requires grad by ±eps in
place (its storage, as torch perturbs `x.data`: no version bump) and divides the difference
of the outputs by 2·eps. Both Jacobians are (input elements × output elements), the layout
torch's mismatch message prints. gradgradcheck is gradcheck of the function that returns
the first derivatives (autograd.grad with create_graph), given random grad_outputs that it
draws as torch.testing.make_tensor draws them (uniform_(-1, 1) from the global generator).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..graph import calls as engine_autograd
from ..core import dtypes
from ..core.session import no_grad
from ..tensors.tensor import RULES, Tensor


class GradcheckError(RuntimeError):
    """torch.autograd.gradcheck.GradcheckError (a RuntimeError)."""

    tg_error_class = "torch.autograd.gradcheck.GradcheckError"

    @staticmethod
    def tg_type_name(obj) -> str:  # what type(e) prints
        return "torch.autograd.gradcheck.GradcheckError"


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _differentiable(outputs: tuple) -> tuple:
    return tuple(o for o in outputs if type(o) is Tensor and o.requires_grad)


def _check_inputs(inputs: tuple) -> None:
    wanted = False
    for index, x in enumerate(inputs):
        if type(x) is Tensor and x.requires_grad:
            if x.array.dtype != np.float64:
                warnings.warn(f"Input #{index} requires gradient and is not a double precision "
                              "floating point or complex. This check will likely fail if all the "
                              "inputs are not of double precision floating point or complex. ",
                              UserWarning, stacklevel=3)
            wanted = True
    if not wanted:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


def _numerical(func, inputs: tuple, eps: float) -> list:
    """[output][input] -> (input numel × output numel) arrays, every output of `func`."""
    def outputs() -> tuple:
        with no_grad():
            return tuple(o.array.astype(o.array.dtype, copy=True) if type(o) is Tensor else None
                         for o in _as_tuple(func(*inputs)))

    sizes = [o.size if o is not None else 0 for o in outputs()]
    jacobians = [[] for _ in sizes]
    for x in inputs:
        if not (type(x) is Tensor and x.requires_grad):
            continue
        flat = x.array.reshape(-1)  # a view of the input's storage
        columns = [np.zeros((flat.size, n), x.array.dtype) for n in sizes]
        for k in range(flat.size):
            orig = flat[k]
            flat[k] = orig - eps
            before = outputs()
            flat[k] = orig + eps
            after = outputs()
            flat[k] = orig
            for i, (a, b) in enumerate(zip(before, after)):
                if a is not None:
                    columns[i][k] = ((b - a) / (2 * eps)).reshape(-1)
        for i, column in enumerate(columns):
            jacobians[i].append(column)
    return jacobians


def _analytical(output: Tensor, diff_inputs: list) -> list:
    """[input] -> (input numel × output numel), one backward pass per output element."""
    n = output.array.size
    jacobians = [np.zeros((x.array.size, n), x.array.dtype) for x in diff_inputs]
    for j in range(n):
        seed = np.zeros(output.array.shape, output.array.dtype)
        seed.reshape(-1)[j] = 1
        grads = engine_autograd.grad([output], diff_inputs, [Tensor._wrap(seed)], True, False,
                                     True, RULES)
        for jacobian, x, g in zip(jacobians, diff_inputs, grads):
            if g is None:
                continue
            if g.array.shape != x.array.shape:
                raise GradcheckError("Gradient has incorrect size")
            jacobian[:, j] = g.array.reshape(-1)
    return jacobians


def _mismatch(output_index: int, input_index: int, numerical, analytical) -> str:
    return (f"Jacobian mismatch for output {output_index} with respect to input {input_index},\n"
            f"numerical:{Tensor._wrap(numerical)!r}\nanalytical:{Tensor._wrap(analytical)!r}\n")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None) -> bool:
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    numerical = _numerical(func, inputs, eps)
    if not check_backward_ad:
        return True
    diff_inputs = [x for x in inputs if type(x) is Tensor and x.requires_grad]
    kept = [(o, n) for o, n in zip(func_out, numerical) if type(o) is Tensor and o.requires_grad]
    try:
        if not kept:
            for i, per_input in enumerate(numerical):
                for jacobian in per_input:
                    if np.any(jacobian != 0):
                        raise GradcheckError("Numerical gradient for function expected to be zero")
        for i, (output, per_input) in enumerate(kept):
            for j, (num, ana) in enumerate(zip(per_input, _analytical(output, diff_inputs))):
                if not np.all(np.isclose(ana, num, rtol=rtol, atol=atol)):
                    raise GradcheckError(_mismatch(i, j, num, ana))
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False) -> bool:
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_random_like(o) for o in _differentiable(_as_tuple(func(*inputs))))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    count = len(grad_outputs)
    diff_args = {i for i, x in enumerate(inputs) if type(x) is Tensor and x.requires_grad}
    diff_grads = {i for i, g in enumerate(grad_outputs) if g.requires_grad}

    def first_derivatives(*args):
        args_in = tuple(x.requires_grad_() if i in diff_args else x
                        for i, x in enumerate(args[:-count]))
        outputs = _differentiable(_as_tuple(func(*args_in)))
        seeds = [g.requires_grad_() if i in diff_grads else g
                 for i, g in enumerate(args[-count:])]
        wrt = [x for i, x in enumerate(args_in) if i in diff_args]
        grads = engine_autograd.grad(list(outputs), wrt, seeds, None, True, True, RULES)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_backward_ad=check_rev_over_rev)


def _random_like(output: Tensor) -> Tensor:
    """torch.testing.make_tensor(shape, dtype, low=-1, high=1, requires_grad=True)."""
    from ..tensors.creation import empty  # noqa: PLC0415 - creation imports much of the engine
    from ..ops.random import uniform_  # noqa: PLC0415

    dtype = output.dtype if output.array.dtype.kind == "f" else dtypes.float64
    return uniform_(empty(output.array.shape, dtype=dtype), -1, 1).requires_grad_(True)


FUNCTIONS = {"gradcheck": gradcheck, "gradgradcheck": gradgradcheck}
