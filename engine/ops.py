"""Every op a program can call: forward, backward rule and PyTorch's grad_fn name, together.

Rule vocabulary (one VJP per input position, HIPS-autograd style):

    vjp(g, out, *inputs, **params) -> the gradient for that input

`g` is the gradient arriving at the op's output, `out` the forward result (None
unless the row saves "o"), the inputs by position (None unless the row saves
"i"; Python scalars stay Python scalars). A rule returns its gradient in the
output's shape; the engine sums it back to the input's shape and dtype
(tensor.sum_to). In a plain backward the values are NumPy arrays; under
create_graph=True they are Tensors, so a rule written with operators and the
dual helpers below is itself differentiable. Only inputs that need a gradient
have their rule called.
"""

from __future__ import annotations

import builtins

import numpy as np

from . import dtypes
from .autograd import GradMode
from .tensor import Tensor, record


class Op:
    """One row of the table: a grad_fn name and the VJP of each input."""

    __slots__ = ("name", "vjps", "saves_inputs", "saves_out", "reads")

    def __init__(self, name: str, *vjps, saves: str = "", reads=None):
        self.name = name
        self.vjps = vjps
        self.saves_inputs = "i" in saves
        self.saves_out = "o" in saves
        # reads[i]: the inputs the VJP of input i uses; only those are saved (and
        # version-checked), so `x.mul_(2)` does not keep x's old value alive, as in torch
        self.reads = reads

    def __repr__(self) -> str:
        return f"Op({self.name})"


# --- dual helpers: the same rule text runs on arrays and on Tensors -------------------------

def _dual(np_fn, method: str):
    def helper(v):
        return getattr(v, method)() if type(v) is Tensor else np_fn(v)
    helper.__name__ = method
    return helper


exp_ = _dual(np.exp, "exp")
log_ = _dual(np.log, "log")
sin_ = _dual(np.sin, "sin")
cos_ = _dual(np.cos, "cos")
sign_ = _dual(np.sign, "sign")


def expand_(v, shape):
    return v.expand(shape) if type(v) is Tensor else np.broadcast_to(v, shape)


def reshape_(v, shape):
    return v.reshape(shape)


def mT_(v):
    """Swap the last two dimensions."""
    return v.transpose(-2, -1) if type(v) is Tensor else np.swapaxes(v, -1, -2)


def outer_(u, v):
    return u.reshape((-1, 1)) * v.reshape((1, -1))


def where_(cond, a, b):
    if type(a) is Tensor or type(b) is Tensor:
        return where(cond, a, b)
    return np.where(cond, a, b)


def _array(v):
    return v.array if type(v) is Tensor else v


# --- operands and type promotion ------------------------------------------------------

_PROMOTED: dict = {}


def _operand_key(x):
    if type(x) is Tensor:
        return (x.array.dtype, 0 if x.array.ndim else 1)
    if isinstance(x, (bool, int, float)):
        return (type(x), 2)
    raise TypeError(f"unsupported operand type: '{type(x).__name__}'")


def result_dtype(*operands) -> np.dtype:
    """PyTorch's promotion of Tensors and Python scalars, as a NumPy dtype (cached)."""
    key = tuple(_operand_key(x) for x in operands)
    found = _PROMOTED.get(key)
    if found is None:
        groups: list[list] = [[], [], []]
        for kind, group in key:
            groups[group].append(dtypes.scalar_dtype(kind(0)) if group == 2
                                 else dtypes.from_numpy(kind))
        found = _PROMOTED[key] = dtypes.promote(*groups).np
    return found


def _cast(x, dt):
    """An operand NumPy will compute with in dtype `dt` (Python scalars stay weak)."""
    if type(x) is Tensor:
        a = x.array
        return a if a.dtype == dt else a.astype(dt)
    return x


def _binary(a, b, floating: bool = False):
    """Arrays for a binary op and the dtype of its result."""
    if type(a) is Tensor:
        x = a.array
        dt = x.dtype
        if type(b) is Tensor:
            if b.array.dtype == dt and (not floating or dt.kind == "f"):
                return x, b.array, dt
        elif dt.kind == "f" and (type(b) is float or type(b) is int):
            return x, b, dt  # NumPy keeps a Python number weak, as torch does
    dt = result_dtype(a, b)
    if floating and dt.kind != "f":
        dt = dtypes.DEFAULT_FLOAT.np
    return _cast(a, dt), _cast(b, dt), dt


def _finish(out, dt):
    out = np.asarray(out)
    return out if out.dtype == dt else out.astype(dt)


def _dims(dim, ndim: int) -> tuple:
    """Normalize `dim=` (int or sequence, negative allowed) with torch's range error."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    result = []
    low, high = -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1
    for d in dims:
        if not low <= d <= high:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{low}, {high}], but got {d})")
        result.append(d % builtins.max(ndim, 1) if ndim else 0)
    return tuple(result)


# === arithmetic ==========================================================================

ADD = Op("AddBackward0", lambda g, out, a, b, alpha=1: g,
         lambda g, out, a, b, alpha=1: g if alpha == 1 else g * alpha)


def add(a, b, alpha=1):
    x, y, dt = _binary(a, b)
    if alpha != 1:
        y = y * alpha
    return record(ADD, _finish(x + y, dt), (a, b), None if alpha == 1 else {"alpha": alpha})


SUB = Op("SubBackward0", lambda g, out, a, b, alpha=1: g,
         lambda g, out, a, b, alpha=1: -g if alpha == 1 else g * -alpha)


def sub(a, b, alpha=1):
    if type(a) is not Tensor:
        return rsub(b, a, alpha)
    x, y, dt = _binary(a, b)
    if alpha != 1:
        y = y * alpha
    return record(SUB, _finish(x - y, dt), (a, b), None if alpha == 1 else {"alpha": alpha})


RSUB = Op("RsubBackward1", lambda g, out, a: -g)


def rsub(a, scalar, alpha=1):
    """`scalar - a`: torch records only the tensor as an input."""
    x, y, dt = _binary(a, scalar)
    return record(RSUB, _finish(y - x * alpha, dt), (a,))


_CROSSED = ((1,), (0,))  # each input's gradient reads only the other input

MUL = Op("MulBackward0", lambda g, out, a, b: g * b, lambda g, out, a, b: g * a, saves="i",
         reads=_CROSSED)


def mul(a, b):
    x, y, dt = _binary(a, b)
    return record(MUL, _finish(x * y, dt), (a, b))


DIV = Op("DivBackward0", lambda g, out, a, b: g / b,
         lambda g, out, a, b: -g * a / (b * b), saves="i", reads=((1,), (0, 1)))


def div(a, b):
    if type(a) is not Tensor:
        return mul(reciprocal(b), a)  # torch computes `2 / t` as reciprocal(t) * 2
    x, y, dt = _binary(a, b, floating=True)
    return record(DIV, _finish(x / y, dt), (a, b))


RECIPROCAL = Op("ReciprocalBackward0", lambda g, out, a: -g * out * out, saves="o")


def reciprocal(a):
    x = a.array if a.array.dtype.kind == "f" else a.array.astype(dtypes.DEFAULT_FLOAT.np)
    return record(RECIPROCAL, np.reciprocal(x), (a,))


NEG = Op("NegBackward0", lambda g, out, a: -g)


def neg(a):
    if a.array.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")
    return record(NEG, -a.array, (a,))


def _pow_scalar_exponent(g, out, a, exponent):
    if exponent == 0:
        return g * 0
    return g * exponent * a ** (exponent - 1)


POW_SCALAR = Op("PowBackward0", _pow_scalar_exponent, saves="i")
POW_TENSOR = Op("PowBackward1",
                lambda g, out, a, b: g * b * a ** (b - 1),
                lambda g, out, a, b: g * out * log_(a), saves="io")
POW_BASE = Op("PowBackward2", lambda g, out, a, base: g * out * float(np.log(base)), saves="o")


def pow(a, exponent):
    if type(a) is not Tensor:
        x, y, dt = _binary(a, exponent)
        return record(POW_BASE, _finish(np.power(x, y), dt), (exponent,), {"base": a})
    if type(exponent) is Tensor:
        x, y, dt = _binary(a, exponent)
        return record(POW_TENSOR, _finish(np.power(x, y), dt), (a, exponent))
    x, y, dt = _binary(a, exponent)
    if dt.kind in "iu" and y < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return record(POW_SCALAR, _finish(np.power(x, y), dt), (a,), {"exponent": exponent})


def floor_divide(a, b):
    x, y, dt = _binary(a, b)
    return Tensor._wrap(_finish(np.floor_divide(x, y), dt))


def remainder(a, b):
    x, y, dt = _binary(a, b)
    return Tensor._wrap(_finish(np.mod(x, y), dt))


# === elementwise math ======================================================================

def _floating(a: Tensor) -> np.ndarray:
    x = a.array
    return x if x.dtype.kind == "f" else x.astype(dtypes.DEFAULT_FLOAT.np)


def _unary(op, fn):
    def forward(a):
        return record(op, fn(_floating(a)), (a,))
    forward.__name__ = op.name
    return forward


EXP = Op("ExpBackward0", lambda g, out, a: g * out, saves="o")
LOG = Op("LogBackward0", lambda g, out, a: g / a, saves="i")
SQRT = Op("SqrtBackward0", lambda g, out, a: g / (2 * out), saves="o")
SIN = Op("SinBackward0", lambda g, out, a: g * cos_(a), saves="i")
COS = Op("CosBackward0", lambda g, out, a: -g * sin_(a), saves="i")
TANH = Op("TanhBackward0", lambda g, out, a: g * (1 - out * out), saves="o")
SIGMOID = Op("SigmoidBackward0", lambda g, out, a: g * out * (1 - out), saves="o")
ABS = Op("AbsBackward0", lambda g, out, a: g * sign_(a), saves="i")
RELU = Op("ReluBackward0", lambda g, out, a: g * (out > 0), saves="o")

exp = _unary(EXP, np.exp)
log = _unary(LOG, np.log)
sqrt = _unary(SQRT, np.sqrt)
sin = _unary(SIN, np.sin)
cos = _unary(COS, np.cos)
tanh = _unary(TANH, np.tanh)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


sigmoid = _unary(SIGMOID, _sigmoid)


def abs(a):
    return record(ABS, np.abs(a.array), (a,))


def relu(a):
    return record(RELU, np.maximum(a.array, 0).astype(a.array.dtype, copy=False), (a,))


def sign(a):
    return Tensor._wrap(np.sign(a.array))


# === comparisons (no gradient) ===============================================================

def _comparison(fn):
    def compare(a, b):
        x, y, _ = _binary(a, b)
        return Tensor._wrap(np.asarray(fn(x, y)))
    return compare


eq = _comparison(np.equal)
ne = _comparison(np.not_equal)
lt = _comparison(np.less)
le = _comparison(np.less_equal)
gt = _comparison(np.greater)
ge = _comparison(np.greater_equal)


WHERE = Op("WhereBackward0", None, lambda g, out, c, a, b: where_(c, g, 0 * g),
           lambda g, out, c, a, b: where_(c, 0 * g, g), saves="i")


def where(condition, a, b):
    cond = condition.array.astype(bool)
    x, y, dt = _binary(a, b)
    return record(WHERE, _finish(np.where(cond, x, y), dt), (condition, a, b))


# === reductions ==============================================================================

def _reduced_shape(shape, dims):
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


SUM_ALL = Op("SumBackward0", lambda g, out, a, shape: expand_(g, shape))
SUM_DIM = Op("SumBackward1",
             lambda g, out, a, shape, dims, keepdim:
             expand_(g if keepdim else reshape_(g, _reduced_shape(shape, dims)), shape))


def sum(a, dim=None, keepdim=False, dtype=None):
    x = a.array
    out_dt = np.int64 if x.dtype.kind in "biu" else x.dtype
    if dtype is not None:
        out_dt = dtype.np
    if dim is None:
        return record(SUM_ALL, np.sum(x, dtype=out_dt), (a,), {"shape": x.shape})
    dims = _dims(dim, x.ndim)
    out = np.sum(x, axis=dims, keepdims=keepdim, dtype=out_dt)
    return record(SUM_DIM, out, (a,), {"shape": x.shape, "dims": dims, "keepdim": keepdim})


MEAN_ALL = Op("MeanBackward0", lambda g, out, a, shape: expand_(g / _count(shape), shape))
MEAN_DIM = Op("MeanBackward1",
              lambda g, out, a, shape, dims, keepdim:
              expand_((g if keepdim else reshape_(g, _reduced_shape(shape, dims)))
                      / _count(shape, dims), shape))


def _count(shape, dims=None) -> int:
    n = 1
    for i, d in enumerate(shape):
        if dims is None or i in dims:
            n *= d
    return n


def mean(a, dim=None, keepdim=False, dtype=None):
    x = a.array
    if dtype is not None:
        x = x.astype(dtype.np)
    if x.dtype.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_torch_type_word(x.dtype)}")
    if dim is None:
        return record(MEAN_ALL, np.mean(x, dtype=x.dtype), (a,), {"shape": x.shape})
    dims = _dims(dim, x.ndim)
    out = np.mean(x, axis=dims, keepdims=keepdim, dtype=x.dtype)
    return record(MEAN_DIM, out, (a,), {"shape": x.shape, "dims": dims, "keepdim": keepdim})


def _torch_type_word(dt) -> str:
    return {"int64": "Long", "int32": "Int", "bool": "Bool", "float32": "Float",
            "float64": "Double"}[np.dtype(dt).name]


def _norm_vjp(g, out, a, dims, keepdim):
    if dims is not None and not keepdim:
        g = reshape_(g, _reduced_shape(a.shape, dims))
        out = reshape_(out, _reduced_shape(a.shape, dims))
    # torch masks the 0/0 at a zero norm to 0
    safe = where_(out == 0, out + 1, out) if type(out) is not Tensor else out
    return where_(out == 0, 0 * a, g * a / safe)


NORM = Op("LinalgVectorNormBackward0", _norm_vjp, saves="io")


def norm(a, p="fro", dim=None, keepdim=False):
    if p not in ("fro", 2, 2.0):
        raise NotImplementedError("only the 2-norm is supported")
    x = _floating(a)
    dims = None if dim is None else _dims(dim, x.ndim)
    out = np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))
    return record(NORM, out.astype(x.dtype, copy=False), (a,), {"dims": dims, "keepdim": keepdim})


# === linear algebra ==========================================================================

DOT = Op("DotBackward0", lambda g, out, a, b: g * b, lambda g, out, a, b: g * a, saves="i",
         reads=_CROSSED)
MV = Op("MvBackward0", lambda g, out, m, v: outer_(g, v), lambda g, out, m, v: mT_(m) @ g,
        saves="i", reads=_CROSSED)
MM = Op("MmBackward0", lambda g, out, a, b: g @ mT_(b), lambda g, out, a, b: mT_(a) @ g,
        saves="i", reads=_CROSSED)


def _same_dtype(a, b, what: str):
    if a.array.dtype != b.array.dtype:
        raise RuntimeError(
            f"{what} expected both vectors to have same dtype, but found "
            f"{_torch_type_word(a.array.dtype)} and {_torch_type_word(b.array.dtype)}")


def dot(a, b):
    if a.array.ndim != 1 or b.array.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {a.array.ndim}D and {b.array.ndim}D tensors")
    if a.array.shape != b.array.shape:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number "
            "of elements, but got {} and {} elements respectively".format(
                a.array.shape[0], b.array.shape[0], a.array.shape[0], b.array.shape[0]))
    _same_dtype(a, b, "dot :")
    return record(DOT, np.dot(a.array, b.array), (a, b))


def mv(m, v):
    if m.array.ndim != 2 or v.array.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {v.array.ndim}, {m.array.ndim}, {v.array.ndim}")
    if m.array.shape[1] != v.array.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({m.array.shape[0]}), mat ({m.array.shape[0]}x"
            f"{m.array.shape[1]}), vec ({v.array.shape[0]})")
    return record(MV, m.array @ v.array, (m, v))


def mm(a, b):
    if a.array.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.array.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.array.shape[1] != b.array.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.array.shape[0]}x{a.array.shape[1]} "
            f"and {b.array.shape[0]}x{b.array.shape[1]})")
    if a.array.dtype != b.array.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_torch_type_name(a.array.dtype)} != {_torch_type_name(b.array.dtype)}")
    return record(MM, a.array @ b.array, (a, b))


def _torch_type_name(dt) -> str:
    return repr(dtypes.from_numpy(dt)).replace("torch.", "")


def matmul(a, b):
    da, db = a.array.ndim, b.array.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 2 and db == 2:
        return mm(a, b)
    if da == 1 and db == 2:
        return squeeze(mm(unsqueeze(a, 0), b), 0, name=SQUEEZE_MATMUL)
    return batched_matmul(a, b)


BMM = Op("UnsafeViewBackward0",
         lambda g, out, a, b: g @ mT_(b) if b.ndim > 1 else outer_last(g, b),
         lambda g, out, a, b: mT_(a) @ g if a.ndim > 1 else outer_first(a, g),
         saves="i", reads=((1,), (0, 1)))


def outer_last(g, b):
    return g.reshape(g.shape + (1,)) * b


def outer_first(a, g):
    return a.reshape((-1, 1)) * g.reshape(g.shape[:-1] + (1,) + g.shape[-1:])


def batched_matmul(a, b):
    try:
        out = np.matmul(a.array, b.array)
    except ValueError:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"{list(a.shape[:-1])} but got: {list(b.shape)}.") from None
    return record(BMM, out, (a, b))


def outer(a, b):
    return mul(unsqueeze(a, 1), b)


# === shapes ===================================================================================

VIEW = Op("ViewBackward0", lambda g, out, a, shape: reshape_(g, shape))


def reshape(a, *shape):
    shape = _shape_arg(shape)
    try:
        out = a.array.reshape(shape)
    except ValueError:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {a.array.size}") from None
    return record(VIEW, out, (a,), {"shape": a.array.shape})


view = reshape


def flatten(a, start_dim=0, end_dim=-1):
    shape = a.array.shape
    if not shape:
        return reshape(a, (1,))
    s, e = _dims(start_dim, len(shape))[0], _dims(end_dim, len(shape))[0]
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(a, shape[:s] + (n,) + shape[e + 1:])


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(d) for d in shape)


EXPAND = Op("ExpandBackward0", lambda g, out, a: g)


def expand(a, *shape):
    shape = _shape_arg(shape)
    lead = len(shape) - a.array.ndim
    target = tuple(a.array.shape[i - lead] if n == -1 else n for i, n in enumerate(shape))
    return record(EXPAND, np.broadcast_to(a.array, target), (a,))


PERMUTE = Op("PermuteBackward0", lambda g, out, a, dims: _permute_back(g, dims))
TRANSPOSE = Op("TransposeBackward0", lambda g, out, a, dim0, dim1: _swap(g, dim0, dim1))
T_OP = Op("TBackward0", lambda g, out, a: _swap(g, 0, 1) if g.ndim == 2 else g)


def _permute_back(g, dims):
    inverse = tuple(np.argsort(dims))
    return g.permute(inverse) if type(g) is Tensor else np.transpose(g, inverse)


def _swap(g, d0, d1):
    return g.transpose(d0, d1) if type(g) is Tensor else np.swapaxes(g, d0, d1)


def permute(a, *dims):
    dims = _dims(_shape_arg(dims), a.array.ndim)
    return record(PERMUTE, np.transpose(a.array, dims), (a,), {"dims": dims})


def transpose(a, dim0, dim1):
    d0, d1 = _dims((dim0, dim1), a.array.ndim)
    return record(TRANSPOSE, np.swapaxes(a.array, d0, d1), (a,), {"dim0": d0, "dim1": d1})


def t(a):
    if a.array.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.array.ndim}D")
    return record(T_OP, a.array.T, (a,))


UNSQUEEZE = Op("UnsqueezeBackward0", lambda g, out, a, dim: reshape_(g, out_shape_without(g, dim)))
SQUEEZE_ALL = Op("SqueezeBackward0", lambda g, out, a, shape: reshape_(g, shape))
SQUEEZE_DIM = Op("SqueezeBackward1", lambda g, out, a, shape: reshape_(g, shape))
SQUEEZE_MATMUL = Op("SqueezeBackward4", lambda g, out, a, shape: reshape_(g, shape))


def out_shape_without(g, dim):
    shape = tuple(g.shape)
    return shape[:dim] + shape[dim + 1:]


def unsqueeze(a, dim):
    d = _dims(dim, a.array.ndim + 1)[0]
    return record(UNSQUEEZE, np.expand_dims(a.array, d), (a,), {"dim": d})


def squeeze(a, dim=None, name=None):
    shape = a.array.shape
    if dim is None:
        out = a.array.reshape(tuple(n for n in shape if n != 1))
        return record(SQUEEZE_ALL, out, (a,), {"shape": shape})
    d = _dims(dim, a.array.ndim)[0] if shape else None
    out = a.array if d is None or shape[d] != 1 else np.squeeze(a.array, d)
    return record(name or SQUEEZE_DIM, out, (a,), {"shape": shape})


# === indexing ====================================================================================

def _place(g, out, a, key, shape):
    """Gradient of basic indexing: the incoming gradient placed into zeros of the input's shape."""
    if type(g) is Tensor:
        return index_backward(g, key, shape)
    z = np.zeros(shape, dtype=g.dtype)
    z[key] = g
    return z


def _scatter_add(g, out, a, key, shape):
    """Gradient of advanced indexing: repeated indices add up."""
    if type(g) is Tensor:
        return index_backward(g, key, shape)
    z = np.zeros(shape, dtype=g.dtype)
    np.add.at(z, key, g)
    return z


SELECT = Op("SelectBackward0", _place)
SLICE = Op("SliceBackward0", _place)
ALIAS = Op("AliasBackward0", _place)
UNSQUEEZE_INDEX = Op("UnsqueezeBackward0", _place)
INDEX = Op("IndexBackward0", _scatter_add)
INDEX_BACKWARD = Op("IndexBackwardBackward0",
                    None, lambda g, out, base, key, shape: _index_raw(g, key))


def index_backward(g, key, shape):
    z = np.zeros(shape, dtype=g.array.dtype)
    np.add.at(z, key, g.array)
    return record(INDEX_BACKWARD, z, (None, g), {"key": key, "shape": shape})


def _index_raw(g, key):
    return g[key] if type(g) is not Tensor else record(INDEX, g.array[key], (g,),
                                                      {"key": key, "shape": g.array.shape})


def _is_advanced(item) -> bool:
    return isinstance(item, (list, Tensor)) and not (
        type(item) is Tensor and item.array.ndim == 0 and item.array.dtype.kind in "iu")


def _plain(item):
    if type(item) is Tensor:
        return item.array
    if isinstance(item, list):
        return np.asarray([_plain(i) for i in item])
    return item


def getitem(a, index):
    """`a[index]`, recorded as the chain of ops torch records (select, slice, unsqueeze...)."""
    items = index if isinstance(index, tuple) else (index,)
    if builtins.any(_is_advanced(i) for i in items):
        key = tuple(_plain(i) for i in items)
        try:
            out = a.array[key]
        except IndexError as e:
            raise IndexError(str(e)) from None
        return record(INDEX, out, (a,), {"key": key, "shape": a.array.shape})
    if not isinstance(index, tuple) and isinstance(index, slice):
        return _step(SLICE, a, (index,))
    if builtins.all(i is Ellipsis or i == slice(None) for i in items):
        return _step(ALIAS, a, (Ellipsis,))
    result, dim = a, 0
    consumed = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    for item in items:
        if item is Ellipsis:
            dim += a.array.ndim - consumed
        elif item is None:
            result = _step(UNSQUEEZE_INDEX, result, (slice(None),) * dim + (None,))
            dim += 1
        elif isinstance(item, slice):
            if item != slice(None):
                result = _step(SLICE, result, (slice(None),) * dim + (item,))
            dim += 1
        else:
            i = int(item)
            size = result.array.shape[dim] if dim < result.array.ndim else None
            if size is None:
                raise IndexError(
                    f"too many indices for tensor of dimension {a.array.ndim}")
            if not -size <= i < size:
                raise IndexError(
                    f"index {i} is out of bounds for dimension {dim} with size {size}")
            result = _step(SELECT, result, (slice(None),) * dim + (i,))
    return result


def _step(op, a, key):
    return record(op, a.array[key], (a,), {"key": key, "shape": a.array.shape})


# === creation-like methods ======================================================================

CLONE = Op("CloneBackward0", lambda g, out, a: g)
TO_COPY = Op("ToCopyBackward0", lambda g, out, a: g)


def clone(a):
    return record(CLONE, a.array.copy(), (a,))


def to(a, dtype):
    if a.array.dtype == dtype.np:
        return a
    out = a.array.astype(dtype.np)
    # a cast to a non-floating dtype cuts the graph, as in torch
    return record(TO_COPY, out, (a,)) if dtype.is_floating_point else Tensor._wrap(out)


# === in place ===================================================================================

def check_inplace(a: Tensor) -> None:
    if GradMode.enabled and a.requires_grad and a.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.")


def inplace(a: Tensor, result: Tensor) -> Tensor:
    """Write `result` into `a`'s storage and bump its version, as torch's `op_` do."""
    check_inplace(a)
    if result.array.shape != a.array.shape:
        raise RuntimeError(
            f"output with shape {list(a.array.shape)} doesn't match the broadcast shape "
            f"{list(result.array.shape)}")
    if np.result_type(result.array.dtype, a.array.dtype) != a.array.dtype:
        raise RuntimeError(
            f"result type {_torch_type_word(result.array.dtype)} can't be cast to the desired "
            f"output type {_torch_type_word(a.array.dtype)}")
    if a.array.flags.writeable:
        np.copyto(a.array, result.array, casting="unsafe")
    else:
        a.array = result.array.astype(a.array.dtype)
    a._version += 1
    if result.grad_fn is not None:
        a.grad_fn = result.grad_fn
        a.requires_grad = True
    return a


FILL = Op("FillBackward2", lambda g, out, a: g * 0)


def fill_(a, value):
    check_inplace(a)
    a.array[...] = _array(value)
    a._version += 1
    if GradMode.enabled and a.requires_grad:
        a.grad_fn = record(FILL, a.array, (a,)).grad_fn
    return a
