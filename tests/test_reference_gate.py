"""The torch reference runs program text as real Python: what is not valid .tg is refused.

Each escape program would create a marker file if Python ran it; its payload comes before
its `import torch`, so without the gate it would run even where torch is not installed.
The tests check the refusal (a positioned diagnostic) and that the marker was never made.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autodiff.cli import golden
from autodiff.interpreter import reference
from autodiff.interpreter.reference import (
    ReferenceRefused,
    reference_outcomes,
    run_many_with_torch,
    run_with_torch,
    torch_available,
)
from autodiff.interpreter.reference_gate import check_program, language_surface
from autodiff.text.display import text_width

ROOT = Path(__file__).resolve().parent.parent
EXE = shutil.which("autodiff")
needs_torch = pytest.mark.skipif(not torch_available(), reason="torch is not installed")
MARK = "{marker}"  # replaced by the marker file's path

# name -> (program, what the diagnostic says, the text its caret underlines)
ESCAPES = {
    "dunder import": ('__import__("os").system("touch {marker}")\n',
                      "'__import__' starts with '_'", "__import__"),
    "import subprocess": ('import subprocess\nsubprocess.run(["touch", "{marker}"])\n',
                          "ImportError: import of 'subprocess' is not supported",
                          "import subprocess"),
    "dunder attribute": ('f = torch.ones\nprint(f.__self__)\nopen("{marker}", "w")\n',
                         "'__self__' starts with '_'", "__self__"),
    "exec": ('exec("import os; os.system(\'touch {marker}\')")\n',
             "'exec' is Python's own builtin", "exec"),
    "eval": ('eval("open(\'{marker}\', \'w\')")\n', "'eval' is Python's own builtin", "eval"),
    # Python ends a line at a lone carriage return; autodiff's parser reads one comment
    "line hidden in a comment": ('# a note\r__import__("os").system("touch {marker}")\n',
                                 "'__import__' starts with '_'", "__import__"),
    # Python folds fullwidth letters into ASCII (NFKC): this is `exec`
    "fullwidth exec": ('ｅｘｅｃ("import os; os.system(\'touch {marker}\')")\n',
                       "'exec' is Python's own builtin", "ｅｘｅｃ"),
    "format template built at run time": (
        'template = "{{0." + "real}}"\nprint(template.format(1))\nopen("{marker}", "w")\n',
        "str.format is allowed only on a string literal", "format"),
    "format field lookup": ('print("{{0.real}}".format(1))\nopen("{marker}", "w")\n',
                            "format field '0.real'", '"{{0.real}}"'),
    "module attribute write": ('torch.ones = print\nopen("{marker}", "w")\n',
                               "setting attribute 'ones'", "ones"),
    # the v2 constructs
    "star import": ('from numpy import *\nsave("{marker}", [1])\n',
                    "ImportError: 'from numpy import *' is not supported", "from numpy import *"),
    "class with a dunder method": (
        'import torch.nn as nn\nclass A(nn.Module):\n    def __del__(self):\n'
        '        open("{marker}", "w")\nA()\n', "the method name '__del__'",
        "def __del__(self):"),
    "type() making a class": ('X = type("X", (), {{"f": open}})\nX.f("{marker}", "w")\n',
                              "type() with other than one argument", 'type("X", (), {{"f": open}})'),
    "generator frame": ('g = (x for x in [1])\nprint(g.gi_frame.f_builtins)\n'
                        'open("{marker}", "w")\n', "attribute 'gi_frame'", "gi_frame"),
    "lambda code": ('f = lambda: 0\nprint(f.__code__)\nopen("{marker}", "w")\n',
                    "'__code__' starts with '_'", "__code__"),
    "exception traceback": ('try:\n    1 / 0\nexcept ZeroDivisionError as e:\n'
                            '    print(e.with_traceback(None))\nopen("{marker}", "w")\n',
                            "attribute 'with_traceback'", "with_traceback"),
    # grad_fn's catalogued `_saved_*` names are the one '_' attribute a program may read:
    # never set, never deleted, and no other '_' name passes beside them
    "raw saved name": ('open("{marker}", "w")\nprint(torch.ones(1)._raw_saved_self)\n',
                       "'_raw_saved_self' starts with '_'", "_raw_saved_self"),
    "saved name not catalogued": ('open("{marker}", "w")\nprint(torch.ones(1)._saved_nothing)\n',
                                  "'_saved_nothing' starts with '_'", "_saved_nothing"),
    "saved name set": ('open("{marker}", "w")\nx = torch.ones(1)\nx._saved_self = 1\n',
                       "'_saved_self' starts with '_'", "_saved_self"),
    "saved name deleted": ('open("{marker}", "w")\nx = torch.ones(1)\ndel x._saved_self\n',
                           "'_saved_self' starts with '_'", "_saved_self"),
    "saved name as a loop target": (
        'open("{marker}", "w")\nx = torch.ones(1)\nfor x._saved_self in [1]:\n    pass\n',
        "'_saved_self' starts with '_'", "_saved_self"),
    "private name beside a saved name": (
        'open("{marker}", "w")\nn = torch.ones(1).grad_fn\nprint(n._saved_self, n._register_hook_dict)\n',
        "'_register_hook_dict' starts with '_'", "_register_hook_dict"),
    "dunder off a saved value": (
        'open("{marker}", "w")\nn = torch.ones(1).grad_fn\nprint(n._saved_self.__class__.__base__)\n',
        "'__base__' starts with '_'", "__base__"),
    "saved name as a keyword": ('open("{marker}", "w")\nprint(1, _saved_self=2)\n',
                                "'_saved_self' starts with '_'", "_saved_self"),
}
TORCH_ESCAPES = {  # attributes real PyTorch has outside the language
    "torch.jit.save": ('torch.jit.save(torch.ones(1), "{marker}")\n', "attribute 'jit'", "jit"),
    "numpy": ('torch.ones(1).numpy().tofile("{marker}")\n', "attribute 'tofile'", "tofile"),
    "from-import of torch.jit": ('from torch import jit\njit.save(torch.ones(1), "{marker}")\n',
                                 "'jit' is not part of the .tg language's 'torch'", "jit"),
    "numpy.save": ('import numpy as np\nnp.save("{marker}", np.ones(1))\n', "attribute 'save'",
                   "save"),
}


def _escape(case: tuple[str, str, str], marker: Path) -> tuple[str, str, str]:
    program, says, caret = case
    return (program.format(marker=marker) + "import torch\n", says, caret.format())


def _assert_refused(exc: ReferenceRefused, says: str, caret: str, marker: Path) -> None:
    text = str(exc)
    headline, line, carets = text.split("\n")
    assert headline.startswith("evil.tg:") and says in headline, text
    # the carets sit under `caret` in terminal columns (a full-width letter takes two)
    start, width = len(carets) - len(carets.lstrip()), len(carets.strip())
    index = next(i for i in range(len(line) + 1) if text_width(line[:i]) >= start)
    assert text_width(line[:index]) == start and line[index:].startswith(caret), text
    assert text_width(caret) == width, text
    assert not marker.exists(), "the program ran"


@pytest.fixture(scope="module")
def batch_outcomes(tmp_path_factory):
    """Every escape in one batch, as `autodiff test` sends a folder (each program in a
    process of its own): (outcome, what it must say, where, its marker) per escape."""
    folder = tmp_path_factory.mktemp("escapes")
    cases = {name: (*_escape(case, folder / f"ran{i}"), folder / f"ran{i}")
             for i, (name, case) in enumerate(ESCAPES.items())}
    outcomes = reference_outcomes([case[0] for case in cases.values()],
                                  filenames=["evil.tg"] * len(cases))
    return {name: (outcome, *case[1:]) for (name, case), outcome in zip(cases.items(), outcomes)}


@pytest.mark.parametrize("name", list(ESCAPES))
def test_escape_is_refused_before_python_runs_it(name: str, batch_outcomes) -> None:
    outcome, says, caret, marker = batch_outcomes[name]
    assert isinstance(outcome, ReferenceRefused), outcome
    _assert_refused(outcome, says, caret, marker)


@pytest.mark.parametrize("name", list(ESCAPES)[:3])
def test_one_program_runs_refuse_them_too(name: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    program, says, caret = _escape(ESCAPES[name], marker)
    with pytest.raises(ReferenceRefused) as refused:
        run_with_torch(program, filename="evil.tg")
    _assert_refused(refused.value, says, caret, marker)


@needs_torch
@pytest.mark.parametrize("name", list(TORCH_ESCAPES))
def test_torch_functions_outside_the_language_are_refused(name: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    program, says, caret = _escape(TORCH_ESCAPES[name], marker)
    with pytest.raises(ReferenceRefused) as refused:
        run_with_torch(program, filename="evil.tg")
    _assert_refused(refused.value, says, caret, marker)


@needs_torch
def test_the_programs_own_attributes_pass_only_on_its_own_objects(tmp_path: Path) -> None:
    """`self.linear = ...` names an attribute of the program's choosing; it passes on `self`,
    the class and its instances, and nowhere else: `torch.hub` is stopped where it runs (the
    child looks at the object: a module answers only the language's names)."""
    program = ('import torch.nn as nn\nclass Net(nn.Module):\n'
               '    def __init__(self):\n        super().__init__()\n        self.linear = nn.Linear(2, 1)\n'
               '        self.hub = 3\n        self.scale = 2\n    def forward(self, x):\n'
               '        return self.linear(x) * self.scale\n'
               'model = Net()\nprint(model.hub, model.scale, model.linear.in_features)\n')
    result = run_with_torch(program, filename="own.tg")
    assert (result.stdout, result.error) == ("3 2 2\n", None)
    marker = tmp_path / "ran"
    evil = "import torch\n" + program + f'torch.hub.load(model)\nopen("{marker}")\n'
    with pytest.raises(ReferenceRefused) as refused:
        run_with_torch(evil, filename="evil.tg")
    _assert_refused(refused.value, "stopped: attribute 'hub' of module 'torch'", "hub",
                    marker)


@needs_torch
def test_saved_names_are_read_only_from_grad_fn_nodes(tmp_path: Path) -> None:
    """A catalogued `_saved_*` name passes the text's checks anywhere; the child lets it be
    read only from a grad_fn node (its own name, or one nothing there has: torch's
    AttributeError), never from a tensor, a module or an object of the program's."""
    head = ("import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\nz = x * 3\n"
            "class A:\n    pass\n")
    ok = head + ("print(z.grad_fn._saved_other, getattr(z.grad_fn, '_saved_self') is x)\n"
                 "print(hasattr(z.grad_fn, '_saved_result'), hasattr(x, '_saved_self'))\n"
                 "try:\n    z.grad_fn.next_functions[0][0]._saved_self\n"
                 "except AttributeError as e:\n    print(e)\n")
    result = run_with_torch(ok, filename="ok.tg")
    assert (result.stdout, result.error) == (
        "tensor(3) False\nFalse False\n'AccumulateGrad' object has no attribute "
        "'_saved_self'\n", None), result
    marker = tmp_path / "ran"
    for reader, says, caret in (
            ("x._saved_self", "stopped: attribute '_saved_self' of this object", "_saved_self"),
            ("torch._saved_self", "stopped: attribute '_saved_self' of this object",
             "_saved_self"),
            ("A()._saved_self", "stopped: attribute '_saved_self' of this object",
             "_saved_self"),
            ("(x * x).grad_fn._saved_self._saved_self",  # (the saved value is x)
             "stopped: attribute '_saved_self' of this object", "_saved_self")):
        evil = head + f'print({reader})\nopen("{marker}", "w")\n'
        with pytest.raises(ReferenceRefused) as refused:
            run_with_torch(evil, filename="evil.tg")
        _assert_refused(refused.value, says, caret, marker)
    for reader in ("getattr(x, '_saved_self')", "getattr(z.grad_fn, '_raw_saved_self')",
                   "getattr(z.grad_fn, '_register_hook_dict')"):
        evil = head + f'print({reader})\nopen("{marker}", "w")\n'
        with pytest.raises(ReferenceRefused, match="starts with '_'"):
            run_with_torch(evil, filename="evil.tg")
        assert not marker.exists(), reader


def test_what_the_checks_miss_meets_the_languages_builtins(tmp_path: Path) -> None:
    """`exec` bound on a path never taken passes the checks; it is still not Python's."""
    marker = tmp_path / "ran"
    program = ('if False:\n    exec = print\n'
               f'exec("import os; os.system(\'touch {marker}\')")\nimport torch\n')
    assert check_program(program, "evil.tg") is None
    result = run_with_torch(program, filename="evil.tg")
    assert (result.exit_code, result.error) == (1, "NameError: name 'exec' is not defined")
    assert not marker.exists()


def test_our_own_checks_come_first_without_any_process(monkeypatch) -> None:
    """Parser, compiler and `_` names are checked here, before a child process starts."""
    def no_child(*args, **kwargs):
        raise AssertionError("a child process was started")

    monkeypatch.setattr(reference, "_run_jobs", no_child)
    for program in ('__import__("os")\n', "import subprocess\n", "x = 1 +\n", "def f(__x):\n    pass\n",
                    "print(f(_secret=1))\n", "with torch.no_grad() as __g:\n    pass\n",
                    "x = torch.ones(1)\nprint(x._base)\n"):
        with pytest.raises(ReferenceRefused):
            run_with_torch(program, filename="evil.tg")


def test_the_language_surface_is_the_sandbox_allow_list() -> None:
    surface = language_surface()
    assert {"print", "range", "isinstance", "getattr", "setattr", "hasattr", "id",
            "slice"} <= set(surface["builtins"])  # (the child gives the first three guarded)
    assert not {"exec", "eval", "delattr", "vars", "__import__"} & set(surface["builtins"])
    assert {"backward", "grad_fn", "zeros_like", "format"} <= set(surface["readable"])
    assert not {"tofile", "gi_frame", "with_traceback", "buffer", "fileno", "system",
                "popen"} & set(surface["readable"])
    # `open` is the run's in-memory files' (torch_child.virtual_files), never Python's
    assert "open" in surface["builtins"] and {"os", "os.path"} <= set(surface["modules"])
    assert set(surface["writable"]) == {"requires_grad", "grad", "data", "enabled", "benchmark",
                                        "deterministic", "allow_tf32"}  # (cudnn's flags)
    allowed = set(surface["readable_dunders"])
    assert allowed == {"__version__", "_version", "__name__", "_modules", "_parameters", "_buffers",
                       "__class__"}
    # the special methods a program's class may define (never name): the gate's only dunders
    operators = {f"__{name}__" for name in (
        "add radd iadd sub rsub isub mul rmul imul truediv rtruediv itruediv floordiv rfloordiv "
        "mod rmod pow rpow matmul rmatmul neg pos abs invert eq ne lt le gt ge hash bool float "
        "int index").split()}
    assert set(surface["protocol_methods"]) == {"__init__", "__len__", "__getitem__",
                                                "__setitem__", "__call__", "__iter__",
                                                "__contains__", "__repr__", "__str__"} | operators
    assert not {"__exit__", "__enter__", "__getattr__", "__del__"} & operators  # (a stop passes)
    assert not any(n.startswith("_") and n not in allowed and not n.startswith("_io.")
                   for key, names in surface.items() if key != "protocol_methods" for n in names)
    # (the classes `_io.TextIOWrapper`... are paths of Python's file objects, not names)
    # the one '_' kind besides: grad_fn's catalogued `_saved_*` names, per node class
    from autodiff.engine.graph.saved_names import SAVED

    saved = surface["saved_names"]
    assert saved["MulBackward0"] == ["_saved_other", "_saved_self"]
    assert all(name == "_saved_" + key for node, names in saved.items()
               for name, key in zip(names, sorted(SAVED[node])))


def test_a_fresh_process_sees_the_whole_surface() -> None:
    """Modules that load on first use (the `np` namespace) are in the surface all the same."""
    code = ("from autodiff.interpreter.reference_gate import language_surface\n"
            "s = language_surface()\nprint(sorted({'array', 'randn', 'seed', 'from_numpy', 'numpy'}"
            " - set(s['readable'])), 'numpy.random' in s['modules'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout == "[] True\n", done.stderr


# --- the commands that use the reference ------------------------------------------------

def _evil_folder(tmp_path: Path) -> tuple[Path, Path]:
    folder, marker = tmp_path / "programs", tmp_path / "ran"
    folder.mkdir()
    (folder / "evil.tg").write_text(f'__import__("os").system("touch {marker}")\nimport torch\n')
    return folder, marker


def test_autodiff_test_reference_torch_refuses(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(reference, "torch_available", lambda: True)  # refused before torch
    folder, marker = _evil_folder(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = golden.golden_tests([str(folder)], reference="torch", jobs=1, out=out, err=err)
    assert code == 1
    report = out.getvalue()
    assert f"FAILED {folder / 'evil.tg'}: refused, not run under PyTorch:\n" in report
    assert f"{folder / 'evil.tg'}:1:1: refused: '__import__' starts with '_'" in report
    assert "    ^^^^^^^^^^\n" in report and report.endswith("0 updated, 0 unchanged, 1 failed\n")
    assert golden.TORCH_WARNING in err.getvalue()
    assert not marker.exists() and sorted(p.name for p in folder.iterdir()) == ["evil.tg"]


def test_make_goldens_refuses(tmp_path: Path, monkeypatch, capsys) -> None:
    import make_goldens

    folder, marker = _evil_folder(tmp_path)
    monkeypatch.setattr(make_goldens, "SAMPLES", folder)
    monkeypatch.setattr(make_goldens, "torch_available", lambda: True)
    assert make_goldens.main(["-j", "1"]) == 1
    err = capsys.readouterr().err
    assert "evil.tg: cannot run under torch: refused, not run under PyTorch:\n" in err
    assert "evil.tg:1:1: refused: '__import__' starts with '_'" in err
    assert not marker.exists() and not (folder / "evil.out").exists()


@needs_torch
@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
def test_console_script_refuses_and_runs_the_rest(tmp_path: Path) -> None:
    folder, marker = _evil_folder(tmp_path)
    (folder / "good.tg").write_text("x = torch.ones(2, requires_grad=True)\n"
                                    "y = (x * 3).sum()\ny.backward()\nprint(x.grad)\n")
    done = subprocess.run([EXE, "test", "--reference", "torch", str(folder), "-j", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "refused, not run under PyTorch" in done.stdout and "Traceback" not in done.stderr
    assert golden.TORCH_WARNING in done.stderr
    assert (folder / "good.out").read_text() == "tensor([3., 3.])\n"
    assert not marker.exists()


@needs_torch
def test_valid_programs_still_run_under_torch() -> None:
    program = ("import torch.nn.functional as F\n"
               "input = torch.tensor([1.0, -2.0], requires_grad=True)\n"
               "loss = F.relu(input).sum()\nloss.backward()\n"
               'print(input.grad, "{:.2f}".format(loss.item()), f"{loss.item():.1f}")\n'
               "print(input.view(3))\n")  # a program's error is torch's own
    want = "tensor([1., 0.]) 1.00 1.0\n"
    error = "RuntimeError: shape '[3]' is invalid for input of size 2"
    single = run_with_torch(program, filename="ok.tg")
    [batch] = run_many_with_torch([program])
    for result in (single, batch):
        assert (result.stdout, result.exit_code, result.error) == (want, 1, error)


@needs_torch
def test_a_misspelt_name_is_refused_and_run_says_what_torch_says() -> None:
    """No name outside the language reaches real Python, a misspelling included (it could be
    a name torch has outside the language); `autodiff run` prints PyTorch's own error for it,
    taken here from torch itself."""
    import torch

    from autodiff.interpreter import run_source

    for owner, expression, real in (("torch", "torch.onse", lambda: torch.onse),
                                    ("tensor", "torch.ones(1).sizee", lambda: torch.ones(1).sizee),
                                    ("nn", "torch.nn.Lineer", lambda: torch.nn.Lineer)):
        program = f"print({expression})\n"
        with pytest.raises(ReferenceRefused, match="is not part of the .tg language"):
            run_with_torch(program, filename="typo.tg")
        with pytest.raises(AttributeError) as torch_says:
            real()
        result = run_source(program, "typo.tg", out=io.StringIO(), err=io.StringIO())
        assert result.error is not None, owner
        assert f"AttributeError: {torch_says.value}" in result.error.render(program), owner


@needs_torch
def test_a_programs_own_underscore_names_run_under_torch() -> None:
    """`for _ in ...`, `a, _ = ...`, `_total`: ordinary names in the language, and in Python."""
    program = ("_total = 0\nfor _ in range(3):\n    _total += 1\nfirst, _ = (1, 2)\n"
               "def scale(_x, factor=2):\n    return _x * factor\n"
               "with torch.no_grad() as _g:\n    y = scale(torch.ones(2))\n"
               "print(_total, first, y, _g)\n")
    assert check_program(program, "ok.tg") is None
    result = run_with_torch(program, filename="ok.tg")
    assert (result.stdout, result.error) == ("3 1 tensor([2., 2.]) None\n", None)
