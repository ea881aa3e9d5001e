"""How the engine's classes print: as PyTorch's classes print (`print(nn.Linear)`,
`print(type(model))` show `<class 'torch.nn.modules.linear.Linear'>`), never the engine's
own module path. The paths are facts about PyTorch, generated into core/torch_class_paths.py.
"""

from __future__ import annotations

from .torch_class_paths import CLASS_PATHS


class TorchClass(type):
    """The metaclass of the engine's public classes (and of a program's classes made from
    them, which print as Python prints them: `<class '__main__.Net'>`)."""

    def __repr__(cls) -> str:
        return shown(cls)


class TorchCClass(type):
    """The metaclass of the engine's classes that stand for classes torch writes in C
    (torch.device, torch.Size, torch.Generator): they print as torch's, and they are not
    TorchClass, whose methods run on any `self` as Python methods do."""

    def __repr__(cls) -> str:
        return shown(cls)


def shown(cls: type) -> str:
    """How a class prints: as PyTorch's class, where it stands for one."""
    path = CLASS_PATHS.get(f"{cls.__module__}.{cls.__qualname__}")
    return type.__repr__(cls) if path is None else f"<class '{path}'>"
