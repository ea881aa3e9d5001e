"""A run's files: `open`, `os`, `os.path`, torch.save and torch.load on the in-memory file
system (engine/core/files.py), compared with CPython (always here) and torch 2.13 (skipped
without it), each program run by CPython in an empty folder of its own; and what no program
can do with them: reach the disk, the host's environment, or more than the size limit."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap

import pytest

from autodiff.engine.core.files import FileSystem
from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses

# Programs whose output is the same wherever they run (no working folder printed).
PYTHON_PROGRAMS = {
    "write and read text": """
        with open("log.txt", "w") as f:
            n = f.write("epoch 1\\n")
            f.writelines(["a\\n", "b"])
            print("loss", 0.5, file=f)
            print(n, f.closed, f.name, f.mode, f.encoding, f.tell())
        print(f.closed, repr(f))
        with open("log.txt") as f:
            print(f.readline(), f.readline().strip(), f.read(), f.read())
        print(open("log.txt").readlines())
        for line in open("log.txt"):
            print(line.rstrip())
        print(list(open("log.txt")))
    """,
    "append, seek and truncate": """
        f = open("a.txt", "w")
        f.write("12345")
        f.close()
        f = open("a.txt", "a")
        print(f.tell())
        f.write("678")
        f.close()
        f = open("a.txt", "r+")
        print(f.read(2), f.tell())
        f.seek(0)
        f.write("xy")
        f.seek(0, 2)
        print(f.tell())
        f.truncate(4)
        f.close()
        print(open("a.txt").read(), open("a.txt", "rb").read())
    """,
    "buffered until flushed": """
        import os
        f = open("b.txt", "w")
        f.write("x" * 5000)
        print(os.path.getsize("b.txt"))
        f.flush()
        print(os.path.getsize("b.txt"))
        g = open("c.txt", "w")
        g.write("y" * 100)
        print(os.path.getsize("c.txt"), open("c.txt", "rb").read())
        g.close()
        print(os.path.getsize("c.txt"))
    """,
    "newlines and encodings": """
        with open("n.txt", "w", newline="") as f:
            f.write("a\\r\\nb\\rc\\n")
        print(open("n.txt").readlines(), open("n.txt", newline="").readlines())
        print(open("n.txt", newline="\\r").readlines(), open("n.txt", "rb").read())
        with open("u.txt", "w", encoding="utf-8") as f:
            f.write("导数 ∂y/∂x")
            print(f)
        print(open("u.txt", encoding="utf-8").read(), open("u.txt", "rb").read())
        print(len(open("u.txt", "rb").read()), open("u.txt", "r", encoding="latin-1").read())
        try:
            open("u.txt", encoding="ascii").read()
        except UnicodeDecodeError as e:
            print("UnicodeDecodeError", e)
    """,
    "binary modes": """
        with open("d.bin", "wb") as f:
            print(f, f.mode)
        with open("d.bin", "w", encoding="latin-1") as f:
            print(f.write("\\x00\\x01abc\\xff\\n"))
        with open("d.bin", "rb") as f:
            print(f, f.read(1), f.read(), f.tell())
        with open("d.bin", "r+b") as f:
            print(f, f.mode, f.read())
        with open("d.bin", "ab") as f:
            print(f.mode, f.write(open("d.bin", "rb").read(2)))
        print(open("d.bin", "rb").readlines(), type(open("d.bin", "rb")))
    """,
    "open's errors": """
        for mode in ["rw", "rr", "bt", "q", "", "b", "+"]:
            try:
                open("z.txt", mode)
            except ValueError as e:
                print(mode, e)
        for args in [("z.txt", "rb"), ("z.txt",), ("nodir/z.txt", "w"), (".", "w"), (3.5,)]:
            try:
                open(*args)
            except (OSError, TypeError) as e:
                print(type(e).__name__, e)
        open("e.txt", "w").close()
        for kwargs in [{"mode": "x"}, {"mode": "rb", "encoding": "utf-8"},
                       {"mode": "rb", "newline": ""}, {"newline": "x"}, {"encoding": "nope"},
                       {"encoding": "rot13"}]:
            try:
                open("e.txt", **kwargs)
            except (OSError, ValueError, LookupError) as e:
                print(type(e).__name__, e)
        f = open("e.txt")
        try:
            f.write("x")
        except OSError as e:
            print(e)
        f.close()
        try:
            f.read()
        except ValueError as e:
            print(e)
        try:
            open("e.txt", "wb").write("text")
        except TypeError as e:
            print(e)
        try:
            open("e.txt", "w").write(open("e.txt", "rb").read())
        except TypeError as e:
            print(e)
    """,
    "a missing file, uncaught": """
        print("before")
        open("data.txt").read()
    """,
    "writing a read-only file, uncaught": """
        open("w.txt", "w").close()
        open("w.txt").write("x")
    """,
    "folders": """
        import os
        import os.path
        from os.path import join, exists
        os.makedirs("ckpt/run1", exist_ok=True)
        os.makedirs("ckpt/run1", exist_ok=True)
        os.mkdir("ckpt/run2")
        print(sorted(os.listdir("ckpt")), exists("ckpt"), os.path.isdir("ckpt/run1"))
        with open(join("ckpt", "run1", "a.txt"), "w") as f:
            f.write("abc")
        print(os.path.isfile("ckpt/run1/a.txt"), os.path.getsize("ckpt/run1/a.txt"))
        os.rename("ckpt/run1/a.txt", "ckpt/b.txt")
        print(sorted(os.listdir("ckpt")), os.listdir("ckpt/run1"))
        os.remove("ckpt/b.txt")
        os.rmdir("ckpt/run2")
        print(os.listdir("ckpt"), os.path.exists("ckpt/b.txt"))
        for call in [lambda: os.mkdir("ckpt"), lambda: os.makedirs("ckpt"),
                     lambda: os.remove("ckpt"), lambda: os.remove("nothing"),
                     lambda: os.rename("nothing", "x"), lambda: os.listdir("nothing"),
                     lambda: os.path.getsize("nothing"), lambda: os.rmdir("ckpt"),
                     lambda: os.listdir("ckpt/run1/nothing")]:
            try:
                call()
            except OSError as e:
                print(type(e).__name__, e, e.errno, e.strerror, e.filename, e.filename2)
        print(list(os.walk("ckpt")))
    """,
    "path functions": """
        import os
        print(os.path.join("a", "b", "c.pt"), os.path.join("/x", "y"), os.path.basename("/a/b.pt"))
        print(os.path.dirname("a/b/c"), os.path.split("a/b"), os.path.splitext("m.tar.gz"))
        print(os.path.normpath("a//b/../c/."), os.path.isabs("/a"), os.sep, os.path.sep)
        print(os.path.relpath("a/b", "a"), os.path.exists(""), os.path.exists(5), os.name)
        print(os.path.realpath("a/../b") == os.path.abspath("b"), os.linesep == "\\n")
    """,
    "how the functions print": """
        import os
        for f in [open, os.getcwd, os.chdir, os.listdir, os.mkdir, os.makedirs, os.remove,
                  os.unlink, os.rmdir, os.rename, os.replace, os.walk, os.getenv, os.fspath,
                  os.path.exists, os.path.isfile, os.path.isdir, os.path.getsize,
                  os.path.abspath, os.path.relpath, os.path.lexists, os.path.realpath,
                  os.path.islink, os.path.ismount, os.path.join, os.path.splitext]:
            print(f, type(f))
        print(os, os.path, type(os), type(os.environ) == type(os.environ))
    """,
    "os.environ": """
        import os
        os.environ["MY_FLAG"] = "1"
        print(os.environ.get("MY_FLAG"), os.getenv("MY_FLAG"), os.getenv("NOPE", "d"))
        try:
            os.environ["N"] = 1
        except TypeError as e:
            print(e)
        try:
            os.environ["NOPE_AT_ALL"]
        except KeyError as e:
            print("KeyError", e)
    """,
}

TORCH_PROGRAMS = {
    "save and load a model and optimizer": """
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = torch.randn(5, 3)
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        torch.save({"epoch": 3, "model": model.state_dict(), "opt": opt.state_dict(),
                    "loss": loss.item()}, "ckpt.pt")
        ck = torch.load("ckpt.pt")
        print(sorted(ck), ck["epoch"], type(ck["model"]), ck["opt"]["param_groups"])
        print(ck["opt"]["state"][0]["momentum_buffer"])
        again = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        print(again.load_state_dict(ck["model"]))
        print(torch.equal(again(x), model(x)), ck["loss"] == loss.item())
        for name, value in ck["model"].items():
            print(name, value.shape, value.requires_grad)
    """,
    "tensors keep what torch keeps": """
        import torch
        t = torch.tensor([1.0, 2.0], requires_grad=True)
        p = torch.nn.Parameter(torch.ones(2))
        i = torch.arange(4).reshape(2, 2)
        b = torch.tensor([True, False])
        d = torch.tensor([1.5], dtype=torch.float64)
        torch.save([t, p, i, b, d, t, (1, "a", None, 2.5, False)], "all.pt")
        got = torch.load("all.pt", map_location="cpu", weights_only=True)
        print(got)
        print(got[0] is got[5], got[0] is t, type(got[1]), got[2].dtype, got[4].dtype)
        got[2][0, 0] = 100
        print(i[0, 0])
        f = open("t.pt", "wb")
        torch.save(i, f)
        f.close()
        with open("t.pt", "rb") as f:
            print(torch.load(f))
        y = (t * 2).sum()
        torch.save(y, "y.pt")
        print(torch.load("y.pt"), torch.load("y.pt").grad_fn)
    """,
    "an optimizer resumes from its checkpoint": """
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        m = nn.Linear(2, 1)
        opt = torch.optim.Adam(m.parameters(), lr=0.01)
        for i in range(3):
            opt.zero_grad()
            m(torch.ones(2)).sum().backward()
            opt.step()
        torch.save({"model": m.state_dict(), "opt": opt.state_dict()}, "c.pt")
        ck = torch.load("c.pt")
        m2 = nn.Linear(2, 1)
        opt2 = torch.optim.Adam(m2.parameters(), lr=0.5)
        m2.load_state_dict(ck["model"])
        opt2.load_state_dict(ck["opt"])
        print(opt2)
        print(opt2.state_dict())
        for o, mm in ((opt, m), (opt2, m2)):
            o.zero_grad()
            mm(torch.ones(2)).sum().backward()
            o.step()
        print(m.weight, m2.weight)
        try:
            torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=1).load_state_dict(ck["opt"])
        except ValueError as e:
            print(e)
    """,
    "load's errors": """
        import torch
        try:
            torch.load("missing.pt")
        except FileNotFoundError as e:
            print(e)
        try:
            torch.save(torch.ones(1), "nodir/x.pt")
        except RuntimeError as e:
            print(e)
        torch.load("missing.pt")
    """,
}


_RUNNER = r"""
import io, json, os, sys, tempfile, traceback
programs = json.loads(sys.stdin.read())
results = []
for source in programs:
    folder = tempfile.mkdtemp()
    os.chdir(folder)
    out, real = io.StringIO(), sys.stdout
    sys.stdout, error = out, None
    try:
        exec(compile(source, "prog.tg", "exec"), {"__name__": "__main__"})
    except BaseException as exc:
        error = traceback.format_exception_only(type(exc), exc)[-1].strip()
    finally:
        sys.stdout = real
    results.append([out.getvalue(), error])
print(json.dumps(results))
"""


def _python(programs: list[str]) -> list[list]:
    """Each program's stdout and last error line under CPython (torch as installed)."""
    done = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(programs),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return [[normalize_addresses(out), error] for out, error in json.loads(done.stdout)]


def _autodiff(source: str) -> list:
    out = io.StringIO()
    result = run_source(source, "prog.tg", out=out, err=io.StringIO())
    error = None if result.error is None else \
        f"{result.error.error_class}: {result.error.message}"
    return [normalize_addresses(out.getvalue()), error]


@pytest.fixture(scope="module")
def python_results():
    names = list(PYTHON_PROGRAMS)
    return dict(zip(names, _python([textwrap.dedent(PYTHON_PROGRAMS[n]) for n in names])))


@pytest.mark.parametrize("name", list(PYTHON_PROGRAMS))
def test_files_behave_as_in_cpython(name, python_results, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _autodiff(textwrap.dedent(PYTHON_PROGRAMS[name])) == python_results[name]
    assert list(tmp_path.iterdir()) == []  # all of it in memory


@pytest.fixture(scope="module")
def torch_results():
    pytest.importorskip("torch")
    names = list(TORCH_PROGRAMS)
    return dict(zip(names, _python([textwrap.dedent(TORCH_PROGRAMS[n]) for n in names])))


@pytest.mark.parametrize("name", list(TORCH_PROGRAMS))
def test_checkpoints_behave_as_in_torch(name, torch_results, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _autodiff(textwrap.dedent(TORCH_PROGRAMS[name])) == torch_results[name]
    assert list(tmp_path.iterdir()) == []


def _run(source: str) -> tuple[str, object]:
    out = io.StringIO()
    result = run_source(textwrap.dedent(source), "prog.tg", out=out, err=io.StringIO())
    return out.getvalue(), result.error


def test_each_run_starts_with_no_files_in_a_folder_of_its_own():
    out, error = _run("""
        import os
        print(os.getcwd(), os.listdir("."), os.listdir("/"), os.environ, os.path.abspath("a"))
        open("kept.txt", "w").write("x")
    """)
    assert error is None and out == "/home/tg [] ['home'] environ({}) /home/tg/a\n"
    out, error = _run("import os\nprint(os.path.exists('kept.txt'))\n")
    assert out == "False\n"


def test_the_size_limit_is_a_full_disk():
    fs = FileSystem(limit=1000)
    f = fs.open("big.bin", "wb")
    f.write(b"x" * 900)
    f.flush()
    f.write(b"y" * 200)
    with pytest.raises(OSError, match=r"\[Errno 28\] No space left on device"):
        f.flush()
    fs.remove("big.bin")
    assert fs.used == 0
    fs.open("small.txt", "w").write("ok")  # the space is free again
    out, error = _run("""
        f = open("huge.txt", "w")
        chunk = "x" * 1000000
        for i in range(70):
            f.write(chunk)
    """)
    assert error is not None and error.error_class == "OSError"
    assert "[Errno 28] No space left on device" in error.message


def test_a_crafted_file_is_never_unpickled(tmp_path, monkeypatch):
    """Bytes the program wrote itself (a pickle that would run os.system) load as no object."""
    monkeypatch.chdir(tmp_path)
    out, error = _run("""
        import torch
        with open("evil.pt", "w") as f:
            f.write("cos\\nsystem\\n(S'touch pwned'\\ntR.")
        torch.load("evil.pt", weights_only=False)
    """)
    assert error.error_class == "_pickle.UnpicklingError" and "invalid load key, 'c'" in error.message
    out, error = _run("""
        import torch
        with open("deep.pt", "w", encoding="latin-1") as f:
            f.write("autodiff checkpoint 1\\n\\xa0\\x86\\x01" + "\\x00" * 5 + "[" * 100000)
        torch.load("deep.pt")
    """)
    assert error.error_class == "RuntimeError" and "PytorchStreamReader" in error.message
    assert list(tmp_path.iterdir()) == []


def test_saving_what_the_language_cannot_load_is_refused():
    out, error = _run("""
        import torch
        torch.save(torch.nn.Linear(2, 1), "model.pt")
    """)
    assert error.error_class == "NotImplementedError"
    assert "torch.save of a Linear object" in error.message and error.exit_code == 2


def test_the_rest_of_os_is_refused_by_name():
    for name in ("system('ls')", "popen('ls')", "fork()", "kill(1, 9)", "cpu_count()",
                 "path.expanduser('~')", "getpid()"):
        out, error = _run(f"import os\nos.{name}\n")
        assert error.error_class == "NotImplementedError", name
        assert "is not supported by autodiff" in error.message
    out, error = _run("import os\nos.not_a_name\n")
    assert error.error_class == "AttributeError"
    assert error.message == "module 'os' has no attribute 'not_a_name'"
