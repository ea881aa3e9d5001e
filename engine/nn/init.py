"""torch.nn.init: fill a tensor in place, under no_grad, with torch's formulas and draws.

The bounds and standard deviations are computed in Python floats in torch's order of
operations, so the float32 arguments the kernels receive, and so the values, are torch's.
"""

from __future__ import annotations

import math
import warnings

from ..ops.inplace import fill_, zero_
from ..ops.random import normal_ as _normal_
from ..ops.random import uniform_ as _uniform_
from ..core.session import no_grad
from ..tensors.tensor import Tensor

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch returns an int 1 for linear ones)."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, float) or (isinstance(param, int) and not isinstance(param, bool)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor: Tensor) -> tuple[int, int]:
    shape = tensor.array.shape
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for n in shape[2:]:
        receptive *= n
    return shape[1] * receptive, shape[0] * receptive


def _fan(tensor: Tensor, mode) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _empty(tensor: Tensor) -> bool:
    if 0 in tensor.array.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return True
    return False


def uniform_(tensor: Tensor, a=0.0, b=1.0, generator=None) -> Tensor:
    with no_grad():
        return _uniform_(tensor, a, b, generator=generator)


def normal_(tensor: Tensor, mean=0.0, std=1.0, generator=None) -> Tensor:
    with no_grad():
        return _normal_(tensor, mean, std, generator=generator)


def constant_(tensor: Tensor, val) -> Tensor:
    with no_grad():
        return fill_(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    with no_grad():
        return zero_(tensor)


def xavier_uniform_(tensor: Tensor, gain=1.0, generator=None) -> Tensor:
    fan_in, fan_out = _fans(tensor)
    bound = math.sqrt(3.0) * (gain * math.sqrt(2.0 / float(fan_in + fan_out)))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain=1.0, generator=None) -> Tensor:
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a=0, mode="fan_in", nonlinearity="leaky_relu",
                     generator=None) -> Tensor:
    if _empty(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a=0, mode="fan_in", nonlinearity="leaky_relu",
                    generator=None) -> Tensor:
    if _empty(tensor):
        return tensor
    return normal_(tensor, 0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)),
                   generator)


def _deprecated(new):
    """torch's old name without the underscore: the same fill, with torch's FutureWarning."""
    old = new.__name__[:-1]

    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    deprecated.__name__ = "deprecated_init"  # what torch's alias prints as
    deprecated.__qualname__ = "_make_deprecate.<locals>.deprecated_init"
    return old, deprecated


_FILLS = (uniform_, normal_, constant_, xavier_uniform_, xavier_normal_, kaiming_uniform_,
          kaiming_normal_)
FUNCTIONS = {f.__name__: f for f in (calculate_gain, ones_, zeros_, *_FILLS)}
FUNCTIONS.update(map(_deprecated, _FILLS))
