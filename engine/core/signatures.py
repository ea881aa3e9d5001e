"""PyTorch's argument parser, for the messages of a call it rejects.

torch's functions and Tensor methods read their arguments with one parser, from the
signatures listed below (as torch 2.13 prints them). When a call fits none, the message
depends on how many signatures could take that many arguments: one (or the only one
there is) says what is wrong with it (`missing 1 required positional arguments: "dim"`,
`got an unexpected keyword argument 'dimm'`, `takes 2 positional arguments but 3 were
given`, `argument 'size' (position 1) must be tuple of ints, not Tensor`); otherwise
all of them are listed (`received an invalid combination of arguments - got (Tensor,
dims=int), but expected one of: ...`). A few Tensor methods take no arguments at all
and are Python's (`TensorBase.relu() takes no keyword arguments`).

Only a call the engine's own function refused comes here (`call_error`), so nothing runs
on a call that works.
"""

from __future__ import annotations

import inspect
import re
from typing import Callable, NamedTuple

_CREATION = ("*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
             "torch.device device = None, bool pin_memory = False, bool requires_grad = False")
_LINSPACE = f"int steps, {_CREATION})"

FUNCTIONS: dict[str, tuple[str, ...]] = {
    "sum": ("(Tensor input, *, torch.dtype dtype = None)",
            "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
            "Tensor out = None)"),
    "mean": ("(Tensor input, *, torch.dtype dtype = None, Tensor out = None)",
             "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
             "Tensor out = None)"),
    **{name: ("(Tensor input, *, Tensor out = None)", "(Tensor input, Tensor other, *, Tensor out = None)",
              "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)")
       for name in ("max", "min")},
    "tensor": ("(PyObject* data, *, torch.dtype dtype = None, torch.device device = None, "
               "bool pin_memory = False, bool requires_grad = False)",),
    **{name: (f"(tuple of ints size, {_CREATION})",) for name in ("zeros", "ones")},
    **{name: (f"(tuple of ints size, *, torch.Generator generator, {_CREATION[3:]})",
              f"(tuple of ints size, {_CREATION})") for name in ("randn", "rand")},
    "arange": (f"(Number end, {_CREATION})",
               f"(Number start, Number end, {_CREATION.replace('Tensor out = None, ', '')})",
               f"(Number start, Number end, Number step = 1, {_CREATION})"),
    "linspace": tuple(f"({start} start, {end} end, {_LINSPACE}" for start, end in
                      (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"),
                       ("Number", "Number"))),
    "full": (f"(tuple of ints size, Number fill_value, {_CREATION})",),
    **{name: ("(tuple of Tensors tensors, int dim = 0, *, Tensor out = None)",)
       for name in ("cat", "stack")},
    "matmul": ("(Tensor input, Tensor other, *, Tensor out = None)",),
    "masked_fill": ("(Tensor input, Tensor mask, Tensor value)",
                    "(Tensor input, Tensor mask, Number value)"),
    "mm": ("(Tensor input, Tensor mat2, *, Tensor out = None)",
           "(Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None)"),
    "reshape": ("(Tensor input, tuple of ints shape)",),
    "transpose": ("(Tensor input, int dim0, int dim1)",),
    "permute": ("(Tensor input, tuple of ints dims)",),
    "squeeze": ("(Tensor input)", "(Tensor input, int dim)", "(Tensor input, tuple of ints dim)"),
    "unsqueeze": ("(Tensor input, int dim)",),
    **{name: ("(Tensor input, int dim, torch.dtype dtype = None)",)
       for name in ("softmax", "log_softmax")},
    **{name: ("(Tensor input, *, Tensor out = None)",) for name in ("exp", "log", "sigmoid")},
    "relu": ("(Tensor input)",),
    "pow": ("(Tensor input, Tensor exponent, *, Tensor out = None)",
            "(Number self, Tensor exponent, *, Tensor out = None)",
            "(Tensor input, Number exponent, *, Tensor out = None)"),
    **{name: ("(Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)",
              "(Tensor input, Number min = None, Number max = None, *, Tensor out = None)")
       for name in ("clamp", "clip")},
    **{name: ("(Tensor input, Tensor min = None, Tensor max = None)",
              "(Tensor input, Number min = None, Number max = None)")
       for name in ("clamp_", "clip_")},
    **{name: (f"(Tensor input, Tensor {bound}, *, Tensor out = None)",
              f"(Tensor input, Number {bound}, *, Tensor out = None)")
       for name, bound in (("clamp_min", "min"), ("clamp_max", "max"))},
    **{name: (f"(Tensor input, Tensor {bound})", f"(Tensor input, Number {bound})")
       for name, bound in (("clamp_min_", "min"), ("clamp_max_", "max"))},
    "where": ("(Tensor condition)", "(Tensor condition, Tensor input, Tensor other, *, Tensor out = None)",
              "(Tensor condition, Number self, Tensor other)",
              "(Tensor condition, Tensor input, Number other)",
              "(Tensor condition, Number self, Number other)"),
    **{name: ("(Tensor input, Tensor other, *, Tensor out = None)",
              "(Tensor input, Number other, *, Tensor out = None)")
       for name in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
                    "less_equal", "fmod")},
    **{name: ("(Tensor input, Tensor other, *, Tensor out = None)", "(Number self, Tensor other)",
              "(Tensor input, Number other, *, Tensor out = None)")
       for name in ("remainder", "bitwise_and", "bitwise_or", "bitwise_xor")},
    "xlogy": ("(Tensor input, Tensor other, *, Tensor out = None)",
              "(Number self, Tensor other, *, Tensor out = None)",
              "(Tensor input, Number other, *, Tensor out = None)"),
    **{name: ("(Tensor input, Tensor other, *, Tensor out = None)", "(Tensor input, Number other)")
       for name in ("true_divide", "floor_divide")},
    **{name: ("(Tensor input, Tensor other, *, Tensor out = None)",)
       for name in ("atan2", "arctan2", "maximum", "minimum")},
    "index_fill": ("(Tensor input, int dim, Tensor index, Tensor value)",
                   "(Tensor input, int dim, Tensor index, Number value)"),
    "multinomial": ("(Tensor input, int num_samples, bool replacement = False, *, "
                    "torch.Generator generator = None, Tensor out = None)",),
    "repeat_interleave": (
        "(Tensor input, Tensor repeats, int dim = None, *, int output_size = None)",
        "(Tensor repeats, *, int output_size = None)",
        "(Tensor input, int repeats, int dim = None, *, int output_size = None)"),
}

# ops whose Tensor parameters take a Python number as well (torch's parser wraps it)
NUMBERS_AS_TENSORS = frozenset({
    f"{op}{suffix}" for op in ("add", "sub", "subtract", "mul", "multiply", "div", "divide",
                               "true_divide", "floor_divide") for suffix in ("", "_")})

# functions with a `(Number self, ...)` signature: a number first is theirs to take
NUMBER_SELF = frozenset(name for name, texts in FUNCTIONS.items()
                        if any(t.startswith("(Number self") for t in texts))

# marks a deprecated signature: the parser takes it, its messages never list it
HIDDEN = "hidden "

METHODS: dict[str, tuple[str, ...]] = {
    **{name: ("(*, torch.dtype dtype = None)",
              "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)")
       for name in ("sum", "mean")},
    **{name: ("()", "(Tensor other)", "(int dim, bool keepdim = False)") for name in ("max", "min")},
    "matmul": ("(Tensor other)",),
    "mm": ("(Tensor mat2)",),
    "reshape": ("(tuple of ints shape)",),
    "view": ("(torch.dtype dtype)", "(tuple of ints size)"),
    "transpose": ("(int dim0, int dim1)",),
    "permute": ("(tuple of ints dims)",),
    "squeeze": ("()", "(int dim)", "(tuple of ints dim)"),
    "unsqueeze": ("(int dim)",),
    **{name: ("(int dim, torch.dtype dtype = None)",) for name in ("softmax", "log_softmax")},
    **{name: ("(Tensor exponent)", "(Number exponent)") for name in ("pow", "pow_")},
    **{name: ("(Tensor other, *, Number alpha = 1)", HIDDEN + "(Number alpha, Tensor other)")
       for name in ("add", "add_", "sub", "sub_")},
    **{name: ("(Tensor other)",) for name in ("mul", "mul_")},
    **{name: ("(Tensor other)", "(Tensor other, *, str rounding_mode)",
              "(Number other, *, str rounding_mode)") for name in ("div", "div_")},
    "divide": ("(Tensor other)", "(Tensor other, *, str rounding_mode)", "(Number other)",
               "(Number other, *, str rounding_mode)"),
    **{name: ("(Tensor other)", "(Number other)")
       for name in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
                    "less_equal", "floor_divide", "floor_divide_", "multiply", "remainder",
                    "remainder_", "fmod", "fmod_", "true_divide", "bitwise_and", "bitwise_or",
                    "bitwise_xor")},
    **{name: ("(Tensor min = None, Tensor max = None)", "(Number min = None, Number max = None)")
       for name in ("clamp", "clamp_", "clip", "clip_")},
    **{name: (f"(Tensor {bound})", f"(Number {bound})")
       for name, bound in (("clamp_min", "min"), ("clamp_max", "max"), ("clamp_min_", "min"),
                           ("clamp_max_", "max"))},
    **{name: ("(*, torch.memory_format memory_format = None)",) for name in ("clone", "contiguous")},
    **{name: ("()", "(*, int decimals)") for name in ("round", "round_")},
    "nonzero": ("()", "(*, bool as_tuple)"),
    "where": ("(Tensor condition, Tensor other)", "(Tensor condition, Number other)"),
    **{name: ("(Tensor mask, Tensor value)", "(Tensor mask, Number value)")
       for name in ("masked_fill", "masked_fill_")},
    **{name: ("(int dim, Tensor index, Tensor value)", "(int dim, Tensor index, Number value)")
       for name in ("index_fill", "index_fill_")},
    "multinomial": ("(int num_samples, bool replacement = False, *, "
                    "torch.Generator generator = None)",),
    "repeat_interleave": ("(Tensor repeats, int dim = None, *, int output_size = None)",
                          "(int repeats, int dim = None, *, int output_size = None)"),
}

# Tensor methods torch defines with no parameters at all: Python's own messages
NO_ARGUMENTS = frozenset({"relu", "sigmoid", "exp", "log", "abs", "neg", "sqrt", "sin", "cos",
                          "tanh", "t", "detach", "numel", "dim", "item", "tolist"})


class Param(NamedTuple):
    kind: str  # as torch prints it: Tensor, int, tuple of ints, torch.dtype, ...
    name: str
    optional: bool
    keyword_only: bool


class Signature(NamedTuple):
    text: str
    params: tuple

    @property
    def min_args(self) -> int:
        return sum(not p.optional for p in self.params)

    @property
    def max_pos_args(self) -> int:
        return sum(not p.keyword_only for p in self.params)


def _parse(text: str) -> Signature:
    params, keyword_only = [], False
    for part in filter(None, text[1:-1].split(", ")):
        if part == "*":
            keyword_only = True
            continue
        declared, _, default = part.partition(" = ")
        kind, _, name = declared.rpartition(" ")
        params.append(Param(kind, name, bool(default), keyword_only))
    return Signature(text, tuple(params))


def _type_name(value) -> str:
    """Python's name of a value's type, as torch's messages print it (tp_name)."""
    kind = type(value)
    if _is_tensor(value):
        return "Parameter" if kind.__name__ == "Parameter" else "Tensor"
    if kind.__name__ == "DType":
        return "torch.dtype"
    return getattr(kind, "_tg_type_name", None) or kind.__name__


def _is_tensor(value) -> bool:
    return hasattr(value, "_grad_fn") and hasattr(value, "array")


def _zero_dim(value, kinds: str) -> bool:
    return _is_tensor(value) and value.array.ndim == 0 and value.array.dtype.kind in kinds


def _fits(kind: str, value, name: str = "") -> bool:
    """Whether torch's parser takes `value` for parameter `name` of this kind (a kind this
    table does not check takes anything: never refuse what torch may take). A `dim` list
    takes one int as well (torch's int[1])."""
    if kind == "Tensor":
        return _is_tensor(value)
    if kind == "int":
        return type(value) is int or _zero_dim(value, "iu")
    if kind == "bool":
        return type(value) is bool or _zero_dim(value, "b")
    if kind == "Number":
        return type(value) in (int, float, bool) or _zero_dim(value, "biuf")
    if kind == "tuple of ints":
        if name == "dim" and _fits("int", value):
            return True
        return isinstance(value, (list, tuple)) and all(
            type(v) is int or _zero_dim(v, "iu") for v in value)
    if kind == "tuple of Tensors":
        return isinstance(value, (list, tuple)) and all(_is_tensor(v) for v in value)
    if kind == "torch.dtype":
        return type(value).__name__ == "DType"
    return True


def _parse_error(name: str, sig: Signature, args: tuple, kwargs: dict) -> str | None:
    """torch's message for the first thing `sig` cannot take in this call (None: it can)."""
    nargs = len(args)
    # a sole positional list of ints may be given as several ints: view(2, 3)
    varargs = sig.max_pos_args == 1 and sig.params[0].kind == "tuple of ints"
    if nargs > sig.max_pos_args and not (varargs and _fits("int", args[0])):
        return _extra_args(name, sig, nargs)
    position, used = 0, 0
    for i, param in enumerate(sig.params):
        if varargs and i == 0 and nargs > 1:
            for k, value in enumerate(args):
                if not _fits("int", value):
                    return (f"{name}(): argument '{param.name}' failed to unpack the object at "
                            f'pos {k + 1} with error "type must be tuple of ints,but got '
                            f'{_type_name(value)}"')
            position = nargs
            continue
        if position < nargs:
            if param.keyword_only:
                return _extra_args(name, sig, nargs)
            value, keyword = args[position], False
        else:
            value, keyword = kwargs.get(param.name, _MISSING), True
            for alias in NUMPY_NAMES.get(param.name, ()):
                if value is _MISSING:
                    value = kwargs.get(alias, _MISSING)
        if value is _MISSING or value is None and param.optional:
            if value is _MISSING and not param.optional:
                required = [f'"{p.name}"' for p in sig.params[i:] if not p.optional]
                return (f"{name}() missing {len(required)} required positional argument"
                        f"{'s' if len(required) == 1 else ''}: {', '.join(required)}")
        elif not _fits(param.kind, value, param.name) and not (
                param.kind == "Tensor" and name in NUMBERS_AS_TENSORS
                and type(value) in (int, float, bool, complex)) and not (
                varargs and position == 0 and not keyword and _fits("int", value)):
            where = f"'{param.name}'" if keyword else f"'{param.name}' (position {position + 1})"
            wrong = _wrong_element(param.kind, value)
            if wrong and param.kind == "tuple of ints":  # ints first: read as a list of ints
                return (f"{name}(): argument '{param.name}' failed to unpack the object at pos "
                        f'{wrong + 1} with error "type must be tuple of ints,but got '
                        f'{_type_name(value[wrong])}"')
            if wrong is not None and not keyword:
                return (f"{name}(): argument {where} must be {param.kind}, but found element "
                        f"of type {_type_name(value[wrong])} at pos {wrong}")
            return f"{name}(): argument {where} must be {param.kind}, not {_type_name(value)}"
        if not keyword:
            position += 1
        elif value is not _MISSING:
            used += 1
    if used < len(kwargs):
        names = [p.name for p in sig.params]
        for key in kwargs:
            if key not in names:
                return f"{name}() got an unexpected keyword argument '{key}'"
            if names.index(key) < nargs:
                return f"{name}() got multiple values for argument '{key}'"
    return None


def _wrong_element(kind: str, value) -> int | None:
    """The position of the first element a list or tuple argument should not hold."""
    if kind.startswith("tuple of ") and isinstance(value, (list, tuple)):
        item = "int" if kind == "tuple of ints" else "Tensor"
        for k, v in enumerate(value):
            if not _fits(item, v):
                return k
    return None


_MISSING = object()
# the NumPy names torch's parser also reads a parameter from (but never names in a message)
NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"),
               "other": ("x2",)}


def _extra_args(name: str, sig: Signature, nargs: int) -> str:
    most, least = sig.max_pos_args, sig.min_args
    if least != most:
        return f"{name}() takes from {least} to {most} positional arguments but {nargs} were given"
    return (f"{name}() takes {most} positional argument{'' if most == 1 else 's'} but {nargs} "
            f"{'was' if nargs == 1 else 'were'} given")


def _described(args: tuple, kwargs: dict) -> str:
    """torch's `(Tensor, dims=int)`: the given types (keywords keep a trailing ', ' when no
    positional argument came first, as torch's own text does)."""
    text = "".join(f"{_type_name(a)}, " for a in args)
    text += "".join(f"{k}={_type_name(v)}, " for k, v in reversed(kwargs.items()))
    return f"({text[:-2] if args else text})"


def _entries(sig: Signature) -> list:
    """(name, type) of each part of an option's text split at ', ', as torch's listing reads
    it back: `*` and `keepdim = False` are entries too (named `*` and `False`)."""
    entries = []
    for part in sig.text[1:-1].split(", "):
        kind, _, name = part.rpartition(" ")
        entries.append((name, kind or part))
    return entries


def _value_text(value) -> str:
    kind = _type_name(value)
    if type(value) is list:
        return f"list of [{', '.join(_type_name(v) for v in value)}]"
    if type(value) is tuple:
        return f"tuple of ({', '.join(_type_name(v) for v in value)}{',' if len(value) == 1 else ''})"
    return kind


def _marked(entries: list, args: tuple, kwargs: dict) -> str:
    """The given types against one option's entries, each mismatch between '!' marks."""
    parts = []
    for i in range(len(args) + len(kwargs)):
        name, kind = entries[i]
        keyword = i >= len(args)
        value = kwargs[name] if keyword else args[i]
        text = (f"{name}=" if keyword else "") + _value_text(value)
        fits = _type_name(value) in _SIMPLE_NAMES.get(kind, (kind,))
        parts.append(text if fits else f"!{text}!")
    text = "".join(p + ", " for p in parts)
    return f"({text[:-2] if args else text})"


_SIMPLE_NAMES = {"float": ("float", "int", "long"), "int": ("int", "long")}


def _unmatched_keywords(entries: list, kwargs: dict) -> list:
    """The keywords torch's listing says no option's tail has (it reads each option's last
    len(kwargs) entries: `alpha = 1` reads as an entry named `1`)."""
    tail = {entry[0] for entry in entries[max(len(entries) - len(kwargs), 0):]}
    return [k for k in reversed(kwargs) if k not in tail]


def _only_option(name: str, sig: Signature, args: tuple, kwargs: dict) -> str:
    """torch's text when one option is shown (others are deprecated and hidden)."""
    head = f"{name}() received an invalid combination of arguments - got "
    entries = _entries(sig)
    wrong = _unmatched_keywords(entries, kwargs)
    if wrong:
        return head + "unrecognized keyword arguments: " + ", ".join(wrong)
    given = _marked(entries, args, kwargs) if len(args) + len(kwargs) == len(entries) \
        else _described(args, kwargs)
    return f"{head}{given}, but expected {sig.text}"


def _listing(name: str, sigs: list, args: tuple, kwargs: dict) -> str:
    """torch's list of every option, with why an option taking as many arguments failed."""
    lines = [f"{name}() received an invalid combination of arguments - got "
             f"{_described(args, kwargs)}, but expected one of:"]
    count = len(args) + len(kwargs)
    for sig in sigs:
        lines.append(f" * {sig.text}")
        entries = _entries(sig)
        if count != len(entries):
            continue
        wrong = _unmatched_keywords(entries, kwargs)
        if wrong:
            lines.append("      didn't match because some of the keywords were incorrect: "
                         + ", ".join(wrong))
        else:
            lines.append("      didn't match because some of the arguments have invalid types: "
                         + _marked(entries, args, kwargs))
    return "\n".join(lines) + "\n"


def message(name: str, method: bool, args: tuple, kwargs: dict) -> str | None:
    """torch's TypeError message for `torch.name(*args, **kwargs)` (or, with `method`,
    `tensor.name(*args, **kwargs)`, args without the tensor), or None when the table does
    not know this name or torch would take the call."""
    if method and name in NO_ARGUMENTS:
        return _no_arguments(name, args, kwargs) if args or kwargs else None
    texts = (METHODS if method else FUNCTIONS).get(name)
    if texts is None:
        return None
    sigs = [_parse(t.removeprefix(HIDDEN)) for t in texts]
    visible = [sig for sig, t in zip(sigs, texts) if not t.startswith(HIDDEN)]
    for sig in sigs:  # ints, then something else: the parser stops at once, whatever follows
        found = _parse_error(name, sig, args, kwargs)
        if found is not None and "failed to unpack" in found:
            return found
    if len(sigs) == 1:
        return _parse_error(name, sigs[0], args, kwargs)
    if any(_parse_error(name, s, args, kwargs) is None for s in sigs):
        return None  # (torch tries every option in turn before it words an error)
    count = len(args) + len(kwargs)
    plausible = [s for s in visible if s.min_args <= count <= len(s.params)]
    if len(plausible) == 1:
        return _parse_error(name, plausible[0], args, kwargs)
    if len(visible) == 1:
        return _only_option(name, visible[0], args, kwargs)
    return _listing(name, visible, args, kwargs)


def call_error(exc: Exception, function, name: str, owner, args: tuple, kwargs: dict):
    """The error torch gives for the call `owner.name(*args, **kwargs)` of `function`, which
    raised `exc` here: its parser's TypeError when it would refuse these arguments, else
    `exc` itself. `owner` is the namespace or tensor the call reads `name` from (None when
    unknown)."""
    if not isinstance(exc, (TypeError, AttributeError)):
        return exc
    module = getattr(owner, "_tg_module_name", None)
    if _is_tensor(getattr(function, "__self__", None)):
        method = True
    elif module in ("torch", "torch.nn.functional"):
        method = False
    else:
        return exc
    # (the table holds torch.X's signatures: F.X's differ, so only the general cases below)
    text = message(name, method, args, kwargs) if module != "torch.nn.functional" else None
    if text is None and hasattr(exc, "param") and hasattr(exc, "kind"):  # ArgumentTypeError
        text = _wrong_type(name, exc.param, exc.kind, exc.value, args, kwargs)
    if text is None and method and (args or kwargs) and _takes_nothing(function):
        text = _no_arguments(name, args, kwargs)
    if text is None and isinstance(exc, TypeError):
        inner = getattr(inspect.unwrap(function), "__name__", name)
        if inner != name and str(exc).startswith(f"{inner}()"):  # (an alias: torch.absolute)
            text = name + str(exc)[len(inner):]
    if text is None:
        found = _READ_AS_TENSOR.fullmatch(str(exc))
        if found:
            key = ("Tensor." if method else "torch." if module == "torch" else "F.") + name
            text = _not_a_tensor(function, key, name, args, kwargs, found[1] or found[2])
    return exc if text is None else TypeError(text)


# the engine's own errors when it read a non-tensor argument as a tensor
_READ_AS_TENSOR = re.compile(r"'(\w+)' object has no attribute '(?:array|dtype|shape|ndim|_grad_fn)'"
                             r"|unsupported operand type: '(\w+)'")


def _not_a_tensor(function, key: str, name: str, args: tuple, kwargs: dict,
                  kind: str) -> str | None:
    """The engine read an argument of type `kind` as a tensor: torch's parser would have
    refused it, naming the parameter as torch does for `key` (`torch.dot`, `Tensor.dot`,
    `F.linear`) and its position when given by position."""
    params = _torch_names(key)
    if params is None:
        try:
            params = dict(enumerate(inspect.signature(function).parameters))
        except (TypeError, ValueError):
            return None
    for position, value in enumerate(args):
        if _type_name(value) == kind and position in params:
            return (f"{name}(): argument '{params[position]}' (position {position + 1}) must be "
                    f"Tensor, not {kind}")
    for key_name, value in kwargs.items():
        if _type_name(value) == kind:
            return f"{name}(): argument '{key_name}' must be Tensor, not {kind}"
    return None


# torch's keyword name -> position for `torch.X`, `Tensor.X` or `F.X`: the ops' room states
# it (ops/registry.py sets this when it is imported; core imports nothing above it)
parameter_positions: Callable[[str], dict | None] = lambda key: None


def _torch_names(key: str) -> dict | None:
    """position -> torch's name of the parameter there, for `key`, as the op's surface (or
    the table of the others) states it; None when neither knows the name."""
    positions = parameter_positions(key)
    if positions is None:
        return None
    names: dict = {}
    for param, position in positions.items():  # (the first of several names for one place)
        names.setdefault(position, param)
    return names


def _wrong_type(name: str, param: str, kind: str, value, args: tuple, kwargs: dict) -> str | None:
    """torch's message for one argument of the wrong type, found among the call's own."""
    for position, given in enumerate(args):
        if given is value:
            return (f"{name}(): argument '{param}' (position {position + 1}) must be {kind}, "
                    f"not {_type_name(value)}")
    if any(given is value for given in kwargs.values()):
        return f"{name}(): argument '{param}' must be {kind}, not {_type_name(value)}"
    return None


def _no_arguments(name: str, args: tuple, kwargs: dict) -> str:
    """Python's message for a Tensor method torch defines without parameters."""
    if kwargs:
        return f"TensorBase.{name}() takes no keyword arguments"
    return f"TensorBase.{name}() takes no arguments ({len(args)} given)"


def _takes_nothing(function) -> bool:
    """Whether a bound Tensor method of the engine takes no argument but the tensor (the unary
    ops: torch defines them without parameters, so any argument is Python's error)."""
    try:
        return not inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
