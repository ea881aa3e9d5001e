"""`autodiff explain`: the numbers in each step, against gradients derived by hand.

Each seed program's expected values are worked out in the comments from the calculus, not
read off autodiff; a second test re-does the arithmetic of every worked line that holds
plain numbers (`g·n·aⁿ⁻¹ = 2·2·2¹ = 8`), so a rule rendered with the wrong numbers fails.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from autodiff.cli.explain import explain_lines, explain_path
from autodiff.cli.source import LoadedSource, load_source

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def lines_of(name: str, **options) -> list[str]:
    return explain_lines(load_source(str(SAMPLES / f"{name}.tg")), **options)


def text_of(source: str, **options) -> str:
    return "\n".join(explain_lines(LoadedSource(source, "prog.tg"), **options))


def test_seed_scalar_derivative() -> None:
    # y = 2x² + b at x = 2: the sum passes 1, the product by 2 sends 1·2 = 2,
    # the square sends 2·(2·x¹) = 2·2·2 = 8 = dy/dx.
    text = "\n".join(lines_of("seed_scalar_derivative"))
    assert "seed: ∂y/∂y = 1" in text
    assert "g·b = 1·2 = 2" in text
    assert "∂(aⁿ)/∂a = n·aⁿ⁻¹\n        g·n·aⁿ⁻¹ = 2·2·2¹ = 8" in text
    assert text.rstrip().endswith("x.grad += 8")


def test_seed_square_grad() -> None:
    # y = x² at x = [2.]: g = 1, 1·2·2¹ = 4
    text = "\n".join(lines_of("seed_square_grad"))
    assert "g·n·aⁿ⁻¹ = 1·2·2¹ = 4" in text
    assert text.rstrip().endswith("x.grad += 4")


def test_seed_ones_mean_shows_the_sum_over_two_paths() -> None:
    # out = mean(3·y·y), y = x + 2 = 3: the mean sends 1/4; ·3 sends 0.75; y·y sends
    # 0.75·3 = 2.25 along each of its two inputs, and y receives their sum 4.5 = x.grad.
    text = "\n".join(lines_of("seed_ones_mean"))
    assert "g/n expanded = 1/4 expanded = 0.25 (all 4 elements)" in text
    assert "g·b = 0.25·3 = 0.75 (all 4 elements)" in text
    assert text.count("= 0.75·3 = 2.25 (all 4 elements)") == 2
    assert "gradient arriving: g = 2.25 + 2.25 = 4.5 (all 4 elements), the sum over 2 paths" \
        in text
    assert text.rstrip().endswith("x.grad += 4.5 (all 4 elements)")


def test_seed_jacobian_vector() -> None:
    # y = x·2¹⁰ (ten doublings), so J = 1024·I and vᵀJ = 1024·v = [102.4, 1024, 0.1024]
    text = "\n".join(lines_of("seed_jacobian_vector"))
    assert "J = ∂y/∂x [3, 3] =" in text
    assert "tensor([[1024.,    0.,    0.]," in text
    assert "seed: the gradient argument v = [0.1, 1, 0.0001]" in text
    assert "g·b = [0.1, 1, 0.0001]·2 = [0.2, 2, 0.0002]" in text
    assert "g·b = [51.2, 512, 0.0512]·2 = [102.4, 1024, 0.1024]" in text
    assert sum(line.startswith("[") and "MulBackward0:" in line for line in text.split("\n")) == 10
    assert text.rstrip().endswith("x.grad += [102.4, 1024, 0.1024]")


def test_seed_linear_sum_backward() -> None:
    # y = Σ(Wx + b): ∂y/∂b = ones, ∂y/∂W = ones ⊗ x, every row x = [3, 2, 4, 5]
    text = "\n".join(lines_of("seed_linear_sum_backward"))
    assert "b.grad += 1 (all 3 elements)" in text
    assert "g ⊗ v = [1, 1, 1] ⊗ [3, 2, 4, 5] = tensor([[3., 2., 4., 5.]," in text
    assert "W.grad += tensor([[3., 2., 4., 5.]," in text


def test_seed_linear_backward_error_shows_what_ran_then_the_error() -> None:
    # output.backward() on 3 elements fails before any step: the call is listed as stopped
    out, err = io.StringIO(), io.StringIO()
    status = explain_path(str(SAMPLES / "seed_linear_backward_error.tg"), out=out, err=err,
                          no_color=True)
    assert status == 1
    assert out.getvalue().startswith("backward() call 1 of 1, on output [3] = tensor([43., 44., 47.])")
    assert "before its first step" in out.getvalue()
    assert "the program stopped with an error at line 11" in out.getvalue()
    assert "grad can be implicitly created only for scalar outputs" in err.getvalue()


@pytest.mark.parametrize("name", ["seed_no_grad", "seed_requires_grad_flag", "seed_while_norm"])
def test_seeds_without_backward_have_nothing_to_explain(name: str) -> None:
    err = io.StringIO()
    assert explain_path(str(SAMPLES / f"{name}.tg"), out=io.StringIO(), err=err) == 2
    assert "never calls backward()" in err.getvalue()


def test_every_call_is_shown_and_one_can_be_picked() -> None:
    text = "\n".join(lines_of("grad_accumulation"))
    assert [line[:23] for line in text.split("\n") if line.startswith("backward() call")] == \
        [f"backward() call {n} of 4," for n in range(1, 5)]
    second = lines_of("grad_accumulation", call=2)
    assert second[0] == "backward() call 2 of 4, on y [] = tensor(14.)"
    # x·x: each factor gets x, and x.grad receives their sum 2x
    assert "x.grad += [1, 2, 3] + [1, 2, 3] = [2, 4, 6], the sum over 2 paths" in "\n".join(second)
    assert lines_of("grad_accumulation", root="y")[0].startswith("backward() call 1 of 4, on y")


def test_steps_up_to_an_error_in_a_later_statement() -> None:
    prog = ("x = torch.tensor(3.0, requires_grad=True)\ny = x * x\ny.backward()\n"
            "z = torch.ones(2) + torch.ones(3)\n")
    out, err = io.StringIO(), io.StringIO()
    path_text = None
    from autodiff.cli import explain as module

    trace, lines = module.explain_trace(LoadedSource(prog, "prog.tg"))
    path_text = "\n".join(lines)
    assert "x.grad += 3 + 3 = 6" in path_text  # d(x²)/dx = 2x = 6 at x = 3
    assert path_text.endswith("the program stopped with an error at line 4 "
                              "(its message follows on stderr)")
    assert trace.error is not None and out.getvalue() == err.getvalue() == ""


def test_broadcast_sum() -> None:
    # (x + b).sum() with x [2, 2], b [2]: b's gradient sums the ones over dim 0 -> [2, 2]
    prog = ("x = torch.ones(2, 2, requires_grad=True)\nb = torch.ones(2, requires_grad=True)\n"
            "y = (x + b).sum()\ny.backward()\n")
    text = text_of(prog)
    assert "broadcast: summed from [2, 2] to [2] = 2 (all 2 elements)" in text
    assert "b.grad += 2 (all 2 elements)" in text


# --- the arithmetic of every worked line ----------------------------------------------------

_WORKED = re.compile(r"^ {8}(?P<expr>[^=]+) = (?P<filled>[^=]+) = (?P<result>-?[\d.e+-]+)"
                     r"(?: \(all \d+ elements\))?$")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def _evaluate(filled: str) -> float | None:
    """The value of `2·2·2¹`, `1/4`, `0.75·3`; None for anything but plain arithmetic."""
    text = re.sub(r"([\d.)])([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)",
                  lambda m: f"{m.group(1)}**({m.group(2).translate(_SUPERSCRIPT)})", filled)
    text = text.replace("·", "*").replace(" expanded", "")
    if not re.fullmatch(r"[\d.e*+/() -]+", text):
        return None
    return eval(text, {"__builtins__": {}})  # plain arithmetic, checked by the regex above


PROGRAMS = {
    "pow_div_sub": "x = torch.tensor(1.5, requires_grad=True)\nw = torch.tensor(-2.0, "
                   "requires_grad=True)\ny = (x ** 3 / w - x * w + 4 / x).sum()\ny.backward()\n",
    "exp_log_sig": "x = torch.tensor([0.5], requires_grad=True)\n"
                   "y = (x.exp() * x.log() + x.sigmoid() - x.tanh()).sum()\ny.backward()\n",
}


@pytest.mark.parametrize("name", ["seed_scalar_derivative", "seed_square_grad",
                                  "seed_ones_mean", "seed_linear_sum_backward",
                                  "grad_accumulation", *PROGRAMS])
def test_worked_lines_add_up(name: str) -> None:
    lines = (lines_of(name) if name not in PROGRAMS
             else explain_lines(LoadedSource(PROGRAMS[name], "prog.tg")))
    checked = 0
    for line in lines:
        found = _WORKED.match(line)
        if not found:
            continue
        value = _evaluate(found.group("filled"))
        if value is None:
            continue
        assert value == pytest.approx(float(found.group("result")), rel=1e-4), line
        checked += 1
    assert checked >= 1


def test_pow_div_rules_match_hand_derived_gradients() -> None:
    # y = x³/w - x·w + 4/x at x = 1.5, w = -2:
    # dy/dx = 3x²/w - w - 4/x² = -3.375 + 2 - 1.7778 = -3.1528
    # dy/dw = -x³/w² - x = -0.84375 - 1.5 = -2.34375
    text = text_of(PROGRAMS["pow_div_sub"])
    grads = dict(re.findall(r"^    (\w)\.grad \+= (?:.* = )?(-?[\d.]+)(?:,|$)", text, re.M))
    assert float(grads["x"]) == pytest.approx(-3.1528, abs=1e-4)
    assert float(grads["w"]) == pytest.approx(-2.34375, abs=1e-5)
    assert "-g·a/b² = -1·3.375/(-2)² = -0.84375" in text
    assert "w.grad += -1.5 - 0.84375 = -2.34375, the sum over 2 paths" in text
