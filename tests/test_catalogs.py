"""Every name Python and PyTorch have that a program can reach is either the language's or
refused as "... is not supported by autodiff": never an error that reads like the learner's
bug (NameError, AttributeError, ImportError, a parse error). The catalogs are generated from
the real objects (interpreter/torch_names.py, by tests/make_torch_names.py) and written per
syntax node (tests/syntax_catalog.py); the fast tier samples every 10th entry, the slow tier
runs the rest."""

from __future__ import annotations

import io

import pytest

from autodiff.interpreter import run_source
from autodiff.interpreter.files import HOST_NAMES
from autodiff.interpreter.stdlib.names import NAMES as STANDARD_NAMES
from autodiff.engine.core.torch_class_paths import CLASS_PATHS
from autodiff.interpreter.known_names import catalog
from autodiff.interpreter.torch_names import NAMES, OWNERS
from make_torch_names import OPTIMIZER, instance_source
from syntax_catalog import FORMS, SYNTAX
from tiers import sampled

POOR = ("NameError", "AttributeError", "ImportError", "SyntaxError", "ModuleNotFoundError")
IMPORTS = ("import torch\nimport torch.nn as nn\nimport torch.optim as optim\n"
           "import torch.utils.data as data\nimport numpy\n")

# How a program reaches an object of each catalog: a module by its import, a class's names
# on what tests/make_torch_names.py made to read them from (the same source text)
MODULE_IMPORTS = {"math": "import math", "random": "import random",
                  "collections": "import collections", "numpy.random": "import numpy.random"}
CLASS_CATALOGS = set(CLASS_PATHS.values()) | set(OWNERS.values())
INSTANCES = {owner: source.replace("OPT", OPTIMIZER) for owner in set(NAMES)
             if (source := instance_source(owner)) is not None}


def _entries() -> list[tuple[str, str, str]]:
    """(catalog, name, program) for every entry."""
    entries = []
    for owner in NAMES:
        for name in sorted(catalog(owner)):
            if owner == "builtins":
                program = f"print({name})\n"
            elif owner in INSTANCES:
                program = f"{IMPORTS}obj = {INSTANCES[owner]}\nprint(obj.{name})\n"
            else:  # a module
                assert owner not in CLASS_CATALOGS, f"no instance of {owner} to ask"
                program = f"{IMPORTS}{MODULE_IMPORTS.get(owner, f'import {owner}')}\nprint({owner}.{name})\n"
            entries.append((owner, name, program))
    standard = {owner: names.split() for owner, names in STANDARD_NAMES.items()}
    standard.update((owner, sorted(names)) for owner, names in HOST_NAMES.items())
    for owner, names in standard.items():  # the standard modules a program may import
        entries += [(owner, name, f"import {owner}\nprint({owner}.{name})\n") for name in names
                    if not name.startswith("_")]
    for forms in (SYNTAX, FORMS):
        entries += [("syntax", name, program + "\n") for name, program in forms.items()
                    if program is not None]
    return entries


ENTRIES = _entries()


def outcome(program: str) -> str | None:
    """None when the program ran or stopped as unsupported; else its error's headline."""
    result = run_source(program, "catalog.tg", out=io.StringIO(), err=io.StringIO())
    error = result.error
    if error is None or "not supported" in error.message or error.error_class not in POOR:
        return None
    return f"{error.error_class}: {error.message}"


def _fast(index: int, entry: tuple) -> bool:
    return index % 10 == 0 or entry[0] == "syntax"


@pytest.mark.parametrize("entry", sampled(ENTRIES, _fast, ids=lambda entry: f"{entry[0]}:{entry[1]}"))
def test_every_catalog_entry_is_the_languages_or_refused_clearly(entry):
    owner, name, program = entry
    assert outcome(program) is None, (owner, name, outcome(program))


def test_the_catalogs_cover_what_they_say():
    owners = {owner for owner, _, _ in ENTRIES}
    assert {"builtins", "torch", "torch.nn", "torch.Tensor", "torch.nn.functional", "syntax",
            "torch.nn.modules.module.Module", "torch.optim.sgd.SGD",
            "torch.utils.data.dataloader.DataLoader", "torch.autograd.graph.Node", "os", "sys",
            "itertools", "re"} <= owners
    assert len(ENTRIES) > 8000
    import ast

    nodes = {n for n, c in vars(ast).items() if isinstance(c, type) and issubclass(c, ast.AST)
             and not c.__subclasses__() and c.__module__ == "ast" and "_fields" in vars(c)
             and not c.__doc__.startswith("Deprecated")}
    assert nodes - set(SYNTAX) == set(), "a node of Python's grammar has no program"
