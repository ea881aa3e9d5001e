"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) and torch.func.grad, built
on autograd.grad as torch builds them, with torch's argument checks and return shapes.

Inputs are prepared as torch prepares them: a fresh leaf (`detach().requires_grad_()`), or, with
create_graph=True and an input that requires grad, `view_as` of it so that the result stays
connected to the caller's graph. jvp and hvp use the double-backward trick (the gradient of a
gradient with respect to its seed), so they need nothing but reverse mode.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from ..graph import calls as engine_autograd
from ..ops.shape import stack, view
from ..core.session import check_allocation, current, enable_grad, set_grad_enabled
from ..tensors.tensor import RULES, Tensor


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """torch's _autograd_grad: outputs that do not require grad are left out; allow_unused."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return engine_autograd.grad([o for o, _ in kept], list(inputs), [g for _, g in kept],
                                retain_graph, create_graph, True, RULES)


def _as_tuple(value, arg_name: str, fn_name: str):
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, el in enumerate(values):
        if type(el) is not Tensor:
            where = (f"the value at index {i} has type {_type_repr(el)}." if is_tuple
                     else f"the given {arg_name} has type {_type_repr(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but {where}")
    return is_tuple, values


def _type_repr(value) -> str:
    kind = type(value)
    module = kind.__module__
    return f"<class '{kind.__qualname__ if module == 'builtins' else module + '.' + kind.__qualname__}'>"


def _prepare(inputs, create_graph: bool, need_graph: bool):
    return tuple(view(t, t.array.shape) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in inputs)


def _finish(values, create_graph: bool):
    if values and isinstance(values[0], tuple):
        return tuple(_finish(v, create_graph) for v in values)
    return tuple(values) if create_graph else tuple(v.detach() for v in values)


def _unpack(values, is_tuple):
    return values if is_tuple else values[0]


def _unpack2(values, outer: bool, inner: bool):
    if not inner:
        values = tuple(v[0] for v in values)
    return values if outer else values[0]


def _check_requires_grad(values, strict: bool) -> None:
    if strict:
        for i, v in enumerate(values):
            if not v.requires_grad:
                raise RuntimeError(
                    f"Output {i} of the user-provided function does not require gradients. The "
                    "outputs must be computed in a differentiable manner from the input when "
                    "running in strict mode.")


def _zeros_for(grads, refs, strict: bool, what: str):
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The {what} of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode.")
            g = Tensor._wrap(np.zeros_like(np.asarray(ref.array)))
        out.append(g)
    return tuple(out)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.array.shape != b.array.shape:
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.shape} but got "
                               f"{a.shape}.")


def _outputs_of(func, inputs, fn_name, strict):
    """Call the user's function; its outputs as a tuple (and whether it returned one)."""
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                  fn_name)
    _check_requires_grad(outputs, strict)
    return is_tuple, outputs


def _inputs_and_v(inputs, v, create_graph, fn_name, v_of_output: bool):
    is_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, True)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, False)
        if not v_of_output:
            _validate_v(v, inputs, is_tuple)
    elif not v_of_output and (len(inputs) != 1 or inputs[0].array.size != 1):
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return is_tuple, inputs, v


def _outer_mode(create_graph: bool):
    return set_grad_enabled(True if create_graph else current().grad_enabled)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        is_inputs_tuple, inputs, v = _inputs_and_v(inputs, v, create_graph, "vjp", True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, "vjp", strict)
        if v is not None:
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].array.size != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with _outer_mode(create_graph):
        grads = _zeros_for(_grad(outputs, inputs, v, create_graph), inputs, strict, "output")
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(grads, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        is_inputs_tuple, inputs, v = _inputs_and_v(inputs, v, create_graph, "jvp", False)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, "jvp", strict)
        seeds = tuple(Tensor._wrap(np.zeros_like(np.asarray(o.array)), requires_grad=True)
                      for o in outputs)
        grad_inputs = _grad(outputs, inputs, seeds, create_graph=True)
    with enable_grad() if create_graph else nullcontext():
        grads = _zeros_for(_grad(grad_inputs, seeds, v, create_graph), outputs, strict, "output")
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(grads, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, "forward-mode" '
                             'tends to be more performant. Otherwise, prefer to use '
                             '"reverse-mode".')
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, "jacobian", strict)
        rows = []
        for i, out in enumerate(outputs):
            for inp in inputs:  # the result's size is known now: refuse it before the work
                check_allocation(out.array.shape + inp.array.shape, out.array.dtype)
            columns = [[] for _ in inputs]
            flat = np.zeros(out.array.size, dtype=out.array.dtype)
            for j in range(out.array.size):
                flat[j] = 1  # one row of the jacobian: the gradient of output element j
                seed = Tensor._wrap(flat.reshape(out.array.shape).copy())
                flat[j] = 0
                grads = _grad((out,), inputs, (seed,), create_graph, retain_graph=True)
                for k, (g, inp) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode.")
                        g = Tensor._wrap(np.zeros_like(np.asarray(inp.array)))
                    columns[k].append(g)
            rows.append(tuple(
                _stacked(column, out.array.shape + inp.array.shape, out, inp)
                for column, inp in zip(columns, inputs)))
        return _unpack2(_finish(tuple(rows), create_graph), is_outputs_tuple, is_inputs_tuple)


def _stacked(column, shape, out, inp):
    if not column:  # an empty output: no rows to stack
        return Tensor._wrap(np.zeros(shape, dtype=out.array.dtype))
    return view(stack(column, 0), shape)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, strict)
        if is_out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.array.size != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        return jacobian(single_output, inp, create_graph=True)

    result = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict)
    return _unpack2(result, is_inputs_tuple, is_inputs_tuple)


def _second_order(func, inputs, v, create_graph, strict, fn_name, trick: bool):
    with enable_grad():
        is_inputs_tuple, inputs, v = _inputs_and_v(inputs, v, create_graph, fn_name, False)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, fn_name, strict)
        if is_outputs_tuple:
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if outputs[0].array.size != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                               "contain a single element")
        jac = _grad(outputs, inputs, create_graph=True)
        if trick:
            seeds = tuple(Tensor._wrap(np.zeros_like(np.asarray(t.array)), requires_grad=True)
                          for t in inputs)
            double_back = _grad(jac, inputs, seeds, create_graph=True)
    with _outer_mode(create_graph):
        if trick:
            grads = _grad(double_back, seeds, v, create_graph)
        else:
            grads = _grad(jac, inputs, v, create_graph)
        grads = _zeros_for(grads, inputs, strict, "jacobian")
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(grads, create_graph), is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    return _second_order(func, inputs, v, create_graph, strict, "vhp", trick=False)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    return _second_order(func, inputs, v, create_graph, strict, "hvp", trick=True)


FUNCTIONS = {f.__name__: f for f in (vjp, jvp, jacobian, hessian, hvp, vhp)}


# --- torch.func.grad ------------------------------------------------------------------------------

def func_grad(func, argnums=0, has_aux=False):
    """torch.func.grad: a function returning the gradient of `func`'s scalar output with
    respect to the arguments `argnums` (and `func`'s aux output with has_aux=True)."""
    def wrapper(*args, **kwargs):
        return _grad_of(func, argnums, has_aux, args, kwargs)
    wrapper.__name__ = getattr(func, "__name__", "grad")
    wrapper.__qualname__ = getattr(func, "__qualname__", wrapper.__name__)
    return wrapper


def argnum_positions(argnums, count: int) -> tuple:
    """torch.func's argnums (an int or a tuple of ints) as positions among `count` arguments."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: "
                           f"{_class_repr(argnums)}")
    positions = (argnums,) if isinstance(argnums, int) else argnums
    for p in positions:
        if not isinstance(p, int):
            raise RuntimeError(f"argnum must be int, got: {_class_repr(p)}")
    if not positions:
        raise RuntimeError("argnums must be non-empty")
    for p in positions:
        if not -count <= p < count:
            raise RuntimeError(f"Got argnum={p}, but only {count} positional inputs")
    return tuple(p % count for p in positions)


def _class_repr(value) -> str:
    kind = type(value)
    module = "" if kind.__module__ == "builtins" else f"{kind.__module__}."
    return f"<class '{module}{kind.__qualname__}'>"


def _grad_of(func, argnums, has_aux, args, kwargs, with_value=False):
    positions = argnum_positions(argnums, len(args))
    args = list(args)
    outer = current().grad_enabled
    tracked = False
    with enable_grad():
        for p in positions:
            arg = args[p]
            if type(arg) is not Tensor:
                raise RuntimeError(f"Expected tensor for argnums={argnums}, but got "
                                   f"{type(arg).__name__}")
            if outer and arg.requires_grad:
                tracked = True  # the caller differentiates through this gradient too
                args[p] = view(arg, arg.array.shape)
            else:
                args[p] = arg.detach().requires_grad_()
        result = func(*args, **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                                   "tuple: (output, aux) if has_aux is True")
            result, aux = result
        if type(result) is not Tensor:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                               f"got {type(result)}")
        if result.array.ndim != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {result.array.ndim} dims. Maybe you "
                               "wanted to use the vjp or jacrev APIs instead?")
        wrt = [args[p] for p in positions]
        grads = _grad((result,), wrt, create_graph=tracked)
        grads = _zeros_for(grads, wrt, False, "output")
    if not tracked:
        grads = tuple(g.detach() for g in grads)
        aux = _detached(aux)
        result = result.detach()
    grads = grads[0] if isinstance(argnums, int) else grads
    if with_value:  # grad_and_value
        return grads, ((result, aux) if has_aux else result)
    return (grads, aux) if has_aux else grads


def _detached(value):
    """The aux output of a function under func.grad, out of the transform's graph."""
    if type(value) is Tensor:
        return value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(_detached(v) for v in value)
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    return value
func_grad.__name__ = func_grad.__qualname__ = "grad"  # as torch.func.grad prints
