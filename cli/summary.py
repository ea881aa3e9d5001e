"""The short plain summary `autodiff run` prints after a program's own output."""

from __future__ import annotations

from autodiff.engine.tensor import Tensor


def summarize(names: dict) -> str:
    """One block per top-level name bound to a tensor, in order of first assignment."""
    blocks = []
    for name, value in names.items():
        if type(value) is not Tensor:
            continue
        kind = "leaf" if value.is_leaf else f"grad_fn={value.grad_fn.name()}"
        head = (f"{name}: shape {list(value.shape)}, {value.dtype}, "
                f"requires_grad={value.requires_grad}, {kind}")
        lines = [head, _indent("value", repr(value))]
        if value.grad is not None:
            lines.append(_indent("grad", repr(value.grad)))
        blocks.append("\n".join(lines))
    if not blocks:
        return ""
    return "── tensors ──\n" + "\n".join(blocks) + "\n"


def _indent(label: str, text: str) -> str:
    pad = " " * (len(label) + 4)
    first, *rest = text.split("\n")
    return "\n".join([f"  {label}: {first}"] + [pad + line for line in rest])
