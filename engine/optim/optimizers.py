"""torch.optim: SGD, Adam, AdamW, RMSprop, Adadelta, Adagrad, Adamax, NAdam and RAdam, their parameter groups and state, printed as torch prints them.

The updates are torch's single-tensor CPU implementations (what torch picks on the CPU: neither
foreach nor fused), in the same arithmetic, so float32 parameters come out bit for bit:
`t.add_(u, alpha=a)` and `addcmul_` are fused multiply-adds there (one rounding), `lerp_` is
one too, a Python-float hyperparameter is rounded to the tensor's dtype before it is used, and
Adam's bias corrections are computed in Python floats from a float32 step count. (Adam's
`sqrt` is MKL's there, which is not always correctly rounded: its last bit can differ.)
Parameters change in place, under no_grad, and their version counters move, as in torch.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..core.classes import TorchClass
from ..numerics.fma import fma, fma_wide
from ..tensors.parameter import type_name, zero_grad_of
from ..core.session import enable_grad
from ..tensors.tensor import Tensor

def _scalar(value, like: np.ndarray):
    """A Python-float hyperparameter as torch's kernel sees it: in the tensor's dtype."""
    return like.dtype.type(value)


def _write(param: Tensor, value: np.ndarray) -> None:
    """An in-place update of a parameter: same storage, version counter moved."""
    param.own_array()[...] = value
    param._bump_version()


def _add_scaled(params: list, directions: list, alpha: float) -> None:
    """p.add_(d, alpha=alpha) for each parameter, in place. Parameters of one dtype are done
    as one array: one fused multiply-add (and one check of its rounding) for them all."""
    targets = [p.own_array() for p in params]
    dtype = targets[0].dtype
    if len(targets) > 1 and all([x.dtype == dtype for x in targets]):
        flat = np.concatenate([x.reshape(-1) for x in targets])
        step = np.concatenate([d.reshape(-1) for d in directions])
        updated = fma_wide(step, _scalar(alpha, flat), flat)
        start = 0
        for p, x in zip(params, targets):
            end = start + x.size
            x[...] = updated[start:end].reshape(x.shape)  # (rounded here, once)
            p._bump_version()
            start = end
        return
    for p, d, x in zip(params, directions, targets):
        fma(d, _scalar(alpha, x), x, out=x)
        p._bump_version()


def _gradients(group: dict) -> list:
    """(parameter, its gradient array) for each parameter of the group that has a `.grad`."""
    if group["maximize"]:
        return [(p, -p._grad.array) for p in group["params"] if p._grad is not None]
    return [(p, p._grad.array) for p in group["params"] if p._grad is not None]


class Optimizer(metaclass=TorchClass):
    """The base: parameter groups (dicts: 'params' then the hyperparameters), per-parameter
    state, zero_grad, and torch's printed form."""

    _tg_public = frozenset({"step", "zero_grad", "param_groups", "state", "defaults",
                            "state_dict", "load_state_dict", "add_param_group"})

    def __init__(self, params, defaults: dict):
        if type(params) is Tensor:
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type_name(params)}")
        self.defaults = defaults
        self._stepped = False
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        if not isinstance(group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(group).__name__}")
        params = group["params"]
        if type(params) is Tensor:
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        for p in params:
            if type(p) is not Tensor:
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type_name(p))
            if p.grad_fn is not None:
                raise ValueError("can't optimize a non-leaf Tensor")
        group["params"] = params
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                zero_grad_of(p, set_to_none)

    def _update_group(self, group: dict) -> None:
        """One group's step; by default each parameter with a gradient on its own."""
        for p, g in _gradients(group):
            self._update(p, g, group, self.state[p])

    def step(self, closure=None):
        self._stepped = True  # (a learning-rate scheduler stepped before it warns, as torch's)
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._update_group(group)
        return loss

    def state_dict(self) -> dict:
        index, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict) -> None:
        """torch's: the saved groups' hyperparameters and the saved state, matched to this
        optimizer's parameters by position; a state tensor takes its parameter's dtype (one
        that has it already is kept, not copied, as torch's `.to` keeps it)."""
        saved_groups = state_dict["param_groups"]
        if len(self.param_groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = {i: p for g, s in zip(self.param_groups, saved_groups)
                    for i, p in zip(s["params"], g["params"])}
        state = defaultdict(dict)
        for key, values in state_dict["state"].items():
            p = by_index.get(key)
            if p is None:
                state[key] = values
                continue
            state[p] = {name: v.to(p.dtype) if type(v) is Tensor and name != "step"
                        and p.dtype.is_floating_point else v for name, v in values.items()}
        self.state = state
        self.param_groups = [dict(s, params=g["params"])
                             for g, s in zip(self.param_groups, saved_groups)]

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        _check(lr >= 0.0, f"Invalid learning rate: {lr}")
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _check(not nesterov or (momentum > 0 and dampening == 0),
               "Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
            nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
            fused=fused))

    def _update_group(self, group: dict) -> None:
        plain = group["weight_decay"] == 0 and group["momentum"] == 0
        params, directions = [], []
        for p, g in _gradients(group):
            params.append(p)
            directions.append(g if plain else self._direction(p, g, group))
        if params:
            _add_scaled(params, directions, -group["lr"])

    def _direction(self, p: Tensor, g, group: dict):
        """The step before the learning rate: weight decay, then momentum (torch's order)."""
        x = p.own_array()
        decay, momentum = group["weight_decay"], group["momentum"]
        if decay != 0:
            g = fma(x, _scalar(decay, x), g)
        if momentum == 0:
            return g
        state = self.state[p]  # (only with momentum does SGD keep state, as in torch)
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = Tensor._wrap(np.array(g, dtype=x.dtype))
        else:
            b = buf.own_array()
            fma(g, _scalar(1 - group["dampening"], x), b * _scalar(momentum, x), out=b)
        b = buf.own_array()
        return fma(b, _scalar(momentum, x), g) if group["nesterov"] else b


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_adam_arguments(lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay))

    @staticmethod
    def _update(p: Tensor, g, group: dict, state: dict) -> None:
        x = np.asarray(p.array)
        if not state:
            _first_step_state(state, x, "exp_avg", "exp_avg_sq",
                              *["max_exp_avg_sq"] * bool(group["amsgrad"]))
        state["step"].array = step = state["step"].array + np.float32(1)
        beta1, beta2 = group["betas"]
        lr, decay = group["lr"], group["weight_decay"]
        if decay != 0:
            if group["decoupled_weight_decay"]:
                x = x * _scalar(1 - lr * decay, x)
            else:
                g = fma(x, _scalar(decay, x), g)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        m = _lerp(np.asarray(exp_avg.array), g, _scalar(1 - beta1, x))
        v = fma(_scalar(1 - beta2, x) * g, g, np.asarray(exp_avg_sq.array) * _scalar(beta2, x))
        exp_avg.own_array()[...] = m
        exp_avg_sq.own_array()[...] = v
        step = float(step)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if group["amsgrad"]:
            largest = state["max_exp_avg_sq"]
            v = np.maximum(np.asarray(largest.array), v)
            largest.own_array()[...] = v
        denom = np.sqrt(v) / _scalar(bias_correction2_sqrt, x) + _scalar(group["eps"], x)
        _write(p, x + (_scalar(-step_size, x) * m) / denom)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(
            lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
            weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
            differentiable=differentiable))

    @staticmethod
    def _update(p: Tensor, g, group: dict, state: dict) -> None:
        x = np.asarray(p.array)
        if not state:
            _first_step_state(state, x, "square_avg",
                              *["momentum_buffer"] * (group["momentum"] > 0),
                              *["grad_avg"] * bool(group["centered"]))
        state["step"].array = state["step"].array + np.float32(1)
        alpha, lr = group["alpha"], group["lr"]
        if group["weight_decay"] != 0:
            g = fma(x, _scalar(group["weight_decay"], x), g)
        square_avg = state["square_avg"].own_array()
        square_avg[...] = fma(_scalar(1 - alpha, x) * g, g, square_avg * _scalar(alpha, x))
        if group["centered"]:
            grad_avg = state["grad_avg"].own_array()
            grad_avg[...] = _lerp(grad_avg, g, _scalar(1 - alpha, x))
            avg = np.sqrt(fma(-grad_avg, grad_avg, square_avg))
        else:
            avg = np.sqrt(square_avg)
        avg = avg + _scalar(group["eps"], x)
        if group["momentum"] > 0:
            buf = state["momentum_buffer"].own_array()
            buf[...] = buf * _scalar(group["momentum"], x) + g / avg
            _write(p, fma(buf, _scalar(-lr, x), x))
        else:
            _write(p, x + (_scalar(-lr, x) * g) / avg)


def _check_adam_arguments(lr, eps, betas, weight_decay) -> None:
    """The Adam family's checks, in torch's order (Adam, Adamax, NAdam, RAdam)."""
    _check(0.0 <= lr, f"Invalid learning rate: {lr}")
    _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
    _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
    _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")


def _check_capturable(group: dict, devices: str) -> None:
    """capturable=True wants an accelerator; on the CPU torch's step refuses it."""
    if group["capturable"]:
        raise AssertionError("If capturable=True, params and state_steps must be on supported "
                             f"devices: {devices}.")


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
            capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        pairs = _gradients(group)
        for p, _ in pairs:  # (torch makes the group's state, then checks, then updates)
            if not self.state[p]:
                _first_step_state(self.state[p], np.asarray(p.array), "square_avg", "acc_delta")
        if pairs:
            _check_capturable(group, "['cuda', 'xpu', 'hpu', 'privateuseone']")
        for p, g in pairs:
            self._update(p, g, group, self.state[p])

    @staticmethod
    def _update(p: Tensor, g, group: dict, state: dict) -> None:
        x = np.asarray(p.array)
        state["step"].array = state["step"].array + np.float32(1)
        rho, eps = _scalar(group["rho"], x), _scalar(group["eps"], x)
        if group["weight_decay"] != 0:
            g = fma(x, _scalar(group["weight_decay"], x), g)
        square_avg = state["square_avg"].own_array()
        acc_delta = state["acc_delta"].own_array()
        rest = _scalar(1 - group["rho"], x)
        square_avg[...] = fma(rest * g, g, square_avg * rho)
        std = np.sqrt(square_avg + eps)
        delta = np.sqrt(acc_delta + eps) / std * g
        acc_delta[...] = fma(rest * delta, delta, acc_delta * rho)
        _write(p, fma(delta, _scalar(-group["lr"], x), x))


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(
            lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, foreach=foreach,
            maximize=maximize, differentiable=differentiable, fused=fused))
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        # Adagrad's state exists from the start (for the constructor's parameters only)
        for group in self.param_groups:
            for p in group["params"]:
                self._first_state(self.state[p], p)

    def _first_state(self, state: dict, p: Tensor) -> None:
        x = np.asarray(p.array)
        state["step"] = Tensor._wrap(np.float32(0))
        # (a later group's state takes the defaults' initial value, as torch's does)
        state["sum"] = Tensor._wrap(np.full_like(x, self.defaults["initial_accumulator_value"]))

    def _update_group(self, group: dict) -> None:
        for p, g in _gradients(group):
            state = self.state[p]
            if not state:
                self._first_state(state, p)
            x = np.asarray(p.array)
            state["step"].array = step = state["step"].array + np.float32(1)
            if group["weight_decay"] != 0:
                g = fma(x, _scalar(group["weight_decay"], x), g)
            clr = group["lr"] / (1 + (float(step) - 1) * group["lr_decay"])
            total = state["sum"].own_array()
            total[...] = fma(g, g, total)
            std = np.sqrt(total) + _scalar(group["eps"], x)
            _write(p, x + (_scalar(-clr, x) * g) / std)


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_adam_arguments(lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable))

    @staticmethod
    def _update(p: Tensor, g, group: dict, state: dict) -> None:
        x = np.asarray(p.array)
        if not state:
            _first_step_state(state, x, "exp_avg", "exp_inf")
        _check_capturable(group, "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']")
        state["step"].array = step = state["step"].array + np.float32(1)
        beta1, beta2 = group["betas"]
        if group["weight_decay"] != 0:
            g = fma(x, _scalar(group["weight_decay"], x), g)
        exp_avg = state["exp_avg"].own_array()
        exp_inf = state["exp_inf"].own_array()
        exp_avg[...] = _lerp(exp_avg, g, _scalar(1 - beta1, x))
        exp_inf[...] = np.maximum(exp_inf * _scalar(beta2, x), np.abs(g) + _scalar(group["eps"], x))
        clr = group["lr"] / (1 - beta1 ** float(step))
        _write(p, x + (_scalar(-clr, x) * exp_avg) / exp_inf)


_ALL_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_adam_arguments(lr, eps, betas, weight_decay)
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable))

    @staticmethod
    def _update(p: Tensor, g, group: dict, state: dict) -> None:
        x = np.asarray(p.array)
        if not state:
            state["step"] = Tensor._wrap(np.float32(0))
            state["mu_product"] = Tensor._wrap(np.float32(1))
            state["exp_avg"] = Tensor._wrap(np.zeros_like(x))
            state["exp_avg_sq"] = Tensor._wrap(np.zeros_like(x))
        if group["capturable"]:
            raise AssertionError("If capturable=True, params, mu_products and state_steps must "
                                 f"be on supported devices: {_ALL_DEVICES}.")
        state["step"].array = step = state["step"].array + np.float32(1)
        step = float(step)
        beta1, beta2 = group["betas"]
        lr, decay, momentum_decay = group["lr"], group["weight_decay"], group["momentum_decay"]
        bias_correction2 = 1 - beta2 ** step
        if decay != 0:
            if group["decoupled_weight_decay"]:
                x = x * _scalar(1 - lr * decay, x)
            else:
                g = fma(x, _scalar(decay, x), g)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # (the product is a float32 tensor: mu is rounded to float32 before it multiplies)
        state["mu_product"].array = product = state["mu_product"].array * np.float32(mu)
        product = float(product)
        exp_avg, exp_avg_sq = state["exp_avg"].own_array(), state["exp_avg_sq"].own_array()
        exp_avg[...] = _lerp(exp_avg, g, _scalar(1 - beta1, x))
        exp_avg_sq[...] = fma(_scalar(1 - beta2, x) * g, g, exp_avg_sq * _scalar(beta2, x))
        denom = np.sqrt(exp_avg_sq / _scalar(bias_correction2, x)) + _scalar(group["eps"], x)
        x = x + (_scalar(-lr * (1.0 - mu) / (1.0 - product), x) * g) / denom
        value = (-lr * mu_next) / (1.0 - product * mu_next)
        _write(p, x + (_scalar(value, x) * exp_avg) / denom)


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_adam_arguments(lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
            foreach=foreach, capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    @staticmethod
    def _update(p: Tensor, g, group: dict, state: dict) -> None:
        x = np.asarray(p.array)
        if not state:
            _first_step_state(state, x, "exp_avg", "exp_avg_sq")
        _check_capturable(group, _ALL_DEVICES)
        state["step"].array = step = state["step"].array + np.float32(1)
        step = float(step)
        beta1, beta2 = group["betas"]
        lr, decay = group["lr"], group["weight_decay"]
        if decay != 0:
            if group["decoupled_weight_decay"]:
                x = x * _scalar(1 - lr * decay, x)
            else:
                g = fma(x, _scalar(decay, x), g)
        exp_avg, exp_avg_sq = state["exp_avg"].own_array(), state["exp_avg_sq"].own_array()
        exp_avg[...] = _lerp(exp_avg, g, _scalar(1 - beta1, x))
        exp_avg_sq[...] = fma(_scalar(1 - beta2, x) * g, g, exp_avg_sq * _scalar(beta2, x))
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / _scalar(bias_correction1, x)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            # (a float over a tensor is torch's reciprocal, then a product)
            adaptive = (_scalar(1, x) / (np.sqrt(exp_avg_sq) + _scalar(group["eps"], x))
                        * _scalar(bias_correction2 ** 0.5, x))
            update = corrected * _scalar(lr, x) * adaptive * _scalar(rect, x)
        else:
            update = corrected * _scalar(lr, x)
        _write(p, x - update)


def _first_step_state(state: dict, x: np.ndarray, *buffers: str) -> None:
    """A parameter's state before its first step, in torch's key order: the step count (a
    0-d float32 tensor), then each buffer, zeros of the parameter's shape."""
    state["step"] = Tensor._wrap(np.float32(0))
    for name in buffers:
        state[name] = Tensor._wrap(np.zeros_like(x))


def _lerp(start: np.ndarray, end: np.ndarray, weight) -> np.ndarray:
    """torch's lerp: fused, from the nearer end (start + w·(end - start) for |w| < 0.5)."""
    if abs(weight) < 0.5:
        return fma(weight, end - start, start)
    return fma(weight - 1, end - start, end)


OPTIMIZERS = {cls.__name__: cls for cls in (SGD, Adam, AdamW, RMSprop, Adadelta, Adagrad,
                                             Adamax, NAdam, RAdam)}
