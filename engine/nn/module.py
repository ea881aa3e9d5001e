"""torch.nn.Module and nn.Parameter: what a model is made of, and how a program subclasses one.

A Module keeps torch's registries (`_parameters`, `_modules`, `_buffers`, in registration
order) and mirrors each entry into its instance dict, so `self.fc1` inside a forward is a
plain attribute read (torch finds them through `__getattr__`, after a failed lookup).

A program's `class Net(nn.Module): ...` is made by the interpreter with
`Module.tg_subclass("Net", members)` (members: the compiled methods and class-level values);
`super().__init__()` in the program's `__init__` is `Module.tg_super_init(self)`. The sandbox
asks an instance's class which names a program may read and write: `_tg_public` (the class's
API), then `_tg_readable(obj, name)` and `_tg_writable(obj, name)` (what the program itself
set on the instance; never a method of the class).
"""

from __future__ import annotations

import inspect
from collections import OrderedDict

from ..core import dtypes
from ..core.classes import TorchClass
from ..ops.inplace import copy_
from ..tensors.parameter import is_parameter, type_name, zero_grad_of
from ..core.program_classes import class_body, class_callable, own_attribute, settable_attribute
from ..core.session import no_grad
from ..tensors.tensor import Tensor, uninitialised
from . import hooks as hooks_module


# --- state_dict ---------------------------------------------------------------------------------

class StateDict(OrderedDict):
    """What state_dict() returns: an OrderedDict (and printed as one)."""

    _tg_public = frozenset({"keys", "values", "items", "get", "copy"})

    def __repr__(self) -> str:
        return repr(OrderedDict(self))


class _AllKeysMatched:
    """load_state_dict's result when every key matched."""

    _tg_public = frozenset({"missing_keys", "unexpected_keys"})
    missing_keys: list = []
    unexpected_keys: list = []

    def __repr__(self) -> str:
        return "<All keys matched successfully>"


# --- Module -------------------------------------------------------------------------------------

def _indent(text: str) -> str:
    lines = text.split("\n")
    return lines[0] if len(lines) == 1 else "\n".join([lines[0]] + ["  " + s for s in lines[1:]])


_ABSENT = object()  # (a registry may hold None: a parameter or submodule set to None)


class Module(metaclass=TorchClass):
    """torch.nn.Module: parameters, buffers and submodules, kept in registration order."""

    _tg_public = frozenset({
        "forward", "parameters", "named_parameters", "buffers", "named_buffers", "children",
        "named_children", "modules", "named_modules", "zero_grad", "train", "eval", "training",
        "state_dict", "load_state_dict", "requires_grad_", "to", "cpu", "cuda", "float",
        "double", "apply", "add_module", "register_parameter", "register_buffer", "register_module",
        "extra_repr", "get_submodule", "get_parameter", "type", "_modules", "_parameters",
        "_buffers", "register_forward_hook", "register_forward_pre_hook",
        "register_full_backward_hook", "register_backward_hook"})

    # what __init__ sets on every instance: a program's own `self._x` may not be one of them
    _tg_internal = frozenset({"_parameters", "_buffers", "_non_persistent", "_modules",
                              "_tg_hooks"})

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent", set())
        setattr_(self, "_modules", {})

    # -- the class interface the interpreter uses ---------------------------------------------
    @classmethod
    def tg_subclass(cls, name: str, members: dict) -> type:
        """The class a program's `class NAME(nn.Module):` statement makes (see module doc)."""
        body = class_body(cls, name, members)
        forward = members.get("forward")
        if inspect.isfunction(forward) and "__call__" not in members:
            body["__call__"] = forward  # model(x) is forward(x): no hooks to run in between
        return type(name, (cls,), body)

    @staticmethod
    def tg_super_init(instance, *args, **kwargs) -> None:
        """`super().__init__(...)` inside the `__init__` of a program's Module subclass."""
        Module.__init__(instance, *args, **kwargs)

    # (parameters, submodules and buffers are mirrored in the instance's own attributes, or
    # only in a registry the program filled itself: `self._modules['0'] = block`)
    @staticmethod
    def _tg_readable(module, name: str) -> bool:
        return own_attribute(module, name) or module._registered(name) is not _ABSENT

    _tg_writable = staticmethod(settable_attribute)

    # -- attributes ----------------------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        own = self.__dict__
        params = own.get("_parameters")
        if is_parameter(value):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type_name(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = own.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            modules[name] = own[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type_name(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = own[name] = value
            return
        buffers = own.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and type(value) is not Tensor:
                raise TypeError(f"cannot assign '{type_name(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = own[name] = value
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        # called only when the ordinary lookup failed: registered entries are mirrored, but
        # a program may fill a registry itself, where torch's __getattr__ finds them too
        found = self._registered(name)
        if found is _ABSENT:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return found

    def _registered(self, name: str):
        own = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = own.get(registry)
            if type(entries) is dict and name in entries:
                return entries[name]
        return _ABSENT

    def __delattr__(self, name: str) -> None:
        self._forget(name)
        if name in self.__dict__:
            object.__delattr__(self, name)

    def _forget(self, name: str) -> None:
        """Drop `name` from the registries and the instance dict (before it is set anew)."""
        own = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = own.get(registry)
            if entries is not None and name in entries:
                del entries[name]
        self.__dict__.get("_non_persistent", set()).discard(name)
        own.pop(name, None)

    def register_parameter(self, name: str, param) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is not None:
            if not is_parameter(param):
                raise TypeError(f"cannot assign '{type_name(param)}' object to parameter '{name}' "
                                "(torch.nn.Parameter or None required)")
            if param.grad_fn is not None:
                raise ValueError(
                    f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                    f"be created explicitly. To express '{name}' as a function of another Tensor, "
                    "compute the value in the forward() method.")
        self._parameters[name] = self.__dict__[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and type(tensor) is not Tensor:
            raise TypeError(f"cannot assign '{type_name(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = self.__dict__[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type_name(module)} is not a Module subclass")
        _check_name(self, name, "module", self._modules)
        self._modules[name] = self.__dict__[name] = module

    register_module = add_module

    # -- calling -------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        # (a class gets this __call__ only once a hook was registered on one of its instances)
        hooks = self.__dict__.get("_tg_hooks")
        if hooks is None or not hooks.any():
            return self.forward(*args, **kwargs)
        return hooks_module.call_with_hooks(self, hooks, args, kwargs)

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        return hooks_module.register_forward_pre_hook(self, hook, prepend=prepend,
                                                      with_kwargs=with_kwargs)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        return hooks_module.register_forward_hook(self, hook, prepend=prepend,
                                                  with_kwargs=with_kwargs,
                                                  always_call=always_call)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        return hooks_module.register_full_backward_hook(self, hook, prepend)

    def register_backward_hook(self, hook):
        return hooks_module.register_backward_hook(self, hook)

    # -- traversal -----------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        # generator functions, not expressions: print() shows `Module.parameters` as torch's
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target: str):
        module = self
        for part in target.split(".") if target else ():
            if part not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = module._modules[part]
        return module

    def get_parameter(self, target: str):
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter `{name}`")
        return module._parameters[name]

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients -------------------------------------------------------------------
    def train(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.parameters():
            zero_grad_of(param, set_to_none)

    # -- conversions (one device: the CPU) -----------------------------------------------------
    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype")
        for arg in args + tuple(kwargs.values()):
            if isinstance(arg, dtypes.DType):
                dtype = arg
            elif isinstance(arg, str) and arg.split(":")[0] == "cuda":
                return self.cuda()
        if dtype is not None:
            if not dtype.is_floating_point:
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                                f"got desired dtype={dtype}")
            self._convert(dtype)
        return self

    def cpu(self):
        return self

    def cuda(self, device=None):
        raise AssertionError("Torch not compiled with CUDA enabled")

    def float(self):
        return self._convert(dtypes.float32)

    def double(self):
        return self._convert(dtypes.float64)

    def type(self, dst_type):
        return self._convert(dst_type)

    def _convert(self, dtype):
        """Floating parameters and buffers take `dtype`; the Parameter objects stay the same."""
        for module in self.modules():
            for registry in (module._parameters, module._buffers):
                for value in registry.values():
                    if value is not None and value.array.dtype.kind == "f":
                        value.data = value.to(dtype)
                        grad = value._grad
                        if grad is not None:
                            value._grad = grad.to(dtype)
        return self

    # -- state -----------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        out = StateDict() if destination is None else destination
        for name, param in self._parameters.items():
            if param is not None:
                out[prefix + name] = param if keep_vars or uninitialised(param) else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent:
                out[prefix + name] = buffer if keep_vars or uninitialised(buffer) \
                    else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=out, prefix=prefix + name + ".", keep_vars=keep_vars)
        return out

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected)))
        if strict and missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing)))
        for key, target in own.items():
            if key in state_dict:
                source = state_dict[key]
                if source.array.shape != target.array.shape:
                    errors.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{source.shape} from checkpoint, the shape in current model "
                                  f"is {target.shape}.")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    copy_(target, state_dict[key])
        if missing or unexpected:
            return _IncompatibleKeys(missing, unexpected)
        return _AllKeysMatched()

    # -- printing --------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): {_indent(repr(module))}"
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = type(self).__name__ + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


class _IncompatibleKeys:
    _tg_public = frozenset({"missing_keys", "unexpected_keys"})

    def __init__(self, missing, unexpected):
        self.missing_keys, self.unexpected_keys = missing, unexpected

    def __repr__(self) -> str:
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


def _check_name(module, name, kind: str, registry: dict) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if name not in registry and (name in module.__dict__ or class_callable(type(module), name)):
        raise KeyError(f"attribute '{name}' already exists")
