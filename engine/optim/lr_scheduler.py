"""torch.optim.lr_scheduler: StepLR, MultiStepLR, ExponentialLR, LambdaLR, CosineAnnealingLR.

As torch's: creating one records each group's `initial_lr` (so the optimizer prints it) and
takes a first step at epoch 0; each `step()` moves to the next epoch and writes the new
rates into the optimizer's groups, each computed from the current one (torch's chainable
forms, so the floats are the same: 0.1 * 0.5 * 0.5, not 0.1 * 0.25).
"""

from __future__ import annotations

import math
import warnings

from ..core.classes import TorchClass
from .optimizers import Optimizer
from ..core.unsupported import Unsupported

_STEP_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
    "value of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")


class LRScheduler(metaclass=TorchClass):
    _tg_public = frozenset({"step", "get_last_lr", "last_epoch", "base_lrs", "optimizer"})

    def __init__(self, optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if last_epoch != -1:
            raise Unsupported(f"{type(self).__name__} with last_epoch=")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._initial = True
        self.step()
        self._initial = False

    def get_last_lr(self) -> list:
        return list(self._last_lr)

    def step(self, epoch=None) -> None:
        if epoch is not None:
            raise Unsupported("lr_scheduler.step(epoch)")
        if self._step_count == 1 and not self.optimizer._stepped:
            warnings.warn(_STEP_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self._rates()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]

    def __repr__(self) -> str:
        return f"<torch.optim.lr_scheduler.{type(self).__name__} object at {id(self):#x}>"


class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def _rates(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1) -> None:
        self.milestones = {}
        for m in milestones:  # (a Counter: a milestone listed twice multiplies twice)
            self.milestones[m] = self.milestones.get(m, 0) + 1
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _rates(self) -> list:
        if self.last_epoch not in self.milestones:
            return self._current()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current()]


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma, last_epoch=-1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _rates(self) -> list:
        return self._current() if self._initial else [lr * self.gamma for lr in self._current()]


class LambdaLR(LRScheduler):
    def __init__(self, optimizer, lr_lambda, last_epoch=-1) -> None:
        groups = len(optimizer.param_groups) if isinstance(optimizer, Optimizer) else 0
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise ValueError(f"Expected {groups} lr_lambdas, but got {len(lr_lambda)}")
            self._lambdas = list(lr_lambda)
        else:
            self._lambdas = [lr_lambda] * groups
        super().__init__(optimizer, last_epoch)

    def _rates(self) -> list:
        return [base * f(self.last_epoch) for f, base in zip(self._lambdas, self.base_lrs)]


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1) -> None:  # noqa: N803
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def _rates(self) -> list:
        t, low = self.last_epoch, self.eta_min
        if self._initial:
            return self._current()
        if (t - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for lr, base in zip(self._current(), self.base_lrs)]
        return [(1 + math.cos(math.pi * t / self.T_max))
                / (1 + math.cos(math.pi * (t - 1) / self.T_max)) * (lr - low) + low
                for lr in self._current()]


SCHEDULERS = {cls.__name__: cls for cls in (LRScheduler, StepLR, MultiStepLR, ExponentialLR,
                                            LambdaLR, CosineAnnealingLR)}
