"""Write docs/ops.md, the op list, from the op registry (nothing else describes the ops).

    python tests/make_op_docs.py           # rewrite docs/ops.md
    python tests/make_op_docs.py --check   # exit 1 when docs/ops.md is stale

tests/test_engine_layout.py fails when the committed page differs from what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from autodiff.engine.tensors import tensor  # noqa: F401 - loads every family into the registry
from autodiff.engine.ops.registry import FAMILIES

PAGE = Path(__file__).resolve().parent.parent / "docs" / "ops.md"


# how a program writes each operator method
OPERATORS = {"__add__": "a + b", "__radd__": "n + a", "__sub__": "a - b", "__rsub__": "n - a",
             "__mul__": "a * b", "__rmul__": "n * a", "__truediv__": "a / b",
             "__rtruediv__": "n / a", "__pow__": "a ** b", "__rpow__": "n ** a",
             "__matmul__": "a @ b", "__rmatmul__": "m @ a", "__neg__": "-a", "__abs__": "abs(a)",
             "__getitem__": "a[i]", "__setitem__": "a[i] = v", "__iadd__": "a += b",
             "__isub__": "a -= b", "__imul__": "a *= b", "__itruediv__": "a /= b",
             "__ipow__": "a **= b"}


def _public(name: str) -> str:
    if name in OPERATORS:
        return OPERATORS[name]
    return f"Tensor.{name}" if not name.startswith("_") else name


def _names(names) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "—"


def markdown() -> str:
    lines = ["# Ops and their gradients",
             "",
             "Generated from the op registry by `python tests/make_op_docs.py`; do not edit by",
             "hand. Each row is one registry entry: the grad_fn name PyTorch gives the op, the",
             "public names that record it (`torch.X`, `Tensor.X`, operators,",
             "`torch.nn.functional.X`), and its rule. Entries without public names are the ops",
             "PyTorch computes gradients with, seen in a double backward (create_graph=True).",
             ""]
    # by title: the registry's own order is whichever family module was imported first
    for family in sorted(FAMILIES, key=lambda f: f.title):
        if not family.ops:
            continue  # a family of Tensor methods only (hooks)
        lines += [f"## {family.title}", "", "| grad_fn | public names | rule |", "|---|---|---|"]
        for op in family.ops:
            public = list(dict.fromkeys(
                [f"torch.{n}" for n in op.functions]
                + [_public(n) for n in op.methods]))
            public += [f"F.{n}" for n, fn in family.nn_functions.items() if fn is op.forward]
            rule = op.explain + ("; " + "; ".join(f for f in op.formulas if f) if op.formulas
                                 else "")
            lines.append(f"| {op.name} | {_names(public)} | {rule.replace('|', '∣')} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = markdown()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run python tests/make_op_docs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
