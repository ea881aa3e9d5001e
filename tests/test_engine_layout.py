"""The engine's shape as a newcomer meets it: modules that import in any order, an acyclic
import graph, one registry entry per op, and a docs table generated from the registry."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from tiers import slow

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
MODULES = sorted(p.stem for p in ENGINE.glob("*.py") if p.stem != "__init__")


def _engine_imports(path: Path) -> set[str]:
    """The engine modules a module imports, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from .x import y / from . import x, y
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("autodiff.engine."):
                found.add(node.module.split(".")[2])
    return found & set(MODULES)


def test_engine_import_graph_is_acyclic():
    graph = {name: _engine_imports(ENGINE / f"{name}.py") for name in MODULES}
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        assert state.get(name) != 1, "import cycle: " + " -> ".join(path + [name])
        state[name] = 1
        for child in sorted(graph[name]):
            visit(child, path + [name])
        state[name] = 2

    for name in MODULES:
        visit(name, [])


PROGRAM = ("from autodiff.engine.api import torch\n"
           "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
           "b = torch.tensor([3.0, 4.0], requires_grad=True)\n"
           "(a + b).sum().backward()\n"
           "print(a.grad.tolist(), b.grad.tolist())\n")


@slow
@pytest.mark.parametrize("module", MODULES)
def test_each_engine_module_imports_alone_first(module):
    """Whatever engine module a process imports first, tensors work completely after it
    (operators included: nothing is patched in later by another module)."""
    code = f"import autodiff.engine.{module}\n" + PROGRAM
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[1.0, 1.0] [1.0, 1.0]\n"


def test_tensor_operators_work_with_the_tensor_module_alone():
    code = ("from autodiff.engine.tensor import Tensor\nimport numpy as np\n"
            "a = Tensor._wrap(np.array([1.0, 2.0]), requires_grad=True)\n"
            "b = Tensor._wrap(np.array([3.0, 4.0]))\n"
            "(a * b + a).sum().backward()\nprint(a.grad.tolist())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[4.0, 5.0]\n"


def test_op_docs_are_generated_from_the_registry():
    sys.path.insert(0, str(ROOT / "tests"))
    import make_op_docs

    assert make_op_docs.PAGE.read_text(encoding="utf-8") == make_op_docs.markdown(), (
        "docs/ops.md is stale: run python tests/make_op_docs.py")
