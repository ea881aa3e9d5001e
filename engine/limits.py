"""The memory a program may ask the engine for, checked before NumPy allocates."""

from __future__ import annotations

import os

import numpy as np


def machine_memory() -> int:
    """Physical memory in bytes (0 when unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


class MemoryLimit:
    """Largest single tensor, in bytes; `autodiff run --max-memory` sets it. The default, a
    quarter of the machine's memory, leaves room for the graph and for the rest of the machine."""

    max_bytes: int | None = machine_memory() // 4 or None


def check_allocation(shape, dtype) -> None:
    """Refuse a tensor larger than the limit, naming its shape and size."""
    limit = MemoryLimit.max_bytes
    if limit is None:
        return
    count = 1
    for n in shape:
        count *= int(n)
    size = count * np.dtype(dtype).itemsize
    if size > limit:
        raise MemoryError(
            f"a tensor of shape {list(map(int, shape))} ({np.dtype(dtype).name}) needs "
            f"{size:,} bytes, over the memory limit of {limit:,} bytes (--max-memory)")
