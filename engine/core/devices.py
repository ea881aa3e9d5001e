"""torch.device and the CPU-only answers a CPU build of PyTorch gives (`.cuda()` fails as
it does there; `device="cpu"`, `.to("cpu")` and `.cpu()` are no-ops)."""

from __future__ import annotations

from .classes import TorchCClass

NO_CUDA = "Torch not compiled with CUDA enabled"


class device(metaclass=TorchCClass):  # noqa: N801 - named as torch names it: `torch.device`, printed device(type='cpu')
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


# --- torch.cuda and torch.backends.cudnn as a CPU build has them ------------------------------

def synchronize(device=None) -> None:  # noqa: ARG001 - torch's signature
    raise AssertionError(NO_CUDA)  # (torch initializes CUDA first, and fails there)


def manual_seed(seed) -> None:
    """Silently ignored without CUDA, as torch says; the seed is still read as an int."""
    int(seed)


def manual_seed_all(seed) -> None:
    int(seed)


def set_device(device) -> None:
    """A negative index is a no-op; any other reaches torch's missing CUDA binding."""
    if _cuda_index(device) >= 0:
        raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")


def _cuda_index(where) -> int:
    """torch.cuda's reading of a device argument: an int, or a CUDA device with an index."""
    if isinstance(where, int):
        return where
    if isinstance(where, str):
        where = device(where)
    if isinstance(where, device):
        if where.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {where}")
        if where.index is not None:
            return where.index
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{where}")


CUDA = {f.__name__: f for f in (is_available, device_count, synchronize, manual_seed,
                                manual_seed_all, set_device)}

# torch.backends.cudnn's flags, a fresh run's values, and the setter named by torch's error
CUDNN_FLAGS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
_SETTERS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
            "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cublas"}


def _flag(name: str) -> property:
    def read(self) -> bool:
        from .session import current  # noqa: PLC0415 - session imports this module's users

        flags = current().cudnn
        return CUDNN_FLAGS[name] if flags is None else flags.get(name, CUDNN_FLAGS[name])
    return property(read)


class CudnnModule:
    """torch.backends.cudnn of a CPU build: no cuDNN, and flags a program may set (each run
    its own, in its session), which change nothing here."""

    _tg_public = frozenset({*CUDNN_FLAGS, "is_available", "version"})
    _tg_writable = frozenset(CUDNN_FLAGS)
    _tg_module_name = "torch.backends.cudnn"
    enabled, benchmark = _flag("enabled"), _flag("benchmark")
    deterministic, allow_tf32 = _flag("deterministic"), _flag("allow_tf32")

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def version() -> None:
        return None

    def _tg_assign(self, name: str, value) -> None:  # torch's setters take a bool alone
        if type(value) is not bool:
            raise RuntimeError(f"{_SETTERS[name]} expects a bool, but got {type(value).__name__}")
        from .session import current  # noqa: PLC0415

        session = current()
        if session.cudnn is None:
            session.cudnn = {}
        session.cudnn[name] = value

    def tg_type_name(self) -> str:  # type(torch.backends.cudnn)
        return "torch.backends.cudnn.CudnnModule"

    def __repr__(self) -> str:
        return "<module 'torch.backends.cudnn'>"


cudnn = CudnnModule()
