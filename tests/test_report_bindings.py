"""The report gives each tensor the line that made it; a rebound name shows each binding
still in the graph."""

from __future__ import annotations

import io
import json

from autodiff.cli.report import build_report, render_report
from autodiff.cli.run import run_path
from autodiff.cli.source import LoadedSource
from autodiff.cli.trace import trace_source

from json_schemas import problems

REBOUND = ("import torch\n"
           "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
           "y = x * 2\n"
           "y = y + 1\n"
           "loss = y.sum()\n"
           "loss.backward()\n")


def entries(text: str, show=None) -> list[dict]:
    return build_report(trace_source(LoadedSource(text, "prog.tg"), out=io.StringIO()), show)


def test_a_rebound_name_shows_each_binding_in_the_graph() -> None:
    ys = [e for e in entries(REBOUND) if e["name"] == "y"]
    assert [(e["line"], e["grad_fn"], e.get("rebound_at")) for e in ys] == \
        [(3, "MulBackward0", 4), (4, "AddBackward0", None)]
    assert ys[0]["value"] == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert ys[1]["chain"] == "y = AddBackward0 ← y = MulBackward0 ← x (leaf)"
    out = io.StringIO()
    render_report(ys, out, no_color=True)
    assert "y  line 3  [2] float32  (an earlier binding, rebound at line 4; still in the graph)" \
        in out.getvalue()


def test_a_binding_out_of_the_graph_is_not_shown() -> None:
    text = REBOUND.replace("y = y + 1", "y = torch.ones(2, requires_grad=True)")
    assert [(e["line"], e.get("rebound_at")) for e in entries(text) if e["name"] == "y"] == \
        [(4, None)]


def test_in_place_updates_keep_the_line_that_made_the_tensor() -> None:
    text = ("w = torch.tensor([1.0], requires_grad=True)\n"
            "for step in range(3):\n"
            "    loss = (w * w).sum()\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        w -= 0.1 * w.grad\n"
            "    w.grad.zero_()\n")
    by_name = {e["name"]: e for e in entries(text)}
    assert by_name["w"]["line"] == 1 and by_name["loss"]["line"] == 3


def test_a_loop_keeps_memory_bounded() -> None:
    text = ("x = torch.ones(3, requires_grad=True)\n"
            "for i in range(500):\n"
            "    y = x * i\n"
            "    y.sum().backward()\n")
    trace = trace_source(LoadedSource(text, "prog.tg"), out=io.StringIO())
    assert len(trace.bindings) == 501 and len(trace.kept) == 2  # x, and y at line 3
    assert sum(b.tensor() is not None for b in trace.bindings) <= 3


def test_json_marks_earlier_bindings(tmp_path) -> None:
    prog = tmp_path / "rebound.tg"
    prog.write_text(REBOUND)
    out = io.StringIO()
    assert run_path(str(prog), as_json=True, out=out, err=io.StringIO()) == 0
    document = json.loads(out.getvalue())
    assert problems(document, "run") == []
    assert [t.get("rebound_at") for t in document["tensors"] if t["name"] == "y"] == [4, None]
