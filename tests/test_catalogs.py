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
from autodiff.interpreter.torch_names import NAMES, OWNERS
from syntax_catalog import FORMS, SYNTAX
from tiers import sampled

POOR = ("NameError", "AttributeError", "ImportError", "SyntaxError", "ModuleNotFoundError")
IMPORTS = ("import torch\nimport torch.nn as nn\nimport torch.optim as optim\n"
           "import torch.utils.data as data\nimport numpy\n")

# How a program reaches an object of each catalog: a module by its import, a class's names
# on an instance (tests/make_torch_names.py's INSTANCES, written in the language)
MODULE_IMPORTS = {"math": "import math", "random": "import random",
                  "collections": "import collections", "numpy.random": "import numpy.random"}
INSTANCES = {
    "torch.Tensor": "torch.ones(2, requires_grad=True)", "numpy.ndarray": "numpy.ones(2)",
    "torch.dtype": "torch.float32", "torch.autograd.graph.Node":
        "(torch.ones(1, requires_grad=True) * 2).grad_fn",
    "torch._C.Generator": "torch.Generator()", "torch.Size": "torch.Size([2])",
    "torch.device": "torch.device('cpu')",
    "torch.nn.modules.module.Module": "nn.Module()",
    "torch.nn.modules.linear.Linear": "nn.Linear(2, 1)",
    "torch.nn.modules.linear.LazyLinear": "nn.LazyLinear(1)",
    "torch.nn.modules.conv.Conv1d": "nn.Conv1d(1, 1, 3)", "torch.nn.modules.conv.Conv2d":
        "nn.Conv2d(1, 1, 3)", "torch.nn.modules.pooling.MaxPool2d": "nn.MaxPool2d(2)",
    "torch.nn.modules.pooling.AvgPool2d": "nn.AvgPool2d(2)",
    "torch.nn.modules.pooling.AdaptiveAvgPool2d": "nn.AdaptiveAvgPool2d(1)",
    "torch.nn.modules.sparse.Embedding": "nn.Embedding(3, 2)",
    "torch.nn.modules.container.Sequential": "nn.Sequential(nn.ReLU())",
    "torch.nn.modules.conv.LazyConv1d": "nn.LazyConv1d(2, 3)",
    "torch.nn.modules.conv.LazyConv2d": "nn.LazyConv2d(2, 3)",
    "torch.nn.parallel.data_parallel.DataParallel": "nn.DataParallel(nn.Linear(2, 1))",
    "torch.nn.modules.batchnorm.BatchNorm1d": "nn.BatchNorm1d(3)",
    "torch.nn.modules.batchnorm.BatchNorm2d": "nn.BatchNorm2d(3)",
    "torch.nn.modules.normalization.LayerNorm": "nn.LayerNorm(3)",
    "torch.nn.modules.container.ModuleList": "nn.ModuleList([nn.ReLU()])",
    "torch.nn.modules.container.ModuleDict": "nn.ModuleDict({'a': nn.ReLU()})",
    "torch.optim.sgd.SGD": "optim.SGD([nn.Parameter(torch.ones(1))], lr=0.1)",
    "torch.optim.adam.Adam": "optim.Adam([nn.Parameter(torch.ones(1))])",
    "torch.optim.lr_scheduler.StepLR":
        "optim.lr_scheduler.StepLR(optim.SGD([nn.Parameter(torch.ones(1))], lr=0.1), 2)",
    "torch.utils.data.dataloader.DataLoader":
        "data.DataLoader(data.TensorDataset(torch.ones(4, 2)), batch_size=2)",
    "torch.utils.data.dataset.TensorDataset": "data.TensorDataset(torch.ones(4, 2))",
    "torch.utils.data.dataset.Subset": "data.Subset(data.TensorDataset(torch.ones(4, 2)), [0])",
    "torch.utils.data.dataset.Dataset": "data.Dataset()",
    "torch.utils.data.dataloader._SingleProcessDataLoaderIter":
        "iter(data.DataLoader(data.TensorDataset(torch.ones(4, 2)), batch_size=2))",
    "torch.nn.parameter.Parameter": "nn.Parameter(torch.ones(1))",
    "torch.autograd.variable.Variable": "torch.autograd.Variable(torch.ones(1))",
    "torch.autograd.function.Function": "torch.autograd.Function",
    "torch.autograd.grad_mode.no_grad": "torch.no_grad()",
    "torch.autograd.grad_mode.enable_grad": "torch.enable_grad()",
    "torch.autograd.grad_mode.set_grad_enabled": "torch.set_grad_enabled(True)",
    "torch.autograd.grad_mode.inference_mode": "torch.inference_mode()",
    "torch.autograd.anomaly_mode.detect_anomaly": "torch.autograd.detect_anomaly()",
    "torch.autograd.anomaly_mode.set_detect_anomaly": "torch.autograd.set_detect_anomaly(False)",
    "torch.optim.optimizer.Optimizer": "optim.Optimizer",
    "torch.optim.lr_scheduler.LRScheduler": "optim.lr_scheduler.LRScheduler",
}
_OPTIMIZER = "optim.SGD([nn.Parameter(torch.ones(1))], lr=0.1)"
for _path in OWNERS.values():
    _module, _, _name = _path.rpartition(".")
    if _path in INSTANCES:
        continue
    if _module.endswith((".activation", ".loss", ".distance", ".dropout", ".flatten", ".linear")):
        INSTANCES[_path] = f"nn.{_name}()"  # (made without arguments)
    elif _module.startswith("torch.optim.") and _module != "torch.optim.lr_scheduler":
        INSTANCES[_path] = f"optim.{_name}([nn.Parameter(torch.ones(1))], lr=0.1)"
    elif _path.startswith("torch.") and _name.endswith("Tensor"):
        INSTANCES[_path] = f"torch.{_name}"  # the legacy tensor classes, as classes
INSTANCES.update({
    "torch.optim.lr_scheduler.MultiStepLR": f"optim.lr_scheduler.MultiStepLR({_OPTIMIZER}, [1])",
    "torch.optim.lr_scheduler.ExponentialLR": f"optim.lr_scheduler.ExponentialLR({_OPTIMIZER}, 0.9)",
    "torch.optim.lr_scheduler.CosineAnnealingLR":
        f"optim.lr_scheduler.CosineAnnealingLR({_OPTIMIZER}, 10)",
    "torch.optim.lr_scheduler.LambdaLR": f"optim.lr_scheduler.LambdaLR({_OPTIMIZER}, lambda e: 1.0)",
})


def _entries() -> list[tuple[str, str, str]]:
    """(catalog, name, program) for every entry."""
    entries = []
    for owner, names in NAMES.items():
        for name in names.split():
            if owner == "builtins":
                program = f"print({name})\n"
            elif owner in INSTANCES:
                program = f"{IMPORTS}obj = {INSTANCES[owner]}\nprint(obj.{name})\n"
            else:  # a module
                assert owner not in OWNERS.values(), f"no instance of {owner} to ask"
                program = f"{IMPORTS}{MODULE_IMPORTS.get(owner, f'import {owner}')}\nprint({owner}.{name})\n"
            entries.append((owner, name, program))
    standard = {owner: names.split() for owner, names in STANDARD_NAMES.items()}
    standard.update((owner, sorted(names)) for owner, names in HOST_NAMES.items())
    for owner, names in standard.items():  # the standard modules a program may import
        entries += [(owner, name, f"import {owner}\nprint({owner}.{name})\n") for name in names
                    if not name.startswith("_")]
    for catalog in (SYNTAX, FORMS):
        entries += [("syntax", name, program + "\n") for name, program in catalog.items()
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
