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
from .autograd import GradMode, MultiNode, _short_name as _short_op_name
from .limits import MemoryLimit, check_allocation
from .tensor import Tensor, record, record_outputs

# torch gives inf/nan silently; NumPy would print a RuntimeWarning on stderr
np.seterr(all="ignore")


class Op:
    """One row of the table: a grad_fn name and the VJP of each input."""

    __slots__ = ("name", "qualified_name", "vjps", "saves_inputs", "saves_out", "reads", "views")

    def __init__(self, name: str, *vjps, saves: str = "", reads=None, views: bool = False,
                 engine_node: bool = False):
        self.name = name  # as the node prints: <CopySlices object at ...>
        # what grad_fn.name() says: torch's own engine nodes carry their C++ namespace
        self.qualified_name = "torch::autograd::" + name if engine_node else name
        self.vjps = vjps
        self.saves_inputs = "i" in saves
        self.saves_out = "o" in saves
        self.views = views  # the result shares the first input's storage (and version counter)
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


def expand_(v, shape):
    if type(v) is Tensor:
        return v.expand(shape)
    # np.full is much cheaper than np.broadcast_to for the usual 0-d gradient of a sum
    return np.full(shape, v, dtype=v.dtype) if not v.shape else np.broadcast_to(v, shape)


def reshape_(v, shape):
    return v.reshape(shape)


def mT_(v):
    """Swap the last two dimensions."""
    return v.transpose(-2, -1) if type(v) is Tensor else v.swapaxes(-1, -2)


def mm_(x, y):
    """Matrix product for rules and forwards alike: an inner size of 1 between real
    matrices is an outer product, which keeps torch's -0. (BLAS would add to +0.)."""
    if type(x) is Tensor or type(y) is Tensor:
        return x @ y
    if x.ndim >= 2 and y.ndim >= 2 and x.shape[-1] == 1 and x.shape[-2] > 1 and y.shape[-1] > 1:
        return x * y
    return x @ y


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
            y = b.array
            if y.dtype == dt and (not floating or dt.kind == "f"):
                if x.shape != y.shape:
                    check_broadcast(x.shape, y.shape, dt)
                return x, y, dt
        elif dt.kind == "f" and (type(b) is float or type(b) is int):
            return x, b, dt  # NumPy keeps a Python number weak, as torch does
    dt = result_dtype(a, b)
    if floating and dt.kind != "f":
        dt = dtypes.DEFAULT_FLOAT.np
    if type(a) is Tensor and type(b) is Tensor and a.array.shape != b.array.shape:
        check_broadcast(a.array.shape, b.array.shape, dt)
    return _cast(a, dt), _cast(b, dt), dt


_BROADCASTS: set = set()  # shape pairs already checked: loops meet the same ones


def check_broadcast(a_shape, b_shape, dtype) -> None:
    """torch's error for shapes that do not broadcast (NumPy's would name other things)."""
    key = (a_shape, b_shape, dtype, MemoryLimit.max_bytes)
    if key in _BROADCASTS:
        return
    _check_broadcast(a_shape, b_shape, dtype)
    if len(_BROADCASTS) < 10_000:
        _BROADCASTS.add(key)


def _check_broadcast(a_shape, b_shape, dtype) -> None:
    ndim = builtins.max(len(a_shape), len(b_shape))
    a_full = (1,) * (ndim - len(a_shape)) + tuple(a_shape)
    b_full = (1,) * (ndim - len(b_shape)) + tuple(b_shape)
    for dim in range(ndim - 1, -1, -1):
        m, n = a_full[dim], b_full[dim]
        if m != n and m != 1 and n != 1:
            raise RuntimeError(f"The size of tensor a ({m}) must match the size of tensor b "
                               f"({n}) at non-singleton dimension {dim}")
    # a broadcast result can be far larger than either operand
    check_allocation(tuple(builtins.max(m, n) for m, n in zip(a_full, b_full)), dtype)


def _finish(out, dt):
    return out if out.dtype == dt else out.astype(dt)


def _reduce_dims(dim, ndim: int) -> tuple:
    """`dim=` of a reduction: on a 0-d tensor, dim 0 or -1 reduces nothing, as in torch."""
    dims = _dims(dim, ndim)
    return () if ndim == 0 else dims


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
    if exponent == 2 and type(a) is not Tensor:  # (a recorded graph keeps torch's PowBackward)
        return g * 2 * a  # a ** 1 is a exactly: the same numbers without the pow
    return g * exponent * a ** (exponent - 1)


POW_SCALAR = Op("PowBackward0", _pow_scalar_exponent, saves="i")
# torch masks the 0 ** 0 corners with where(), which names the second-order nodes
POW_TENSOR = Op("PowBackward1",
                lambda g, out, a, b: where_(b == 0, 0.0, g * (b * a ** (b - 1))),
                lambda g, out, a, b: g * where_((a == 0) & (b >= 0), 0.0, out * log_(a)),
                saves="io")
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


def _integer_divisor_check(y, dt):
    if dt.kind in "iub" and np.any(np.asarray(y) == 0):
        raise RuntimeError("ZeroDivisionError")


def floor_divide(a, b):
    x, y, dt = _binary(a, b)
    _integer_divisor_check(y, dt)
    return Tensor._wrap(_finish(np.floor_divide(x, y), dt))


def remainder(a, b):
    x, y, dt = _binary(a, b)
    _integer_divisor_check(y, dt)
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
def _tanh_vjp(g, out, a):
    if type(g) is Tensor:
        return record(TANH_BACKWARD, _array(g) * (1 - out.array * out.array), (g, out))
    return g * (1 - out * out)


def _sigmoid_vjp(g, out, a):
    if type(g) is Tensor:
        return record(SIGMOID_BACKWARD, _array(g) * out.array * (1 - out.array), (g, out))
    return g * out * (1 - out)


def _relu_vjp(g, out, a):
    if type(g) is Tensor:
        return record(THRESHOLD_BACKWARD, np.where(out.array > 0, g.array, 0.0).astype(
            g.array.dtype), (g, out))
    return np.where(out > 0, g, 0.0).astype(g.dtype, copy=False)


TANH = Op("TanhBackward0", _tanh_vjp, saves="o")
SIGMOID = Op("SigmoidBackward0", _sigmoid_vjp, saves="o")
ABS = Op("AbsBackward0", lambda g, out, a: g * sgn(a) if type(g) is Tensor else g * np.sign(a),
         saves="i")
RELU = Op("ReluBackward0", _relu_vjp, saves="o")
# torch computes these backward rules as single ops, which name the second-order nodes
TANH_BACKWARD = Op("TanhBackwardBackward0", lambda gg, o, g, out: gg * (1 - out * out),
                   lambda gg, o, g, out: gg * g * -2 * out, saves="i")
SIGMOID_BACKWARD = Op("SigmoidBackwardBackward0", lambda gg, o, g, out: gg * out * (1 - out),
                      lambda gg, o, g, out: gg * g * (1 - 2 * out), saves="i")
THRESHOLD_BACKWARD = Op("ThresholdBackwardBackward0",
                        lambda gg, o, g, out: where_(out > 0, gg, 0.0),
                        lambda gg, o, g, out: 0 * out, saves="i")
SGN = Op("SgnBackward0", lambda g, out, a: 0 * g)
SIGN = Op("SignBackward0", lambda g, out, a: 0 * g)

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
    return record(SIGN, np.sign(a.array), (a,))


def sgn(a):
    return record(SGN, np.sign(a.array), (a,))


# === comparisons (no gradient) ===============================================================

def _comparison(fn):
    def compare(a, b):
        x, y, _ = _binary(a, b)
        return Tensor._wrap(np.asarray(fn(x, y)))
    return compare


def _logical(fn):
    def combine(a, b):
        x, y, dt = _binary(a, b)
        if dt.kind == "f":
            raise NotImplementedError(f"\"{fn.__name__}_cpu\" not implemented for 'Float'")
        return Tensor._wrap(_finish(fn(x, y), dt))
    return combine


bitwise_and = _logical(np.bitwise_and)
bitwise_or = _logical(np.bitwise_or)
bitwise_xor = _logical(np.bitwise_xor)


def bitwise_not(a):
    if a.array.dtype.kind == "f":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return Tensor._wrap(np.invert(a.array))


eq = _comparison(np.equal)
ne = _comparison(np.not_equal)
lt = _comparison(np.less)
le = _comparison(np.less_equal)
gt = _comparison(np.greater)
ge = _comparison(np.greater_equal)


# the condition is not an input of torch's node (next_functions lists self and other only)
WHERE = Op("WhereBackward0", lambda g, out, a, b, condition: where_(condition, g, 0.0),
           lambda g, out, a, b, condition: where_(condition, 0.0, g))


def where(condition, a, b):
    cond = condition.array.astype(bool) if type(condition) is Tensor else \
        np.asarray(condition, dtype=bool)
    x, y, dt = _binary(a, b)
    return record(WHERE, _finish(np.where(cond, x, y), dt), (a, b), {"condition": cond})


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
    dims = _reduce_dims(dim, x.ndim)
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
        # the ufunc itself: np.mean adds microseconds of Python around the same sum
        return record(MEAN_ALL, np.add.reduce(x, axis=None, dtype=x.dtype) / x.size, (a,),
                      {"shape": x.shape})
    dims = _reduce_dims(dim, x.ndim)
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
    if a.array.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_torch_type_word(a.array.dtype)}")
    x = _floating(a)
    dims = None if dim is None else _reduce_dims(dim, x.ndim)
    out = np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))
    return record(NORM, out.astype(x.dtype, copy=False), (a,), {"dims": dims, "keepdim": keepdim})


# === linear algebra ==========================================================================

DOT = Op("DotBackward0", lambda g, out, a, b: g * b, lambda g, out, a, b: g * a, saves="i",
         reads=_CROSSED)
MV = Op("MvBackward0", lambda g, out, m, v: outer_(g, v), lambda g, out, m, v: mT_(m) @ g,
        saves="i", reads=_CROSSED)
MM = Op("MmBackward0", lambda g, out, a, b: mm_(g, mT_(b)), lambda g, out, a, b: mm_(mT_(a), g),
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
    # torch's dot accumulates from +0., so a lone -0. product comes out as 0.
    return record(DOT, np.dot(a.array, b.array) + 0, (a, b))


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
    check_allocation((a.array.shape[0], b.array.shape[1]), a.array.dtype)
    return record(MM, mm_(a.array, b.array), (a, b))


def _torch_type_name(dt) -> str:
    return _torch_type_word(dt).lower()


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


def _bmm_grad_a(g, out, a, b):
    """Gradients of a batched matmul: 1-D operands are lifted to matrices, as matmul does."""
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    g = _lift(g, a_vec, b_vec)
    grad = g @ mT_(reshape_(b, (-1, 1)) if b_vec else b)
    return reshape_(grad, tuple(grad.shape[:-2]) + tuple(grad.shape[-1:])) if a_vec else grad


def _bmm_grad_b(g, out, a, b):
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    g = _lift(g, a_vec, b_vec)
    grad = mT_(reshape_(a, (1, -1)) if a_vec else a) @ g
    return reshape_(grad, tuple(grad.shape[:-1])) if b_vec else grad


def _lift(g, a_vec, b_vec):
    shape = tuple(g.shape)
    if a_vec:
        shape = shape[:-1] + (1,) + shape[-1:] if not b_vec else shape + (1,)
    if b_vec:
        shape = shape + (1,)
    return reshape_(g, shape) if shape != tuple(g.shape) else g


_BMM_RULES = dict(saves="i", reads=((1,), (0,)))
BMM = Op("UnsafeViewBackward0", _bmm_grad_a, _bmm_grad_b, **_BMM_RULES)
# torch folds a 2-D left operand into the batch differently: its node names follow that
BMM_ROW = Op("TransposeBackward0", _bmm_grad_a, _bmm_grad_b, **_BMM_RULES)
BMM_ROWS = Op("CloneBackward0", _bmm_grad_a, _bmm_grad_b, **_BMM_RULES)


def batched_matmul(a, b):
    sa, sb = a.array.shape, b.array.shape
    check_allocation(np.broadcast_shapes(sa[:-2], sb[:-2]) + sa[-2:-1] + sb[-1:] * (len(sb) > 1),
                     np.float64)
    try:
        out = np.matmul(a.array, b.array)
    except ValueError:
        if b.array.ndim == 3:
            raise RuntimeError(
                "Expected size for first two dimensions of batch2 tensor to be: "
                f"[{b.array.shape[0]}, {a.array.shape[-1]}] but got: "
                f"{list(b.array.shape[:2])}.") from None
        raise RuntimeError(
            f"matmul: shapes {list(a.array.shape)} and {list(b.array.shape)} cannot be "
            "multiplied") from None
    op = BMM
    if a.array.ndim == 2 and b.array.ndim >= 3:
        op = BMM_ROW if a.array.shape[0] == 1 else BMM_ROWS
    return record(op, out, (a, b))


def outer(a, b):
    return mul(unsqueeze(a, 1), b)


# === shapes ===================================================================================

VIEW = Op("ViewBackward0", lambda g, out, a, shape: reshape_(g, shape), views=True)


def reshape(a, *shape):
    shape = _shape_arg(shape)
    try:
        out = a.array.reshape(shape)
    except ValueError:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {a.array.size}") from None
    return record(VIEW, out, (a,), {"shape": a.array.shape})


def view(a, *shape):
    result = reshape(a, *shape)
    if result.array.size > 1 and not np.may_share_memory(result.array, a.array):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return result


def flatten(a, start_dim=0, end_dim=-1):
    shape = a.array.shape
    if not shape:
        return reshape(a, (1,))
    s, e = _dims(start_dim, len(shape))[0], _dims(end_dim, len(shape))[0]
    if s >= e:
        return a  # nothing to merge: torch returns the tensor itself
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(a, shape[:s] + (n,) + shape[e + 1:])


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(d) for d in shape)


EXPAND = Op("ExpandBackward0", lambda g, out, a: g, views=True)


def expand(a, *shape):
    shape = _shape_arg(shape)
    lead = len(shape) - a.array.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand(torch.{_torch_type_word(a.array.dtype)}Tensor{{{list(a.array.shape)}}}, "
            f"size={list(shape)}): the number of sizes provided ({len(shape)}) must be greater "
            f"or equal to the number of dimensions in the tensor ({a.array.ndim})")
    target = tuple(a.array.shape[i - lead] if n == -1 else n for i, n in enumerate(shape))
    for i in range(lead, len(target)):
        have = a.array.shape[i - lead]
        if have != 1 and have != target[i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[i]}) must match the existing size "
                f"({have}) at non-singleton dimension {i}.  Target sizes: {list(shape)}.  "
                f"Tensor sizes: {list(a.array.shape)}")
    return record(EXPAND, np.broadcast_to(a.array, target), (a,))


PERMUTE = Op("PermuteBackward0", lambda g, out, a, dims: _permute_back(g, dims), views=True)
TRANSPOSE = Op("TransposeBackward0", lambda g, out, a, dim0, dim1: _swap(g, dim0, dim1), views=True)
T_OP = Op("TBackward0", lambda g, out, a: _swap(g, 0, 1) if g.ndim == 2 else g, views=True)


def _permute_back(g, dims):
    inverse = tuple(np.argsort(dims))
    return g.permute(inverse) if type(g) is Tensor else np.transpose(g, inverse)


def _swap(g, d0, d1):
    return g.transpose(d0, d1) if type(g) is Tensor else np.swapaxes(g, d0, d1)


def permute(a, *dims):
    dims = _dims(_shape_arg(dims), a.array.ndim)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if len(dims) != a.array.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {a.array.ndim} is "
            f"not equal to len(dims) = {len(dims)}")
    return record(PERMUTE, np.transpose(a.array, dims), (a,), {"dims": dims})


def transpose(a, dim0, dim1):
    d0, d1 = _dims((dim0, dim1), a.array.ndim)
    return record(TRANSPOSE, np.swapaxes(a.array, d0, d1), (a,), {"dim0": d0, "dim1": d1})


def t(a):
    if a.array.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.array.ndim}D")
    return record(T_OP, a.array.T, (a,))


UNSQUEEZE = Op("UnsqueezeBackward0", lambda g, out, a, dim: reshape_(g, out_shape_without(g, dim)), views=True)
SQUEEZE_ALL = Op("SqueezeBackward0", lambda g, out, a, shape: reshape_(g, shape), views=True)
SQUEEZE_DIM = Op("SqueezeBackward1", lambda g, out, a, shape: reshape_(g, shape), views=True)
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

def _placer(backward_op):
    """Gradient of basic indexing: the incoming gradient placed into zeros of the input's shape.

    Under create_graph the placement is itself recorded, as torch's `<op>BackwardBackward0`."""
    def place(g, out, a, key, shape):
        if type(g) is Tensor:
            z = np.zeros(shape, dtype=g.array.dtype)
            z[key] = g.array
            return record(backward_op, z, (g,), {"key": key})
        z = np.zeros(shape, dtype=g.dtype)
        z[key] = g
        return z
    return place


def _scatter_add(g, out, a, key, shape):
    """Gradient of advanced indexing: repeated indices add up."""
    if type(g) is Tensor:
        z = np.zeros(shape, dtype=g.array.dtype)
        np.add.at(z, key, g.array)
        return record(INDEX_PUT, z, (g,), {"key": key})
    z = np.zeros(shape, dtype=g.dtype)
    np.add.at(z, key, g)
    return z


def _take(gg, out, g, key):
    """The gradient of a placement: index the incoming gradient the same way."""
    if type(gg) is Tensor:
        return record(INDEX, gg.array[key], (gg,), {"key": key, "shape": gg.array.shape})
    return gg[key]


SELECT_BACKWARD = Op("SelectBackwardBackward0", _take)
SLICE_BACKWARD = Op("SliceBackwardBackward0", _take)
UNSQUEEZE_BACKWARD = Op("SqueezeBackward1", _take)
INDEX_PUT = Op("IndexPutImplBackward0", _take)
SELECT = Op("SelectBackward0", _placer(SELECT_BACKWARD), views=True)
SLICE = Op("SliceBackward0", _placer(SLICE_BACKWARD), views=True)
ALIAS = Op("AliasBackward0", lambda g, out, a, key, shape: g, views=True)
UNSQUEEZE_INDEX = Op("UnsqueezeBackward0", _placer(UNSQUEEZE_BACKWARD), views=True)
INDEX = Op("IndexBackward0", _scatter_add)


def _is_advanced(item) -> bool:
    return isinstance(item, (list, Tensor)) and not (
        type(item) is Tensor and item.array.ndim == 0 and item.array.dtype.kind in "iu")


def _plain(item):
    if type(item) is Tensor:
        return item.array
    if isinstance(item, list):
        return np.asarray([_plain(i) for i in item])
    return item


def _whole(item, size: int) -> bool:
    """A slice that keeps a whole dimension (`:`, `0:`, `:n` with n >= size)."""
    return isinstance(item, slice) and item.step in (None, 1) and \
        item.indices(size)[:2] == (0, size)


def _check_step(item) -> None:
    if isinstance(item, slice) and item.step is not None and item.step < 0:
        raise ValueError("step must be greater than zero")


def _advanced_index(a, items):
    arr = a.array
    key = tuple(_plain(i) for i in items)
    dim = 0
    for item, k in zip(items, key):
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            expected = arr.shape[dim:dim + k.ndim]
            if k.shape != expected:
                raise IndexError(
                    f"The shape of the mask {list(k.shape)} at index {dim} does not match the "
                    f"shape of the indexed tensor {list(arr.shape)} at index {dim}")
            dim += k.ndim
        elif item is not None:
            dim += 1
    try:
        out = arr[key]
    except IndexError as exc:
        raise IndexError(str(exc).replace("axis", "dimension")) from None
    return record(INDEX, out, (a,), {"key": key, "shape": arr.shape})


def getitem(a, index):
    """`a[index]`, recorded as the chain of ops torch records (select, slice, unsqueeze...)."""
    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        _check_step(item)
    if builtins.any(_is_advanced(i) for i in items):
        return _advanced_index(a, items)
    if not isinstance(index, tuple) and isinstance(index, slice):
        return _step(SLICE, a, (index,))
    ndim = a.array.ndim
    consumed = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    shape = a.array.shape
    source = 0  # the dimension of `a` an item indexes (for torch's messages)
    spans = []
    for item in items:
        spans.append(source)
        if item is Ellipsis:
            source += ndim - consumed
        elif item is not None:
            source += 1
    if builtins.all(i is Ellipsis or (i is not None and _whole(i, shape[d]))
                    for i, d in zip(items, spans)):
        return _step(ALIAS, a, (Ellipsis,))
    result, dim = a, 0  # `dim`: the same position in the result built so far
    for item, src in zip(items, spans):
        if item is Ellipsis:
            dim += ndim - consumed
        elif item is None:
            result = _step(UNSQUEEZE_INDEX, result, (slice(None),) * dim + (None,))
            dim += 1
        elif isinstance(item, slice):
            if not _whole(item, shape[src]):
                result = _step(SLICE, result, (slice(None),) * dim + (item,))
            dim += 1
        else:
            i = int(item)
            size = shape[src]
            if not -size <= i < size:
                raise IndexError(
                    f"index {i} is out of bounds for dimension {src} with size {size}")
            result = _step(SELECT, result, (slice(None),) * dim + (i,))
    return result


def _view_op_name(key) -> str:
    """The view torch takes last for a basic indexed write (its messages name it)."""
    items = key if isinstance(key, tuple) else (key,)
    last = next((i for i in reversed(items) if i is not Ellipsis and i is not None), None)
    return "Slice" if isinstance(last, slice) else "Select"


def _selects_all(shape, key) -> bool:
    """Whether a basic index takes all of every dimension (`:`, `...`, `0:`, `:, :`)."""
    items = key if isinstance(key, tuple) else (key,)
    if builtins.sum(1 for i in items if i is Ellipsis) > 1:
        return False
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += len(shape) - (len(items) - 1)
        elif isinstance(item, slice) and dim < len(shape) and _whole(item, shape[dim]):
            dim += 1
        else:
            return False
    return True


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

_MULTI_VIEW = ("Output {nr} of {op} is a view and is being modified inplace. This view is the "
               "output of a function that returns multiple views. Such functions do not allow "
               "the output views to be modified inplace. You should replace the inplace "
               "operation by an out-of-place one.")


def check_inplace(a: Tensor, through_view: bool = False, view_op: str | None = None) -> None:
    """torch's refusals of an in-place change in grad mode; `view_op` names the view an
    indexed write goes through (`Select` for `a[0] = v`)."""
    if not GradMode.enabled:
        return
    node = a.grad_fn
    if type(node) is MultiNode:
        raise RuntimeError(_MULTI_VIEW.format(nr=node.output_nr(a) if view_op is None else 0,
                                              op=view_op or _short_op_name(node.op.name)))
    base = a._base
    if a.requires_grad and a.grad_fn is None:
        raise RuntimeError(
            f"a {'view of a ' if through_view else ''}leaf Variable that requires grad is being "
            "used in an in-place operation.")
    if base is not None and base.requires_grad:
        if base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        raise RuntimeError(
            "autodiff does not support in-place changes to a view of a tensor that requires "
            "grad (torch would rewrite the base's history); write the result with an "
            "out-of-place op such as torch.cat or torch.where instead")


def inplace(a: Tensor, result: Tensor) -> Tensor:
    """Write `result` into `a`'s storage and bump its version, as torch's `op_` do."""
    check_inplace(a)
    node = result.grad_fn
    if node is not None and node.saved is not None:
        _keep_original(node, a)
    if result.array.shape != a.array.shape:
        raise RuntimeError(
            f"output with shape {list(a.array.shape)} doesn't match the broadcast shape "
            f"{list(result.array.shape)}")
    if not _can_cast(result.array.dtype, a.array.dtype):
        raise RuntimeError(
            f"result type {_torch_type_word(result.array.dtype)} can't be cast to the desired "
            f"output type {_torch_type_word(a.array.dtype)}")
    target = a.array
    if type(target) is not np.ndarray or not target.flags.writeable:
        a.array = np.asarray(result.array).astype(target.dtype)[()] if not target.shape else \
            np.array(result.array, dtype=target.dtype)
    else:
        np.copyto(target, result.array, casting="unsafe")
    a._bump_version()
    if result.grad_fn is not None:
        a.grad_fn = result.grad_fn
        a.requires_grad = True
    return a


def inplace_method(fn):
    """`a.add_(b)`, `a -= b`, ...: `inplace(a, fn(a, b))`, or, when nothing is recorded, the
    ufunc straight into `a`'s storage (an SGD step's `w -= lr * w.grad`: no temporary)."""
    ufunc = _INPLACE_UFUNCS.get(fn)
    floating = fn is div

    def method(a, b):
        target = a.array
        if ufunc is not None and not GradMode.enabled and type(target) is np.ndarray \
                and target.flags.writeable:
            x, y, dt = _binary(a, b, floating)
            if dt == target.dtype and dt.kind == "f" and (type(y) is not np.ndarray
                                                          or y.shape == target.shape):
                ufunc(target, y, out=target)
                a._bump_version()
                return a
        return inplace(a, fn(a, b))
    return method


_INPLACE_UFUNCS = {add: np.add, sub: np.subtract, mul: np.multiply, div: np.divide}


def _can_cast(src: np.dtype, dst: np.dtype) -> bool:
    """torch's rule for writing a result in place: never a float into an integer tensor, nor
    a number into a bool tensor; a narrower float or integer is fine (float32 += float64)."""
    return not ((src.kind == "f" and dst.kind in "iub") or (src.kind != "b" and dst.kind == "b"))


def _keep_original(node, a: Tensor) -> None:
    """The op's rules read `a` as it was before being overwritten: save a copy instead."""
    original = Tensor._wrap(a.array.copy(), grad_fn=a.grad_fn, requires_grad=a.requires_grad)
    node.saved = tuple(original if v is a else v for v in node.saved)
    if node.versions is not None:
        node.versions = tuple(0 if v is original else n
                              for v, n in zip(node.saved, node.versions))


def _zeros_like(g):
    """torch's `zeros_like(grad)`: a constant, never a recorded op (so never -0.)."""
    if type(g) is Tensor:
        return Tensor._wrap(np.zeros_like(g.array))
    return np.zeros_like(g)


FILL = Op("FillBackward2", lambda g, out, a: _zeros_like(g))
FILL_TENSOR = Op("FillBackward3", lambda g, out, a, value: _zeros_like(g),
                 lambda g, out, a, value: g.sum())
ZERO = Op("ZeroBackward0", lambda g, out, a: _zeros_like(g))
# `t.copy_(src)`, and `t[:] = src` for a src of more than one element
COPY_INTO = Op("CopyBackwards", lambda g, out, a, src: _zeros_like(g), lambda g, out, a, src: g,
               engine_node=True)


def fill_(a, value, op=FILL):
    """`a.fill_(value)`: a 0-d tensor value is an input of torch's node (FillBackward3)."""
    check_inplace(a)
    if type(value) is Tensor:
        if value.array.ndim:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.array.ndim} dimensions.")
        return _write_whole(a, value, FILL_TENSOR)
    a.storage()[...] = value
    a._bump_version()
    if GradMode.enabled and a.requires_grad:
        a.grad_fn = record(op, a.array, (a,)).grad_fn
    return a


def _write_whole(a, value, op):
    """Overwrite all of `a` with `value` (a number or a tensor), recorded as `op`."""
    a.storage()[...] = _array(value)
    a._bump_version()
    if GradMode.enabled and (a.requires_grad or (type(value) is Tensor and value.requires_grad)):
        a.grad_fn = record(op, a.array, (a, value)).grad_fn
        a.requires_grad = True
    return a


def zero_(a):
    return fill_(a, 0, ZERO)


def _copy_slices_self(g, out, a, value, key):
    if type(g) is Tensor:
        mask = np.ones(g.array.shape, dtype=g.array.dtype)
        mask[key] = 0
        return g * Tensor._wrap(mask)
    g = g.copy()
    g[key] = 0
    return g


def _copy_slices_value(g, out, a, value, key):
    return g[key] if type(g) is not Tensor else _take(g, None, None, key)


COPY_SLICES = Op("CopySlices", _copy_slices_self, _copy_slices_value, engine_node=True)
INDEX_PUT_INPLACE = Op("IndexPutBackward0", _copy_slices_self, _copy_slices_value)


def setitem(a, key, value):
    """`a[key] = value`: written in place; with autograd, torch's CopySlices node (an
    index with lists or tensors is torch's index_put_ instead)."""
    advanced = _is_advanced(key) or (isinstance(key, tuple) and
                                     builtins.any(_is_advanced(k) for k in key))
    if not advanced and _selects_all(a.array.shape, key):
        # no view is taken: torch fills or copies into the tensor itself
        check_inplace(a)
        if type(value) is Tensor and value.array.ndim:
            return _write_whole(a, value, COPY_INTO)
        return _write_whole(a, value, FILL_TENSOR)
    check_inplace(a, through_view=not advanced, view_op=None if advanced else _view_op_name(key))
    if advanced:
        key = tuple(_plain(k) for k in key) if isinstance(key, tuple) else _plain(key)
    try:
        a.storage()[key] = _array(value)
    except (IndexError, ValueError) as exc:
        raise (IndexError if isinstance(exc, IndexError) else RuntimeError)(str(exc)) from None
    a._bump_version()
    if GradMode.enabled and (a.requires_grad or (type(value) is Tensor and value.requires_grad)):
        node = record(INDEX_PUT_INPLACE if advanced else COPY_SLICES, a.array, (a, value),
                      {"key": key}).grad_fn
        a.grad_fn = node
        a.requires_grad = True


COPY = Op("CopyBackwards", lambda g, out, a: g, engine_node=True)


def copy_for_grad(g):
    """The first `.grad` written by backward(create_graph=True) is a recorded copy."""
    return record(COPY, g.array.copy(), (g,))


# === issue-3 surface: max/min, clamp, prod, joins, activations, losses ==========================

class ReturnType(tuple):
    """torch.return_types.max/min: a (values, indices) pair with names."""

    _tg_public = frozenset({"values", "indices"})
    kind = "max"

    def __new__(cls, kind, values, indices):
        pair = tuple.__new__(cls, (values, indices))
        pair.kind = kind
        return pair

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self) -> str:
        from .printing import format_return_type

        return format_return_type(self.kind, repr(self[0]), repr(self[1]))

    __str__ = __repr__


def _ties_share(g, out, a):
    """Whole-tensor max/min: tied elements share the gradient evenly."""
    mask = a == out
    return where_(mask, g / mask.sum(), 0.0)


def _to_index(g, out, a, dim, keepdim, indices):
    """max/min along dim: the gradient goes to the returned index."""
    if not keepdim:
        g = g.unsqueeze(dim) if type(g) is Tensor else np.expand_dims(g, dim)
    idx = np.expand_dims(indices, dim) if not keepdim else indices
    return scatter_into(g, dim, idx, tuple(a.shape))


MAX_ALL = Op("MaxBackward1", _ties_share, saves="io")
MIN_ALL = Op("MinBackward1", _ties_share, saves="io")
MAX_DIM = Op("MaxBackward0", _to_index, saves="i")
MIN_DIM = Op("MinBackward0", _to_index, saves="i")


def _extreme(kind, a, dim, keepdim, other):
    if other is not None:
        return (maximum if kind == "max" else minimum)(a, other)
    x = a.array
    if dim is None:
        if x.size == 0:
            raise RuntimeError(
                f"{kind}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        out = x.max() if kind == "max" else x.min()
        return record(MAX_ALL if kind == "max" else MIN_ALL, out, (a,))
    d = _dims(dim, x.ndim)[0]
    idx = np.argmax(x, axis=d) if kind == "max" else np.argmin(x, axis=d)
    values = np.take_along_axis(x, np.expand_dims(idx, d), axis=d)
    if not keepdim:
        values = np.squeeze(values, d)
        idx_out = idx
    else:
        idx_out = np.expand_dims(idx, d)
    op = MAX_DIM if kind == "max" else MIN_DIM
    result = record(op, values, (a,), {"dim": d, "keepdim": keepdim, "indices": idx_out})
    return ReturnType(kind, result, Tensor._wrap(idx_out.astype(np.int64)))


def max(a, dim=None, keepdim=False, other=None):
    if type(dim) is Tensor:
        return maximum(a, dim)
    return _extreme("max", a, dim, keepdim, other)


def min(a, dim=None, keepdim=False, other=None):
    if type(dim) is Tensor:
        return minimum(a, dim)
    return _extreme("min", a, dim, keepdim, other)


SCATTER = Op("ScatterBackward0", lambda gg, out, g, dim, index, shape: _gather(gg, dim, index))
GATHER = Op("GatherBackward0", lambda gg, out, g, dim, index, shape: scatter_into(gg, dim, index,
                                                                                  shape))


def _gather(g, dim, index):
    if type(g) is Tensor:
        return record(GATHER, np.take_along_axis(g.array, index, axis=dim), (g,),
                      {"dim": dim, "index": index, "shape": g.array.shape})
    return np.take_along_axis(g, index, axis=dim)


def scatter_into(g, dim, index, shape):
    """Zeros of `shape` with g put at `index` along `dim` (recorded when g is a Tensor)."""
    values = g.array if type(g) is Tensor else g
    z = np.zeros(shape, dtype=values.dtype)
    np.put_along_axis(z, index, values, axis=dim)
    if type(g) is not Tensor:
        return z
    return record(SCATTER, z, (g,), {"dim": dim, "index": index, "shape": shape})


def _split_tie(g, out, a, b, pick):
    """maximum/minimum: the chosen side gets g, a tie gives each half."""
    return where_(pick(a, b), g, where_(a == b, g / 2, 0.0))


MAXIMUM = Op("MaximumBackward0", lambda g, out, a, b: _split_tie(g, out, a, b, lambda x, y: x > y),
             lambda g, out, a, b: _split_tie(g, out, b, a, lambda x, y: x > y), saves="i")
MINIMUM = Op("MinimumBackward0", lambda g, out, a, b: _split_tie(g, out, a, b, lambda x, y: x < y),
             lambda g, out, a, b: _split_tie(g, out, b, a, lambda x, y: x < y), saves="i")


def maximum(a, b):
    x, y, dt = _binary(a, b)
    return record(MAXIMUM, _finish(np.maximum(x, y), dt), (a, b))


def minimum(a, b):
    x, y, dt = _binary(a, b)
    return record(MINIMUM, _finish(np.minimum(x, y), dt), (a, b))


def _clamp_vjp(g, out, a, low, high):
    keep = True
    if low is not None:
        keep = a >= low
    if high is not None:
        keep = (a <= high) if keep is True else keep & (a <= high)
    return where_(keep, g, 0.0)


CLAMP = Op("ClampBackward1", _clamp_vjp, saves="i")


def clamp(a, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    x = a.array
    out = x
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    dt = result_dtype(a, *(v for v in (min, max) if v is not None))
    return record(CLAMP, _finish(out, dt), (a,), {"low": min, "high": max})


def _prod_vjp(g, out, a, dims, keepdim):
    if dims is not None and not keepdim:
        shape = _reduced_shape(a.shape, dims)
        g, out = reshape_(g, shape), reshape_(out, shape)
    if type(a) is Tensor:
        return _prod_others(a, dims) * g
    return g * _prod_others_array(a, dims)


def _prod_others_array(a, dims):
    """Product of all other elements (exact where some elements are zero)."""
    axes = tuple(range(a.ndim)) if dims is None else dims
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    flat = moved.reshape(moved.shape[:moved.ndim - len(axes)] + (-1,))
    n = flat.shape[-1]
    left = np.concatenate([np.ones(flat.shape[:-1] + (1,), a.dtype),
                           np.cumprod(flat, axis=-1)[..., :-1]], axis=-1)
    right = np.concatenate([np.cumprod(flat[..., ::-1], axis=-1)[..., :-1][..., ::-1],
                            np.ones(flat.shape[:-1] + (1,), a.dtype)], axis=-1)
    others = (left * right).reshape(moved.shape) if n else flat.reshape(moved.shape)
    return np.moveaxis(others, tuple(range(-len(axes), 0)), axes)


def _prod_others(a, dims):
    return record(PROD_OTHERS, _prod_others_array(a.array, dims), (a,), {"dims": dims})


def _prod_others_vjp(g, out, a, dims):
    """Second derivative of prod: d/da_j of sum_i g_i * prod_{k != i} a_k, within each group.

    Not differentiable again: prod's third derivative is not offered."""
    if type(g) is Tensor and GradMode.enabled and (g.requires_grad or a.requires_grad):
        raise RuntimeError("autodiff does not support derivatives of prod() beyond the second")
    arr, garr = _array(a), _array(g)
    axes = tuple(range(arr.ndim)) if dims is None else dims
    ends = tuple(range(-len(axes), 0))
    moved = np.moveaxis(arr, axes, ends)
    lead = moved.shape[:moved.ndim - len(axes)]
    rows = moved.reshape((-1, int(np.prod(moved.shape[len(lead):], dtype=np.int64))))
    grows = np.moveaxis(garr, axes, ends).reshape(rows.shape)
    result = np.zeros_like(rows)
    for j in range(rows.shape[1]):
        others_wo_j = rows.copy()
        others_wo_j[:, j] = 1
        others = _prod_others_array(others_wo_j, (1,))
        others[:, j] = 0
        result[:, j] = np.sum(grows * others, axis=1)
    result = np.moveaxis(result.reshape(moved.shape), ends, axes)
    return Tensor._wrap(result) if type(a) is Tensor else result


PROD_OTHERS = Op("ProdBackwardBackward0", _prod_others_vjp, saves="i")
PROD_ALL = Op("ProdBackward0", lambda g, out, a: _prod_vjp(g, out, a, None, False), saves="io")
PROD_DIM = Op("ProdBackward1", _prod_vjp, saves="io")


def prod(a, dim=None, keepdim=False):
    x = a.array
    out_dt = np.int64 if x.dtype.kind in "biu" else x.dtype
    if dim is None:
        return record(PROD_ALL, np.prod(x, dtype=out_dt), (a,))
    dims = _reduce_dims(dim, x.ndim)
    out = np.prod(x, axis=dims, keepdims=keepdim, dtype=out_dt)
    return record(PROD_DIM, out, (a,), {"dims": dims, "keepdim": keepdim})


def _join_part(i):
    def vjp(g, out, *parts, dim, sizes, stacked):
        if stacked:
            return g.select(dim, i) if type(g) is Tensor else np.take(g, i, axis=dim)
        start = builtins.sum(sizes[:i])
        key = (slice(None),) * dim + (slice(start, start + sizes[i]),)
        return g[key]
    return vjp


# cat/stack take any number of inputs: one generated VJP per position
_JOIN_VJPS = tuple(_join_part(i) for i in range(64))
CAT = Op("CatBackward0", *_JOIN_VJPS)
STACK = Op("StackBackward0", *_JOIN_VJPS)


def _join(op, tensors, dim, stacked):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{'stack' if stacked else 'torch.cat'}(): expected a non-empty list "
                           "of Tensors")
    if len(tensors) > len(_JOIN_VJPS):
        raise RuntimeError(f"cannot join more than {len(_JOIN_VJPS)} tensors")
    ndim = tensors[0].array.ndim + (1 if stacked else 0)
    d = _dims(dim, ndim)[0]
    dt = result_dtype(*tensors)
    arrays = [t.array.astype(dt, copy=False) for t in tensors]
    _check_join_shapes(tensors, d, stacked)
    check_allocation((builtins.sum(t.array.size for t in tensors),), dt)
    out = np.stack(arrays, axis=d) if stacked else np.concatenate(arrays, axis=d)
    sizes = tuple(1 if stacked else t.array.shape[d] for t in tensors)
    return record(op, out, tuple(tensors), {"dim": d, "sizes": sizes, "stacked": stacked})


def _check_join_shapes(tensors, d, stacked):
    first = tensors[0].array.shape
    for number, t in enumerate(tensors[1:], start=1):
        shape = t.array.shape
        if stacked:
            if shape != first:
                raise RuntimeError(
                    f"stack expects each tensor to be equal size, but got {list(first)} at "
                    f"entry 0 and {list(shape)} at entry {number}")
            continue
        if len(shape) != len(first):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(first)} and {len(shape)}")
        for axis, (m, n) in enumerate(zip(first, shape)):
            if axis != d and m != n:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {m} "
                    f"but got size {n} for tensor number {number} in the list.")


def cat(tensors, dim=0):
    return _join(CAT, tensors, dim, False)


def stack(tensors, dim=0):
    return _join(STACK, tensors, dim, True)


def _unbind_vjp(grads, out, a, dim, shape):
    """Each output's gradient back in its place; outputs no gradient reached give zeros."""
    part = shape[:dim] + shape[dim + 1:]
    filled = [_zeros_of(part, grads) if g is None else g for g in grads]
    if builtins.any(type(g) is Tensor for g in filled):
        return stack([g if type(g) is Tensor else Tensor._wrap(g) for g in filled], dim)
    return np.stack(filled, axis=dim)


def _zeros_of(shape, grads):
    dtype = next(_array(g).dtype for g in grads if g is not None)
    return np.zeros(shape, dtype=dtype)


UNBIND = Op("UnbindBackward0", _unbind_vjp, views=True)


def unbind(a, dim=0):
    """The rows (along `dim`) as views sharing one node, as iterating over a tensor gives."""
    x = a.array
    if x.ndim == 0:
        raise RuntimeError("Dimension specified as 0 but tensor has no dimensions")
    d = _dims(dim, x.ndim)[0]
    parts = [x[(slice(None),) * d + (i,)] for i in range(x.shape[d])]
    return record_outputs(UNBIND, parts, (a,), {"dim": d, "shape": x.shape})


def select(a, dim, index):
    d = _dims(dim, a.array.ndim)[0]
    return _step(SELECT, a, (slice(None),) * d + (int(index),))


def _softmax_array(x, dim):
    shifted = x - np.max(x, axis=dim, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=dim, keepdims=True)


SOFTMAX = Op("SoftmaxBackward0",
             lambda g, out, a, dim: out * (g - (g * out).sum(dim, keepdim=True))
             if type(g) is Tensor else out * (g - np.sum(g * out, axis=dim, keepdims=True)),
             saves="o")
LOG_SOFTMAX = Op("LogSoftmaxBackward0",
                 lambda g, out, a, dim: g - exp_(out) * (g.sum(dim, keepdim=True)
                                                         if type(g) is Tensor
                                                         else np.sum(g, axis=dim, keepdims=True)),
                 saves="o")


def softmax(a, dim=None, dtype=None):
    x = _floating(a)
    d = _softmax_dim(dim, x.ndim)
    return record(SOFTMAX, _softmax_array(x, d), (a,), {"dim": d})


def log_softmax(a, dim=None, dtype=None):
    x = _floating(a)
    d = _softmax_dim(dim, x.ndim)
    shifted = x - np.max(x, axis=d, keepdims=True)
    out = shifted - np.log(np.sum(np.exp(shifted), axis=d, keepdims=True))
    return record(LOG_SOFTMAX, out, (a,), {"dim": d})


def _softmax_dim(dim, ndim):
    if dim is None:
        dim = 0 if ndim in (0, 1, 3) else 1  # torch's legacy implicit choice
    return _dims(dim, ndim)[0]


_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _mse_vjp_input(g, out, a, b, reduction, n):
    scale = 2.0 / n if reduction == "mean" else 2.0
    return g * scale * (a - b)


MSE = Op("MseLossBackward0", _mse_vjp_input,
         lambda g, out, a, b, reduction, n: -_mse_vjp_input(g, out, a, b, reduction, n),
         saves="i")


def mse_loss(input, target, reduction="mean"):
    _check_reduction(reduction)
    x, y, dt = _binary(input, target)
    diff = (x - y) ** 2
    if input.array.shape != target.array.shape:
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    n = diff.size
    out = diff if reduction == "none" else (diff.mean() if reduction == "mean" else diff.sum())
    return record(MSE, _finish(out, dt), (input, target), {"reduction": reduction, "n": n})


def _nll_vjp(g, out, logp, target, reduction, n):
    cols = _array(target)
    # a 1-D input is one sample with a 0-d target
    picked_at = (cols,) if cols.ndim == 0 else (np.arange(cols.shape[0]), cols)
    scale = g / n if reduction == "mean" else g
    if type(g) is Tensor:
        if reduction == "none" and cols.ndim:
            scale = scale.reshape((-1, 1))
        picked = np.zeros(logp.shape, dtype=logp.array.dtype)
        picked[picked_at] = -1.0
        return Tensor._wrap(picked) * scale
    z = np.zeros(logp.shape, dtype=np.asarray(g).dtype)
    z[picked_at] = -scale
    return z


NLL = Op("NllLossBackward0", _nll_vjp, None, saves="i")


def nll_loss(input, target, reduction="mean"):
    _check_reduction(reduction)
    logp = input.array
    cols = target.array
    if cols.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {_torch_type_word(cols.dtype)}")
    if logp.ndim == 1:
        logp, cols = logp[None, :], cols.reshape(1)
    n_classes = logp.shape[1]
    bad = cols[(cols < 0) | (cols >= n_classes)]
    if bad.size:
        raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    picked = -logp[np.arange(logp.shape[0]), cols]
    n = picked.size
    out = picked if reduction == "none" else (picked.mean() if reduction == "mean" else picked.sum())
    if input.array.ndim == 1 and reduction == "none":
        out = out.reshape(())
    return record(NLL, np.asarray(out, dtype=logp.dtype), (input, target),
                  {"reduction": reduction, "n": n})


def cross_entropy(input, target, reduction="mean"):
    return nll_loss(log_softmax(input, 1 if input.array.ndim > 1 else 0), target, reduction)
