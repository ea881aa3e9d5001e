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

from ..core import dtypes
from ..core.classes import TorchClass
from ..core.program_classes import ProgramObject
from ..tensors.creation import tensor
from ..ops.random import default_generator
from ..ops.shape import stack
from ..tensors.random_creation import randperm
from ..random.generator import Generator
from ..tensors.tensor import Tensor
from ..core.unsupported import Unsupported

_INT64_SPAN = 2 ** 63  # random_() of an int64 tensor: a 64-bit draw modulo this


def _int64_draw(generator: Generator) -> int:
    return int(generator._dwords(1)[0]) % _INT64_SPAN


class Dataset(ProgramObject):
    """torch.utils.data.Dataset: the base of a program's map-style dataset, which defines
    `__getitem__` (and `__len__`, which a DataLoader needs)."""

    tg_subclass = vars(ProgramObject)["tg_subclass"]  # (a program subclasses this class, not
    # its TensorDataset: the interpreter looks for tg_subclass in the base's own dict)

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __repr__(self) -> str:
        return object.__repr__(self) if type(self) is not Dataset else \
            f"<torch.utils.data.dataset.Dataset object at {id(self):#x}>"


class TensorDataset(Dataset):
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


class Subset(Dataset):
    """torch.utils.data.Subset: the items of `dataset` at `indices` (random_split's parts)."""

    _tg_public = frozenset({"dataset", "indices"})

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)

    def __repr__(self) -> str:
        return f"<torch.utils.data.dataset.Subset object at {id(self):#x}>"


def random_split(dataset, lengths, generator=None) -> list:
    """Subsets of the given lengths (or fractions summing to 1, the remainder dealt out one
    by one from the first) over one randperm of the dataset's indices, as torch splits."""
    lengths = list(lengths)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        count = len(dataset)
        sizes = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(count * fraction)))
        for i in range(count - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = randperm(sum(lengths), generator=generator).tolist()
    parts, end = [], 0
    for length in lengths:
        parts.append(Subset(dataset, order[end:end + length]))
        end += length
    return parts


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
            if loader._shuffle:  # torch's RandomSampler: randperm (its size checked) on a seed
                seed = _int64_draw(default_generator())
                self._order = randperm(rows, generator=Generator().manual_seed(seed)).array
            else:
                self._order = range(rows)
        start = self._next_row
        end = min(start + loader.batch_size, rows)
        if start >= rows or (loader.drop_last and end - start < loader.batch_size):
            raise StopIteration
        self._next_row = end
        rows_of_batch = self._order[start:end]  # (Python ints, only a batch of them at once)
        if type(rows_of_batch) is not range:
            rows_of_batch = rows_of_batch.tolist()
        return collate([loader.dataset[i] for i in rows_of_batch])

    def __repr__(self) -> str:
        return f"<torch.utils.data.dataloader._SingleProcessDataLoaderIter object at {id(self):#x}>"


_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


def collate(batch: list):
    """torch's default_collate: a batch of a dataset's items as one item of batches (tensors
    stacked, numbers made tensors, tuples, lists and dicts taken apart element by element)."""
    elem = batch[0]
    if type(elem) is Tensor:
        return stack(list(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):  # (bools too: a bool tensor)
        return tensor(batch)
    if isinstance(elem, str):
        return batch
    if isinstance(elem, dict):
        return type(elem)({key: collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, (tuple, list)):
        size = len(elem)
        if any(len(item) != size for item in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [collate(list(samples)) for samples in zip(*batch)]
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


FUNCTIONS = {"Dataset": Dataset, "TensorDataset": TensorDataset, "Subset": Subset,
             "random_split": random_split, "DataLoader": DataLoader}
