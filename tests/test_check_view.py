"""`autodiff check`'s view: autograd value, numerical value and difference side by side."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from autodiff.cli.check import check_path, check_source, render_check
from autodiff.cli.source import LoadedSource, load_source

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
NAN_AT_ZERO = ("x = torch.tensor([0.0, 1.0], requires_grad=True)\n"
               "y = (x.sqrt() * 0).sum()\ny.backward()\n")  # 0·∞ = NaN at x = 0
FLOAT32_ROUNDING = ("x = torch.tensor([0.1, 0.7], requires_grad=True)\n"
                    "y = (x * 1.1).exp().exp().sum()\ny.backward()\n")


def rendered(source: LoadedSource, columns: int, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    out = io.StringIO()
    render_check(check_source(source, err=io.StringIO()), out, no_color=True)
    return out.getvalue()


def test_values_side_by_side(monkeypatch) -> None:
    # out = mean(3(x+2)²) at x = 1: d/dx = 6(x+2)/4 = 4.5 in each of the 4 elements
    text = rendered(load_source(str(SAMPLES / "seed_ones_mean.tg")), 100, monkeypatch)
    lines = text.splitlines()
    assert lines[1].split() == ["element", "autograd", "numerical", "difference"]
    rows = [line.replace(", ", ",").split() for line in lines[2:6]]
    assert [r[0] for r in rows] == ["x[0,0]", "x[0,1]", "x[1,0]", "x[1,1]"]
    for row in rows:
        assert float(row[1]) == 4.5 and float(row[2]) == pytest.approx(4.5, rel=1e-8)
        assert float(row[3]) < 1e-8 and row[4] == "ok"
    assert "float32" not in text  # its float32 gradients equal the float64 ones: no note
    assert lines[-1] == "the leaf x is ok"


def test_narrow_terminal_keeps_every_digit(monkeypatch) -> None:
    # y = x·2¹⁰, v = [0.1, 1, 1e-4]: x.grad = [102.4, 1024, 0.1024]
    text = rendered(load_source(str(SAMPLES / "seed_jacobian_vector.tg")), 40, monkeypatch)
    assert "…" not in text
    assert all(len(line) <= 40 for line in text.splitlines()
               if not line.startswith(("gradients of", "note", "the leaf")))
    assert "  autograd   102.4" in text and "  autograd   1024" in text
    assert "  autograd   0.1024" in text


def test_nan_gradient_is_not_ok(monkeypatch) -> None:
    result = check_source(LoadedSource(NAN_AT_ZERO, "prog.tg"), err=io.StringIO())
    assert not result.ok and result.leaves[0].nan == 1
    text = rendered(LoadedSource(NAN_AT_ZERO, "prog.tg"), 100, monkeypatch)
    assert "NaN gradient: x" in text and "FAILED: x" in text and " ok\n" in text  # x[1] is fine


def test_float32_note_only_for_a_real_difference(monkeypatch) -> None:
    text = rendered(LoadedSource(FLOAT32_ROUNDING, "prog.tg"), 100, monkeypatch)
    assert "float32 gradients differ from the float64 ones by up to" in text


def test_exit_status(tmp_path: Path) -> None:
    prog = tmp_path / "nan.tg"
    prog.write_text(NAN_AT_ZERO)
    assert check_path(str(prog), out=io.StringIO(), err=io.StringIO()) == 1


# descent on (w - 3)² through .data: the last backward sees w after two updates, where the
# slope is 2(w - 3); an update through .data leaves w's version at 0, as in torch
DATA_UPDATES = ("w = torch.tensor(1.0, requires_grad=True)\n"
                "for step in range(3):\n"
                "    loss = (w - 3) ** 2\n"
                "    loss.backward()\n"
                "    if step < 2:\n"
                "        w.data -= 0.25 * w.grad.data\n"
                "        w.grad.zero_()\n")


@pytest.mark.parametrize("write", ["w.data -= 0.25 * w.grad.data",
                                   "w.data = w.data - 0.25 * w.grad",
                                   "with torch.no_grad():\n            w -= 0.25 * w.grad"])
def test_leaf_updated_between_backward_calls_is_checked_at_its_last_values(write: str) -> None:
    source = DATA_UPDATES.replace("w.data -= 0.25 * w.grad.data", write)
    result = check_source(LoadedSource(source, "prog.tg"), err=io.StringIO())
    leaf = result.leaves[0]
    # w: 1 -> 1 + 0.25·4 = 2 -> 2 + 0.25·2 = 2.5; the last slope is 2(2.5 - 3) = -1
    assert leaf.report.analytic[0] == pytest.approx(-1.0)
    assert leaf.report.numeric[0] == pytest.approx(-1.0, rel=1e-6)
    assert result.ok


def test_legacy_variable_leaves_are_checked() -> None:
    # y = sum(3x²) at x = [1, 2]: d/dx = 6x
    source = LoadedSource("from torch.autograd import Variable\n"
                          "x = Variable(torch.tensor([1.0, 2.0]), requires_grad=True)\n"
                          "y = (x * x * 3).sum()\ny.backward()\n", "prog.tg")
    result = check_source(source, err=io.StringIO())
    assert [leaf.name for leaf in result.leaves] == ["x"]
    assert [e[1] for e in result.leaves[0].elements] == pytest.approx([6.0, 12.0])
    assert result.ok


def test_a_leaf_made_to_require_grad_later_is_checked(tmp_path: Path) -> None:
    # y is computed from a tensor that does not require grad, then made a leaf: as in torch
    # (y.is_leaf, y.grad == 1), and so is `w = torch.Tensor([0.5]); w.requires_grad = True`
    prog = tmp_path / "prog.tg"
    prog.write_text("x = torch.ones(2)\ny = (x * 2).sum()\ny.requires_grad_()\ny.backward()\n"
                    "w = torch.Tensor([0.5])\nw.requires_grad = True\n(w * w * 3).sum().backward()\n")
    out, err = io.StringIO(), io.StringIO()
    assert check_path(str(prog), out=out, err=err) == 0, err.getvalue()
    result = check_source(LoadedSource(prog.read_text(), "prog.tg"), err=io.StringIO())
    assert [leaf.name for leaf in result.leaves] == ["y", "w"]
    assert result.leaves[1].elements[0][1] == pytest.approx(3.0)  # d(3w²)/dw at 0.5


def test_a_check_with_no_leaf_to_vary_is_refused(tmp_path: Path, monkeypatch) -> None:
    # a leaf no creation announces (here: the announcement of a late requires_grad removed)
    from autodiff.engine.tensors import tensor
    monkeypatch.setattr(tensor, "_became_leaf", lambda t: None)
    prog = tmp_path / "prog.tg"
    prog.write_text("x = torch.ones(2)\ny = (x * 2).sum()\ny.requires_grad_()\ny.backward()\n")
    out, err = io.StringIO(), io.StringIO()
    assert check_path(str(prog), out=out, err=err) == 2
    assert "nothing to check" in err.getvalue() and "ok" not in out.getvalue()
