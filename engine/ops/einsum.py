"""Diagonals, movedim and einsum, composed as torch composes them.

torch computes `einsum` from other ops (diagonal, permute, unsqueeze, sum, bmm, view), so a
result's grad_fn chain is theirs: `einsum('ij,jk->ik', a, b).grad_fn` prints ViewBackward0
over PermuteBackward0 over ViewBackward0 over BmmBackward0. Building it from the engine's
own ops gives the same chain, the same gradients and double backward for free.
"""

from __future__ import annotations

import builtins
from collections import deque

import numpy as np

from ..graph.nodes import record
from .operands import dims, is_tensor
from .linalg import bmm
from .arith import mul
from .reduce import sum as sum_
from .shape import permute, reshape, unsqueeze, view
from .registry import Check, Family, any_, no_in_place

family = Family("Diagonals and einsum", inplace=no_in_place(
    "a diagonal or a contraction: a new shape"))
op, exposes, word = family.op, family.exposes, family.word


def _diagonal_array(x, offset, dim1, dim2):
    out = np.diagonal(x, offset, dim1, dim2)
    if x.flags.writeable:  # NumPy hands out a read-only view; torch's diagonal is writable
        out.flags.writeable = True
    return out


def _diagonal_backward_array(g, shape, offset, dim1, dim2):
    full = np.zeros(shape, dtype=g.dtype)
    _diagonal_array(full, offset, dim1, dim2)[...] = g
    return full


DIAGONAL = op("DiagonalBackward0",
              lambda F, g, out, a, shape, offset, dim1, dim2:
              F.diagonal_backward(g, shape, offset, dim1, dim2), views=True,
              explain="a diagonal: g goes back onto the diagonal, zeros elsewhere",
              formulas=("g on a's diagonal, 0 elsewhere",),
              check=Check(lambda a: a.diagonal(), (any_(3, 3),)))
DIAGONAL_BACKWARD = op("DiagonalBackwardBackward0",
                       lambda F, gg, out, g, shape, offset, dim1, dim2:
                       F.diagonal(gg, offset, dim1, dim2),
                       explain="the gradient of a diagonal, as an op of its own: its diagonal",
                       formulas=("gg's diagonal",),
                       check=Check(lambda a: a.diagonal() * a.diagonal(), (any_(3, 3),)))


@word("diagonal", _diagonal_array)
@exposes(DIAGONAL, functions=("diagonal",), methods=("diagonal",))
def diagonal(a, offset=0, dim1=0, dim2=1):
    x = a.array
    d1, d2 = dims((dim1, dim2), x.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return record(DIAGONAL, _diagonal_array(x, offset, d1, d2), (a,),
                  {"shape": x.shape, "offset": offset, "dim1": d1, "dim2": d2})


@word("diagonal_backward", _diagonal_backward_array)
def diagonal_backward(g, shape, offset, dim1, dim2):
    return record(DIAGONAL_BACKWARD, _diagonal_backward_array(g.array, shape, offset, dim1, dim2),
                  (g,), {"shape": shape, "offset": offset, "dim1": dim1, "dim2": dim2})


@exposes(functions=("movedim", "moveaxis"), methods=("movedim", "moveaxis"))
def movedim(a, source, destination):
    """A permute (torch records PermuteBackward0) that moves dims `source` to `destination`."""
    ndim = a.array.ndim
    sources, targets = dims(source, ndim), dims(destination, ndim)
    if len(sources) != len(targets):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(sources)}"
                           f" dims) should contain the same number of dims as destination "
                           f"({list(targets)} dims)")
    for word, chosen, given in (("source", sources, source), ("destination", targets, destination)):
        if len(set(chosen)) != len(chosen):
            shown = list(given) if isinstance(given, (tuple, list)) else [given]
            raise RuntimeError(f"movedim: repeated dim in `{word}` ({shown})")
    order = [-1] * ndim
    for s, t in zip(sources, targets):
        order[t] = s
    rest = iter(d for d in range(ndim) if d not in sources)
    return permute(a, tuple(o if o != -1 else next(rest) for o in order))


# === einsum ===========================================================================

_ELLIPSIS = "..."


def _label_index(label: str) -> int:
    """torch orders labels A-Z before a-z (the implicit output's order)."""
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + 26


def _parse_operands(lhs: str, count: int) -> list:
    labels: list = [[]]
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if _ELLIPSIS in labels[-1]:
                raise RuntimeError(f"einsum(): found '.' for operand {len(labels) - 1} for which "
                                   "an ellipsis was already found")
            if lhs[i:i + 3] != _ELLIPSIS:
                raise RuntimeError(f"einsum(): found '.' for operand {len(labels) - 1} that is "
                                   "not part of any ellipsis")
            labels[-1].append(_ELLIPSIS)
            i += 3
            continue
        if c == ",":
            if len(labels) == count:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            labels.append([])
        elif c != " ":
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            labels[-1].append(c)
        i += 1
    if len(labels) != count:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


class _Layout:
    """Where each label (and the ellipsis' dims) goes in the aligned operands: the output's
    dims first, then the ones summed away."""

    def __init__(self, equation: str, operands: tuple) -> None:
        lhs, arrow, rhs = equation.partition("->")
        self.labels = _parse_operands(lhs, len(operands))
        counts: dict = {}
        self.ell_dims = 0
        for i, (labels, t) in enumerate(zip(self.labels, operands)):
            named = [s for s in labels if s != _ELLIPSIS]
            ndim = t.array.ndim
            for s in named:
                counts[s] = counts.get(s, 0) + 1
            if _ELLIPSIS in labels:
                self.ell_dims = builtins.max(self.ell_dims, ndim - len(named))
                if len(named) > ndim:
                    raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                       f"({len(named)}) is more than the number of dimensions "
                                       f"({ndim}) for operand {i}")
            elif len(named) != ndim:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(named)}) does not match the number of dimensions "
                                   f"({ndim}) for operand {i} and no ellipsis was given")
        self.position: dict = {}
        self.ell_start = 0
        ell_in_output = not arrow
        if not arrow:  # implicit output: the ellipsis, then labels used once, A-Z then a-z
            size = self.ell_dims
            for s in sorted(counts, key=_label_index):
                if counts[s] == 1:
                    self.position[s] = size
                    size += 1
        else:
            size, i = 0, 0
            while i < len(rhs):
                c = rhs[i]
                if c == ".":
                    if ell_in_output:
                        raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) "
                                           "was already found")
                    if rhs[i:i + 3] != _ELLIPSIS:
                        raise RuntimeError("einsum(): found '.' for output that is not part of "
                                           "any ellipsis (...)")
                    self.ell_start, ell_in_output = size, True
                    size += self.ell_dims
                    i += 3
                    continue
                if c != " ":
                    if not (c.isascii() and c.isalpha()):
                        raise RuntimeError(f"einsum(): invalid subscript given at index "
                                           f"{len(lhs) + 2 + i} in the equation string, "
                                           "subscripts must be in [a-zA-Z]")
                    if c not in counts or c in self.position:
                        why = ("appears more than once in the output" if c in self.position
                               else "does not appear in the equation for any input operand")
                        raise RuntimeError(f"einsum(): output subscript {c} {why}")
                    self.position[c] = size
                    size += 1
                i += 1
        self.out_dims = size
        if not ell_in_output:
            self.ell_start = size
            size += self.ell_dims
        for s in sorted(counts, key=_label_index):
            if s not in self.position:
                self.position[s] = size
                size += 1
        self.ndim = size

    def align(self, operands: tuple) -> tuple:
        """Each operand with a dim per position (size 1 where it lacks the label), repeated
        labels reduced to their diagonal; and how many operands have each dim above 1."""
        sizes: dict = {}
        ell_sizes = [1] * self.ell_dims
        counts = [0] * self.ndim
        aligned = deque()
        for i, (labels, t) in enumerate(zip(self.labels, operands)):
            order = [-1] * self.ndim
            dim = 0
            for s in labels:
                shape = t.array.shape
                if s == _ELLIPSIS:
                    covered = t.array.ndim - (len(labels) - 1)
                    for j in range(self.ell_dims - covered, self.ell_dims):
                        if shape[dim] != 1:
                            if ell_sizes[j] not in (1, shape[dim]):
                                raise RuntimeError(
                                    f"einsum(): dimension {dim} covered by ellipsis in operand "
                                    f"{i}has size {shape[dim]} which does not broadcast with "
                                    f"previously seen ellipsis with size {ell_sizes[j]} for the "
                                    "respective dimension")
                            ell_sizes[j] = shape[dim]
                            counts[self.ell_start + j] += 1
                        order[self.ell_start + j] = dim
                        dim += 1
                elif order[self.position[s]] == -1:
                    if shape[dim] != 1:
                        if sizes.get(s, 1) not in (1, shape[dim]):
                            raise RuntimeError(
                                f"einsum(): subscript {s} has size {shape[dim]} for operand {i} "
                                f"which does not broadcast with previously seen size {sizes[s]}")
                        sizes[s] = shape[dim]
                        counts[self.position[s]] += 1
                    order[self.position[s]] = dim
                    dim += 1
                else:
                    first = order[self.position[s]]
                    if shape[dim] != shape[first]:
                        raise RuntimeError(
                            f"einsum(): subscript {s} is repeated for operand {i} but the sizes "
                            f"don't match, {shape[dim]} != {shape[first]}")
                    t = movedim(diagonal(t, 0, first, dim), -1, first)
            for k, o in enumerate(order):
                if o == -1:
                    t = unsqueeze(t, dim)
                    order[k] = dim
                    dim += 1
            aligned.append(permute(t, tuple(order)))
        return aligned, counts


def _sum_product(left, right, summed: list):
    """(left * right) summed over `summed`, dims kept (as size 1), by one bmm."""
    if not summed:
        return mul(left, right)
    both, left_only, right_only = [], [], []
    both_size = left_size = right_size = summed_size = 1
    for i in range(left.array.ndim):
        in_left, in_right = left.array.shape[i] != 1, right.array.shape[i] != 1
        if i in summed:
            if in_left and in_right:
                _same_size(left, right, i)
                summed_size *= left.array.shape[i]
            elif in_left:
                left = sum_(left, i, True)
            elif in_right:
                right = sum_(right, i, True)
        elif in_left and in_right:
            _same_size(left, right, i)
            both.append(i)
            both_size *= left.array.shape[i]
        elif in_left:
            left_only.append(i)
            left_size *= left.array.shape[i]
        else:
            right_only.append(i)
            right_size *= right.array.shape[i]
    if left_only and right_only and right_only[-1] < left_only[0]:
        # the right operand's dims all come first in the result: swapped, bmm writes the
        # result in its final order (torch decides the same way, so the graph is torch's)
        left, right, left_only, right_only = right, left, right_only, left_only
        left_size, right_size = right_size, left_size
    out_shape = ([left.array.shape[d] for d in both + left_only] + [1] * len(summed)
                 + [right.array.shape[d] for d in right_only])
    left_order = both + left_only + summed + right_only
    right_order = both + summed + right_only + left_only
    back = [0] * len(left_order)
    for k, d in enumerate(left_order):
        back[d] = k
    left = reshape(permute(left, tuple(left_order)), (both_size, left_size, summed_size))
    right = reshape(permute(right, tuple(right_order)), (both_size, summed_size, right_size))
    return permute(view(bmm(left, right), tuple(out_shape)), tuple(back))


def _same_size(left, right, i) -> None:
    if left.array.shape[i] != right.array.shape[i]:
        raise RuntimeError("non-broadcast dimensions must match")


@exposes(functions=("einsum",), params=())
def einsum(equation, *operands):
    if not isinstance(equation, str):  # (torch's other form, operands with sublists, is not supported)
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    for k, operand in enumerate(operands):
        if not is_tensor(operand):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got "
                            f"{type(operand).__name__}")
    layout = _Layout(equation, operands)
    aligned, counts = layout.align(operands)
    while len(aligned) > 1:  # left to right, as torch does without opt_einsum
        a, b = aligned.popleft(), aligned.popleft()
        summed, a_alone, b_alone = [], [], []
        for d in range(layout.out_dims, layout.ndim):
            a_has, b_has = a.array.shape[d] != 1, b.array.shape[d] != 1
            if a_has and b_has:
                _same_size(a, b, d)
                counts[d] -= 1
                if counts[d] == 1:
                    summed.append(d)
                    counts[d] = 0
            elif counts[d] == 1 and (a_has or b_has):
                (a_alone if a_has else b_alone).append(d)
                counts[d] = 0
        if a_alone:
            a = sum_(a, tuple(a_alone), True)
        if b_alone:
            b = sum_(b, tuple(b_alone), True)
        aligned.appendleft(_sum_product(a, b, summed))
    result = aligned[0]
    if layout.ndim > layout.out_dims:
        if len(operands) > 1:  # every contracted dim is 1 by now
            return view(result, result.array.shape[:layout.out_dims])
        return sum_(result, tuple(range(layout.out_dims, layout.ndim)))
    return result
