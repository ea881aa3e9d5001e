"""Inference tensors: what `torch.inference_mode` makes, and what torch forbids on them later.

A tensor made while inference mode is on is an inference tensor (`Tensor.is_inference()`),
and so is every view or detached alias of one; a view of a normal tensor stays normal, in
the mode or not. Outside the mode torch refuses to save one for backward, to change one in
place (after the write, as torch's version-counter step fails), to make one require grad,
and to read its version counter. Ops on inference tensors outside the mode make normal
tensors.

The marks live here, by identity (as nn.Parameter's do: a Tensor has no slot to spare), and
cost a program that never enters inference mode one test of an empty dict. They belong to
the tensor, not to a run; whether inference mode is on is the run's own (its session's
`inference`), so a program in another thread inside the mode marks nothing of this one's.
"""

from __future__ import annotations

import weakref

from .session import current

# id -> a weak reference to each inference tensor (dropped with it); hot paths test it empty
# before calling anything here
TENSORS: dict = {}

SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
         "inference mode in computation tracked by autograd. To work around this, you can make "
         "a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead "
         "of `torch.inference_mode()`.")
IN_PLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
            "a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")
REQUIRES_GRAD = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
VERSION = "Inference tensors do not track version counter."


def mark(t) -> None:
    key = id(t)
    TENSORS[key] = weakref.ref(t, lambda _, key=key: TENSORS.pop(key, None))


def is_inference(t) -> bool:
    if not TENSORS:
        return False
    ref = TENSORS.get(id(t))
    return ref is not None and ref() is t


def inherit(alias, source) -> None:
    """`alias` shares `source`'s storage (a view, `detach`, `.data`): it is an inference
    tensor exactly when `source` is, wherever it was made."""
    if is_inference(source):
        mark(alias)
    else:
        TENSORS.pop(id(alias), None)


def check_saved(inputs, positions) -> None:
    """Refuse to save an inference tensor among `inputs` (at `positions`) for backward."""
    for j in positions:
        if is_inference(inputs[j]):
            raise RuntimeError(SAVED)


def check_in_place(t) -> None:
    if is_inference(t) and not current().inference:
        raise RuntimeError(IN_PLACE)


def check_requires_grad(t, requires_grad) -> None:
    if requires_grad and is_inference(t) and not current().inference:
        raise RuntimeError(REQUIRES_GRAD)
