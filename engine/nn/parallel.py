"""nn.DataParallel as a CPU build of torch has it: with no GPU it keeps the module and runs
it unchanged (its parameters and state_dict keys under `module.`), so tutorial code written
for several GPUs runs here as it does on a laptop."""

from __future__ import annotations

from .module import Module


class DataParallel(Module):
    _tg_public = Module._tg_public | {"module", "device_ids", "dim"}

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self.module = module
        self.device_ids = []  # (no CUDA device: torch keeps none and runs the module itself)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


MODULES = {"DataParallel": DataParallel}
