"""Convolution and pooling modules: Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d,
MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, initialised and printed as torch's.

A convolution's weight gets kaiming_uniform_(a=√5), then its bias uniform(±1/√fan_in),
drawn from the run's generator in that order, as nn.Linear's (fan_in: in_channels/groups
times the kernel's area; a transposed one's weight is (in, out/groups, kernel), so its fan_in
is out_channels/groups times the kernel's area).
"""

from __future__ import annotations

import math

from . import init
from .layers import _uninitialised, weight_and_bias
from .module import Module
from ..tensors.parameter import announce
from ..tensors.tensor import mark_initialised, mark_uninitialised
from ..ops.conv import (adaptive_avg_pool2d, avg_pool2d, conv1d, conv2d, conv_transpose1d,
                        conv_transpose2d, max_pool2d)

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    dims = 2
    function = staticmethod(conv2d)
    _tg_public = Module._tg_public | {
        "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
        "padding_mode", "weight", "bias", "reset_parameters", "transposed", "output_padding"}

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        n = self.dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError("padding_mode must be one of {'circular', 'replicate', 'zeros', "
                             f"'reflect'}}, but got padding_mode='{padding_mode}'")
        if padding_mode != "zeros":
            raise NotImplementedError(f"nn.{type(self).__name__}(padding_mode=...) is not "
                                      "supported by autodiff")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation = _tuple(dilation, n)
        self.transposed = False
        self.output_padding = (0,) * n
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups) + self.kernel_size
        weight_and_bias(self, shape, bias, dtype)

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.array.shape[1] * math.prod(self.weight.array.shape[2:])
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return self.function(input, self.weight, self.bias, self.stride, self.padding,
                             self.dilation, self.groups)

    __call__ = forward

    def extra_repr(self) -> str:
        n = self.dims
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * n:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv2d(_ConvNd):
    """Conv2d(in_channels, out_channels, kernel_size, ...): a 2-d convolution layer."""


class Conv1d(_ConvNd):
    """Conv1d(in_channels, out_channels, kernel_size, ...): a 1-d convolution layer."""

    dims = 1
    function = staticmethod(conv1d)


class _ConvTransposeNd(_ConvNd):
    function = staticmethod(conv_transpose2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        Module.__init__(self)
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        n = self.dims
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride, n)
        self.padding = _tuple(padding, n)
        self.dilation = _tuple(dilation, n)
        self.transposed = True
        self.output_padding = _tuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups) + self.kernel_size
        weight_and_bias(self, shape, bias, dtype, out_channels)

    def _output_padding(self, input, output_size) -> tuple:
        """The output_padding that makes the output `output_size` (torch's rule and words)."""
        if output_size is None:
            return self.output_padding
        n = self.dims
        leading = 2 if input.dim() == n + 2 else 1
        wanted = list(output_size)
        if len(wanted) == leading + n:
            wanted = wanted[leading:]
        if len(wanted) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have "
                             f"{n} or {leading + n} elements (got {len(wanted)})")
        low = [(input.shape[leading + d] - 1) * self.stride[d] - 2 * self.padding[d] +
               self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        high = [low[d] + self.stride[d] - 1 for d in range(n)]
        for d in range(n):
            if not low[d] <= wanted[d] <= high[d]:
                raise ValueError(f"requested an output size of {output_size!r}, but valid sizes "
                                 f"range from {low} to {high} (for an input of "
                                 f"{input.shape[2:]!r})")
        return tuple(wanted[d] - low[d] for d in range(n))

    def forward(self, input, output_size=None):
        extra = self._output_padding(input, output_size)
        return self.function(input, self.weight, self.bias, self.stride, self.padding, extra,
                             self.groups, self.dilation)

    __call__ = forward


class ConvTranspose2d(_ConvTransposeNd):
    """ConvTranspose2d(in_channels, out_channels, kernel_size, ...): a 2-d transposed
    convolution layer."""


class ConvTranspose1d(_ConvTransposeNd):
    """ConvTranspose1d(in_channels, out_channels, kernel_size, ...): a 1-d transposed
    convolution layer."""

    dims = 1
    function = staticmethod(conv_transpose1d)


class _LazyConv:
    """LazyConv2d(out_channels, kernel_size, ...): a convolution whose in_channels come from
    its first input (dim 1, or 0 for an unbatched one); only then are its parameters shaped
    and drawn (from the generator as it is then), and, as in torch, the module becomes its
    eager class. The parameters keep their identity, so an optimiser made first updates them."""

    eager: type = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        self.eager.__init__(self, 0, out_channels, kernel_size, stride, padding, dilation, groups,
                            bias, padding_mode, device, dtype)
        for param in (self.weight, self.bias):
            if param is not None:
                mark_uninitialised(param, "Parameter")

    def reset_parameters(self) -> None:
        if self.in_channels != 0:
            self.eager.reset_parameters(self)

    def forward(self, input):
        unbatched = input.dim() == self.dims + 1
        self.in_channels = input.shape[0 if unbatched else 1]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        for param, wanted in ((self.weight, shape), (self.bias, shape[:1])):
            if param is not None:
                param.array = _uninitialised(wanted, param.dtype).array
        self.__class__ = self.eager
        self.reset_parameters()
        for param in (self.weight, self.bias):
            if param is not None:
                mark_initialised(param)
                announce(param)
        return self.forward(input)

    __call__ = forward


class LazyConv2d(_LazyConv, Conv2d):
    eager = Conv2d


class LazyConv1d(_LazyConv, Conv1d):
    eager = Conv1d


class MaxPool2d(Module):
    _tg_public = Module._tg_public | {"kernel_size", "stride", "padding", "dilation",
                                      "ceil_mode", "return_indices"}

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    __call__ = forward

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    _tg_public = Module._tg_public | {"kernel_size", "stride", "padding", "ceil_mode",
                                      "count_include_pad", "divisor_override"}

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    __call__ = forward

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    _tg_public = Module._tg_public | {"output_size"}

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


MODULES = {cls.__name__: cls for cls in (Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d,
                                          LazyConv1d, LazyConv2d, MaxPool2d,
                                          AvgPool2d, AdaptiveAvgPool2d)}
