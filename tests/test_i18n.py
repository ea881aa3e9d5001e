"""autodiff in Chinese: the catalog (fresh, complete, compiled), how the language is chosen
(--lang, LC_ALL/LC_MESSAGES/LANG, one context per thread), and what never changes with it
(PyTorch's messages, the program's output, the JSON documents)."""

from __future__ import annotations

import ast
import gettext
import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_catalog  # noqa: E402

from autodiff.cli.run import run_path  # noqa: E402
from autodiff.text import i18n  # noqa: E402
from autodiff.text.display import text_width  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXE = shutil.which("autodiff")
SAMPLE = ROOT / "samples" / "seed_scalar_derivative.tg"
ENV = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANG",
                                                         "AUTODIFF_HINTS")}
ENV.update({"NO_COLOR": "1", "COLUMNS": "80"})
needs_cli = pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
NON_SCALAR = ("import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\n"
              "print(y)\ny.backward()\n")


def cli(*args, env=None, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True,
                          env={**ENV, **(env or {})}, cwd=cwd, timeout=120)


def fields(text: str) -> list[str]:
    return sorted(re.findall(r"\{[^{}]*\}", text))


# ------------------------------------------------------------ the catalog

def test_the_committed_mo_is_what_the_script_compiles_from_the_po():
    po = make_catalog.read_po(make_catalog.PO.read_text(encoding="utf-8"))
    assert make_catalog.MO.read_bytes() == make_catalog.compile_mo(po)


def test_the_po_holds_exactly_the_messages_of_the_source():
    in_source = set(make_catalog.extract())
    in_po = set(make_catalog.read_po(make_catalog.PO.read_text(encoding="utf-8")))
    assert not in_source - in_po, f"missing: run python tests/make_catalog.py: {in_source - in_po}"
    assert not in_po - in_source, f"stale: run python tests/make_catalog.py: {in_po - in_source}"
    assert len(in_source) >= 250  # the walk sees the messages (not an empty extraction)


def test_every_message_has_a_chinese_translation_with_the_same_fields():
    po = make_catalog.read_po(make_catalog.PO.read_text(encoding="utf-8"))
    for msgid, msgstr in po.items():
        assert msgstr.strip(), f"no translation: {msgid!r}"
        assert fields(msgstr) == fields(msgid), (msgid, msgstr)
        if len(re.findall(r"[a-z]{3,}", msgid)) >= 3 and "Example" not in msgid[:8]:
            assert any(text_width(ch) == 2 for ch in msgstr), f"not Chinese: {msgstr!r}"


def test_the_extraction_finds_each_kind_of_message_and_only_those():
    tree = ast.parse('_("a sentence")\nN_("a help text")\nOp("neg", explain="a rule")\n'
                     '_(f"not {this}")\nprint("nor this")\n')
    assert make_catalog.messages_in(tree) == ["a sentence", "a help text", "a rule"]


def test_the_mo_writer_makes_what_gettext_reads(tmp_path):
    path = tmp_path / "x.mo"
    path.write_bytes(make_catalog.compile_mo({"leaf": "叶子节点", "b\nc {x}": "乙\n丙 {x}",
                                              "untranslated": ""}))
    with open(path, "rb") as handle:
        catalog = gettext.GNUTranslations(handle)
    assert catalog.gettext("leaf") == "叶子节点"
    assert catalog.gettext("b\nc {x}") == "乙\n丙 {x}"
    assert catalog.gettext("untranslated") == "untranslated"


def test_the_po_reader_reads_what_the_writer_writes():
    messages = {"one": ["a.py"], 'with "quotes" and \\ and\nlines\n': ["b.py"], "{x} y": ["c.py"]}
    text = make_catalog.write_po(messages, {"one": "一", "{x} y": "{x} 乙"})
    assert make_catalog.read_po(text) == {"one": "一", 'with "quotes" and \\ and\nlines\n': "",
                                          "{x} y": "{x} 乙"}


def test_the_installed_catalog_translates():
    with i18n.language("zh"):
        assert i18n._("leaf") == "叶子节点" and i18n._("hint: ") == "提示："
        assert i18n._("a sentence no catalog has") == "a sentence no catalog has"
    with i18n.language("en"):
        assert i18n._("leaf") == "leaf"


# ------------------------------------------------------------ choosing the language

@pytest.mark.parametrize("environ, expected", [
    ({}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_TW.UTF-8"}, "zh"),
    ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C.UTF-8"}, "en"),  # LC_ALL first, as gettext reads it
    ({"LC_ALL": "zh_CN", "LC_MESSAGES": "en_US", "LANG": "en_US"}, "zh"),
    ({"LC_ALL": "", "LANG": "zh_SG"}, "zh"),  # an empty variable is not set
])
def test_the_environment_chooses_as_gettext_does(environ, expected):
    assert i18n.from_environment(environ) == expected


def test_language_names_are_normalized():
    assert [i18n.normalize(x) for x in ("zh", "zh_CN", "zh-Hans", "ZH_tw.UTF-8", "en", "EN_us")] \
        == ["zh", "zh", "zh", "zh", "en", "en"]
    with pytest.raises(ValueError):
        i18n.normalize("fr")
    with pytest.raises(ValueError):
        i18n.normalize("zhx")


def test_the_choice_holds_inside_the_block_and_is_undone_after(monkeypatch):
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert i18n.current() == "zh"
    with i18n.language("en"):
        assert i18n.current() == "en"
        with i18n.language("zh"):
            assert i18n.current() == "zh"
        assert i18n.current() == "en"
    assert i18n.current() == "zh"


def _hint_of(path: Path) -> str:
    err = io.StringIO()
    run_path(str(path), quiet=True, out=io.StringIO(), err=err)
    return err.getvalue().splitlines()[-1]


def test_threads_running_programs_keep_their_own_language(tmp_path):
    path = tmp_path / "nonscalar.tg"
    path.write_text(NON_SCALAR, encoding="utf-8")
    barrier = threading.Barrier(2)
    seen: dict[str, list[str]] = {"en": [], "zh": []}

    def work(lang: str) -> None:
        with i18n.language(lang):
            for _ in range(5):
                barrier.wait()  # both threads between their choice and their messages
                seen[lang].append(_hint_of(path))

    threads = [threading.Thread(target=work, args=(lang,)) for lang in ("en", "zh")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(seen["en"]) == len(seen["zh"]) == 5
    assert all(h.startswith("hint: backward() with no argument") for h in seen["en"])
    assert all(h.startswith("提示：不带参数的 backward()") for h in seen["zh"])


# ------------------------------------------------------------ the command line

@needs_cli
def test_lang_zh_translates_ours_and_keeps_pytorch_and_the_program_exactly(tmp_path):
    path = tmp_path / "nonscalar.tg"
    path.write_text(NON_SCALAR, encoding="utf-8")
    en, zh = cli("--lang", "en", "run", path), cli("--lang", "zh", "run", path)
    assert en.returncode == zh.returncode == 1
    assert en.stdout == zh.stdout == "tensor([2., 4.], grad_fn=<MulBackward0>)\n"
    en_lines, zh_lines = en.stderr.splitlines(), zh.stderr.splitlines()
    assert en_lines[:3] == zh_lines[:3]  # PyTorch's `Class: message`, the line, the caret
    assert "RuntimeError: grad can be implicitly created only for scalar outputs" in zh_lines[0]
    assert en_lines[3].startswith("hint: ") and zh_lines[3].startswith("提示：")


@needs_cli
def test_the_environment_and_lang_en(tmp_path):
    path = tmp_path / "nonscalar.tg"
    path.write_text(NON_SCALAR, encoding="utf-8")
    assert "提示：" in cli("run", path, env={"LANG": "zh_CN.UTF-8"}).stderr
    assert "提示：" in cli("run", path, env={"LC_MESSAGES": "zh_CN.UTF-8"}).stderr
    assert "hint: " in cli("--lang", "en", "run", path, env={"LC_ALL": "zh_CN.UTF-8"}).stderr
    assert "hint: " in cli("run", path, env={"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}).stderr


@needs_cli
def test_the_report_in_chinese():
    done = cli("--lang", "zh", "run", SAMPLE)
    assert done.returncode == 0 and done.stdout.startswith(
        "tensor(9., grad_fn=<AddBackward0>)\ntensor(8.)\n")
    assert " 张量 " in done.stdout and "叶子节点，requires_grad" in done.stdout
    assert "  梯度   None：非叶子节点：只有调用了 y.retain_grad()" in done.stdout
    rule = done.stdout.splitlines()[3]
    assert text_width(rule) == 80  # Rich counts a Chinese character as two columns


@needs_cli
def test_json_documents_do_not_change_with_the_language():
    en, zh = cli("run", "--json", SAMPLE), cli("--lang", "zh", "run", "--json", SAMPLE)
    assert en.stdout == zh.stdout and json.loads(zh.stdout)["tensors"]
    en, zh = cli("graph", "-f", "json", SAMPLE), cli("--lang", "zh", "graph", "-f", "json", SAMPLE)
    assert en.stdout == zh.stdout


@needs_cli
@pytest.mark.parametrize("args", [(), ("run",), ("graph",), ("check",), ("explain",),
                                  ("repl",), ("test",)])
def test_help_in_chinese_fits_the_terminal(args):
    done = cli("--lang", "zh", *args, "--help")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "用法：autodiff" in done.stdout and "选项" in done.stdout and "显示本帮助并退出" in \
        done.stdout
    english = cli("--lang", "en", *args, "--help").stdout
    assert english.count("\n  --") == done.stdout.count("\n  --")  # every option, still there
    for line in done.stdout.splitlines():
        assert text_width(line) <= 80, line


@needs_cli
def test_help_in_chinese_from_the_environment():
    done = cli("check", "--help", env={"LANG": "zh_CN.UTF-8"})
    assert "把每个叶子节点的梯度与 float64 中心差分的结果对比" in done.stdout
    assert "[默认：1e-06]" in done.stdout and "[必需]" in done.stdout


@needs_cli
def test_an_unknown_language_is_a_usage_error():
    done = cli("--lang", "fr", "run", SAMPLE)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "'fr': choose en or zh" in done.stderr


@needs_cli
def test_usage_errors_and_check_in_chinese(tmp_path):
    done = cli("--lang", "zh", "graph", "--root", "nothere", SAMPLE)
    assert done.returncode == 2
    assert done.stderr == "autodiff：错误：--root nothere：没有这个名字的顶层张量（现有张量：x, b, y）\n"
    done = cli("--lang", "zh", "check", SAMPLE)
    lines = done.stdout.splitlines()
    assert lines[0] == "y（最后一次 backward() 调用）的梯度与中心差分的对比（float64，eps 1e-06）"
    header, row = lines[1], lines[2]
    # the right-aligned columns end at the same terminal column in the heading and the row
    ends = [m.end() for m in re.finditer(r"\S+", row)][1:4]
    heading_ends = [text_width(header[:m.end()]) for m in re.finditer(r"\S+", header)][1:4]
    assert ends == heading_ends and lines[-1] == "叶子节点 x 的梯度正确"


def test_the_repl_in_chinese():
    from autodiff.cli.repl import Session

    session = Session(no_color=True)
    with i18n.language("zh"):
        assert session.submit("help")[0].startswith("输入 .tg 语句")
        assert session.submit(":nothing")[1] == \
            "未知命令 :nothing：可以试试 :graph NAME、:explain、:report 或 help\n"
        session.submit("x = torch.ones(2, requires_grad=True)")
        out, err = session.submit("x.sum().backwards()")
        assert err.splitlines()[0].endswith(
            "AttributeError: 'Tensor' object has no attribute 'backwards'")
        assert err.splitlines()[-1] == "提示：你是不是想写：'backward'？"
        assert "叶子节点，requires_grad" in session.submit(":report x")[0]
    assert session.submit("help")[0].startswith("Type .tg statements")


@needs_cli
def test_the_repl_banner_in_chinese():
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(EXE, ["--lang", "zh", "repl"], encoding="utf-8", timeout=60,
                          dimensions=(40, 120), env={**ENV, "TERM": "dumb"}, cwd=str(ROOT))
    child.expect("autodiff repl：输入 .tg 语句")
    child.expect(">>> ")
    child.sendline("exit()")
    child.expect(pexpect.EOF)


# Sentences of cli/ that stay English on purpose: each mimics what Python, the shell or the
# kernel says (a diagnostic's `Class: message`, as PyTorch's do), is a reason a test report
# shares with its JUnit XML and JSON (which do not change with the locale), or is click's
# own text that help_text.py looks up.
ENGLISH_ON_PURPOSE = {
    "guard.py": ("the process was killed by the system", "the program used more CPU time than ",
                 "the process crashed (", "the program ran longer than ",
                 "the process ended (exit code "),
    "repl_process.py": ("the session's process ended without an exit status",),  # (as guard's)
    "source.py": ("source code cannot contain null bytes", "the program is larger than ",
                  "No such file or directory", "Is a directory"),
    "live.py": ("was never closed", "got end of file", "expected an indented block",
                "got end of the indented block"),  # (the parser's words, matched)
    "golden.py": ("x = 1\n", "stdout differs from ", "should not exist",
                  "refused, not run under PyTorch:\n", "ran to the end, but ",
                  "error differs from ", "out of memory"),
    "golden_files.py": ("a symbolic link", "a character device", "a block device"),
    "graph_formats.py": ("digraph autograd {",),
    "help_text.py": ("Show this message and exit.", "Install completion for the current shell.",
                     "Show completion for the current shell,"),  # click's, as keys
    "report.py": ("GraphCuts | None",),
}


def test_every_sentence_the_commands_write_is_translated():
    """A sentence literal in cli/ is an argument of _() or N_() (or a docstring), unless it
    is listed above: a new message cannot slip past the catalog."""
    found = []
    for path in sorted((ROOT / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        marked = {id(sub) for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and getattr(node.func, "id", "") in ("_", "N_") for sub in ast.walk(node)}
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        allowed = ENGLISH_ON_PURPOSE.get(path.name, ())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    id(node) not in marked | docstrings and node.value[:1].isalpha() and \
                    node.value.strip().count(" ") >= 2 and \
                    not any(node.value.startswith(a) for a in allowed):
                found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert not found, "\n".join(found)


def test_explain_lines_up_a_tensor_under_chinese_text(tmp_path):
    from autodiff.cli.explain import explain_lines
    from autodiff.cli.source import load_source

    path = tmp_path / "square.tg"
    path.write_text("import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = x * 3\n"
                    "y.backward(torch.ones(2, 2))\n", encoding="utf-8")
    with i18n.language("zh"):
        first, second = explain_lines(load_source(str(path)), err=io.StringIO())[:2]
    assert first.startswith("第 1 次 backward() 调用（共 1 次），作用于 y [2, 2] = tensor([[3., 3.],")
    inner = first.index("tensor([[") + len("tensor([")  # the second row's [ under the first's
    assert len(second) - len(second.lstrip()) == text_width(first[:inner])
    assert second.strip() == "[3., 3.]])"


def test_lang_holds_for_one_invocation_of_the_app():
    """In one process (a test runner, an embedding program) --lang does not outlive its
    command: the next invocation is in the environment's language again."""
    from typer.testing import CliRunner

    from autodiff.cli.main import app

    runner = CliRunner()
    chinese = runner.invoke(app, ["--lang", "zh", "check", "--help"])
    after = runner.invoke(app, ["check", "--help"])
    assert chinese.exit_code == after.exit_code == 0
    assert "中心差分" in chinese.output and "central differences" in after.output
    assert i18n.current() == "en"
