"""Python's `random` on a generator of the run's own (d2l shuffles its batches with it):
seeded, CPython's own Mersenne Twister gives CPython's numbers; unseeded, new ones each run,
as Python's. `random.Random(...)` makes more generators. The sizes a call asks for are
bounded as the language's lists and integers are."""

from __future__ import annotations

import random as _random
from typing import Any

from .. import bounds
from .module import StdModule, public

METHODS = public("seed random uniform randint randrange choice choices shuffle sample gauss",
                 "normalvariate lognormvariate expovariate vonmisesvariate gammavariate",
                 "triangular betavariate paretovariate weibullvariate getrandbits getstate",
                 "setstate randbytes")


def _check(name: str, size: Any) -> None:
    if type(size) is not int:
        return  # (Python's own error follows)
    if name == "getrandbits" and size > bounds.MAX_INT_BITS:
        raise bounds.IntegerLimit(f"random.getrandbits({size:,}) is over the limit of .tg "
                                  "programs' integers")
    if size > bounds.MAX_ITEMS:
        raise bounds.too_long(f"random.{name}({size:,})", size,
                              "bytes object" if name == "randbytes" else "list")


class Random(_random.Random):
    """CPython's generator; the calls whose result's size the program chooses check it first."""

    __module__ = "random"

    def sample(self, *args: Any, **kwargs: Any) -> list:
        _check("sample", args[1] if len(args) > 1 else kwargs.get("k"))
        return super().sample(*args, **kwargs)

    def choices(self, *args: Any, **kwargs: Any) -> list:
        _check("choices", kwargs.get("k", 1))
        return super().choices(*args, **kwargs)

    def getrandbits(self, *args: Any, **kwargs: Any) -> int:
        _check("getrandbits", args[0] if args else None)
        return super().getrandbits(*args, **kwargs)

    def randbytes(self, *args: Any, **kwargs: Any) -> bytes:
        _check("randbytes", args[0] if args else kwargs.get("n"))
        return super().randbytes(*args, **kwargs)


class RandomModule(StdModule):
    _tg_module_name = "random"
    _tg_public = METHODS | {"Random"}
    shown = ""

    def __init__(self) -> None:
        generator = Random()
        for name in METHODS:
            setattr(self, name, getattr(generator, name))
        self.Random = Random


INSTANCE_PUBLIC = {Random: METHODS}
