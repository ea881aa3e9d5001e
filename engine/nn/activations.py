"""The activation modules: ReLU, Sigmoid, Tanh, Softmax, LogSoftmax, LeakyReLU, GELU, Softplus,
ELU, SiLU, LogSigmoid, Hardtanh, ReLU6, each a module over its functional form, keeping its
arguments as attributes and printing them as torch does (`LeakyReLU(negative_slope=0.01)`).
"""

from __future__ import annotations

from .module import Module
from ..ops.activation import (
    elu,
    gelu,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    relu,
    relu6,
    sigmoid,
    silu,
    softmax,
    softplus,
    tanh,
)


class _Activation(Module):
    """`function(input, **arguments)`; `arguments` are (name, default) pairs, `shown` the
    ones extra_repr lists (a name ending in `?` only when true, as `inplace=True`)."""

    function = staticmethod(relu)
    arguments: tuple = ()
    shown: tuple = ()

    def __init__(self, *args, **kwargs):
        super().__init__()
        names = [name for name, _ in self.arguments]
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}.__init__() takes from 1 to {len(names) + 1} "
                            f"positional arguments but {len(args) + 1} were given")
        values = dict(self.arguments)
        values.update(zip(names, args))
        for key, value in kwargs.items():
            if key not in values:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                                f"argument '{key}'")
            values[key] = value
        for name, value in values.items():
            setattr(self, name, value)

    def forward(self, input):
        return self.function(input, **{name: getattr(self, name) for name, _ in self.arguments})

    __call__ = forward  # (no hooks to run: one call less per layer)

    def extra_repr(self) -> str:
        parts = []
        for name in self.shown:
            if name.endswith("?"):
                if getattr(self, name[:-1]):
                    parts.append(f"{name[:-1]}=True")
                continue
            value = getattr(self, name)
            parts.append(f"{name}={value!r}" if isinstance(value, str) else f"{name}={value}")
        return ", ".join(parts)


def _activation(name: str, function, arguments=(), shown=()):
    body = {"function": staticmethod(function), "arguments": tuple(arguments),
            "shown": tuple(shown), "__module__": __name__,
            "__doc__": f"nn.{name}: {function.__name__} as a module.",
            "_tg_public": Module._tg_public | {n for n, _ in arguments}}
    if not arguments:  # the common case in a training loop: nothing to pass on
        def forward(self, input):
            return function(input)
        body["forward"] = body["__call__"] = forward
    return type(name, (_Activation,), body)


_INPLACE = ("inplace", False)
ReLU = _activation("ReLU", relu, [_INPLACE], ["inplace?"])
Sigmoid = _activation("Sigmoid", sigmoid)
Tanh = _activation("Tanh", tanh)
Softmax = _activation("Softmax", softmax, [("dim", None)], ["dim"])
LogSoftmax = _activation("LogSoftmax", log_softmax, [("dim", None)], ["dim"])
LeakyReLU = _activation("LeakyReLU", leaky_relu, [("negative_slope", 0.01), _INPLACE],
                        ["negative_slope", "inplace?"])
GELU = _activation("GELU", gelu, [("approximate", "none")], ["approximate"])
Softplus = _activation("Softplus", softplus, [("beta", 1.0), ("threshold", 20.0)],
                       ["beta", "threshold"])
ELU = _activation("ELU", elu, [("alpha", 1.0), _INPLACE], ["alpha", "inplace?"])
SiLU = _activation("SiLU", silu, [_INPLACE], ["inplace?"])
LogSigmoid = _activation("LogSigmoid", logsigmoid)
Hardtanh = _activation("Hardtanh", hardtanh, [("min_val", -1.0), ("max_val", 1.0), _INPLACE],
                       ["min_val", "max_val", "inplace?"])
ReLU6 = _activation("ReLU6", relu6, [_INPLACE], ["inplace?"])

ACTIVATIONS = {cls.__name__: cls for cls in (
    ReLU, Sigmoid, Tanh, Softmax, LogSoftmax, LeakyReLU, GELU, Softplus, ELU, SiLU, LogSigmoid,
    Hardtanh, ReLU6)}
