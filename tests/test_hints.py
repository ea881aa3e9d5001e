"""Errors that teach: the hint block after a diagnostic, and troubles of the source file
itself (encodings, full-width punctuation, CJK carets, missing files).

Through the library (run_path, the repl's Session, golden.check_program, the hints module)
and through the installed `autodiff` command."""

from __future__ import annotations

import gettext
import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tiers import slow
from learner_mistakes import CHINESE, MISTAKES

from autodiff.cli import golden
from autodiff.cli.repl import Session
from autodiff.cli.run import run_path
from autodiff.interpreter.reference import normalize_addresses
from autodiff.text import i18n
from autodiff.interpreter import suggest
from autodiff.text.diagnostics import TgError
from autodiff.text.display import caret_line, text_width
from autodiff.interpreter.hints import hint_block, hints
from autodiff.interpreter.source_hints import ascii_for, ascii_line

EXE = shutil.which("autodiff")
ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
ENV.pop("AUTODIFF_HINTS", None)
NO_HINTS = {**ENV, "AUTODIFF_HINTS": "0"}
BY_NAME = {m[0]: m for m in MISTAKES}
needs_cli = pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.tg"
    path.write_text("import torch\n" + body, encoding="utf-8")
    return path


def run_lib(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_path(str(path), quiet=True, out=out, err=err)
    return code, out.getvalue(), err.getvalue().replace(str(path), path.name)


def cli(*args, env=ENV, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *map(str, args)], capture_output=True, env=env, cwd=cwd,
                          timeout=120)


def without_hints(stderr: str, prefix: str = "hint: ") -> str:
    """stderr with the hint blocks taken out: what autodiff printed before hints."""
    kept, in_hint = [], False
    for line in stderr.splitlines(True):
        if line.startswith(prefix):
            in_hint = True
        elif not (in_hint and line.startswith("      ")):
            in_hint = False
            kept.append(line)
    return "".join(kept)


# ------------------------------------------------------------ the table of mistakes

def test_the_table_is_big_enough():
    assert len(MISTAKES) >= 25
    assert all(m[4].count("\nhint: ") + m[4].startswith("hint: ") >= 1 for m in MISTAKES)


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m[0])
def test_mistake_shows_this_stderr(tmp_path, mistake):
    name, body, code, stdout, stderr = mistake
    assert run_lib(write(tmp_path, name, body)) == (code, stdout, stderr)


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m[0])
def test_the_error_line_comes_first_and_hints_only_follow(tmp_path, mistake, monkeypatch):
    name, body, code, stdout, stderr = mistake
    monkeypatch.setenv("AUTODIFF_HINTS", "0")
    plain = run_lib(write(tmp_path, name, body))
    assert plain == (code, stdout, without_hints(stderr))
    assert "hint:" not in plain[2]


def test_the_chinese_table_has_every_mistake():
    assert list(CHINESE) == [m[0] for m in MISTAKES]
    assert all(text.count("\n提示：") + text.startswith("提示：") >= 1 for text in CHINESE.values())


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m[0])
def test_mistake_shows_this_stderr_in_chinese(tmp_path, mistake):
    name, body, code, stdout, stderr = mistake
    with i18n.language("zh"):
        assert run_lib(write(tmp_path, name, body)) == (code, stdout, CHINESE[name])
    # only autodiff's own words changed: PyTorch's message, the line and the caret did not
    assert without_hints(CHINESE[name], "提示：") == without_hints(stderr)


@needs_cli
def test_the_chinese_table_through_the_command(tmp_path):
    name, body, code, stdout, stderr = BY_NAME["matmul_shapes"]
    path = write(tmp_path, name, body)
    done = cli("--lang", "zh", "run", "--quiet", path.name, cwd=tmp_path)
    assert (done.returncode, done.stdout.decode(), done.stderr.decode()) == \
        (code, stdout, CHINESE[name])


def test_the_error_lines_are_pytorchs(tmp_path):
    """The `Class: message` line before the hints is what real PyTorch raises."""
    reference = pytest.importorskip("autodiff.interpreter.reference")
    if not reference.torch_available():
        pytest.skip("torch is not installed")
    runtime = [m for m in MISTAKES if m[2] == 1]
    results = reference.run_many_with_torch(["import torch\n" + m[1] for m in runtime],
                                            misspellings="fail")
    for (name, body, code, stdout, stderr), torch_result in zip(runtime, results):
        headline = [line for line in stderr.splitlines() if f"{name}.tg:" in line
                    and "Warning" not in line][0]
        ours = headline.split(": ", 1)[1]
        assert ours == torch_result.error, name
        assert stdout == torch_result.stdout, name


# ------------------------------------------------------------ every command shows them

@needs_cli
@pytest.mark.parametrize("command", ["run", "graph", "explain", "check"])
def test_each_command_shows_the_hint(tmp_path, command):
    path = write(tmp_path, "typo", BY_NAME["method_typo"][1])
    done = cli(command, path)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "AttributeError: 'Tensor' object has no attribute 'backwards'\n" in err
    assert "hint: Did you mean: 'backward'?\n" in err
    assert "Traceback" not in err


def test_the_repl_shows_the_hint():
    session = Session()
    assert session.submit("x = torch.ones(2, requires_grad=True)") == ("", "")
    out, err = session.submit("x.gard")
    assert out == ""
    assert err.splitlines()[0] == "<stdin>:1:1: AttributeError: 'Tensor' object has no attribute 'gard'"
    assert err.endswith("hint: Did you mean: 'grad'?\n")


def test_the_test_commands_diff_shows_the_hint(tmp_path):
    path = write(tmp_path, "twice", BY_NAME["backward_twice"][1])
    path.with_suffix(".out").write_text("")
    path.with_suffix(".err").write_text("RuntimeError: something else\n")
    result = golden.check_program(path)
    assert result.status == golden.FAILED
    assert "+RuntimeError: Trying to backward through the graph a second time" in result.diff
    assert "hint: The first backward() freed the graph. Call the first one as " \
           "y.backward(retain_graph=True)" in result.diff


@slow
@needs_cli
@pytest.mark.parametrize("quiet", [True, False])
def test_stdout_is_byte_identical_with_and_without_hints(tmp_path, quiet):
    flags = ["--quiet"] if quiet else []
    for name in ("nonleaf_grad_warning", "unused_leaf_grad_none", "matmul_shapes",
                 "fullwidth_semicolon", "caret_under_cjk"):
        path = write(tmp_path, name, BY_NAME[name][1])
        with_hints = cli("run", *flags, path, cwd=tmp_path)
        plain = cli("run", *flags, path, cwd=tmp_path, env=NO_HINTS)
        assert with_hints.stdout == plain.stdout, name
        assert with_hints.returncode == plain.returncode, name
        assert b"hint: " in with_hints.stderr and b"hint: " not in plain.stderr, name
        assert without_hints(with_hints.stderr.decode()) == plain.stderr.decode(), name


@needs_cli
def test_samples_stdout_is_byte_identical_with_and_without_hints():
    for sample in ("nonleaf_grad_none", "seed_linear_backward_error"):
        path = ROOT / "samples" / f"{sample}.tg"
        with_hints = cli("run", "--quiet", path)
        plain = cli("run", "--quiet", path, env=NO_HINTS)
        assert with_hints.returncode == plain.returncode
        # object addresses differ from run to run; all else is byte for byte
        assert normalize_addresses(with_hints.stdout.decode()) == \
            normalize_addresses(plain.stdout.decode()) == path.with_suffix(".out").read_text()


# ------------------------------------------------------------ the hints module itself

def test_did_you_mean_candidates():
    tensor_names = suggest.class_names("Tensor")
    assert suggest.closest("backwards", tensor_names) == "backward"
    assert suggest.closest("gard", tensor_names) == "grad"
    assert suggest.closest("Grad", tensor_names) == "grad"
    assert suggest.closest("zzzzzz", tensor_names) is None
    assert suggest.closest("sigmod", suggest.module_names("torch.nn.functional")) == "sigmoid"
    assert suggest.elsewhere("Linear", skip="torch") == "torch.nn"
    assert "retain_graph" in suggest.keyword_names(suggest.callable_named("Tensor.backward", None))


def test_hints_for_an_error_without_source_or_position():
    error = TgError("NameError", "name 'prnt' is not defined", filename="x.tg")
    assert hints(error) == ["Did you mean: 'print'?"]
    assert hint_block(TgError("ValueError", "nothing to say")) == ""


def test_a_hint_that_fails_gives_no_hint_not_a_crash():
    error = TgError("AttributeError", "'NoneType' object has no attribute 'x'", line=5, col=1)
    assert hints(error, "x = 1\n") == []  # the line is not in the source


def test_every_hint_goes_through_the_translation_hook(monkeypatch):
    class Marked(gettext.NullTranslations):  # a stand-in catalog: marks what it translated
        def gettext(self, message):
            return "[zz] " + message

    error = TgError("NameError", "name 'wieght' is not defined", line=2, col=7, end_col=13)
    source = "weight = 1\nprint(wieght)\n"
    monkeypatch.setattr(i18n, "catalog", lambda lang: Marked() if lang == "zh" else
                        gettext.NullTranslations())
    with i18n.language("zh"):
        assert hint_block(error, source) == "[zz] hint: [zz] Did you mean: 'weight'?\n"
    with i18n.language("en"):
        assert hint_block(error, source) == "hint: Did you mean: 'weight'?\n"


def test_hint_texts_are_all_wrapped_in_the_translation_function():
    """No sentence of a hint is written outside `_()`: every string literal the rules
    return or add is an argument of `_`, apart from the prefix and joining characters."""
    import ast as python_ast

    for module in ("hints.py", "source_hints.py"):
        tree = python_ast.parse((ROOT / "interpreter" / module).read_text())
        wrapped = {id(node.args[0]) for node in python_ast.walk(tree)
                   if isinstance(node, python_ast.Call) and getattr(node.func, "id", "") in ("_", "N_")
                   and node.args}
        docstrings = {id(node.value) for node in python_ast.walk(tree)
                      if isinstance(node, python_ast.Expr)}
        patterns = {id(arg) for node in python_ast.walk(tree)  # rule(error class, pattern)
                    if isinstance(node, python_ast.Call) and getattr(node.func, "id", "") == "rule"
                    for arg in node.args}
        patterns |= {id(node.left) for node in python_ast.walk(tree)  # `"torch's text" in message`
                     if isinstance(node, python_ast.Compare)}
        sentences = [node for node in python_ast.walk(tree)
                     if isinstance(node, python_ast.Constant) and isinstance(node.value, str)
                     and id(node) not in docstrings | patterns and node.value.strip().count(" ") >= 2
                     and node.value[0].isalpha()]
        assert len(sentences) >= 3  # the check sees the hint texts
        for node in sentences:
            assert id(node) in wrapped, (module, node.lineno, node.value)


# ------------------------------------------------------------ source-file troubles

def test_caret_width_counts_terminal_columns():
    assert text_width("梯度") == 4 and text_width("ab") == 2 and text_width("e\u0301") == 1
    assert caret_line('print("梯度", x.gard)', 13, 6) == " " * 14 + "^" * 6
    assert caret_line("x = 1；", 6, 1) == "     ^^"
    assert caret_line("\tx.gard", 2, 6) == "\t^^^^^^"


def test_full_width_punctuation_maps_to_ascii():
    pairs = {"；": ";", "（": "(", "）": ")", "，": ",", "：": ":", "“": '"', "”": '"',
             "。": ".", "、": ",", "【": "[", "】": "]", "\u3000": " ", "＝": "="}
    for wide, plain in pairs.items():
        assert ascii_for(wide) == plain, wide
    assert ascii_for("梯") is None and ascii_for("a") is None
    # strings and comments keep their full-width text
    assert ascii_line('x = f（"，"）  # 注释，') == 'x = f("，")  # 注释，'


@needs_cli
def test_a_gbk_file_is_refused_with_how_to_convert_it(tmp_path):
    path = tmp_path / "gbk.tg"
    path.write_bytes("import torch\n# 求导的例子\nx = torch.tensor(2.0)\n".encode("gb18030"))
    done = cli("run", path.name, cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b""
    lines = err.splitlines()
    assert lines[0] == ("gbk.tg:2:1: SyntaxError: (unicode error) 'utf-8' codec can't decode "
                        "byte 0xc7 in position 15: invalid continuation byte")
    assert lines[1].startswith("hint: gbk.tg is not UTF-8: it reads as GB18030 (GBK)")
    assert lines[1].endswith("Line 2 would read: # 求导的例子")
    assert "iconv -f GB18030 -t UTF-8 gbk.tg > utf8-gbk.tg" in lines[2]
    assert "Traceback" not in err


@needs_cli
def test_other_undecodable_bytes_say_not_utf8_without_guessing(tmp_path):
    path = tmp_path / "bytes.tg"
    path.write_bytes(b"import torch\nx = 1 \xff\xfe\n")
    done = cli("run", path.name, cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2
    assert "hint: bytes.tg is not UTF-8 text" in err and "GB18030" not in err


@needs_cli
def test_a_utf16_file_is_named(tmp_path):
    path = tmp_path / "u16.tg"
    path.write_bytes("import torch\n".encode("utf-16"))
    done = cli("run", path.name, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.decode() == ("u16.tg: SyntaxError: source code cannot contain null bytes\n"
                                    "hint: u16.tg is UTF-16 (what Windows Notepad calls "
                                    "\"Unicode\"). Save it as UTF-8 (Save As, Encoding: UTF-8).\n")


@needs_cli
@pytest.mark.parametrize("command", ["run", "graph", "explain", "check"])
def test_a_missing_file_or_a_folder_says_so(tmp_path, command):
    done = cli(command, "nothere.tg", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, b"", b"nothere.tg: No such file or directory\n")
    (tmp_path / "folder.tg").mkdir()
    done = cli(command, "folder.tg", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, b"folder.tg: Is a directory\n")


def test_a_missing_file_through_the_library(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert run_path(str(tmp_path / "nothere.tg"), out=out, err=err) == 2
    assert err.getvalue() == f"{tmp_path / 'nothere.tg'}: No such file or directory\n"
    assert out.getvalue() == ""
