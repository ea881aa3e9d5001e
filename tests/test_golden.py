"""`autodiff test`: discovery, comparison, reports and --update, through its library
(autodiff.cli.golden) and, where the command line matters, through the console script."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tiers import slow
from json_schemas import problems

from autodiff.cli import golden
from autodiff.cli.guard import GRACE, ProcessLimits
from autodiff.cli.outcome import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from autodiff.interpreter.reference import torch_available

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
EXAMPLE = ROOT / "docs" / "examples" / "golden"
EXE = shutil.which("autodiff")
ENV = {**os.environ, "NO_COLOR": "1"}


def _copy(folder: Path, *names: str) -> Path:
    """Copy samples (NAME.tg with its .out/.err) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        for path in SAMPLES.glob(f"{name}.*"):
            shutil.copy(path, folder / path.name)
    return folder


def _run(paths, **options) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = golden.golden_tests([str(p) for p in paths], out=out, err=err, **options)
    return code, out.getvalue(), err.getvalue()


# --- discovery ---------------------------------------------------------------------

def test_discover_walks_folders_in_order_and_leaves_hidden_ones_out(tmp_path):
    for rel in ("b.tg", "a.tg", "sub/c.tg", ".hidden/d.tg", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("print(1)\n")
    found = [p.relative_to(tmp_path).as_posix() for p in golden.discover([str(tmp_path)])]
    assert found == ["a.tg", "b.tg", "sub/c.tg"]
    again = golden.discover([str(tmp_path / "b.tg"), str(tmp_path)])
    assert len(again) == 3 and again[0].name == "b.tg"


def test_missing_path_and_empty_folder_are_usage_errors(tmp_path):
    code, _, err = _run([tmp_path / "nope"])
    assert code == EXIT_USAGE and "no such file or folder" in err
    code, _, err = _run([tmp_path])
    assert code == EXIT_USAGE and "no .tg programs" in err
    assert _run([SAMPLES], jobs=0)[0] == EXIT_USAGE


# --- passing, failing, skipping ------------------------------------------------------

@slow
def test_samples_pass_with_one_and_two_jobs():
    programs = golden.discover([str(SAMPLES)])
    assert len(programs) >= 60
    one, two = golden.run_suite(programs, jobs=1), golden.run_suite(programs, jobs=2)
    assert one.ok and two.ok
    assert [(r.program, r.status) for r in one.results] == \
           [(r.program, r.status) for r in two.results]


def test_changed_expected_file_fails_with_a_readable_diff(tmp_path):
    folder = _copy(tmp_path / "t", "seed_scalar_derivative", "retain_grad")
    out_file = folder / "seed_scalar_derivative.out"
    out_file.write_text(out_file.read_text().replace("tensor(8.)", "tensor(7.)"))
    code, out, _ = _run([folder], jobs=2)
    assert code == EXIT_FAILED
    lines = out.splitlines()
    assert lines[0] == (f"FAILED {folder}/seed_scalar_derivative.tg: stdout differs from "
                        f"{out_file}")
    assert "-tensor(7.)" in lines and "+tensor(8.)" in lines
    assert " tensor(9., grad_fn=<AddBackward0>)" in lines  # context
    assert "\x1b[" not in out  # plain when not a terminal
    assert lines[-1] == "1 passed, 1 failed"


def test_error_line_is_compared_and_output_before_it_too(tmp_path):
    folder = _copy(tmp_path, "backward_twice_error", "error_name", "seed_scalar_derivative")
    (folder / "error_name.err").write_text("NameError: name 'total' is not defined\n")
    (folder / "backward_twice_error.out").write_text("something else\n")
    (folder / "seed_scalar_derivative.err").write_text("RuntimeError: boom\n")
    suite = golden.run_suite(golden.discover([str(folder)]), jobs=1)
    reasons = {Path(r.program).stem: r.reason for r in suite.results}
    assert reasons["backward_twice_error"].startswith("stdout differs")
    assert reasons["error_name"].startswith("error differs")
    assert "ran to the end" in reasons["seed_scalar_derivative"]
    diff = next(r.diff for r in suite.results if r.program.endswith("error_name.tg"))
    assert "-NameError: name 'total' is not defined\n" in diff
    assert "+NameError: name 'totl' is not defined\n" in diff


def test_unexpected_error_fails(tmp_path):
    folder = _copy(tmp_path, "error_name")
    (folder / "error_name.err").unlink()
    result = golden.check_program(folder / "error_name.tg")
    assert result.status == golden.FAILED
    assert result.reason.startswith("raised NameError, but there is no")


def test_programs_without_expected_files_are_skipped(tmp_path):
    folder = _copy(tmp_path, "seed_scalar_derivative")
    (folder / "new.tg").write_text("print(1)\n")
    code, out, _ = _run([folder], jobs=1)
    assert code == EXIT_OK
    assert out.splitlines()[-1] == "1 passed, 0 failed, 1 skipped"


def test_addresses_are_normalized(tmp_path):
    (tmp_path / "addr.tg").write_text("x = torch.ones(1, requires_grad=True)\n"
                                      "print((2 * x).grad_fn)\n")
    (tmp_path / "addr.out").write_text("<MulBackward0 object at 0xADDR>\n")
    assert golden.check_program(tmp_path / "addr.tg").status == golden.PASSED


def test_a_program_that_runs_too_long_fails_alone(tmp_path):
    (tmp_path / "loop.tg").write_text("while True:\n    pass\n")
    (tmp_path / "loop.out").write_text("")
    _copy(tmp_path, "seed_scalar_derivative")
    suite = golden.run_suite(golden.discover([str(tmp_path)]), jobs=2, timeout=0.5)
    by_stem = {Path(r.program).stem: r for r in suite.results}
    assert by_stem["loop"].status == golden.FAILED and "TimeoutError" in by_stem["loop"].diff
    assert by_stem["seed_scalar_derivative"].status == golden.PASSED


def test_missing_final_newline_is_shown():
    diff = golden.unified_diff("a\nb", "a\nb\n", "x.out", "x.tg")
    assert "\\ No newline at end of file" in diff


def test_colour_only_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    folder = _copy(tmp_path, "seed_scalar_derivative")
    (folder / "seed_scalar_derivative.out").write_text("wrong\n")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    assert golden.golden_tests([str(folder)], jobs=1, out=out, err=io.StringIO()) == EXIT_FAILED
    assert "\x1b[" in out.getvalue()
    assert out.getvalue().splitlines()[-1] == "0 passed, 1 failed"
    plain = Terminal()
    golden.golden_tests([str(folder)], jobs=1, out=plain, err=io.StringIO(), no_color=True)
    assert "\x1b[" not in plain.getvalue()


# --- reports -----------------------------------------------------------------------

# The common JUnit schema (Jenkins' junit-10.xsd): element -> (allowed attributes,
# required attributes, allowed children in order).
JUNIT = {
    "testsuites": ({"name", "time", "tests", "failures", "disabled", "errors", "skipped"}, set(),
                   ["testsuite"]),
    "testsuite": ({"name", "tests", "failures", "errors", "time", "disabled", "skipped",
                   "timestamp", "hostname", "id", "package"}, {"name", "tests"},
                  ["properties", "testcase", "system-out", "system-err"]),
    "testcase": ({"name", "assertions", "time", "classname", "status"}, {"name"},
                 ["skipped", "error", "failure", "system-out", "system-err"]),
    "failure": ({"type", "message"}, set(), []),
    "skipped": ({"message"}, set(), []),
    "system-err": (set(), set(), []),
}


def _conforms(element: ET.Element) -> None:
    allowed, required, children = JUNIT[element.tag]
    assert set(element.attrib) <= allowed, (element.tag, element.attrib)
    assert required <= set(element.attrib), element.tag
    order = [children.index(child.tag) for child in element]  # ValueError: not allowed here
    assert order == sorted(order), element.tag
    for child in element:
        _conforms(child)


def test_junit_xml_follows_the_schema_and_counts(tmp_path):
    folder = _copy(tmp_path / "t", "seed_scalar_derivative", "retain_grad", "error_name")
    (folder / "retain_grad.out").write_text("changed\x1b[0m\n")  # a control character
    (folder / "extra.tg").write_text("print(2)\n")
    report = tmp_path / "report.xml"
    code, _, _ = _run([folder], jobs=2, junit_xml_path=str(report))
    assert code == EXIT_FAILED
    root = ET.parse(report).getroot()
    _conforms(root)
    suite = root.find("testsuite")
    for node in (root, suite):
        assert (node.get("tests"), node.get("failures"), node.get("errors"),
                node.get("skipped")) == ("4", "1", "0", "1")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"seed_scalar_derivative.tg", "retain_grad.tg", "error_name.tg",
                          "extra.tg"}
    assert cases["retain_grad.tg"].find("failure").get("message").startswith("stdout differs")
    assert "-changed" in cases["retain_grad.tg"].find("failure").text
    assert cases["extra.tg"].find("skipped") is not None
    assert list(cases["seed_scalar_derivative.tg"]) == []
    assert all(float(case.get("time")) >= 0 for case in cases.values())
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".autodiff-")] == []


def test_json_summary(tmp_path):
    folder = _copy(tmp_path, "seed_scalar_derivative", "error_name")
    (folder / "error_name.err").write_text("NameError: x\n")
    code, out, _ = _run([folder], jobs=1, as_json=True)
    doc = json.loads(out)
    assert code == EXIT_FAILED and problems(doc, "test") == []
    assert (doc["schema"], doc["passed"], doc["failed"], doc["skipped"]) == \
           ("autodiff.test/1", 1, 1, 0)
    failed = [r for r in doc["results"] if r["status"] == "failed"]
    assert failed[0]["program"].endswith("error_name.tg") and "+NameError" in failed[0]["diff"]


# --- writing expected files ----------------------------------------------------------

def test_update_writes_from_autodiff_after_a_warning(tmp_path):
    folder = _copy(tmp_path, "seed_scalar_derivative", "error_name")
    want_out = (folder / "seed_scalar_derivative.out").read_bytes()
    (folder / "seed_scalar_derivative.out").write_text("stale\n")
    (folder / "seed_scalar_derivative.err").write_text("RuntimeError: stale\n")
    (folder / "new.tg").write_text("print(3)\n")
    code, out, err = _run([folder], update=True, jobs=2)
    assert code == EXIT_OK
    assert "goldens should come from a reference" in err
    assert (folder / "seed_scalar_derivative.out").read_bytes() == want_out
    assert not (folder / "seed_scalar_derivative.err").exists()
    assert (folder / "new.out").read_text() == "3\n"
    assert out.splitlines()[-1] == "2 updated, 1 unchanged"
    assert _run([folder], jobs=1)[0] == EXIT_OK


def test_check_mode_lists_without_writing(tmp_path):
    folder = _copy(tmp_path, "error_name")
    (folder / "error_name.err").unlink()
    [result] = golden.update_expected([folder / "error_name.tg"], reference="autodiff",
                                      check=True, jobs=1)
    assert result.changes == [(str(folder / "error_name.err"), "missing")]
    assert not (folder / "error_name.err").exists()


def test_reports_do_not_combine_with_update(tmp_path):
    assert _run([SAMPLES], update=True, as_json=True)[0] == EXIT_USAGE
    assert _run([SAMPLES], reference="pytorch")[0] == EXIT_USAGE


@pytest.mark.skipif(not torch_available(), reason="torch is not installed")
def test_reference_torch_regenerates_the_goldens_byte_for_byte(tmp_path):
    names = ["seed_scalar_derivative", "backward_twice_error", "error_assert", "retain_grad"]
    for name in names:
        shutil.copy(SAMPLES / f"{name}.tg", tmp_path / f"{name}.tg")
    code, out, _ = _run([tmp_path], reference="torch", jobs=2)
    assert code == EXIT_OK, out
    for name in names:
        for suffix in (".out", ".err"):
            ours, made = SAMPLES / f"{name}{suffix}", tmp_path / f"{name}{suffix}"
            assert made.exists() == ours.exists(), made.name
            if ours.exists():
                assert made.read_bytes() == ours.read_bytes(), made.name


# --- the worked example and the command line ----------------------------------------

def test_the_worked_example_passes():
    suite = golden.run_suite(golden.discover([str(EXAMPLE)]), jobs=1)
    assert suite.ok and suite.count(golden.PASSED) >= 3 and suite.count(golden.SKIPPED) == 0
    assert any(Path(r.program).with_suffix(".err").exists() for r in suite.results)


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_console_script(tmp_path):
    folder = _copy(tmp_path / "t", "seed_scalar_derivative", "error_name")
    done = subprocess.run([EXE, "test", str(folder), "-j", "2"], capture_output=True,
                          text=True, env=ENV, timeout=120)
    assert done.returncode == 0 and done.stdout == "2 passed, 0 failed\n", done.stderr
    (folder / "error_name.out").write_text("nothing\n")
    report = tmp_path / "r.xml"
    done = subprocess.run([EXE, "test", str(folder), "--junit-xml", str(report)],
                          capture_output=True, text=True, env=ENV, timeout=120)
    assert done.returncode == 1 and done.stdout.splitlines()[-1] == "1 passed, 1 failed"
    assert "-nothing" in done.stdout and done.stderr == ""
    assert ET.parse(report).getroot().get("failures") == "1"


def _die_on_b(program: Path) -> golden.CaseResult:
    if program.name == "b.tg":
        os._exit(3)  # a child gone mid-run without a result
    if program.name == "c.tg":
        os.kill(os.getpid(), signal.SIGSEGV)  # a crash in a library
    if program.name == "d.tg":
        sum(range(10**15))  # a loop in C: only the watching parent can stop it
    return golden.CaseResult(str(program), golden.PASSED)


def test_a_dying_child_fails_its_program_and_the_run_goes_on():
    programs = [Path(f"{name}.tg") for name in "abcde"]
    start = time.monotonic()
    results = golden._pool_map(_die_on_b, programs, 2, lambda: None, golden._failed,
                               ProcessLimits(1.0, None), lambda d: golden.CaseResult(**d))
    assert time.monotonic() - start < 1.0 + GRACE + 5
    assert [r.program for r in results] == [f"{name}.tg" for name in "abcde"]
    assert [r.status for r in results] == [golden.PASSED] + [golden.FAILED] * 3 + [golden.PASSED]
    assert "without a result" in results[1].reason
    assert "internal error" in results[2].reason and "SIGSEGV" in results[2].reason
    assert results[3].reason.startswith("TimeoutError: the program ran longer than 1 s")


# --- a student's folder: names, depths and files of every kind ------------------------------

def _cli(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    done = subprocess.run([EXE, *map(str, args)], capture_output=True, timeout=120, cwd=cwd,
                          env={**ENV, **(env or {})})
    done.out, done.err = done.stdout.decode(), done.stderr.decode()
    assert "Traceback" not in done.err and "internal error" not in done.err, done.err
    return done


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_file_names_no_report_can_hold_as_they_are(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    for name in (b"ctl\x01", b"bad\xff", b"good"):  # a control character, bytes not UTF-8
        (folder / os.fsdecode(name + b".tg")).write_text("print(1)\n")
        (folder / os.fsdecode(name + b".out")).write_text("1\n" if name == b"good" else "2\n")
    report = tmp_path / "r.xml"
    done = _cli("test", "t", "--junit-xml", report, cwd=tmp_path,
                env={"PYTHONIOENCODING": "utf-8:strict"})  # as under a UTF-8 locale
    assert done.returncode == EXIT_FAILED
    assert "FAILED t/bad\\udcff.tg: stdout differs from t/bad\\udcff.out\n" in done.out
    assert "FAILED t/ctl\\x01.tg: stdout differs from t/ctl\\x01.out\n" in done.out
    assert done.out.endswith("1 passed, 2 failed\n") and "\x01" not in done.out
    root = ET.parse(report).getroot()  # well-formed, whatever the names
    _conforms(root)
    assert sorted(case.get("name") for case in root.iter("testcase")) == \
        ["bad\\udcff.tg", "ctl\\x01.tg", "good.tg"]
    document = json.loads(_cli("test", "t", "--json", cwd=tmp_path).out)
    assert problems(document, "test") == []
    assert sorted(r["program"] for r in document["results"]) == \
        ["t/bad\\udcff.tg", "t/ctl\\x01.tg", "t/good.tg"]


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_a_folder_1500_levels_deep_and_a_link_loop(tmp_path):
    deep = tmp_path
    for _ in range(1500):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "p.tg").write_text("print(1)\n")
    (deep / "p.out").write_text("1\n")
    (tmp_path / "loop").symlink_to(tmp_path)  # a link is never walked: no loop
    (tmp_path / "d" / "up").symlink_to("..")
    start = time.monotonic()
    try:
        done = _cli("test", ".", cwd=tmp_path)
        assert done.returncode == EXIT_OK and done.out == "1 passed, 0 failed\n", done.err
        assert time.monotonic() - start < 60
    finally:  # bottom up: pytest's own clean-up of old tmp folders recurses, 1,500 deep
        while deep != tmp_path:
            for entry in deep.iterdir():  # the folder below is gone: files and links
                entry.unlink()
            deep.rmdir()
            deep = deep.parent


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_a_golden_that_is_not_a_regular_file_is_never_read_nor_written(tmp_path):
    secret = tmp_path / "secret.txt"  # what a link may point at: the teacher's files
    secret.write_text("root:x:0:0:secret\n")
    folder = tmp_path / "t"
    folder.mkdir()
    for name in "pqrs":
        (folder / f"{name}.tg").write_text("print(1)\n")
    (folder / "p.out").symlink_to(secret)
    (folder / "q.out").symlink_to(tmp_path / "nowhere")  # dangling: --update must not create it
    os.mkfifo(folder / "r.out")  # opening it would wait for a writer forever
    (folder / "s.out").write_text("1\n")
    (folder / "s.tg").unlink()
    (folder / "s.tg").symlink_to(secret)  # the program itself
    done = _cli("test", "t", "--timeout", "5", cwd=tmp_path)
    assert done.returncode == EXIT_FAILED and "secret" not in done.out, done.out
    assert "FAILED t/p.tg: t/p.out is a symbolic link, not a regular file" in done.out
    assert "FAILED t/q.tg: t/q.out is a symbolic link, not a regular file" in done.out
    assert "FAILED t/r.tg: t/r.out is a FIFO, not a regular file" in done.out
    assert "FAILED t/s.tg: t/s.tg is a symbolic link, not a regular file" in done.out
    assert done.out.endswith("0 passed, 4 failed\n")
    done = _cli("test", "t", "--update", cwd=tmp_path)
    assert done.returncode == EXIT_FAILED and done.out.endswith("0 updated, 0 unchanged, 4 failed\n")
    assert secret.read_text() == "root:x:0:0:secret\n" and not (tmp_path / "nowhere").exists()
    assert (folder / "p.out").is_symlink() and (folder / "q.out").is_symlink()
