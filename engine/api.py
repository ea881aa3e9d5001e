"""What a .tg program sees as `torch`, `torch.nn`, `torch.nn.functional` and Tensor methods.

Namespaces are plain objects whose class lists its public names in `_tg_public`,
the allow-list the interpreter checks before any attribute access.
"""

from __future__ import annotations

import numpy as np

from . import dtypes, init, ops, random_ops, ranges
from .autograd import (AccumulateGrad, BackwardObserver, GradMode, Node, enable_grad, no_grad,
                       set_grad_enabled)
from .creation import CreationObserver, check_sizes, finish_creation
from .limits import check_allocation
from .random import Generator
from .random_ops import manual_seed
from .tensor import Size, Tensor, backward


def make_namespace(name: str, members: dict) -> object:
    """An object exposing exactly `members` as attributes (functions stay unbound)."""
    body = {key: staticmethod(v) if callable(v) and not isinstance(v, type) else v
            for key, v in members.items()}
    body["_tg_public"] = frozenset(members)
    body["_tg_module_name"] = name
    body["__repr__"] = lambda self: f"<module '{name}'>"
    return type(name.replace(".", "_"), (), body)()


# --- creation ---------------------------------------------------------------------------

_NUMBERS = (bool, int, float)


def _infer(data):
    """The NumPy array torch.tensor builds from nested lists of numbers, bools and tensors."""
    if type(data) is list and data and all(type(v) in _NUMBERS for v in data):
        return np.array(data)  # the common flat case; NumPy infers bool/int64/float64 alike
    return _infer_nested(data)


def _infer_nested(data):
    if type(data) is Tensor:
        return data.array.copy()
    if isinstance(data, (list, tuple)):
        items = [_infer_nested(d) for d in data]
        shapes = {i.shape for i in items}
        if len(shapes) > 1:
            first = items[0].shape
            bad = next(i for i in items if i.shape != first)
            raise ValueError(
                f"expected sequence of length {first[0] if first else 0} at dim 1 "
                f"(got {bad.shape[0] if bad.shape else 0})")
        if not items:
            return np.zeros(0, dtype=dtypes.DEFAULT_FLOAT.np)
        return np.stack(items)
    if isinstance(data, bool):
        return np.asarray(data, dtype=np.bool_)
    if isinstance(data, int):
        return np.asarray(data, dtype=np.int64)
    if isinstance(data, float):
        return np.asarray(data, dtype=np.float64)  # narrowed by tensor() unless dtype= says
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data, dtype=None, requires_grad=False) -> Tensor:
    array = _infer(data)
    if dtype is None and array.dtype == np.float64 and type(data) is not Tensor:
        array = array.astype(dtypes.DEFAULT_FLOAT.np)  # Python floats take the default dtype
    return finish_creation(array, dtype, requires_grad)


def _filled(value, shape, dtype, requires_grad):
    dt = dtype or dtypes.DEFAULT_FLOAT
    shape = ops._shape_arg(shape)
    check_sizes(shape)
    check_allocation(shape, dt.np)
    return finish_creation(np.full(shape, value, dtype=dt.np), None, requires_grad)


def ones(*size, dtype=None, requires_grad=False) -> Tensor:
    return _filled(1, size, dtype, requires_grad)


def zeros(*size, dtype=None, requires_grad=False) -> Tensor:
    return _filled(0, size, dtype, requires_grad)


def ones_like(t, dtype=None, requires_grad=False) -> Tensor:
    return _filled(1, t.array.shape, dtype or t.dtype, requires_grad)


def zeros_like(t, dtype=None, requires_grad=False) -> Tensor:
    return _filled(0, t.array.shape, dtype or t.dtype, requires_grad)


# torch leaves the memory of an empty tensor as it finds it: zeros are one such content
empty = zeros
empty_like = zeros_like


def full(size, fill_value, dtype=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _filled(fill_value, (size,), dtype, requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False) -> Tensor:
    dt = dtype or dtypes.DEFAULT_FLOAT
    check_allocation((n, n if m is None else m), dt.np)
    return finish_creation(np.eye(n, m, dtype=dt.np), None, requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    floating = any(isinstance(v, float) for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    dt = dtype or (dtypes.DEFAULT_FLOAT if floating else dtypes.int64)
    count = max(0, int(np.ceil((end - start) / step)))
    check_allocation((count,), dt.np)
    kind = dt.np.kind
    exact = 2 ** (24 if dt.np == np.float32 else 53) if kind == "f" else None
    if not floating and kind in "iuf" and (exact is None or max(abs(start), abs(end)) <= exact):
        # whole numbers the dtype holds exactly: NumPy fills the dtype directly, one pass
        array = np.arange(start, start + step * count, step, dtype=dt.np)
    else:
        array = ranges.arange_values(start, step, count, dt.np)
    return finish_creation(array, None, requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False) -> Tensor:
    dt = dtype or dtypes.DEFAULT_FLOAT
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    check_allocation((steps,), dt.np)
    if dt.np.kind == "f":
        array = ranges.linspace_values(start, end, steps, dt.np) if steps else np.zeros(0, dt.np)
    else:  # integer dtypes: the ends truncated, the step in double, each value truncated
        start, end = int(start), int(end)
        if steps == 1:
            end = start  # one step is the start alone
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        half = steps // 2
        index = np.arange(steps, dtype=np.float64)
        array = np.where(index < half, ranges.fma64(step, index, start),
                         ranges.fma64(-step, steps - 1 - index, end)).astype(dt.np)
    return finish_creation(array, None, requires_grad)


def fresh_session() -> None:
    """Grad mode on and the default random stream, as in a new process (a program run
    in-process must not see what an earlier one left, e.g. set_grad_enabled(False))."""
    GradMode.enabled = True
    random_ops.DefaultGenerator.current = None  # a new one, made on first use


def is_grad_enabled() -> bool:
    return GradMode.enabled


# --- Tensor methods and operators -----------------------------------------------------------

def _swap(fn):
    return lambda a, b: fn(b, a)


_IN_PLACE = {op: ops.inplace_method(op) for op in (ops.add, ops.sub, ops.mul, ops.div, ops.pow)}


def _cast_method(dtype):
    return lambda a: ops.to(a, dtype)


def _to(a, dtype):
    return ops.to(a, dtype)


_METHODS = {
    "add": ops.add, "sub": ops.sub, "mul": ops.mul, "div": ops.div, "pow": ops.pow,
    "neg": ops.neg, "exp": ops.exp, "log": ops.log, "sqrt": ops.sqrt, "abs": ops.abs,
    "sin": ops.sin, "cos": ops.cos, "tanh": ops.tanh, "sigmoid": ops.sigmoid, "relu": ops.relu,
    "matmul": ops.matmul, "mm": ops.mm, "mv": ops.mv, "dot": ops.dot,
    "sum": ops.sum, "mean": ops.mean, "norm": ops.norm,
    "reshape": ops.reshape, "view": ops.view, "flatten": ops.flatten, "expand": ops.expand,
    "permute": ops.permute, "transpose": ops.transpose, "t": ops.t,
    "unsqueeze": ops.unsqueeze, "squeeze": ops.squeeze, "clone": ops.clone, "to": _to,
    "float": _cast_method(dtypes.float32), "double": _cast_method(dtypes.float64),
    "long": _cast_method(dtypes.int64), "int": _cast_method(dtypes.int32),
    "bool": _cast_method(dtypes.bool_),
    "add_": _IN_PLACE[ops.add], "sub_": _IN_PLACE[ops.sub], "mul_": _IN_PLACE[ops.mul],
    "div_": _IN_PLACE[ops.div],
    "fill_": ops.fill_,
    "eq": ops.eq, "ne": ops.ne, "lt": ops.lt, "le": ops.le, "gt": ops.gt, "ge": ops.ge,
    "max": ops.max, "min": ops.min, "maximum": ops.maximum, "minimum": ops.minimum,
    "clamp": ops.clamp, "prod": ops.prod, "select": ops.select, "unbind": ops.unbind,
    "where": ops.where,
    "softmax": ops.softmax, "log_softmax": ops.log_softmax, "outer": ops.outer,
    "reciprocal": ops.reciprocal, "sign": ops.sign,
    "uniform_": random_ops.uniform_, "normal_": random_ops.normal_,
    "bernoulli_": random_ops.bernoulli_, "bernoulli": random_ops.bernoulli,
}

_OPERATORS = {
    "__add__": ops.add, "__radd__": ops.add, "__sub__": ops.sub, "__rsub__": ops.rsub,
    "__mul__": ops.mul, "__rmul__": ops.mul, "__truediv__": ops.div,
    "__rtruediv__": _swap(ops.div), "__pow__": ops.pow, "__rpow__": _swap(ops.pow),
    "__matmul__": ops.matmul, "__rmatmul__": _swap(ops.matmul),
    "__floordiv__": ops.floor_divide, "__rfloordiv__": _swap(ops.floor_divide),
    "__mod__": ops.remainder, "__rmod__": _swap(ops.remainder),
    "__neg__": ops.neg, "__pos__": lambda a: a, "__abs__": ops.abs,
    "__eq__": ops.eq, "__ne__": ops.ne, "__lt__": ops.lt, "__le__": ops.le,
    "__gt__": ops.gt, "__ge__": ops.ge, "__getitem__": ops.getitem, "__setitem__": ops.setitem,
    "__and__": ops.bitwise_and, "__rand__": ops.bitwise_and, "__or__": ops.bitwise_or,
    "__ror__": ops.bitwise_or, "__xor__": ops.bitwise_xor, "__rxor__": ops.bitwise_xor,
    "__invert__": ops.bitwise_not,
    "__iadd__": _IN_PLACE[ops.add], "__isub__": _IN_PLACE[ops.sub], "__imul__": _IN_PLACE[ops.mul],
    "__itruediv__": _IN_PLACE[ops.div], "__ipow__": _IN_PLACE[ops.pow],
}

for _name, _fn in {**_METHODS, **_OPERATORS}.items():
    setattr(Tensor, _name, _fn)

_ATTRIBUTES = {"shape", "dtype", "grad", "grad_fn", "requires_grad", "is_leaf", "data", "T",
               "ndim", "size", "dim", "numel", "item", "tolist", "backward", "detach", "detach_",
               "requires_grad_", "retain_grad", "retains_grad", "zero_"}
Tensor._tg_public = frozenset(_METHODS) | frozenset(_ATTRIBUTES)
Tensor._tg_writable = frozenset({"requires_grad", "grad", "data"})


# --- namespaces ------------------------------------------------------------------------------

def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    from .autograd import run_backward
    from .tensor import _roots_and_grads, edge_to

    outputs = [outputs] if type(outputs) is Tensor else list(outputs)
    inputs = [inputs] if type(inputs) is Tensor else list(inputs)
    if grad_outputs is not None and type(grad_outputs) is Tensor:
        grad_outputs = [grad_outputs]
    if BackwardObserver.started is not None:  # watched, but its seeds are its own
        BackwardObserver.started(outputs, grad_outputs, create_graph, True)
    roots, grads = _roots_and_grads(outputs, grad_outputs, create_graph)
    targets = []
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        targets.append(edge_to(t))
    capture = {node: None for node, _ in targets}
    run_backward(roots, grads, retain_graph=create_graph if retain_graph is None else retain_graph,
                 create_graph=create_graph, capture=capture)
    results = []
    for index, (node, nr) in enumerate(targets):
        g = capture[node]
        if type(g) is list:  # an output of a multi-output node
            g = g[nr]
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {index} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior.")
        results.append(g if g is None or type(g) is Tensor else Tensor._wrap(g))
    return tuple(results)


autograd = make_namespace("torch.autograd", {"grad": grad, "backward": backward})

functional = make_namespace("torch.nn.functional", {
    "relu": ops.relu, "sigmoid": ops.sigmoid, "tanh": ops.tanh, "softmax": ops.softmax,
    "log_softmax": ops.log_softmax, "mse_loss": ops.mse_loss, "cross_entropy": ops.cross_entropy,
    "nll_loss": ops.nll_loss, "dropout": random_ops.dropout,
})
nn = make_namespace("torch.nn", {"functional": functional,
                                 "init": make_namespace("torch.nn.init", init.FUNCTIONS)})

_TORCH_FUNCTIONS = {name: fn for name, fn in _METHODS.items()
                    if not name.endswith("_") and name not in ("float", "double", "long", "int",
                                                               "bool", "to", "view")}
torch = make_namespace("torch", {
    **_TORCH_FUNCTIONS,
    "tensor": tensor, "ones": ones, "zeros": zeros, "ones_like": ones_like,
    "zeros_like": zeros_like, "empty": empty, "empty_like": empty_like, "full": full, "eye": eye,
    "arange": arange, "linspace": linspace, "cat": ops.cat, "stack": ops.stack,
    **{f.__name__: f for f in (random_ops.rand, random_ops.randn, random_ops.randint,
                               random_ops.randperm, random_ops.normal, random_ops.rand_like,
                               random_ops.randn_like, random_ops.randint_like, manual_seed,
                               random_ops.initial_seed)},
    "Generator": Generator,
    "no_grad": no_grad, "enable_grad": enable_grad, "set_grad_enabled": set_grad_enabled,
    "is_grad_enabled": is_grad_enabled, "autograd": autograd, "nn": nn,
    "Tensor": Tensor, "Size": Size,
    **{name: d for name, d in dtypes.ALIASES.items()},
})

__all__ = ["torch", "nn", "functional", "Tensor", "Node", "AccumulateGrad", "CreationObserver",
           "manual_seed"]
