"""torch.utils.data's TensorDataset and DataLoader: minibatches as tutorials draw them.

A DataLoader over a TensorDataset yields lists [inputs, targets] of stacked rows. Its
random numbers are torch's, so a shuffled epoch lists the rows torch lists and the
program's later draws stay in step (measured against torch 2.13):

- each `iter(loader)` (each epoch) first draws one int64 from the default generator (the
  seed torch keeps for worker processes), shuffled or not;
- a shuffled epoch, at its first batch, draws another int64 s (a 64-bit draw modulo 2**63)
  and orders the rows by `randperm(len(dataset))` of a new generator seeded with s.
"""

from __future__ import annotations

import math

from .classes import TorchClass
from .ops_random import default_generator
from .ops_shape import stack
from .random import Generator
from .tensor import Tensor
from .unsupported import Unsupported

_INT64_SPAN = 2 ** 63  # random_() of an int64 tensor: a 64-bit draw modulo this


def _int64_draw(generator: Generator) -> int:
    return int(generator._dwords(1)[0]) % _INT64_SPAN


class TensorDataset(metaclass=TorchClass):
    """Rows of equally long tensors: `dataset[i]` is the tuple of each tensor's row i."""

    _tg_public = frozenset({"tensors"})

    def __init__(self, *tensors) -> None:
        for t in tensors:
            if type(t) is not Tensor:
                raise AttributeError(f"'{type(t).__name__}' object has no attribute 'size'")
        if any(t.array.shape[:1] != tensors[0].array.shape[:1] for t in tensors) or \
                any(t.array.ndim == 0 for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].array.shape[0]

    def __repr__(self) -> str:
        return f"<torch.utils.data.dataset.TensorDataset object at {id(self):#x}>"


class DataLoader(metaclass=TorchClass):
    """Batches of a TensorDataset, in order or shuffled as torch shuffles them."""

    _tg_public = frozenset({"dataset", "batch_size", "drop_last"})

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="") -> None:
        given = {"sampler": sampler, "batch_sampler": batch_sampler, "collate_fn": collate_fn,
                 "worker_init_fn": worker_init_fn, "generator": generator,
                 "multiprocessing_context": multiprocessing_context}
        for name, value in given.items():  # (all None by default)
            if value is not None:
                raise Unsupported(f"DataLoader's {name}=")
        if type(dataset) is not TensorDataset:
            raise Unsupported("a DataLoader over anything but a TensorDataset")
        if type(batch_size) is not int or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if type(num_workers) is not int or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = bool(drop_last)
        self._shuffle = bool(shuffle)

    def __len__(self) -> int:
        rows = len(self.dataset)
        return rows // self.batch_size if self.drop_last else math.ceil(rows / self.batch_size)

    def __iter__(self):
        _int64_draw(default_generator())  # (torch's seed for worker processes, drawn anyway)
        return _SingleProcessDataLoaderIter(self)

    def __repr__(self) -> str:
        return f"<torch.utils.data.dataloader.DataLoader object at {id(self):#x}>"


class _SingleProcessDataLoaderIter(metaclass=TorchClass):
    """One epoch of a DataLoader (torch's _SingleProcessDataLoaderIter)."""

    _tg_public = frozenset()

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._order = None
        self._next_row = 0

    def __iter__(self):
        return self

    def __next__(self):
        loader = self._loader
        rows = len(loader.dataset)
        if self._order is None:  # the sampler starts at the first batch, as torch's does
            if loader._shuffle:
                seed = _int64_draw(default_generator())
                self._order = Generator().manual_seed(seed).permutation(rows).tolist()
            else:
                self._order = list(range(rows))
        start = self._next_row
        end = min(start + loader.batch_size, rows)
        if start >= rows or (loader.drop_last and end - start < loader.batch_size):
            raise StopIteration
        self._next_row = end
        items = [loader.dataset[i] for i in self._order[start:end]]
        return [stack(list(column)) for column in zip(*items)]  # (torch's default_collate)

    def __repr__(self) -> str:
        return f"<torch.utils.data.dataloader._SingleProcessDataLoaderIter object at {id(self):#x}>"


FUNCTIONS = {"TensorDataset": TensorDataset, "DataLoader": DataLoader}
