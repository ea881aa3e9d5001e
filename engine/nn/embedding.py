"""nn.Embedding: a table of num_embeddings vectors, looked up by index (ops/embedding.py).

The weight is drawn by init.normal_ from the run's generator, as torch's reset_parameters
draws it, and the padding row is then zeroed without recording; that row's gradient stays 0.
"""

from __future__ import annotations

from . import init
from .layers import _uninitialised, _unsupported
from .module import Module
from ..ops.embedding import embedding_lookup, padding_index
from ..tensors.parameter import announce, make_parameter
from ..core.session import no_grad


class Embedding(Module):
    _tg_public = Module._tg_public | {"num_embeddings", "embedding_dim", "padding_idx", "max_norm",
                                      "norm_type", "scale_grad_by_freq", "sparse", "weight",
                                      "reset_parameters", "from_pretrained"}

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = None if padding_idx is None else padding_index(padding_idx,
                                                                          num_embeddings)
        _unsupported("Embedding", max_norm=(max_norm, None), sparse=(sparse, False))
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = make_parameter(_uninitialised((num_embeddings, embedding_dim), dtype),
                                         requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = make_parameter(_weight, requires_grad=not _freeze)
        announce(self.weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight.array[self.padding_idx] = 0
                self.weight._bump_version()

    def forward(self, input):
        padding = -1 if self.padding_idx is None else self.padding_idx
        return embedding_lookup(self.weight, input, padding, self.scale_grad_by_freq)

    __call__ = forward

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)


MODULES = {"Embedding": Embedding}
