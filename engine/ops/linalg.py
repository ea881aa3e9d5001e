"""Linear algebra: dot, mv, mm, bmm, and matmul and outer built from them as torch builds them.

`a @ b` for batched operands is a composition in torch (reshape, expand, mm or bmm,
_unsafe_view, a transpose), and its graph shows every step; so it is here, step by step,
with the same choices (when torch folds a batch into one matrix product, when it needs
a copy), which depend on shapes, strides and on which operand requires grad.
"""

from __future__ import annotations

import numpy as np

from ..graph.nodes import record
from .operands import type_word
from .arith import add, mul
from .shape import (
    SQUEEZE_INPLACE,
    UNSAFE_VIEW,
    VIEW,
    contiguous,
    expand,
    permute,
    reshape,
    squeeze_dim,
    t,
    transpose,
    unsqueeze,
    view,
)
from .registry import Check, Family, any_, in_place_gap, no_in_place
from ..core.session import check_allocation

family = Family("Linear algebra", inplace=no_in_place("a product: its result has another shape"))
op, exposes, word = family.op, family.exposes, family.word


def _outer(x, y) -> bool:
    """An inner size of 1 between real matrices: torch's mm is then an outer product."""
    return x.ndim >= 2 and y.ndim >= 2 and x.shape[-1] == 1 and x.shape[-2] > 1 and \
        y.shape[-1] > 1


def mm_arrays(x, y):
    """Matrix product of arrays, with the signs of zero torch's mm gives: an outer product
    keeps a -0. product; every other result is a sum started from +0. (NumPy's too), so a sum
    of -0. products is 0."""
    if x.shape[-1] == 1 and x.ndim >= 2 and y.ndim >= 2 and x.shape[-2] > 1 and y.shape[-1] > 1:
        return x * y  # (_outer, written out: every backward of a matrix product comes here)
    return x @ y


def bmm_arrays(x, y):
    """Batched matrix products (and matrix-vector ones): torch's kernels sum from +0. for any
    inner size, as NumPy's matmul does, so no result is -0. (no outer-product case here)."""
    return x @ y


def _bias_zero_sign(out, x, w, b) -> None:
    """torch's addmm sums the products into the bias: a -0. bias stays -0. where every product
    is -0. too (NumPy's sum of them starts from +0.)."""
    if np.count_nonzero(out) == out.size or not np.signbit(b).any():
        return  # (no zero in the result: the usual case, and the cheapest test of the two)
    products = x[:, :, None] * w[None, :, :]
    all_negative_zero = np.all((products == 0) & np.signbit(products), axis=1)
    out[(out == 0) & np.signbit(np.broadcast_to(b, out.shape)) & all_negative_zero] = -0.0


_CROSSED = ((1,), (0,))  # each input's gradient reads only the other input

DOT = op("DotBackward0", lambda F, g, out, a, b: g * b, lambda F, g, out, a, b: g * a,
         saves="i", reads=_CROSSED, explain="a dot product a·b",
         formulas=("∂(a·b)/∂a = b: g·b", "∂(a·b)/∂b = a: g·a"),
         check=Check(lambda a, b: dot(a, b), (any_(3), any_(3))))
MV = op("MvBackward0", lambda F, g, out, m, v: F.reshape(g, (-1, 1)) * v,
        lambda F, g, out, m, v: F.mv(F.t(m), g), saves="i", reads=_CROSSED,
        explain="a matrix-vector product M·v", formulas=("∂(Mv)/∂M: g ⊗ v", "∂(Mv)/∂v: Mᵀ·g"),
        check=Check(lambda m, v: mv(m, v), (any_(2, 3), any_(3))))


def _column_major(x) -> bool:
    """torch's test in the backward of a matrix product: strides (1, rows), e.g. a weight.t()."""
    if type(x) is not np.ndarray:
        x = x.array  # (the rules see arrays, or tensors under create_graph)
    strides, size = x.strides, x.itemsize
    return strides[0] == size and strides[1] == x.shape[0] * size


def _mm_mat1(F, g, out, mat1, mat2):
    return F.t(F.mm(mat2, F.t(g))) if _column_major(mat1) else F.mm(g, F.t(mat2))


def _mm_mat2(F, g, out, mat1, mat2):
    return F.t(F.mm(F.t(g), mat1)) if _column_major(mat2) else F.mm(F.t(mat1), g)


MM = op("MmBackward0", _mm_mat1, _mm_mat2, saves="i", reads=_CROSSED,
        explain="a matrix product A·B", formulas=("∂(AB)/∂A: g·Bᵀ", "∂(AB)/∂B: Aᵀ·g"),
        check=Check(lambda a, b: a @ b, (any_(2, 3), any_(3, 4))))
BMM = op("BmmBackward0", lambda F, g, out, a, b: F.bmm(g, F.transpose(b, 1, 2)),
         lambda F, g, out, a, b: F.bmm(F.transpose(a, 1, 2), g), saves="i", reads=_CROSSED,
         explain="a batch of matrix products", formulas=("∂(AB)/∂A = g·Bᵀ", "∂(AB)/∂B = Aᵀ·g"),
         check=Check(lambda a, b: a @ b, (any_(2, 2, 3), any_(2, 3, 2))))


def _same_dtype(a, b, what: str):
    if a.array.dtype != b.array.dtype:
        raise RuntimeError(
            f"{what} expected both vectors to have same dtype, but found "
            f"{type_word(a.array.dtype)} and {type_word(b.array.dtype)}")


@exposes(DOT, functions=("dot",), methods=("dot",), params=("input", "tensor"))
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


@exposes(functions=("inner",), methods=("inner",), params=("input", "other"))
def inner(a, b):
    """torch.inner as torch composes it: a product for a 0-d operand, else a tensordot over
    the last dims (permute, reshape, mm, view; dot for two vectors)."""
    x, y = a.array, b.array
    if x.ndim == 0 or y.ndim == 0:
        return mul(a, b)
    if x.shape[-1] != y.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(x.shape)} and {list(y.shape)}")
    if x.dtype != y.dtype:
        raise RuntimeError("both inputs should have same dtype")
    left, right = permute(a, *range(x.ndim)), permute(b, y.ndim - 1, *range(y.ndim - 1))
    if x.ndim == 1 and y.ndim == 1:
        out = dot(left, right)
        return record(VIEW, out.array.reshape(()), (out,), {"shape": ()})
    k = x.shape[-1]
    left, right = reshape(left, (-1, k)), reshape(right, (k, -1))
    return reshape(mm(left, right), x.shape[:-1] + y.shape[:-1])


@word("mv", bmm_arrays)
@exposes(MV, functions=("mv",), methods=("mv",), params=("input", "vec"))
def mv(m, v):
    if m.array.ndim != 2 or v.array.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {v.array.ndim}, {m.array.ndim}, {v.array.ndim}")
    if m.array.shape[1] != v.array.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({m.array.shape[0]}), mat ({m.array.shape[0]}x"
            f"{m.array.shape[1]}), vec ({v.array.shape[0]})")
    if m.array.dtype != v.array.dtype:
        vec, mat = type_word(v.array.dtype), type_word(m.array.dtype)
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {vec}, {mat}, and {vec}")
    return record(MV, bmm_arrays(m.array, v.array), (m, v))


@word("mm", mm_arrays)
@exposes(MM, functions=("mm",), methods=("mm",), params=("input", "mat2", "out_dtype"))
def mm(a, b):
    x, y = a.array, b.array
    if x.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if y.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, m), (k, p) = x.shape, y.shape
    if m != k:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({n}x{m} and {k}x{p})")
    if x.dtype != y.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{type_word(x.dtype).lower()} != {type_word(y.dtype).lower()}")
    check_allocation((n, p), x.dtype)
    return record(MM, mm_arrays(x, y), (a, b))


@word("bmm", bmm_arrays)
@exposes(BMM, functions=("bmm",), methods=("bmm",), params=("input", "mat2", "out_dtype"))
def bmm(a, b):
    x, y = a.array, b.array
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{x.shape[0]}, {x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}].")
    check_allocation((x.shape[0], x.shape[1], y.shape[2]), x.dtype)
    return record(BMM, bmm_arrays(x, y), (a, b))


# === matmul, as torch composes it ================================================================

def _unsafe_view(a, shape):
    return record(UNSAFE_VIEW, a.array.reshape(shape), (a,), {"shape": a.array.shape})


def _should_fold(t1, t2) -> bool:
    """Whether torch computes t1 @ t2 as one mm/mv on the folded larger operand."""
    larger_first = t1.array.ndim >= t2.array.ndim
    big = t1.array if larger_first else np.swapaxes(t2.array, -1, -2)
    small = t2 if larger_first else t1
    if not (big.ndim >= 3 and small.array.ndim <= 2):
        return False
    if small.requires_grad:
        return True  # folding keeps the small operand's gradient one matrix product
    if t1.array.ndim == 2:
        return False
    if big.size == 0:
        return True
    strides = [s // big.itemsize for s in big.strides]
    return all(strides[i] == strides[i + 1] * big.shape[i + 1] for i in range(big.ndim - 2))


def _folded(t1, t2):
    """t1 @ t2 with the batch dims of the larger operand folded into the rows of one mm."""
    if t1.array.ndim >= t2.array.ndim:
        big, small, transposed = t1, t2, False
    else:
        big = transpose(t2, -1, -2)
        small = t(t1) if t1.array.ndim == 2 else t1
        transposed = t1.array.ndim == 2
    sizes = big.array.shape
    out_shape = sizes[:-1] + ((small.array.shape[-1],) if small.array.ndim == 2 else ())
    rows = reshape(big, (-1, sizes[-1]))
    out = _unsafe_view(mm(rows, small) if small.array.ndim == 2 else mv(rows, small), out_shape)
    if transposed:
        out = contiguous(transpose(out, -1, -2))
    return out


def _batched(t1, t2):
    """t1 @ t2 through bmm: both expanded to the broadcast batch and flattened to 3-D."""
    d1, d2 = t1.array.ndim, t2.array.ndim
    s1, s2 = t1.array.shape, t2.array.shape
    n = s1[-2] if d1 > 1 else 1
    m1 = s1[-1]
    m2 = s2[-2] if d2 > 1 else s2[-1]
    p = s2[-1] if d2 > 1 else 1
    try:
        batch = np.broadcast_shapes(s1[:-2], s2[:-2])
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({s1[-3]}) must match the size of tensor b ({s2[-3]}) at "
            "non-singleton dimension 0") from None
    if m1 != m2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{int(np.prod(batch))}, {m1}] but got: [{int(np.prod(batch))}, {m2}].")
    count = int(np.prod(batch, dtype=np.int64))
    check_allocation(tuple(batch) + (n, p), np.float64)
    left = reshape(expand(t1, tuple(batch) + (n, m1)), (count, n, m1))
    right = unsqueeze(t2, -1) if d2 == 1 else t2
    right = reshape(expand(right, tuple(batch) + (m2, p)), (count, m2, p))
    out = bmm(left, right)
    if d2 == 1:
        out = squeeze_dim(out, -1)
    out_shape = tuple(batch) + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    return _unsafe_view(out, out_shape)


@exposes(DOT, MV, MM, BMM, SQUEEZE_INPLACE, UNSAFE_VIEW, functions=("matmul",),
         methods=("matmul", "__matmul__"))
def matmul(a, b):
    if not hasattr(b, "array"):
        return NotImplemented
    d1, d2 = a.array.ndim, b.array.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(a, b)
    if d1 == 2 and d2 == 1:
        return mv(a, b)
    if d1 == 1 and d2 == 2:
        return squeeze_dim(mm(unsqueeze(a, 0), b), 0, entry=SQUEEZE_INPLACE)
    if d1 == 2 and d2 == 2:
        return mm(a, b)
    if d1 == 3 and d2 == 3:
        # 3-D @ 3-D where one side is a batch of one matrix that requires grad and the other
        # is not: torch multiplies by that matrix (squeezed), so that its gradient is one mm
        n1, n2 = a.array.shape[0], b.array.shape[0]
        if n2 == 1 and n1 != 1 and b.requires_grad:
            b, d2 = squeeze_dim(b, 0), 2
        elif n1 == 1 and n2 != 1 and a.requires_grad:
            a, d1 = squeeze_dim(a, 0), 2
    if not _should_fold(a, b):
        return _batched(a, b)  # (bmm's own error for inner sizes that differ)
    _check_inner(a, b)
    return _folded(a, b)


# === addmm, and nn.functional.linear built on it as torch builds it ==============================

def _addmm_mat1(F, g, out, bias, mat1, mat2, beta=1, alpha=1):
    grad = _mm_mat1(F, g, out, mat1, mat2)
    return grad if alpha == 1 else F.mul_scalar(grad, alpha)


def _addmm_mat2(F, g, out, bias, mat1, mat2, beta=1, alpha=1):
    grad = _mm_mat2(F, g, out, mat1, mat2)
    return grad if alpha == 1 else F.mul_scalar(grad, alpha)


ADDMM = op("AddmmBackward0",
           lambda F, g, out, bias, mat1, mat2, beta=1, alpha=1:
           g if beta == 1 else F.mul_scalar(g, beta),
           _addmm_mat1, _addmm_mat2, saves="i", reads=((), (2,), (1,)),
           explain="bias + A·B in one op (nn.Linear's forward): the bias gets g summed over the "
                   "batch, the matrices a matrix product each",
           formulas=("∂/∂bias: g (summed to its shape)", "∂(AB)/∂A: g·Bᵀ", "∂(AB)/∂B: Aᵀ·g"),
           check=Check(lambda b, a, m: addmm(b, a, m), (any_(3), any_(2, 4), any_(4, 3))))


@exposes(ADDMM, functions=("addmm",), methods=("addmm",),
         params=("input", "mat1", "mat2", "out_dtype"),
         inplace=in_place_gap("addmm_ is not offered"))
def addmm(bias, mat1, mat2, *, beta=1, alpha=1):
    x, w = mat1.array, mat2.array
    if x.ndim != 2 or w.ndim != 2:
        raise RuntimeError(f"{'mat1' if x.ndim != 2 else 'mat2'} must be a matrix, got "
                           f"{x.ndim if x.ndim != 2 else w.ndim}-D tensor")
    if x.shape[1] != w.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} "
                           f"and {w.shape[0]}x{w.shape[1]})")
    if x.dtype != w.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{type_word(x.dtype)} and {type_word(w.dtype)}")
    check_allocation((x.shape[0], w.shape[1]), x.dtype)
    out = x * w if _outer(x, w) else x @ w  # (summed into the bias, which keeps its -0.)
    if alpha != 1:
        out = out * x.dtype.type(alpha)
    b = bias.array if beta == 1 else bias.array * x.dtype.type(beta)
    try:
        out += b  # (the product is a new array)
        _bias_zero_sign(out, x, w, b)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({out.shape[-1]}) must match the "
                           f"existing size ({np.shape(b)[-1]}) at non-singleton dimension 1.  "
                           f"Target sizes: {list(out.shape)}.  Tensor sizes: "
                           f"{list(np.shape(b))}") from None
    return record(ADDMM, out, (bias, mat1, mat2),
                  None if beta == 1 and alpha == 1 else {"beta": beta, "alpha": alpha})


@exposes(ADDMM, VIEW, MM, nn=("linear",))
def linear(input, weight, bias=None):
    """torch's choice: one addmm for a matrix (or any contiguous input, flattened to one and
    viewed back), else a matmul and a bias added."""
    x = input.array
    if x.ndim == 0 or weight.array.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{x.ndim}D and {weight.array.ndim}D")
    if bias is not None:
        if x.ndim == 2:
            return addmm(bias, input, t(weight))
        if type(x) is not np.ndarray or x.flags.c_contiguous and bias.array.ndim == 1:
            rows = reshape(input, (x.size // x.shape[-1] if x.shape[-1] else 0, x.shape[-1]))
            out = addmm(bias, rows, t(weight))
            return view(out, x.shape[:-1] + (out.array.shape[1],))
    out = matmul(input, t(weight))
    return out if bias is None else add(out, bias)


@exposes(methods=("__rmatmul__",))
def rmatmul(a, other):
    if not hasattr(other, "array"):
        return NotImplemented
    return matmul(other, a)


def _check_inner(a, b):
    m1 = a.array.shape[-1]
    m2 = b.array.shape[-2] if b.array.ndim > 1 else b.array.shape[-1]
    if m1 != m2 and a.array.ndim >= 2 and b.array.ndim >= 2 and (a.array.ndim == 2
                                                                 or b.array.ndim == 2):
        if a.array.ndim < b.array.ndim:  # folded as (b.mT @ a.mT).mT: mm names those
            rows = int(np.prod(b.array.shape[:-2])) * b.array.shape[-1]
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{m2} and "
                               f"{m1}x{a.array.shape[-2]})")
        rows = int(np.prod(a.array.shape[:-1]))
        cols = b.array.shape[-1]
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{m1} and "
                           f"{m2}x{cols})")


@exposes(functions=("outer", "ger"), methods=("outer", "ger"), params=("input", "vec2"))
def outer(a, b):
    """torch's outer: a as a column times b (a reshape and a broadcast product)."""
    return mul(reshape(a, (-1, 1)), b)
