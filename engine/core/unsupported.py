"""The error for what PyTorch has and autodiff does not (yet): `X is not supported by autodiff`.

A program that reaches such a name stops there (exit status 2, as for an unsupported
construct), and no `try`/`except` of the program catches it: PyTorch would have gone on.
"""

from __future__ import annotations


class Unsupported(NotImplementedError):
    tg_unsupported = True  # what the interpreter looks for
    tg_error_class = "NotImplementedError"  # what its diagnostic says

    def __init__(self, what: str, where: str = "by autodiff", *, message: str | None = None) -> None:
        super().__init__(message or f"{what} is not supported {where}")
