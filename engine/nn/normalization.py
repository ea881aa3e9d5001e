"""nn.BatchNorm1d, nn.BatchNorm2d (and their Lazy forms) and nn.LayerNorm: modules over F.batch_norm and
F.layer_norm (ops/normalization.py), with torch's buffers (running_mean, running_var,
num_batches_tracked), modes, checks and printed forms.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.session import no_grad
from ..ops.normalization import batch_norm, layer_norm
from ..tensors.parameter import announce, make_parameter
from ..tensors.tensor import Tensor, mark_initialised
from . import init
from .layers import lazy_parameter
from .module import Module


def _filled(shape: tuple, value, dtype) -> Tensor:
    dt = (dtype or dtypes.DEFAULT_FLOAT).np
    return Tensor._wrap(np.full(shape, value, dt))


def _parameter(shape: tuple, value, dtype):
    return announce(make_parameter(_filled(shape, value, dtype)))


class _BatchNorm(Module):
    _tg_public = Module._tg_public | {
        "num_features", "eps", "momentum", "affine", "track_running_stats", "weight", "bias",
        "running_mean", "running_var", "num_batches_tracked", "reset_parameters",
        "reset_running_stats"}
    _dims: tuple = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = _parameter((num_features,), 1, dtype)
            if bias:
                self.bias = _parameter((num_features,), 0, dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _filled((num_features,), 0, dtype))
            self.register_buffer("running_var", _filled((num_features,), 1, dtype))
            self.register_buffer("num_batches_tracked",
                                 Tensor._wrap(np.asarray(0, np.int64)))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:  # in place, as torch's zero_ and fill_ (a 0-d count too)
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:  # torch's init.ones_ and init.zeros_: in place, under no_grad
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        if input.dim() not in self._dims:
            wanted = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {wanted} input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            tracked = self.num_batches_tracked
            tracked.array = np.asarray(tracked.array + 1, np.int64)  # (add_(1), in place)
            if self.momentum is None:
                factor = 1.0 / float(tracked.array)
        training = self.training or (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if use_buffers else None,
                          self.running_var if use_buffers else None, self.weight, self.bias,
                          training, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """nn.BatchNorm1d over (N, C) or (N, C, L) inputs."""


class BatchNorm2d(_BatchNorm):
    """nn.BatchNorm2d over (N, C, H, W) inputs."""

    _dims = (4,)


_LAZY = ("weight", "bias", "running_mean", "running_var")  # shaped at a lazy module's first call


class _LazyBatchNorm:
    """LazyBatchNorm1d/2d(eps=1e-5, momentum=0.1, ...): a batch norm whose num_features come
    from its first input (dim 1); then, as in torch, the module becomes its eager class, its
    parameters and running statistics shaped and reset, keeping their identity."""

    eager: type = BatchNorm1d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        self.eager.__init__(self, 0, eps, momentum, affine, track_running_stats, device, dtype)
        for name in _LAZY:
            if getattr(self, name) is not None:
                if name in ("weight", "bias"):
                    self.register_parameter(name, lazy_parameter(dtype))
                else:
                    self.register_buffer(name, lazy_parameter(dtype, "Buffer"))

    def reset_parameters(self) -> None:
        if self.num_features != 0:
            self.eager.reset_parameters(self)

    def forward(self, input):
        eager = self.eager
        if input.dim() >= 2:
            self.num_features = input.shape[1]
            lazy = [tensor for tensor in map(self.__getattribute__, _LAZY) if tensor is not None]
            for tensor in lazy:
                tensor.array = _filled((self.num_features,), 0, tensor.dtype).array
                mark_initialised(tensor)
            self.__class__ = eager
            self.reset_parameters()
            for param in (self.weight, self.bias):
                if param is not None:
                    announce(param)
        return eager.forward(self, input)

    __call__ = forward


class LazyBatchNorm1d(_LazyBatchNorm, BatchNorm1d):
    eager = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm, BatchNorm2d):
    eager = BatchNorm2d


class LayerNorm(Module):
    """nn.LayerNorm(normalized_shape): each sample normalized over its last dims."""

    _tg_public = Module._tg_public | {"normalized_shape", "eps", "elementwise_affine", "weight",
                                      "bias", "reset_parameters"}

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = _parameter(self.normalized_shape, 1, dtype)
            if bias:
                self.bias = _parameter(self.normalized_shape, 0, dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.elementwise_affine:  # torch's init.ones_ and init.zeros_: in place, under no_grad
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


MODULES = {cls.__name__: cls for cls in (BatchNorm1d, BatchNorm2d, LazyBatchNorm1d,
                                          LazyBatchNorm2d, LayerNorm)}
