"""The embedding op: rows of a weight picked by integer indices (F.embedding, nn.Embedding).

Its gradient is torch's embedding_dense_backward, an op of its own (EmbeddingDenseBackward
BackwardBackward0 under create_graph): each index's gradient row added into a zero weight
gradient in the order of the indices (as torch's CPU kernel adds them), the padding row left
at zero, each contribution divided by its index's count with scale_grad_by_freq.
"""

from __future__ import annotations

import numpy as np

from ..graph.nodes import record
from .operands import type_word
from .registry import Check, Family, any_, no_in_place

family = Family("Embedding", inplace=no_in_place("a lookup: a new tensor"))
op, exposes, word = family.op, family.exposes, family.word


def _dense_backward_array(g, indices, num_weights, padding_idx, scale_grad_by_freq):
    flat = np.asarray(indices).reshape(-1)
    rows = np.asarray(g).reshape(flat.size, -1)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        rows = rows / counts[flat].astype(rows.dtype)[:, None]
    if padding_idx >= 0:
        rows = np.where((flat == padding_idx)[:, None], rows.dtype.type(0), rows)
    out = np.zeros((num_weights, rows.shape[1]), rows.dtype)
    np.add.at(out, flat, rows)
    return out


def _double_backward(F, gg, out, g, indices, num_weights, padding_idx, scale_grad_by_freq):
    """torch's embedding_dense_double_backward: gg's rows at the indices, padding rows 0."""
    idx = F.gradient(indices)
    picked = F.index_select(gg, 0, F.reshape(idx, (-1,)))
    if padding_idx >= 0:
        picked = F.masked_fill(picked, F.reshape(idx == padding_idx, (-1, 1)), 0)
    return F.reshape(picked, tuple(indices.shape) + (-1,))


def _indices_of(like, values):
    # (through the public API, so that the same check runs on torch's tensors too)
    return like.new_tensor(values).long()


DENSE_BACKWARD = op(
    "EmbeddingDenseBackwardBackward0", _double_backward, saves="p",
    explain="the gradient of an embedding: each picked row's gradient added back into its row",
    formulas=("∂/∂g = gg's rows at the indices",),
    check=Check(lambda w: embedding(_indices_of(w, [[0, 2], [2, 1]]), w) ** 2, (any_(3, 2),)))


@word("embedding_dense_backward", _dense_backward_array)
def embedding_dense_backward(g, indices, num_weights, padding_idx, scale_grad_by_freq):
    out = _dense_backward_array(g.array, indices.array, num_weights, padding_idx,
                                scale_grad_by_freq)
    return record(DENSE_BACKWARD, out, (g,),
                  {"indices": indices, "num_weights": num_weights, "padding_idx": padding_idx,
                   "scale_grad_by_freq": scale_grad_by_freq})


EMBEDDING = op(
    "EmbeddingBackward0",
    lambda F, g, out, weight, indices, num_weights, padding_idx, scale_grad_by_freq:
    F.embedding_dense_backward(g, F.gradient(indices), num_weights, padding_idx,
                               scale_grad_by_freq),
    saves="p",
    explain="an embedding lookup: rows of the weight picked by index; each row's gradient is "
            "the sum of g over the places its index appears (0 for the padding index)",
    formulas=("∂/∂W[i] = Σ g where index = i",),
    check=Check(lambda w: embedding(_indices_of(w, [[0, 2], [2, 1]]), w), (any_(3, 2),)))


def embedding_lookup(weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    """torch.embedding(weight, indices, ...): the op, with torch's checks."""
    if not hasattr(indices, "_grad_fn"):
        raise TypeError("embedding(): argument 'indices' (position 2) must be Tensor, not "
                        f"{type(indices).__name__}")
    idx = indices.array
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got torch.{type_word(idx.dtype)}Tensor "
                           "instead (while checking arguments for embedding)")
    w = weight.array
    if w.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
        raise IndexError("index out of range in self")
    return record(EMBEDDING, w[idx], (weight,),
                  {"indices": type(indices)._wrap(idx.astype(np.int64)), "num_weights": w.shape[0],
                   "padding_idx": padding_idx, "scale_grad_by_freq": scale_grad_by_freq})


def padding_index(padding_idx, rows: int) -> int:
    """A padding_idx checked as torch's Python code asserts it, made non-negative (-1: none)."""
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < rows, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -rows, "Padding_idx must be within num_embeddings"
        padding_idx = rows + padding_idx
    return padding_idx


@exposes(EMBEDDING, nn=("embedding",))
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    from ..core.unsupported import Unsupported  # noqa: PLC0415 - an error path

    if getattr(getattr(weight, "array", None), "ndim", 2) != 2:  # (before padding_idx's check)
        raise RuntimeError("'weight' must be 2-D")
    padding = padding_index(padding_idx, weight.shape[0])
    if max_norm is not None:
        raise Unsupported("torch.nn.functional.embedding with max_norm=")
    if sparse:
        raise Unsupported("torch.nn.functional.embedding with sparse=True")
    return embedding_lookup(weight, input, padding, scale_grad_by_freq)
