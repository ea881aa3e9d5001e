"""Python's standard modules a .tg program may import: `sys`, `time`, `random`,
`collections`, `itertools`, `functools`, `warnings`, `typing`, `re`, `copy`, `string`.

Each is a namespace of the subset that touches no host state (module.StdModule), made anew
for each run (`std_modules`): the run's own random generator, file name, output streams
and warning filters. Every other public name of the real module is refused as not supported
by autodiff (names.py, generated from CPython by tests/make_stdlib_names.py). What a program
may read of the values these modules make (a deque, a Match, a partial) is registered here
in the sandbox's table of Python's values, in one place.
"""

from __future__ import annotations

from typing import Any

from ..sandbox import BOUNDED_METHODS, BUILTIN_PUBLIC
from . import containers, iteration, pyrandom, system, text

STD_MODULES = ("sys", "time", "random", "collections", "itertools", "functools", "warnings",
               "typing", "re", "copy", "string")


def std_modules(rt: Any) -> dict[str, Any]:
    """A fresh namespace of each standard module for the run `rt` (its Runtime)."""
    return {"sys": system.SysModule(rt), "time": system.TimeModule(),
            "random": pyrandom.RandomModule(), "collections": containers.CollectionsModule(),
            "itertools": iteration.ItertoolsModule(), "functools": iteration.FunctoolsModule(),
            "warnings": text.WarningsModule(rt), "typing": text.TypingModule(),
            "re": text.ReModule(), "copy": containers.CopyModule(),
            "string": text.StringModule()}


for _table in (system.STRUCT_FIELDS, pyrandom.INSTANCE_PUBLIC, containers.INSTANCE_PUBLIC,
               iteration.INSTANCE_PUBLIC, text.INSTANCE_PUBLIC):
    BUILTIN_PUBLIC.update(_table)
BOUNDED_METHODS[text._re.Pattern] = text.BOUNDED_PATTERN_METHODS
