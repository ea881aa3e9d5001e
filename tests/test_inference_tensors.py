"""Inference tensors: what inference mode makes, and what torch refuses on them outside it.

Each program is compared live against PyTorch (skipped without torch); the torch-free tests
pin the facts the engine's bookkeeping rests on (views inherit the mark, the mode's switch is
restored however a run ends, a program that never enters the mode pays nothing)."""

from __future__ import annotations

import io

import pytest

from autodiff.engine.core import inference
from autodiff.engine.core.session import current
from autodiff.interpreter import compile_program, default_modules
from autodiff.interpreter.reference import normalize_addresses, run_with_torch, torch_available
from autodiff.parser import parse

HEAD = ("import torch\n"
        "x = torch.tensor([1.0, -2.0], requires_grad=True)\n"
        "n = torch.tensor([3.0, 4.0])\n"
        "with torch.inference_mode():\n"
        "    a = n * 2\n"
        "    v = n[1:]\n"
        "    r = torch.ones(2)\n"
        "    r.requires_grad_()\n")


def attempt(expression: str) -> str:
    return (f"try:\n    print({expression})\n"
            "except RuntimeError as err:\n    print('RuntimeError:', err)\n")


PROGRAMS = [
    # what is an inference tensor: made in the mode, or a view / alias of one
    "print(a.is_inference(), v.is_inference(), n.is_inference(), r.is_inference())\n"
    "print(a[0].is_inference(), a.view(2, 1).is_inference(), a.t().is_inference())\n"
    "print(a.detach().is_inference(), a.data.is_inference(), a.clone().is_inference())\n"
    "print((a + 1).is_inference(), a.float().is_inference(), a.double().is_inference())\n"
    "print(torch.is_inference(a), a.unbind()[0].is_inference(), a.expand(3, 2).is_inference())\n",
    # inside the mode: views of normal tensors stay normal; inference_mode(False) makes normal ones
    "with torch.inference_mode():\n"
    "    d = x.detach()\n"
    "    w = x.view(2)\n"
    "    with torch.inference_mode(False):\n"
    "        m = torch.zeros(2)\n"
    "        k = a * 2\n"
    "    print(d.is_inference(), w.is_inference(), m.is_inference(), k.is_inference())\n"
    "    print(torch.zeros(1).is_inference(), x.is_inference())\n",
    # saved for backward: only what the rules of inputs that need a gradient read
    attempt("x * a") + attempt("a * x") + attempt("x + a") + attempt("x - a")
    + attempt("x / a") + attempt("a / x") + attempt("torch.where(a > 6, x, a)")
    + attempt("torch.cat([x, a])") + attempt("torch.mm(x.view(1, 2), a.view(2, 1))")
    + attempt("x.pow(a)") + attempt("torch.maximum(x, a)") + attempt("x * v")
    + attempt("(x * 2).sum()") + attempt("torch.nn.functional.mse_loss(x, a)"),
    # in place outside the mode fails after the write, under no_grad too
    attempt("a.add_(1)") + "print(a)\n" + attempt("a.zero_()") + "print(a)\n"
    + "with torch.no_grad():\n" + "".join("    " + line + "\n" for line in attempt("a.mul_(3)").splitlines())
    + "try:\n    a[0] = 9.0\nexcept RuntimeError as err:\n    print(err)\n"
    + attempt("v.fill_(1)") + "print(a, n, v)\n"
    + "with torch.inference_mode():\n    a.add_(1)\n    n.add_(1)\nprint(a, n, n._version)\n",
    # requires_grad and the version counter
    attempt("a.requires_grad_()") + attempt("a.requires_grad_(False)")
    + "try:\n    a.requires_grad = True\nexcept RuntimeError as err:\n    print(err)\n"
    + attempt("torch.nn.Parameter(a)") + attempt("a._version") + attempt("v._version")
    + attempt("a.clone().requires_grad_()") + attempt("r.requires_grad")
    + "with torch.inference_mode():\n    print(a.requires_grad_().requires_grad)\n",
    # a module made in the mode holds inference parameters
    "torch.manual_seed(0)\n"
    "with torch.inference_mode():\n"
    "    layer = torch.nn.Linear(2, 1)\n"
    "print(layer.weight.is_inference(), layer.weight.requires_grad)\n"
    + attempt("layer(x.view(1, 2))")
    + "with torch.inference_mode():\n    print(layer(x.view(1, 2)).is_inference())\n",
    # x.data = an inference tensor makes x one (torch swaps the tensor under the name)
    "y = torch.ones(2)\ny.data = a\nprint(y.is_inference())\ny.data = n\nprint(y.is_inference())\n",
    # what a program's own autograd.Function saves is saved for backward too
    "class Scale(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, t, w):\n        ctx.save_for_backward(w)\n"
    "        return t * 2\n"
    "    @staticmethod\n    def backward(ctx, g):\n        (w,) = ctx.saved_tensors\n"
    "        return g * w, None\n"
    + attempt("Scale.apply(x, a)") + attempt("Scale.apply(n, a)") + attempt("Scale.apply(x, n)"),
    # a decorated function runs in the mode
    "@torch.inference_mode()\ndef predict(t):\n    return t * 3\n"
    "p = predict(x)\nprint(p.is_inference(), p.requires_grad)\n" + attempt("x * p"),
]


def run_autodiff(source: str) -> str:
    program = compile_program(parse(source, "<t>"), "<t>", source)
    default_modules()
    out = io.StringIO()
    program.run(out=out)
    return out.getvalue()


@pytest.mark.skipif(not torch_available(), reason="torch is not installed")
@pytest.mark.parametrize("body", PROGRAMS)
def test_inference_tensors_behave_as_torchs(body):
    source = HEAD + body
    reference = run_with_torch(source)
    assert reference.exit_code == 0, reference.stderr
    assert normalize_addresses(run_autodiff(source)) == reference.stdout


def test_views_and_aliases_inherit_the_mark_without_torch():
    out = run_autodiff(HEAD + "print(a.is_inference(), a[0].is_inference(), a.detach().is_inference(),"
                              " v.is_inference(), (a * 2).is_inference(), a.clone().is_inference())\n"
                       + attempt("x * a") + attempt("a.add_(1)"))
    lines = out.splitlines()
    assert lines[0] == "True True True False False False"
    assert lines[1] == "RuntimeError: " + inference.SAVED
    assert lines[2] == "RuntimeError: " + inference.IN_PLACE


def test_the_mode_is_off_after_any_run_however_it_ends():
    for body in ("with torch.inference_mode():\n    raise ValueError('stop')\n",
                 "with torch.inference_mode():\n    y = x * 2\n",
                 "def g():\n    with torch.inference_mode():\n        yield 1\n"
                 "for i in g():\n    break\n"):
        try:
            run_autodiff(HEAD + body)
        except Exception:  # noqa: BLE001 - the program's own error; the mode is what is tested
            pass
        assert current().inference is False
        assert run_autodiff("print(torch.ones(1).is_inference())\n") == "False\n"
    run_autodiff("import torch\nb = torch.ones(2)\nb.add_(1)\nprint(b.is_inference())\n")
    assert current().inference is False
