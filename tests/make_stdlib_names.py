"""Write interpreter/stdlib/names.py: the public names of the standard modules a .tg program
may import, as CPython has them (autodiff refuses the ones it lacks as not supported, and
gives Python's own AttributeError or ImportError for a misspelt one).

    python tests/make_stdlib_names.py

Facts about CPython's modules, generated, never edited by hand."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "interpreter" / "stdlib" / "names.py"


def main() -> int:
    from autodiff.interpreter.stdlib import STD_MODULES
    from make_torch_names import name_table  # (this folder is the script's own)

    lists = {name: sorted(n for n in dir(importlib.import_module(name)) if not n.startswith("_"))
             for name in STD_MODULES if name not in ("random", "collections")}  # (torch_names.py)
    version = ".".join(map(str, sys.version_info[:3]))
    lines = ['"""The public names of the standard modules a .tg program may import (see',
             f"tests/make_stdlib_names.py). Generated from CPython {version}; do not edit.",
             '"""', "", "NAMES = {"]
    lines += name_table(lists)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT} ({sum(map(len, lists.values()))} names)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
