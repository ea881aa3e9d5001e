"""The engine as a newcomer meets it: the tensor module alone gives working operators, and the
ops table in docs/ is generated from the registry (the import graph: test_import_graph.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent


def test_tensor_operators_work_with_the_tensor_module_alone():
    code = ("from autodiff.engine.tensors.tensor import Tensor\nimport numpy as np\n"
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
