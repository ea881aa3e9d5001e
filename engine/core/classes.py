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
        path = CLASS_PATHS.get(f"{cls.__module__}.{cls.__qualname__}")
        return type.__repr__(cls) if path is None else f"<class '{path}'>"
