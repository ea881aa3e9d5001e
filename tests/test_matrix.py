"""Every command on every sample: the documented exit status, and never a traceback.

The whole matrix calls each command's library entry in-process (the console script is a
thin Typer layer over them, and one process per case would take minutes on 2 cores); a
few samples run every command through the installed console script too. Two tests feed a
deliberate crash through each path, to show a traceback is caught both ways.

What each case must do (docs/cli.md, "Exit status"):
- a sample with a NAME.err golden fails: every command exits 1 and shows the program's
  diagnostic (the .err line), as `run --quiet` does;
- otherwise `run` exits 0; `graph` exits 0, or 2 when the program builds no graph;
  `explain` and `check` exit 0, or 2 when the program never calls backward();
- `explain` on a failing program prints the backward steps that ran, ending with a line
  that points at the error; `graph` draws the graph built before the error, marked so;
- stderr holds exactly what `run --quiet` writes there (the program's warnings and its
  diagnostic), plus the command's own line (`wrote FILE (N nodes)`, `autodiff: error: …`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, TextIO

import pytest
from json_schemas import problems as schema_problems
from tiers import sampled, slow

from autodiff.cli import explain as explain_view
from autodiff.cli.check import check_path
from autodiff.cli.explain import explain_path
from autodiff.cli.graph import graph_path
from autodiff.cli.outcome import EXIT_FAILED
from autodiff.cli.run import run_path
from autodiff.interpreter.reference import normalize_addresses
from autodiff.text.i18n import _, language

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "samples").glob("*.tg"))
EXE = shutil.which("autodiff")
HAS_DOT = shutil.which("dot") is not None
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
TRACEBACK = "Traceback (most recent call last)"
SVG = "{tmp}/graph.svg"  # `-o` target; {tmp} is the test's own folder

# The console script runs every command on these: programs that call backward more than
# once (explain crashed on them), one that fails, one without a graph, one with a graph
# but no backward call.
CONSOLE_SAMPLES = ["grad_accumulation", "d2l_nonscalar_sum", "backward_gradient",
                   "error_broadcast_shape", "creation_dtypes", "graph_grad_fn"]


@dataclass(frozen=True)
class Texts:
    """What the commands write about a case, in one language (docs/cli.md's wording)."""

    internal: str  # ends the last-resort line for an exception of ours
    partial: str  # marks a graph drawn before the program's error
    written: str  # starts the line `-o` writes
    written_partial: str  # ends it when the graph is partial
    no_graph: str
    no_backward: dict  # command -> its line when the program never calls backward()
    call: str  # starts each backward call explain shows
    stopped: str  # ends explain's output on a failing program
    checked: str  # ends check's output when every leaf is ok
    check_failed: str  # starts check's last line when a leaf is not
    tensors: str  # the report's heading


@lru_cache(maxsize=None)
def texts(lang: str = "en") -> Texts:
    def before(message: str) -> str:
        return message.split("{")[0]

    def after(message: str) -> str:
        return message.split("}")[-1]

    with language(lang):
        error = _("autodiff: error: {message}")
        return Texts(
            internal=after(_("internal error: {detail}. This is a bug in autodiff, not in the "
                             "program: please report it, with the program file.")),
            partial=before(_("(the graph built before the program stopped with an error: "
                             "{error})")),
            written=before(_("wrote {file} ({count} nodes)")),
            written_partial=after(_("wrote {file} ({count} nodes, built before the program "
                                    "stopped with an error)")) + "\n",
            no_graph=error.format(message=_("no tensor with a grad_fn to draw: the program "
                                            "builds no graph")),
            no_backward={
                "explain": error.format(message=_("the program never calls backward(): nothing "
                                                  "to explain")),
                "check": error.format(message=_("the program never calls backward(): nothing "
                                                "to check"))},
            call=before(_(explain_view.CALL)),
            stopped=after(_(explain_view.STOPPED)),
            checked=os.path.commonprefix([after(_("the leaf {name} is ok"))[::-1],
                                          after(_("all {count} leaves ok"))[::-1]])[::-1],
            tensors=_("tensors"),
            check_failed=before(_("FAILED: {names} (tolerance rtol={rtol:g}, atol={atol:g}).")))


@dataclass(frozen=True)
class Command:
    args: tuple[str, ...]  # after `autodiff`, before FILE
    call: Callable[[str, TextIO, TextIO, str], int]  # (file, out, err, tmp) -> exit status
    needs: str | None  # what the program must have for exit 0: "graph", "backward" or None
    drawn: Callable[[str, str, Texts], bool] | None = None  # (stdout, tmp, texts): sane output


def _svg_written(tmp: str) -> bool:
    path = Path(SVG.format(tmp=tmp))
    return path.exists() and b"<svg" in path.read_bytes()[:2000]


COMMANDS: dict[str, Command] = {
    "run": Command(("run",), lambda f, o, e, t: run_path(f, out=o, err=e, no_color=True), None),
    "run --json": Command(("run", "--json"),
                          lambda f, o, e, t: run_path(f, out=o, err=e, as_json=True), None),
    "graph": Command(("graph",), lambda f, o, e, t: graph_path(f, out=o, err=e, no_color=True),
                     "graph", lambda out, t, x: "AccumulateGrad" in out),
    "graph -f dot": Command(("graph", "-f", "dot"),
                            lambda f, o, e, t: graph_path(f, fmt="dot", out=o, err=e),
                            "graph", lambda out, t, x: out.startswith("digraph autograd {")),
    "graph -f mermaid": Command(("graph", "-f", "mermaid"),
                                lambda f, o, e, t: graph_path(f, fmt="mermaid", out=o, err=e),
                                "graph", lambda out, t, x: out.startswith("flowchart TD\n")),
    "graph -f json": Command(("graph", "-f", "json"),
                             lambda f, o, e, t: graph_path(f, fmt="json", out=o, err=e),
                             "graph", lambda out, t, x: not schema_problems(json.loads(out),
                                                                          "graph")),
    "graph -o x.svg": Command(("graph", "-o", SVG),
                              lambda f, o, e, t: graph_path(f, output=SVG.format(tmp=t), out=o,
                                                            err=e),
                              "graph", lambda out, t, x: out == "" and _svg_written(t)),
    "explain": Command(("explain",), lambda f, o, e, t: explain_path(f, out=o, err=e,
                                                                     no_color=True),
                       "backward", lambda out, t, x: out.startswith(x.call)),
    "check": Command(("check",), lambda f, o, e, t: check_path(f, out=o, err=e, no_color=True),
                     "backward", lambda out, t, x: out.rstrip().endswith(x.checked)),
}


@dataclass
class Outcome:
    status: int | None  # None when an exception escaped
    stdout: str
    stderr: str
    escaped: str | None = None  # the traceback of an exception that left the command


@dataclass
class Baseline:
    """What the program itself does: `run --quiet`'s stderr, and the run report."""

    stderr: str
    fails: bool
    backward_calls: int
    builds_graph: bool
    status: int = 0  # `run --quiet`'s: 2 for a program autodiff refuses (not supported)


@lru_cache(maxsize=None)
def baseline(sample: Path, lang: str = "en") -> Baseline:
    out, err = io.StringIO(), io.StringIO()
    with language(lang):  # the hints after a diagnostic are in the case's language
        status = run_path(str(sample), quiet=True, out=out, err=err)
    report_out = io.StringIO()
    run_path(str(sample), as_json=True, out=report_out, err=io.StringIO())
    report = json.loads(report_out.getvalue())
    return Baseline(err.getvalue(), sample.with_suffix(".err").exists(), report["backward_calls"],
                    report["backward_calls"] > 0 or any(t["grad_fn"] for t in report["tensors"]),
                    status)


def in_process(sample: Path, command: Command, tmp: Path) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    try:
        status = command.call(str(sample), out, err, str(tmp))
    except Exception:  # what the console script would print as a traceback
        return Outcome(None, out.getvalue(), err.getvalue(), traceback.format_exc())
    return Outcome(status, out.getvalue(), err.getvalue())


def console(sample: Path, command: Command, tmp: Path) -> Outcome:
    args = [a.format(tmp=tmp) for a in command.args]
    done = subprocess.run([EXE, *args, str(sample)], capture_output=True, text=True, env=ENV,
                          cwd=ROOT, timeout=300)
    return Outcome(done.returncode, done.stdout, done.stderr)


def problems(sample: Path, name: str, got: Outcome, tmp: Path, lang: str = "en",
             command: Command | None = None, mismatch: bool = False) -> list[str]:
    """What is wrong with one case (empty: it did what the docs say), run in `lang`;
    `command` when it is not COMMANDS[name]; `mismatch`: check may report one (exit 1)."""
    found = []
    said = texts(lang)
    if got.escaped is not None:
        return [f"an internal exception escaped:\n{got.escaped}"]
    if TRACEBACK in got.stderr or TRACEBACK in got.stdout:
        return [f"a Python traceback:\n{got.stderr[-3000:]}"]
    if said.internal in got.stderr:  # the last-resort catch turned an exception of ours into a line
        return [f"an internal error:\n{got.stderr[-3000:]}"]
    command = command or COMMANDS[name]
    base = baseline(sample, lang)
    if not base.fails and base.status == 2:  # a construct autodiff refuses: every command says so
        if got.status != 2 or not got.stderr.startswith(base.stderr):
            found.append(f"exit status {got.status} and stderr {got.stderr[-1000:]!r}, "
                         f"expected {base.status} and {base.stderr!r}")
        return found
    if base.fails:
        want_status, tail = 1, ""
        golden_error = sample.with_suffix(".err").read_text(encoding="utf-8").strip()
        if golden_error not in got.stderr:
            found.append(f"the program's error {golden_error!r} is not on stderr")
    elif command.needs == "graph" and not base.builds_graph:
        want_status, tail = 2, said.no_graph
    elif command.needs == "backward" and base.backward_calls == 0:
        want_status, tail = 2, said.no_backward[name]
    else:
        want_status, tail = 0, said.written if "-o" in command.args else ""
    if got.status != want_status:
        found.append(f"exit status {got.status}, documented: {want_status}")
    if not got.stderr.startswith(base.stderr):
        found.append(f"stderr does not start with the program's own stderr {base.stderr!r}")
    extra = got.stderr[len(base.stderr):]
    if base.fails and "-o" in command.args and extra.endswith(said.written_partial):
        tail = said.written  # the graph built before the error was written
    if not (extra.startswith(tail) and extra.count("\n") == (1 if tail else 0)):
        wanted = f"one line starting {tail!r}" if tail else "nothing"
        found.append(f"stderr after the program's own: {extra!r}, expected {wanted}")
    if mismatch and name == "check" and want_status == 0 and got.status == EXIT_FAILED and \
            got.stdout.rstrip().rsplit("\n", 1)[-1].startswith(said.check_failed):
        return [p for p in found if not p.startswith("exit status")]  # a verdict, documented
    return found + output_problems(sample, name, want_status, got.stdout, tmp, lang, command)


def output_problems(sample: Path, name: str, status: int, stdout: str, tmp: Path,
                    lang: str = "en", command: Command | None = None) -> list[str]:
    """`run` prints the program's output (PyTorch's, byte for byte) before its report; a
    view prints its drawing when it succeeds and nothing otherwise, except `explain` on a
    failing program, which shows the backward steps that ran before the error."""
    base, said = baseline(sample, lang), texts(lang)
    golden_out = sample.with_suffix(".out").read_text(encoding="utf-8")
    if name == "run":
        text = normalize_addresses(stdout)
        report = text[len(golden_out):]
        if not text.startswith(golden_out):
            return ["stdout does not start with the program's golden output"]
        if report and not (status == 0 and report.startswith("\n")
                           and f" {said.tensors} " in report):
            return [f"after the program's output, not a report:\n{report[:1000]}"]
        return []
    if name == "run --json":
        try:
            document = json.loads(stdout)
        except ValueError as exc:
            return [f"stdout is not one JSON document ({exc}):\n{stdout[:1000]}"]
        found = schema_problems(document, "run")
        if document.get("exit_code") != status:
            found.append(f"exit_code {document.get('exit_code')} in the document")
        if normalize_addresses(document.get("output") or "") != golden_out:
            found.append("the document's output is not the program's golden output")
        return found
    if status != 0 and name.startswith("graph") and base.fails and stdout:
        # the graph built before the error, marked so in every format
        if said.partial in stdout or (name == "graph -f json" and json.loads(stdout).get("error")):
            return []
        return [f"a graph of a failing program not marked as partial:\n{stdout[:1000]}"]
    if status != 0 and name == "explain" and base.fails:
        # the steps up to the failure, then one line pointing at the error on stderr
        if stdout.rstrip().endswith(said.stopped):
            return []
        return [f"explain of a failing program does not end at the error:\n{stdout[-1000:]}"]
    if status != 0:
        return [] if stdout == "" else [f"output from a view that failed:\n{stdout[:1000]}"]
    try:
        ok = (command or COMMANDS[name]).drawn(stdout, str(tmp), said)
    except ValueError as exc:  # not JSON
        ok, stdout = False, f"{stdout[:1000]}\n({exc})"
    return [] if ok else [f"unexpected output:\n{stdout[:1000]}"]


# Each sample meets two commands, chosen by a rotation so that every command meets about as
# many samples as the others: the fast tier runs the first, the slow tier the second (every
# command on every sample cost 1,700 cases and found nothing the rotation misses: the
# commands share their code paths, and test_matrix_modes rotates again in other modes).
ROTATION = [(sample, name, tier) for j, sample in enumerate(SAMPLES)
            for tier, name in enumerate((list(COMMANDS)[j % len(COMMANDS)],
                                         list(COMMANDS)[(j + 4) % len(COMMANDS)]))]
MATRIX = sampled([(sample, name) for sample, name, _ in ROTATION],
                 lambda i, case: ROTATION[i][2] == 0, ids=lambda case: f"{case[0].stem}-{case[1]}")


@pytest.mark.parametrize("case", MATRIX)
def test_command_on_sample(case: tuple[Path, str], tmp_path: Path) -> None:
    sample, name = case
    if "-o" in COMMANDS[name].args and not HAS_DOT:
        pytest.skip("Graphviz's dot is not installed")
    found = problems(sample, name, in_process(sample, COMMANDS[name], tmp_path), tmp_path)
    assert not found, f"autodiff {name} {sample.name}: " + "; ".join(found)


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
@pytest.mark.parametrize("sample", sampled(CONSOLE_SAMPLES, lambda i, _: i % 3 == 0))
def test_console_script_on_sample(sample: str, tmp_path: Path) -> None:
    path = ROOT / "samples" / f"{sample}.tg"
    found = []
    for name, command in COMMANDS.items():
        if "-o" in command.args and not HAS_DOT:
            continue
        found += [f"autodiff {name}: {p}" for p in problems(path, name,
                                                             console(path, command, tmp_path),
                                                             tmp_path)]
    assert not found, "\n".join(found)


def test_console_samples_cover_each_expectation() -> None:
    """The console samples reach every documented status: 0, 1, and 2 for each view."""
    bases = [baseline(ROOT / "samples" / f"{s}.tg") for s in CONSOLE_SAMPLES]
    assert any(b.fails for b in bases)
    assert any(not b.fails and not b.builds_graph for b in bases)
    assert any(not b.fails and b.builds_graph and b.backward_calls == 0 for b in bases)
    assert any(not b.fails and b.backward_calls > 1 for b in bases)


# --- the checker itself catches a crash -------------------------------------------------

def _boom(*args, **kwargs):
    raise ValueError("an internal bug")


def test_a_crash_in_process_is_reported(monkeypatch, tmp_path: Path) -> None:
    import autodiff.cli.explain as explain

    monkeypatch.setattr(explain, "explain_trace", _boom)
    sample = ROOT / "samples" / "seed_scalar_derivative.tg"
    found = problems(sample, "explain", in_process(sample, COMMANDS["explain"], tmp_path), tmp_path)
    assert found and found[0].startswith("an internal error") and "an internal bug" in found[0]


def test_a_crash_in_a_process_is_reported(tmp_path: Path) -> None:
    """The same crash in a process started like the console script: one internal-error line
    (the last-resort catch), caught as the crash it is."""
    sample = ROOT / "samples" / "seed_scalar_derivative.tg"
    code = ("import sys\nimport autodiff.cli.explain as explain\n"
            "def boom(*a, **k):\n    raise ValueError('an internal bug')\n"
            "explain.explain_trace = boom\n"
            "from autodiff.cli.main import app\n"
            f"sys.argv = ['autodiff', 'explain', {str(sample)!r}]\napp()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV,
                          cwd=ROOT, timeout=120)
    found = problems(sample, "explain", Outcome(done.returncode, done.stdout, done.stderr),
                     tmp_path)
    assert found and found[0].startswith("an internal error") and "an internal bug" in found[0]
    assert TRACEBACK not in done.stderr


def test_a_wrong_exit_status_is_reported(tmp_path: Path) -> None:
    sample = ROOT / "samples" / "seed_no_grad.tg"  # never calls backward: explain exits 2
    assert baseline(sample).backward_calls == 0
    found = problems(sample, "explain", Outcome(0, "", ""), tmp_path)
    assert any("exit status 0, documented: 2" in p for p in found)


def test_explain_numbers_the_call_it_explains() -> None:
    """Among several backward calls: those on --root, counted by position."""
    from autodiff.cli.explain import explain_lines
    from autodiff.cli.source import load_source

    sample = str(ROOT / "samples" / "grad_accumulation.tg")  # y twice, then z twice
    on_y = [line for line in explain_lines(load_source(sample), "y")
            if line.startswith("backward() call")]
    assert on_y == ["backward() call 1 of 4, on y [] = tensor(14.)",
                    "backward() call 2 of 4, on y [] = tensor(14.)"]
    assert explain_lines(load_source(sample), call=4)[0].startswith("backward() call 4 of 4, on z ")
