"""Address space held back for the diagnostic of a program that fills the memory limit.

Under the guard's address-space cap (cli/guard.py), a program that keeps all it makes (a
list of the exceptions it caught, in an endless loop) ends with every allocation failing.
CPython then cannot even unwind the error: entering a handler may loop on the allocation
of an integer, an exception can be lost ("SystemError: error return without exception
set"), and no diagnostic can be written. So a capped process holds a block of address space
(mapped, never touched: it costs no memory) and lets it go as soon as the interpreter meets
the limit (`release`, called where a MemoryError is turned into the program's error and
where one is reported): the unwinding and the diagnostic then have room.
"""

from __future__ import annotations

import mmap

import resource

RESERVE_BYTES = 32 << 20  # the diagnostic, its hints and the unwinding of a deep program

_held: list = []  # the one mapping, while held


def hold(size: int = RESERVE_BYTES) -> None:
    """Take the reserve (a process under an address-space cap, once)."""
    if not _held:
        try:
            _held.append(mmap.mmap(-1, size))
        except (OSError, ValueError):
            pass  # no room even for that: the limit holds without it


def release() -> None:
    """Give the reserve back to the system: the memory limit was met."""
    while _held:
        _held.pop().close()


def held() -> bool:
    return bool(_held)


def exhausted(exc: BaseException) -> bool:
    """Is `exc` the memory limit met? A MemoryError is; CPython, out of memory while it
    handles an error, may raise a SystemError instead, and that is when the address space
    is all but used."""
    if isinstance(exc, MemoryError):
        return True
    if type(exc) is not SystemError or not _held:
        return False
    try:
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        with open("/proc/self/statm", "rb") as statm:
            used = int(statm.read().split()[0]) * mmap.PAGESIZE
    except MemoryError:
        return True
    except (OSError, ValueError):
        return False
    return limit != resource.RLIM_INFINITY and used > limit - (8 << 20)
