"""`autodiff graph`'s views: full width off a terminal, --show, the graph built before an
error, a readable PNG, and the HTML page clicked in a real headless Chromium."""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from autodiff.cli.graph import graph_path

from headless_browser import Browser, chromium
from json_schemas import problems

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
ARTIFACTS = ROOT / "test-artifacts"  # kept after the run (CI uploads or a person opens it)
HAS_DOT = shutil.which("dot") is not None
LONG_NAMES = ("a_rather_long_variable_name_for_x = torch.ones(2, requires_grad=True)\n"
              "another_quite_long_intermediate_name = a_rather_long_variable_name_for_x * 2\n"
              "yet_another_long_name = (another_quite_long_intermediate_name + 1).exp()\n"
              "the_final_output_with_a_long_name = yet_another_long_name.sum()\n")


def graph(path: Path | str, **options) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = graph_path(str(path), out=out, err=err, no_color=True, **options)
    return status, out.getvalue(), err.getvalue()


def test_full_width_when_not_on_a_terminal(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    prog = tmp_path / "long.tg"
    prog.write_text(LONG_NAMES)
    status, text, _ = graph(prog)
    assert status == 0 and "…" not in text
    assert "AccumulateGrad → a_rather_long_variable_name_for_x [2] float32  line 1" in text
    assert graph(prog, output=str(tmp_path / "g.txt"))[0] == 0
    assert (tmp_path / "g.txt").read_text() == text


def test_show_values_grads_saved_on_the_tree() -> None:
    # out = mean(3·y·y), y = x + 2 = 3 at x = 1: the mean's g = 1; z gets 1/4; y·y gets
    # 3/4; y gets 2·(3/4)·3 = 4.5, and so does x.grad
    status, text, _ = graph(SAMPLES / "seed_ones_mean.tg", show="values,grads,saved")
    assert status == 0
    lines = [line.strip("│├└─ ") for line in text.splitlines()]
    after = {line: lines[i + 1:i + 4] for i, line in enumerate(lines)}
    assert after["MeanBackward0  out line 15  [] float32"][:2] == ["value 27", "grad 1"]
    assert after["MulBackward0  z line 11  [2, 2] float32"] == ["value 27", "grad 0.25",
                                                               "saved a = 9, b = 3"]
    assert after["AddBackward0  y line 7  [2, 2] float32"][:2] == ["value 3", "grad 4.5"]
    assert after["AccumulateGrad → x [2, 2] float32  line 3"][:2] == ["value 1", "grad 4.5"]


def test_show_in_dot_mermaid_and_json() -> None:
    sample = SAMPLES / "seed_ones_mean.tg"
    dot = graph(sample, fmt="dot", show="grads")[1]
    assert 'label="AddBackward0\\ny · line 7\\n[2, 2] float32\\ngrad 4.5"' in dot
    assert "value " not in dot  # only what was asked for
    mermaid = graph(sample, fmt="mermaid", show="values")[1]
    assert "AccumulateGrad<br/>x · line 3<br/>[2, 2] float32<br/>value 1" in mermaid
    document = json.loads(graph(sample, fmt="json", show="values,grads,saved")[1])
    assert problems(document, "graph") == []
    by_name = {n["name"]: n for n in document["nodes"] if n["name"]}
    assert by_name["x"]["grad"] == "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"
    assert by_name["z"]["saved"]["b"] == "tensor(3)"
    plain = json.loads(graph(sample, fmt="json")[1])
    assert all("value" not in n and "grad" not in n for n in plain["nodes"])


def test_unknown_show_is_a_usage_error() -> None:
    status, _, err = graph(SAMPLES / "seed_ones_mean.tg", show="values,colours")
    assert status == 2 and "--show colours: choose among values, grads, saved" in err


def test_graph_built_before_an_error(tmp_path: Path) -> None:
    sample = SAMPLES / "seed_linear_backward_error.tg"
    status, text, err = graph(sample, show="values")
    assert status == 1
    assert text.startswith("(the graph built before the program stopped with an error: ")
    assert "AccumulateGrad → b [3] float32  line 6\n    value [4, 5, 8]" in text
    assert "RuntimeError: grad can be implicitly created only for scalar outputs" in err
    document = json.loads(graph(sample, fmt="json")[1])
    assert "grad can be implicitly created" in document["error"]
    assert problems(document, "graph") == []
    assert "%% (the graph built before" in graph(sample, fmt="mermaid")[1]
    assert 'fontcolor="#b00020"' in graph(sample, fmt="dot")[1]
    status, _, err = graph(sample, output=str(tmp_path / "g.json"))
    assert status == 1 and err.rstrip().endswith("(4 nodes, built before the program stopped "
                                                 "with an error)")


def _png_size(path: Path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_png_is_drawn_at_150_dpi(tmp_path: Path) -> None:
    from autodiff.cli.graph import build_graph, to_dot
    from autodiff.cli.source import load_source
    from autodiff.cli.trace import trace_source

    sample = SAMPLES / "seed_ones_mean.tg"
    assert graph(sample, output=str(tmp_path / "g.png"))[0] == 0
    plain = tmp_path / "plain.png"
    dot_text = to_dot(build_graph(trace_source(load_source(str(sample)), err=io.StringIO())))
    plain.write_bytes(subprocess.run(["dot", "-Tpng"], input=dot_text.encode(),
                                     capture_output=True, check=True).stdout)
    width, height = _png_size(tmp_path / "g.png")
    width96, height96 = _png_size(plain)  # Graphviz draws PNG at 96 dpi by default
    assert width / width96 == pytest.approx(150 / 96, rel=0.03)
    assert height / height96 == pytest.approx(150 / 96, rel=0.03)


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_html_page_is_self_contained(tmp_path: Path) -> None:
    page = tmp_path / "g.html"
    assert graph(SAMPLES / "seed_ones_mean.tg", output=str(page))[0] == 0
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") == 1
    assert "<script src" not in text and "<link" not in text and "@import" not in text
    assert not [u for u in __import__("re").findall(r"https?://[^\"' )]+", text)
                if not u.startswith("http://www.w3.org/")]  # XML namespaces name, never load


@pytest.mark.skipif(not HAS_DOT or chromium() is None,
                    reason="needs Graphviz's dot and Chromium")
def test_html_page_clicked_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "g.html"
    assert graph(SAMPLES / "seed_ones_mean.tg", output=str(page))[0] == 0
    ARTIFACTS.mkdir(exist_ok=True)
    with Browser() as browser:
        browser.open(page.as_uri())
        assert browser.evaluate("document.getElementById('node-title').textContent") == \
            "Click or hover a node"
        # the node drawn for y (its title is the node id); click its middle
        centre = browser.evaluate(
            "(function () { var g = Array.from(document.querySelectorAll('g.node')).find("
            "function (n) { return n.textContent.indexOf('y · line 7') >= 0; });"
            " var r = g.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2];"
            " })()")
        browser.click(*centre)
        panel = browser.evaluate("document.getElementById('panel').innerText")
        browser.screenshot(str(ARTIFACTS / "graph-page.png"))
    # y = x + 2 = 3 everywhere; its gradient 2·(3/4)·3 = 4.5
    assert panel.startswith("AddBackward0 — y\n")
    for expected in ("grad_fn\nAddBackward0", "variable\ny", "line\n7", "shape\n[2, 2]",
                     "dtype\nfloat32", "value\ntensor([[3., 3.],\n        [3., 3.]])",
                     "gradient\ntensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"):
        assert expected in panel, panel
    assert (ARTIFACTS / "graph-page.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- through the console script: hostile labels, big graphs ---------------------------------

EXE = shutil.which("autodiff")
needs_cli = pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
INJECTION = ('x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x * 2).sum()\n'
             'raise RuntimeError("x\\n  click n0 href \\"javascript:alert(1)\\"\\n'
             '<img src=x onerror=alert(1)> &#27; \\\\N #quot; `md` \\x1b[2J")\n')


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    done = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**__import__("os").environ, "NO_COLOR": "1"}, timeout=120)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    return done


@needs_cli
def test_an_error_message_cannot_inject_into_mermaid(tmp_path: Path) -> None:
    (tmp_path / "i.tg").write_text(INJECTION)
    done = cli("graph", "i.tg", "-f", "mermaid", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    statement = __import__("re").compile(
        r'  (%% .*|partial\[".*"\]|style partial .*|n\d+\(?\["[^"]*"\]\)?|n\d+ --> n\d+)')
    assert lines[0] == "flowchart TD" and all(statement.fullmatch(line) for line in lines[1:])
    assert "click" not in "".join(line for line in lines if not line.startswith(("  %%", "  partial")))
    note = lines[2]
    assert "RuntimeError: x<br/>  click n0 href #quot;javascript:alert(1)#quot;<br/>" \
           "#lt;img src=x onerror=alert(1)#gt; #amp;#35;27; \\N #35;quot; #96;md#96; \\x1b[2J" in note
    assert "<img" not in done.stdout and "\x1b" not in done.stdout


@needs_cli
def test_an_error_message_cannot_inject_into_dot_svg_or_the_page(tmp_path: Path) -> None:
    (tmp_path / "i.tg").write_text(INJECTION)
    dot = cli("graph", "i.tg", "-f", "dot", cwd=tmp_path).stdout
    [label] = [line for line in dot.splitlines() if line.startswith("  label=")]
    assert label == ('  label="(the graph built before the program stopped with an error: i.tg:3:1: '
                     'RuntimeError: x\\n  click n0 href \\"javascript:alert(1)\\"\\n<img src=x '
                     'onerror=alert(1)> &amp;#27; \\\\N #quot; `md` \\\\x1b[2J)";')
    if not HAS_DOT:
        return
    import xml.dom.minidom

    for suffix in ("svg", "html"):
        done = cli("graph", "i.tg", "-o", f"g.{suffix}", cwd=tmp_path)
        assert done.returncode == 1 and f"wrote g.{suffix} (3 nodes" in done.stderr
        text = (tmp_path / f"g.{suffix}").read_text()
        assert "<img" not in text and "\x1b" not in text and "&#27;" not in text
    xml.dom.minidom.parse(str(tmp_path / "g.svg"))  # still XML: no raw control character
    page = (tmp_path / "g.html").read_text()
    assert "&lt;img src=x onerror=alert(1)&gt; &amp;#27; \\N #quot; `md` \\x1b[2J)</p>" in page


LOOP = ("x = torch.tensor([1.5], requires_grad=True)\ny = x\nfor i in range(400):\n"
        "    y = y * x + y\ny.backward()\n")


@needs_cli
@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
@pytest.mark.parametrize("suffix", ["svg", "png", "html"])
def test_a_graph_too_big_for_graphviz_is_drawn_folded_in_seconds(tmp_path: Path, suffix) -> None:
    import time

    (tmp_path / "loop.tg").write_text(LOOP)
    start = time.monotonic()
    done = cli("graph", "loop.tg", "-o", f"g.{suffix}", "--timeout", "30", cwd=tmp_path)
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    assert seconds < 15  # about a second of Graphviz (unfolded: minutes); the rest is start-up
    wrote, note = done.stderr.splitlines()
    assert wrote == f"wrote g.{suffix} (801 nodes)"
    assert note.startswith("(too many for Graphviz to lay out: the drawing shows ")
    assert note.endswith(" into one node; -f json or -f dot has every node)")
    if suffix != "png":
        text = (tmp_path / f"g.{suffix}").read_text().replace("&#45;", "-")  # Graphviz's
        assert "more nodes, not drawn:" in text and "MulBackward0 ×" in text
        assert "-f json or -f dot has every node" in text
    else:
        width, height = _png_size(tmp_path / "g.png")
        assert max(width, height) <= 4096
    every = json.loads(cli("graph", "loop.tg", "-f", "json", cwd=tmp_path).stdout)
    assert len(every["nodes"]) == 801  # the text formats keep every node
