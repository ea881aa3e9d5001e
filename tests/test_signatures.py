"""torch's argument-parser messages (engine/core/signatures.py) against live torch, for every
function and method of its table, over calls with bad keywords, missing and extra
arguments and wrong types; and through the interpreter, at the call's position."""

from __future__ import annotations

import itertools

import pytest

from autodiff.engine.core import signatures
from autodiff.engine.api import _TORCH_FUNCTIONS
from autodiff.engine.api import torch as ours_torch
from autodiff.engine.tensors.tensor import Tensor, _registry_methods
from autodiff.interpreter import run_source
from autodiff.interpreter.reference import torch_available

needs_torch = pytest.mark.skipif(not torch_available(), reason="torch is not installed")

# each call: positional arguments and keywords, written with T (a 2x3 float tensor), I (a
# 0-d int tensor), D (torch.float64), L (a list of two tensors)
CALLS = [((), {}), (("T",), {}), (("T",), {"zzz": 0}), ((), {"zzz": 0}), (("T", 1), {"dimm": 1}),
         (("T",), {"dims": 1}), ((1, 2, 3, 4, 5, 6, 7, 8, 9), {}), (("T", "T", "T", "T"), {}),
         (("T", 1.5), {}), (("T", "a"), {}), ((1,), {"foo": 2}), (("T",), {"dim": 1, "foo": 2}),
         ((1,), {}), (("L",), {"dimm": 0}), (("T", 0), {"keepdim": 1}), (("D",), {}),
         (("T",), {"axis": 1, "foo": 1}), ((), {"c": 1, "b": 2, "a": 3}), (("T", [0, 1]), {}),
         (("T", (1,)), {}), (("T", True), {}), (("I", 1), {})]


def _values(module, args, kwargs):
    def value(v):
        if v == "T":
            return module.ones(2, 3)
        if v == "I":
            return module.tensor(1)
        if v == "D":
            return module.float64
        if v == "L":
            return [module.ones(2), module.ones(2)]
        return v
    return tuple(value(a) for a in args), {k: value(v) for k, v in kwargs.items()}


def _torch_message(function, args, kwargs):
    try:
        function(args, kwargs)
    except TypeError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 - past the parser: not a parser message
        return None
    return None


def _direct_call(owner, name, nargs, keys):
    """A call written `owner.name(a0, a1, k=...)` as a program writes it (CPython names a
    method's class differently when it is called through a bound-method object)."""
    written = ", ".join([f"a[{i}]" for i in range(nargs)] + [f"{k}=k[{k!r}]" for k in keys])
    code = compile(f"o.{name}({written})", "<call>", "eval")
    return lambda a, k: eval(code, {"o": owner, "a": a, "k": k})  # noqa: S307 - torch's side


ENTRIES = [(name, False) for name in signatures.FUNCTIONS] + \
    [(name, True) for name in signatures.METHODS] + [(name, True) for name in ("relu", "exp")]


@needs_torch
@pytest.mark.parametrize("name, method", ENTRIES, ids=lambda e: str(e))
def test_messages_are_torchs(name, method):
    import torch

    for (args, kwargs) in CALLS:
        targs, tkwargs = _values(torch, args, kwargs)
        if method:
            if args and args[0] == "T":
                targs = targs[1:]
                args = args[1:]
            function = _direct_call(torch.ones(2, 3), name, len(targs), list(tkwargs))
        else:
            function = _direct_call(torch, name, len(targs), list(tkwargs))
        want = _torch_message(function, targs, tkwargs)
        if want is not None and ("TensorBase." in want or "Tensor." in want) and not method:
            continue
        oargs, okwargs = _values(ours_torch, args, kwargs)
        got = signatures.message(name, method, oargs, okwargs)
        if want is None:
            assert got is None, (name, args, kwargs, got)
        elif got is not None:  # (None: the engine's own function decides, see below)
            assert got == want, (name, args, kwargs)


@pytest.mark.parametrize("source, error", [
    ("x = torch.ones(2, 3)\nprint(torch.sum(x, dims=1))\n",
     "TypeError: sum() received an invalid combination of arguments - got (Tensor, dims=int), "
     "but expected one of:"),
    ("x = torch.ones(2, 3)\nprint(x.softmax(dimm=1))\n",
     'TypeError: softmax() missing 1 required positional arguments: "dim"'),
    ("x = torch.ones(2, 3)\nprint(x.sum(1, 2, 3, 4))\n",
     "TypeError: sum() received an invalid combination of arguments - got (int, int, int, int), "
     "but expected one of:"),
    ("print(torch.zeros(2, dtyp=torch.float32))\n",
     "TypeError: zeros() got an unexpected keyword argument 'dtyp'"),
    ("x = torch.ones(2, 3)\nprint(x.relu(foo=1))\n",
     "TypeError: TensorBase.relu() takes no keyword arguments"),
    ("x = torch.ones(2, 3)\nprint(x.reshape())\n",
     'TypeError: reshape() missing 1 required positional arguments: "shape"'),
    ("x = torch.ones(2, 3)\nprint(torch.softmax(x))\n",
     'TypeError: softmax() missing 1 required positional arguments: "dim"'),
])
def test_a_refused_call_reports_torchs_message_at_the_call(source, error):
    result = run_source(source, "p.tg")
    e = result.error
    assert f"{e.error_class}: {e.message}".splitlines()[0] == error
    assert e.line == source.count("\n")  # the call's own line, the last one


def test_a_call_the_table_does_not_know_keeps_its_own_error():
    result = run_source("def f(a):\n    return a\nprint(f(1, b=2))\n", "p.tg")
    assert result.error.message == "f() got an unexpected keyword argument 'b'"
    result = run_source("import torch.nn.functional as F\nx = torch.ones(2)\n"
                        "print(F.softmax(x, dimm=0))\n", "p.tg")
    assert result.error.message == "softmax() got an unexpected keyword argument 'dimm'"


def test_every_signature_reads_back():
    """Each option splits into typed, named parameters (a typo would hide a parameter)."""
    for text in itertools.chain(*signatures.FUNCTIONS.values(), *signatures.METHODS.values()):
        sig = signatures._parse(text.removeprefix(signatures.HIDDEN))
        assert all(p.name.isidentifier() and p.kind for p in sig.params), text


PUBLIC_METHODS = sorted(name for name in Tensor._tg_public if not name.startswith("_")
                        and callable(getattr(ours_torch.ones(2, 3), name, None)))
NO_PARAMETERS = [name for name in PUBLIC_METHODS if name in _registry_methods()
                 and signatures._takes_nothing(getattr(ours_torch.ones(2, 3), name))]


TORCH_FUNCTIONS = sorted(name for name in _TORCH_FUNCTIONS if not name.startswith("_"))


def _program_error(call: str) -> str | None:
    """The error of `x.call` (or of the statement `call`) on a 2x3 tensor x, if any."""
    statement = call if call.startswith("x = ") else f"x.{call}"
    result = run_source(f"x = torch.ones(2, 3)\n{statement}\n", "p.tg")
    return None if result.error is None else result.error.message


@needs_torch
def test_methods_without_parameters_refuse_arguments_as_torch_does():
    """The unary ops (torch defines them without parameters): Python's message, as torch's
    bound methods give it for a call written in a program."""
    import torch

    assert len(NO_PARAMETERS) > 50
    for name in NO_PARAMETERS:
        for written in ("1", "1, 2", "k=1"):
            try:
                eval(f"o.{name}({written})", {"o": torch.ones(2, 3)})  # noqa: S307 - torch's side
                want = None
            except TypeError as exc:
                want = str(exc)
            assert _program_error(f"{name}({written})") == want, (name, written)


INTERNAL_TEXTS = ("object has no attribute", "ufunc", "not supported between",
                  "object is not iterable", "dtype(", "unsupported operand type")


@pytest.mark.parametrize("argument", ['"a"', "None", "[1]"])
def test_an_argument_of_the_wrong_type_names_no_internal(argument):
    """Any Tensor method or torch function given a string, None or a list fails (or works) with
    torch's kind of message: never the engine's own reading of the value (an internal name or
    NumPy's text)."""
    leaks = []
    for call in [f"clone().{name}({argument})" for name in PUBLIC_METHODS] + \
            [f"x = torch.{name}(x, {argument})" for name in TORCH_FUNCTIONS]:
        message = _program_error(call)
        if message is not None and any(text in message for text in INTERNAL_TEXTS):
            leaks.append(f"{call}: {message}")
    assert not leaks, "\n".join(leaks)


@needs_torch
def test_an_alias_is_named_as_it_was_called():
    """torch.absolute and torch.abs_ are the engine's abs underneath: a refused call names the
    function the program called, as torch does."""
    import torch

    for name in ("absolute", "abs_", "arccos", "sin_", "clip"):
        try:
            eval(f"torch.{name}(o, 1, 2, 3)", {"torch": torch, "o": torch.ones(2)})  # noqa: S307
        except TypeError as exc:
            want = str(exc)
        assert _program_error(f"x = torch.{name}(x, 1, 2, 3)") == want, name


# torch's parser takes every positional parameter by its name too (engine/ops/torch_parameters.py)
KEYWORD_CALLS = [
    "torch.add(x, other=y)", "torch.add(input=x, other=y, alpha=2)", "x.add(other=y)",
    "torch.mul(input=x, other=2)", "torch.sub(x, other=1.5)", "torch.div(x, other=y)",
    "torch.pow(x, exponent=2)", "x.pow(exponent=3)", "torch.exp(input=x)",
    "torch.sigmoid(input=x)", "F.relu(input=x)", "F.softmax(input=x, dim=0)",
    "F.leaky_relu(input=x, negative_slope=0.2)", "F.mse_loss(x, target=y)",
    "torch.matmul(input=x, other=y.t())", "torch.mm(input=x, mat2=y.t())",
    "torch.sum(input=x, dim=0)", "torch.mean(input=x)", "torch.max(input=x, dim=1)",
    "torch.transpose(input=x, dim0=0, dim1=1)", "torch.where(condition=x > 0, input=x, other=y)",
    "x.view(size=(3, 2))", "x.reshape(shape=(3, 2))", "x.permute(dims=(1, 0))",
    "x.expand(size=(2, 2, 3))", "torch.zeros(size=(2, 3))", "torch.ones(size=(2,))",
    "torch.full(size=(2,), fill_value=1.5)", "torch.clamp(input=x, min=0.0)",
    "torch.squeeze(input=x.unsqueeze(0), dim=0)", "x.masked_fill(x > 0, value=1.0)",
    "torch.arange(end=3)", "torch.arange(1, end=4)", "torch.arange(end=5, step=2)",
    # what torch refuses stays refused, with its message
    "torch.add(x, y, other=y)", "torch.tanh(x, input=x)",
    # a non-tensor given by torch's name is named so, without a position
    "torch.dot(input=x[0], tensor=2)", "x[0].dot(tensor=[1.0])", "torch.bmm(x, mat2=3)",
    "torch.isclose(x, other=None)", "torch.equal(input=x, other=1)",
]


@needs_torch
def test_positional_parameters_by_their_torch_names():
    from autodiff.interpreter.reference import normalize_addresses, run_many_with_torch

    prelude = ("import torch\nimport torch.nn.functional as F\n"
               "x = torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)\n"
               "y = torch.tensor([[0.5, 1.5, -1.0], [2.0, -0.5, 1.0]])\n")
    sources = [prelude + f"print({call})\n" for call in KEYWORD_CALLS]
    for call, source, want in zip(KEYWORD_CALLS, sources, run_many_with_torch(sources)):
        import io

        out = io.StringIO()
        result = run_source(source, "k.tg", out=out)
        got_error = None if result.error is None else \
            f"{result.error.error_class}: {result.error.message}".splitlines()[0]
        assert (normalize_addresses(out.getvalue()), got_error) == \
            (normalize_addresses(want.stdout), want.error), call
