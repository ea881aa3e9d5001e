"""The one way creation functions (torch.tensor, ones, rand, ...) finish a new tensor."""

from __future__ import annotations

from .tensor import Tensor


class CreationObserver:
    """Set `CreationObserver.current` to a callable to see every tensor a creation function
    makes, in program order (`autodiff check` perturbs leaves by creation index)."""

    current = None


def finish_creation(array, dtype, requires_grad) -> Tensor:
    if dtype is not None:
        array = array.astype(dtype.np)
    if requires_grad and array.dtype.kind != "f":
        raise RuntimeError(
            "Only Tensors of floating point and complex dtype can require gradients")
    t = Tensor._wrap(array, requires_grad=requires_grad)
    if CreationObserver.current is not None:
        CreationObserver.current(t)
    return t


def check_sizes(shape) -> None:
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(shape)}")
