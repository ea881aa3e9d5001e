"""torch.func's transforms beyond grad (jacrev, jacfwd, hessian, vmap, grad_and_value, vjp, jvp),
built on torch.autograd.functional's reverse-mode machinery and on func_grad.

vmap runs the function once per batch element and stacks the results (the values). Where
torch's batching rules are known, the output's graph is torch's: torch.dot and torch.matmul
of two vectors (matmul of the unsqueezed batch), torch.sum and torch.mean of a whole sample
(a sum over the sample's dims), and any function whose graph is pointwise ops alone: it is
run once more on the whole batch (unary ops keep the batch dim where it is, the others see it
moved to the front, as torch does) and that run is kept when its graph holds pointwise ops
only and its values are the stacked ones; the batch dim then moves to out_dims (torch's
PermuteBackward0). Anything else carries the stack's grad_fn (StackBackward0), not the one
torch's batching rule leaves. jacfwd builds each column with jvp (the double-backward
trick), so its zeros carry forward mode's signs.
"""

from __future__ import annotations

import numpy as np

from ..core.session import current, enable_grad
from ..graph.nodes import AccumulateGrad, _sequence
from ..ops.einsum import movedim
from ..ops.linalg import matmul, mv
from ..ops.reduce import mean, sum as sum_
from ..ops.shape import squeeze_dim, stack, t, unsqueeze, view
from ..tensors.tensor import Tensor
from . import functional as F
from .functional import argnum_positions


def _positions(argnums, args, who: str) -> tuple:
    return argnum_positions(argnums, len(args))


def _with(args, positions, values) -> list:
    args = list(args)
    for p, v in zip(positions, values):
        args[p] = v
    return args


def _tracked(args, positions) -> bool:
    """Whether the caller differentiates through the transform (an argument requires grad
    under grad mode): then the result stays connected to the caller's graph."""
    return current().grad_enabled and any(
        type(args[p]) is Tensor and args[p].requires_grad for p in positions)


def _named(wrapper, func, default: str):
    wrapper.__name__ = getattr(func, "__name__", default)
    wrapper.__qualname__ = getattr(func, "__qualname__", wrapper.__name__)
    return wrapper


def _check_tensors(values, positions, argnums, who):
    for p in positions:
        if type(values[p]) is not Tensor:
            raise ValueError(f"{who}: Expected all elements of argnums to be Tensors, but got "
                             f"{type(values[p]).__name__} for argnums={argnums}")


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    def wrapper(*args):
        return _jacobian(func, argnums, has_aux, args, "jacrev", forward=False)
    return _named(wrapper, func, "jacrev")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    def wrapper(*args):
        return _jacobian(func, argnums, has_aux, args, "jacfwd", forward=True)
    return _named(wrapper, func, "jacfwd")


def _jacobian(func, argnums, has_aux, args, who, forward: bool):
    positions = _positions(argnums, args, who)
    _check_tensors(args, positions, argnums, who)
    aux_box = []

    def selected(*values):
        result = func(*_with(args, positions, values))
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                # (torch's jacrev runs on vjp, its jacfwd on jvp: their words)
                raise RuntimeError(("jvp(f, primals, tangents)" if forward else "vjp(f, *primals)")
                                   + ": output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            result, aux = result
            aux_box.append(aux)
        return result

    tracked = _tracked(args, positions)
    inputs = tuple(args[p] for p in positions)
    if forward:
        result = _forward_jacobian(selected, inputs, tracked)
    else:
        result = F.jacobian(selected, inputs, create_graph=tracked)
    if isinstance(argnums, int):  # functional.jacobian's tuple of inputs, one of them
        result = tuple(r[0] for r in result) if isinstance(result, tuple) and \
            isinstance(result[0], tuple) else result[0]
    if has_aux:
        aux = aux_box[0] if tracked else F._detached(aux_box[0])
        return result, aux
    return result


def _forward_jacobian(func, inputs, tracked: bool):
    """The jacobian column by column: the jvp of each basis tangent of each input."""
    with enable_grad():
        outputs = func(*inputs)
    is_tuple = isinstance(outputs, tuple)
    outs = outputs if is_tuple else (outputs,)
    per_output = [[] for _ in outs]
    for k, inp in enumerate(inputs):
        size = inp.array.size
        columns = [[] for _ in outs]
        for j in range(size):
            tangents = []
            for m, other in enumerate(inputs):
                basis = np.zeros(np.shape(other.array), dtype=np.asarray(other.array).dtype)
                if m == k:
                    basis.reshape(-1)[j] = 1  # (set before wrapping: a 0-d array's is a copy)
                tangents.append(Tensor._wrap(basis))
            _, dirs = F.jvp(func, tuple(inputs), tuple(tangents), create_graph=tracked)
            dirs = dirs if isinstance(dirs, tuple) else (dirs,)
            for c, d in zip(columns, dirs):
                c.append(d)
        for i, (out, column) in enumerate(zip(outs, columns)):
            shape = out.array.shape + inp.array.shape
            if not column:
                per_output[i].append(Tensor._wrap(np.zeros(shape, dtype=out.array.dtype)))
            else:
                stacked = stack(column, -1)  # the tangent index last, then the input's shape
                per_output[i].append(view(stacked, shape))
    rows = tuple(tuple(r) for r in per_output)
    return rows if is_tuple else rows[0]


def hessian(func, argnums=0):
    return _named(jacfwd(jacrev(func, argnums), argnums), func, "hessian")


def grad_and_value(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        return F._grad_of(func, argnums, has_aux, args, kwargs, with_value=True)
    return _named(wrapper, func, "grad_and_value")


def vjp(func, *primals, has_aux=False):
    for p in primals:
        if type(p) is not Tensor:
            raise RuntimeError(f"Expected primals to only contain Tensors, got "
                               f"{type(p).__name__}")
    tracked = _tracked(primals, range(len(primals)))
    with enable_grad():
        inputs = tuple(view(p, p.array.shape) if tracked and p.requires_grad
                       else p.detach().requires_grad_() for p in primals)
        result = func(*inputs)
        aux = None
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            result, aux = result
    outs = result if isinstance(result, tuple) else (result,)
    for o in outs:
        if type(o) is not Tensor:
            raise RuntimeError("vjp(f, *primals): Expected f to be a function that has a single "
                               "output or multiple outputs as a tuple of Tensors, got "
                               f"{type(o).__name__}")

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        cots = cotangents if isinstance(result, tuple) else (cotangents,)
        if len(cots) != len(outs):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function")
        for c, o in zip(cots, outs):
            if type(c) is not Tensor or c.array.shape != o.array.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{getattr(c, 'shape', None)} and output[0] has a shape of "
                                   f"{o.shape}.")
        make_graph = tracked if create_graph is None else create_graph
        with enable_grad():
            grads = F._grad(outs, inputs, cots, create_graph=make_graph, retain_graph=True)
        grads = F._zeros_for(grads, inputs, False, "output")
        return grads if make_graph else tuple(g.detach() for g in grads)

    shown = result if tracked else F._detached(result)
    if has_aux:
        return shown, vjp_fn, (aux if tracked else F._detached(aux))
    return shown, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                           "same python structure. For example, if primals is a tuple of 3 "
                           "tensors, tangents also must be. Got primals with structure "
                           f"{len(primals)} and tangents with structure {len(tangents)}")
    for p, t in zip(primals, tangents):
        if type(p) is not Tensor or type(t) is not Tensor:
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to only "
                               "contain Tensors")
        if p.array.shape != t.array.shape:
            sizes = ["[" + ", ".join(map(str, v.array.shape)) + "]" for v in (p, t)]
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is "
                               f"of size {sizes[0]} while the given forward gradient is of "
                               f"size {sizes[1]}.")
    aux_box = []

    def call(*values):
        result = func(*values)
        if has_aux:
            result, aux = result
            aux_box.append(aux)
        return result

    tracked = _tracked(primals, range(len(primals)))
    out, direction = F.jvp(call, primals, tangents, create_graph=tracked)
    if has_aux:
        return out, direction, (aux_box[0] if tracked else F._detached(aux_box[0]))
    return out, direction


# --- vmap -----------------------------------------------------------------------------------------

def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    def wrapper(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, args, kwargs)
    return _named(wrapper, func, "vmap")


def _func_name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _vmap_call(func, in_dims, out_dims, args, kwargs):
    name = _func_name(func)
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if isinstance(in_dims, (tuple, list)):
        if len(in_dims) != len(args):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                             f"compatible with the structure of `inputs`. in_dims has structure "
                             f"{len(in_dims)} but inputs has structure {len(args)}.")
        dims = tuple(in_dims)
    elif in_dims is None or isinstance(in_dims, int):
        dims = (in_dims,) * len(args)
    else:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...): expected `in_dims` to be int or "
                         f"a (potentially nested) tuple matching the structure of inputs, got: "
                         f"{type(in_dims)}.")
    sizes = []
    for arg, dim in zip(args, dims):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise ValueError(f"{where}: in_dims must be int or None, got {type(dim)}")
        if type(arg) is not Tensor:
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        ndim = arg.array.ndim
        if not -ndim <= dim < ndim:
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a "
                             f"Tensor of dimensionality {ndim} so expected in_dim to satisfy "
                             f"-{ndim} <= in_dim < {ndim}.")
        sizes.append(arg.array.shape[dim])
    if not sizes:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input "
                         "must be a Tensor with a non-None in_dim")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    dims = tuple(None if d is None else d % args[k].array.ndim for k, d in enumerate(dims))
    known = None if kwargs else _known_rule(func, args, dims)
    if known is not None:
        return _out_dims(known, 0, out_dims, name)
    results = []
    for i in range(sizes[0]):
        sliced = [arg if dim is None else arg.select(dim, i) for arg, dim in zip(args, dims)]
        results.append(func(*sliced, **kwargs))
    stacked = _stacked(results, out_dims, name)
    batched = _pointwise(func, args, kwargs, dims, out_dims, name, stacked)
    return stacked if batched is None else batched


def _engine_function(func, name: str) -> bool:
    return getattr(func, "__name__", None) == name and \
        str(getattr(func, "__module__", "")).startswith("autodiff.engine.")


def _known_rule(func, args, dims):
    """torch's batching rule for torch.dot / torch.matmul of vectors, torch.sum / torch.mean
    of a whole sample: the result with the batch dim first, or None."""
    if all(d is None for d in dims) or any(type(a) is not Tensor for a in args):
        return None
    front = [a if d in (None, 0) else movedim(a, d, 0) for a, d in zip(args, dims)]
    samples = [a.array.ndim - (d is not None) for a, d in zip(front, dims)]
    if len(args) == 2 and (_engine_function(func, "dot") or _engine_function(func, "matmul")) \
            and samples == [1, 1] and front[0].array.shape[-1] == front[1].array.shape[-1] \
            and front[0].array.dtype == front[1].array.dtype:
        a, b = front
        if None not in dims:  # a batch of dot products: matmul of (B, 1, n) and (B, n, 1)
            product = matmul(unsqueeze(a, -2), unsqueeze(b, -1))
            return squeeze_dim(squeeze_dim(product, -1), -1)
        if dims[1] is None:  # the batch times one vector: mv
            return mv(a, t(b))
        return matmul(a, t(b))  # one vector times the batch (transposed)
    if any(d is None for d in dims):
        return None
    if len(args) == 1 and front[0].array.ndim >= 2:
        sample_dims = list(range(1, front[0].array.ndim))
        if _engine_function(func, "sum"):
            return sum_(front[0], sample_dims)
        if _engine_function(func, "mean") and front[0].dtype.is_floating_point:
            return mean(front[0], sample_dims)
    return None


def _out_dims(result, at: int, out_dims, name):
    """The batched result with its batch dim (now at `at`) where out_dims puts it."""
    if not isinstance(out_dims, int):
        if isinstance(out_dims, tuple) and len(out_dims) == 1 and isinstance(out_dims[0], int):
            out_dims = out_dims[0]
        else:
            return None
    target = out_dims % (result.array.ndim or 1)
    return result if target == at else movedim(result, at, target)


# ops whose batched run is the per-sample run, element by element (torch's names, no number)
_POINTWISE = frozenset(
    "Add Sub Mul Div Neg Pow Exp Exp2 Expm1 Log Log2 Log10 Log1p Sin Cos Tan Sinh Cosh Tanh Asin "
    "Acos Atan Asinh Acosh Atanh Sigmoid Relu Abs Sqrt Rsqrt Reciprocal Sign Sgn Clamp ClampMin "
    "ClampMax Maximum Minimum Where LeakyRelu Gelu Silu Softplus Elu Hardtanh Erf Floor Ceil "
    "Round Trunc Frac Atan2 Clone ToCopy Lerp Hardsigmoid Hardswish Mish Logit".split())
_UNARY = frozenset("Neg Exp Exp2 Expm1 Log Log2 Log10 Log1p Sin Cos Tan Sinh Cosh Tanh Asin Acos "
                   "Atan Asinh Acosh Atanh Sigmoid Relu Abs Sqrt Rsqrt Reciprocal Sign Sgn Erf "
                   "Floor Ceil Round Trunc Frac Clone ToCopy".split())


def _new_nodes(outputs, since: int):
    """The op names of the nodes made after `since` that the outputs' graphs reach."""
    names, stack_, seen = [], [o.grad_fn for o in outputs], set()
    while stack_:
        node = stack_.pop()
        if node is None or id(node) in seen or type(node) is AccumulateGrad or node.seq < since:
            continue
        seen.add(id(node))
        names.append(node.tg_type_name().rstrip("0123456789").removesuffix("Backward"))
        stack_.extend(n for n, _ in node.next_functions)
    return names


def _pointwise(func, args, kwargs, dims, out_dims, name, stacked):
    """The whole batch in one run, kept where the graph is pointwise ops alone and the
    values are the stacked ones (torch's graph for such functions), else None."""
    outs = stacked if isinstance(stacked, tuple) else (stacked,)
    if not any(o.grad_fn is not None for o in outs) or any(type(a) is not Tensor and d is not None
                                                           for a, d in zip(args, dims)):
        return None
    mapped = set(d for d in dims if d is not None)
    run = _batched_run(func, args, kwargs)
    if mapped == {0}:
        if run is None:
            return None
        result, at = run[0], 0
    elif run is not None and run[1] <= _UNARY and len(mapped) == 1:
        result, at = run[0], mapped.pop()  # torch's unary rule leaves the batch dim in place
    else:  # torch's other rules see the batch dim moved to the front first
        front = [a if d in (None, 0) else movedim(a, d, 0) for a, d in zip(args, dims)]
        run = _batched_run(func, front, kwargs)
        if run is None:
            return None
        result, at = run[0], 0
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outs) or isinstance(result, tuple) != isinstance(stacked, tuple):
        return None
    placed = []
    dims_out = out_dims if isinstance(out_dims, tuple) and isinstance(result, tuple) else \
        (out_dims,) * len(results)
    for r, want, dim in zip(results, outs, dims_out):
        if dim is None or type(r) is not Tensor or r.array.ndim == 0:
            return None
        r = _out_dims(r, at, dim, name)
        if r is None or r.array.shape != want.array.shape or r.array.dtype != want.array.dtype \
                or not np.allclose(r.array, want.array, rtol=1e-6, atol=1e-7, equal_nan=True):
            return None
        placed.append(r)
    return tuple(placed) if isinstance(result, tuple) else placed[0]


def _batched_run(func, args, kwargs):
    """func on the whole batch: (its result, the op names of its new nodes), or None where
    it fails or its graph is not pointwise ops alone."""
    since = next(_sequence)
    try:
        result = func(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a function the batch does not fit: the stack stands
        return None
    results = result if isinstance(result, tuple) else (result,)
    if any(type(r) is not Tensor for r in results):
        return None
    names = set(_new_nodes(results, since))
    if not names <= _POINTWISE:
        return None
    return result, names


def _stacked(results, out_dims, name):
    first = results[0]
    single = not isinstance(first, tuple)
    count = 1 if single else len(first)
    dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * count
    if len(dims) != count:
        raise ValueError(f"vmap({name}, ...): out_dims is not compatible with the structure of "
                         f"`outputs`. out_dims has structure {len(dims)} but outputs has "
                         f"structure {count}.")
    stacked = []
    for k, dim in enumerate(dims):
        column = [r if single else r[k] for r in results]
        if type(column[0]) is not Tensor:
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(column[0])}. Did you mean to set out_dims= to None for "
                             "output?")
        if dim is None:
            stacked.append(column[0])
            continue
        stacked.append(stack(column, dim))
    return stacked[0] if single else tuple(stacked)


FUNCTIONS = {f.__name__: f for f in (jacrev, jacfwd, hessian, vmap, grad_and_value, vjp, jvp)}
