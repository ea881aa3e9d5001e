"""torch.device and the CPU-only answers a CPU build of PyTorch gives (`.cuda()` fails as
it does there; `device="cpu"`, `.to("cpu")` and `.cpu()` are no-ops)."""

from __future__ import annotations

NO_CUDA = "Torch not compiled with CUDA enabled"


class device:  # noqa: N801 - named as torch names it: `torch.device`, printed device(type='cpu')
    _tg_public = frozenset({"type", "index"})

    def __init__(self, type, index=None):  # noqa: A002 - torch's argument name
        if isinstance(type, device):
            type, index = type.type, type.index
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({_type_name(type)}), but expected one of:")
        kind, _, number = type.partition(":")
        if kind not in ("cpu", "cuda", "mps", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, "
                               f"ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, "
                               f"mtia, privateuseone device type at start of device string: "
                               f"{type}")
        self.type = kind
        self.index = int(number) if number else index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    __hash__ = object.__hash__


CPU = device("cpu")


def _type_name(value) -> str:
    return type(value).__name__


def check(where) -> None:
    """A `device=` argument: the CPU, or the error a CPU build of torch gives."""
    if where is None:
        return
    kind = where.type if isinstance(where, device) else device(where).type if isinstance(
        where, str) else None
    if kind is None:
        raise TypeError(f"device(): argument 'device' must be torch.device, not "
                        f"{_type_name(where)}")
    if kind != "cpu":
        raise AssertionError(NO_CUDA)


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0
