"""The CLI through the installed console script, and its library functions directly.

Goldens in tests/cli_goldens/ were made by the commands themselves and reviewed by
eye; regenerate with UPDATE_CLI_GOLDENS=1 python -m pytest tests/test_cli.py.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from json_schemas import problems

from autodiff.cli.check import check_source
from autodiff.cli.repl import Session
from autodiff.cli.run import run_path
from autodiff.cli.source import LoadedSource

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
GOLDENS = Path(__file__).resolve().parent / "cli_goldens"
EXE = shutil.which("autodiff")
GOLDEN_SAMPLES = ["seed_scalar_derivative", "seed_jacobian_vector", "d2l_detach", "retain_grad",
                  "train_linreg_sgd", "graph_grad_fn"]
VIEWS = {  # golden suffix -> command line after `autodiff`
    "run.txt": ["run"], "run.json": ["run", "--json"], "tree.txt": ["graph"],
    "dot": ["graph", "-f", "dot"], "mmd": ["graph", "-f", "mermaid"],
    "graph.json": ["graph", "-f", "json"],
}
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}

pytestmark = pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")


def addresses(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0xADDR", text)


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=ENV, cwd=ROOT,
                          input=stdin, timeout=120)


def source(text: str) -> LoadedSource:
    return LoadedSource(text, "prog.tg")


@pytest.mark.parametrize("suffix", list(VIEWS))
@pytest.mark.parametrize("sample", GOLDEN_SAMPLES)
def test_golden_views(sample: str, suffix: str) -> None:
    done = cli(*VIEWS[suffix], f"samples/{sample}.tg")
    assert done.returncode == 0, done.stderr
    golden = GOLDENS / f"{sample}.{suffix}"
    if os.environ.get("UPDATE_CLI_GOLDENS"):
        golden.write_text(addresses(done.stdout))
    assert addresses(done.stdout) == golden.read_text()


def test_quiet_is_exactly_the_program_output() -> None:
    for sample in GOLDEN_SAMPLES:
        done = cli("run", "--quiet", f"samples/{sample}.tg")
        assert addresses(done.stdout) == (SAMPLES / f"{sample}.out").read_text()


def test_quiet_does_not_import_rich() -> None:
    # -X importtime lists the imports of both processes: the watching one and its child
    done = subprocess.run([EXE, "run", "--quiet", "samples/seed_square_grad.tg"],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**ENV, "PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0, done.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")]
    assert "numpy" in imported  # the child's imports are in the list too
    assert not [name for name in imported if name.split(".")[0] == "rich"]


@pytest.mark.parametrize("sample", GOLDEN_SAMPLES)
def test_json_documents_follow_their_schemas(sample: str) -> None:
    run_doc = json.loads(cli("run", "--json", f"samples/{sample}.tg").stdout)
    assert problems(run_doc, "run") == []
    graph_doc = json.loads(cli("graph", "-f", "json", f"samples/{sample}.tg").stdout)
    assert problems(graph_doc, "graph") == []
    ids = {n["id"] for n in graph_doc["nodes"]}
    assert all(i in ids for n in graph_doc["nodes"] for i in n["inputs"])


def test_validator_rejects_a_broken_document() -> None:
    found = problems({"schema": "autodiff.run/2", "file": 3}, "run")
    assert any("'autodiff.run/1' was expected" in p for p in found)
    assert any("3 is not of type 'string'" in p for p in found)
    assert any("'tensors' is a required property" in p for p in found)


def test_exit_codes() -> None:
    assert cli("run", "samples/backward_twice_error.tg").returncode == 1
    assert cli("run", "missing.tg").returncode == 2
    assert cli("run", "-", stdin="x = (\n").returncode == 2
    assert cli("run", "--bogus", "x.tg").returncode == 2
    assert cli("graph", "--root", "nope", "samples/retain_grad.tg").returncode == 2
    assert cli("graph", "-o", "g.xyz", "samples/retain_grad.tg").returncode == 2


def test_program_error_keeps_output_and_shows_caret() -> None:
    done = cli("run", "samples/backward_twice_error.tg")
    assert done.stdout.startswith((SAMPLES / "backward_twice_error.out").read_text())
    assert "RuntimeError: Trying to backward through the graph a second time" in done.stderr
    assert "^" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["run", "graph", "check", "explain", "repl"])
def test_help_shows_an_example(command: str) -> None:
    done = cli(command, "--help")
    assert done.returncode == 0 and "Example: autodiff" in done.stdout


def test_run_show_and_grad_reasons() -> None:
    out = io.StringIO()
    assert run_path(str(SAMPLES / "d2l_detach.tg"), out=out, show=["u", "y"], no_color=True) == 0
    text = out.getvalue().split("tensors")[1]
    assert "u  line 5" in text and "made by detach()" in text
    assert "a non-leaf: PyTorch keeps a non-leaf's .grad only after y.retain_grad()" in text
    assert "\nx " not in text


def test_chain_names_the_program_variables() -> None:
    out = io.StringIO()
    prog = ROOT / "tests" / "cli_goldens" / "chain.tg"
    assert run_path(str(prog), out=out, no_color=True) == 0
    assert "out = MeanBackward0 ← z = MulBackward0 ← y = AddBackward0 ← x (leaf)" in out.getvalue()


def test_svg_rendering_holds_every_label(tmp_path: Path) -> None:
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    target = tmp_path / "g.svg"
    done = cli("graph", "samples/train_linreg_sgd.tg", "-o", str(target))
    assert done.returncode == 0, done.stderr
    svg = target.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and svg.rstrip().endswith("</svg>")
    import xml.dom.minidom

    xml.dom.minidom.parseString(svg)  # well-formed
    graph = json.loads(cli("graph", "-f", "json", "samples/train_linreg_sgd.tg").stdout)
    for node in graph["nodes"]:
        assert node["op"] in svg
        if node["name"]:
            assert f"{node['name']} · line {node['line']}" in svg


def test_missing_graphviz_is_a_clear_message(tmp_path: Path) -> None:
    env = {**ENV, "PATH": str(Path(EXE).parent)}  # the script's folder only: no dot
    done = subprocess.run([EXE, "graph", "samples/retain_grad.tg", "-o", str(tmp_path / "g.png")],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 1 and "graphviz" in done.stderr.lower()
    assert not (tmp_path / "g.png").exists()


def test_text_outputs_are_written_atomically(tmp_path: Path) -> None:
    for suffix in (".dot", ".mmd", ".json", ".txt"):
        target = tmp_path / f"g{suffix}"
        assert cli("graph", "samples/retain_grad.tg", "-o", str(target)).returncode == 0
        assert target.read_text().strip()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".autodiff-")] == []


OUTPUTS = {  # every option that writes a file, with the file's name
    "graph -o": lambda target: ["graph", "samples/retain_grad.tg", "-o", target],
    "test --junit-xml": lambda target: ["test", "samples/retain_grad.tg", "--junit-xml", target],
}


def _device(path: Path) -> Path:
    """A character device node like /dev/null (1, 3); a link to /dev/null without the right."""
    try:
        os.mknod(path, 0o666 | __import__("stat").S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        path.symlink_to("/dev/null")
    return path


@pytest.mark.parametrize("option", list(OUTPUTS))
def test_an_output_onto_a_device_or_fifo_is_written_into_never_replaced(tmp_path, option):
    import stat

    suffix = ".txt" if option == "graph -o" else ".xml"
    device = _device(tmp_path / f"device{suffix}")
    done = cli(*OUTPUTS[option](str(device)))
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr
    assert stat.S_ISCHR(os.stat(device).st_mode)  # still the device node, not a regular file
    link = tmp_path / f"null{suffix}"  # /dev/stdout-like: a link to a device
    link.symlink_to("/dev/null")
    assert cli(*OUTPUTS[option](str(link))).returncode == 0 and link.is_symlink()
    fifo = tmp_path / f"fifo{suffix}"
    os.mkfifo(fifo)
    done = cli(*OUTPUTS[option](str(fifo)))  # nobody reads it: an error, not a wait forever
    assert done.returncode == 1 and f"cannot write {fifo}: no process reads that FIFO" in \
        done.stderr and "Traceback" not in done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir()
    done = cli(*OUTPUTS[option](str(folder)))
    assert done.returncode == 1 and f"cannot write {folder}: it is a folder;" in done.stderr
    secret = tmp_path / "secret"  # a link to a regular file is replaced, never written through
    secret.write_text("keep\n")
    planted = tmp_path / f"planted{suffix}"
    planted.symlink_to(secret)
    assert cli(*OUTPUTS[option](str(planted))).returncode == 0
    assert secret.read_text() == "keep\n" and not planted.is_symlink() and planted.stat().st_size
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".autodiff-")] == []


def test_a_fifo_with_a_reader_is_written_into(tmp_path):
    import threading

    fifo = tmp_path / "report.xml"
    os.mkfifo(fifo)
    read = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text()))
    reader.start()
    __import__("time").sleep(0.2)
    done = cli("test", "samples/retain_grad.tg", "--junit-xml", str(fifo))
    reader.join(60)
    assert done.returncode == 0 and read and read[0].startswith("<?xml"), done.stderr


# --- check -----------------------------------------------------------------------------

BACKWARD_SAMPLES = sorted(  # samples that call backward and run to the end (no .err golden)
    p.stem for p in SAMPLES.glob("*.tg")
    if "backward(" in p.read_text() and not p.with_suffix(".err").exists())


# the matrix (test_matrix.py) runs check on every sample in process; through the console
# script a few spread over the list show the same
@pytest.mark.parametrize("sample", BACKWARD_SAMPLES[::24])
def test_check_passes_on_samples_that_call_backward(sample: str) -> None:
    done = cli("check", f"samples/{sample}.tg")
    assert done.returncode == 0, done.stdout + done.stderr


DETACHED = """x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x.detach()
loss = y.sum()
loss.backward()
"""


def test_check_fails_on_a_hidden_detach() -> None:
    bad = check_source(source(DETACHED))
    good = check_source(source(DETACHED.replace("x.detach()", "x")))
    assert good.ok and not bad.ok
    assert bad.leaves[0].report.max_abs_error == pytest.approx(3.0, rel=1e-6)  # x=3: 6 vs 3


def test_check_exits_1_on_failure(tmp_path: Path) -> None:
    prog = tmp_path / "bad.tg"
    prog.write_text(DETACHED)
    done = cli("check", str(prog))
    assert done.returncode == 1 and "FAIL" in done.stdout


# --- repl ---------------------------------------------------------------------------------

def test_repl_prints_expression_values_and_keeps_state() -> None:
    s = Session()
    assert s.submit("x = torch.tensor([1.0, 2.0], requires_grad=True)") == ("", "")
    assert s.submit("x * 2")[0] == "tensor([2., 4.], grad_fn=<MulBackward0>)\n"
    assert s.submit("for i in range(2):\n    print(i)")[0] == "0\n1\n"
    assert s.submit("(x ** 2).sum().backward()") == ("", "")
    assert s.submit("x.grad")[0] == "tensor([2., 4.])\n"
    out, err = s.submit("nope + 1")
    assert out == "" and "1:1: NameError: name 'nope' is not defined" in err
    assert "    nope + 1\n    ^^^^" in err
    assert s.submit("None") == ("", "")


def test_repl_through_the_console_script() -> None:
    done = cli("repl", stdin="x = torch.ones(2)\nx + 1\n")
    assert done.returncode == 0
    assert "tensor([2., 2.])" in done.stdout


def test_interrupt_exits_130_without_traceback() -> None:
    code = ("import io, sys\nfrom autodiff.cli.outcome import guarded\n"
            "def boom():\n    raise KeyboardInterrupt\n"
            "sys.exit(guarded(boom, sys.stderr))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 130 and "Traceback" not in done.stderr


def test_diagnostic_in_colour_on_a_terminal_only(monkeypatch, tmp_path) -> None:
    """On a terminal the error class and the caret are red, the hint yellow; --no-color,
    NO_COLOR or a pipe give the plain text, byte for byte."""
    from autodiff.cli.run import run_path

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    program = tmp_path / "typo.tg"
    program.write_text("import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).backwards()\n")
    plain = io.StringIO()
    assert run_path(str(program), out=io.StringIO(), err=plain) == 1
    text = plain.getvalue()
    assert "AttributeError" in text and "\x1b[" not in text
    coloured = Terminal()
    run_path(str(program), out=io.StringIO(), err=coloured)
    shown = coloured.getvalue()
    assert "\x1b[1;31mAttributeError\x1b[0m" in shown
    caret = shown.splitlines()[2]
    assert caret.startswith("\x1b[1;31m") and "^" in caret
    assert re.sub(r"\x1b\[[0-9;]*m", "", shown) == text
    quiet = Terminal()
    run_path(str(program), out=io.StringIO(), err=quiet, no_color=True)
    assert quiet.getvalue() == text
    monkeypatch.setenv("NO_COLOR", "1")
    off = Terminal()
    run_path(str(program), out=io.StringIO(), err=off)
    assert off.getvalue() == text


def test_rich_decides_colour(monkeypatch) -> None:
    """Colour on a terminal; NO_COLOR turns it off only when non-empty (the convention)."""
    from autodiff.cli.console import draws_in_colour, make_console

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("NO_COLOR", "")
    assert draws_in_colour(make_console(Terminal()))
    assert not draws_in_colour(make_console(Terminal(), no_color=True))
    assert not draws_in_colour(make_console(io.StringIO()))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not draws_in_colour(make_console(Terminal()))
