"""Run corpus programs as plain Python with real PyTorch: the corpus goldens' reference.

The tutorial-patterns corpus (corpus/*.tg) deliberately uses what real tutorials use,
including constructs autodiff cannot parse yet (classes, lambdas, numpy, ...). So its
goldens cannot come from `autodiff test --reference torch`, which refuses any program that
is not valid .tg today. This module runs them the way interpreter/reference.py runs a
program, except for that gate and the language's restricted builtins:

- in a child Python process (torch is never imported here), with the reference's FLOAT_ENV
  (one thread, MKL's compatible path), PYTHONHASHSEED=0 and PYTHONIOENCODING=utf-8;
- each program in a fresh `__main__` namespace, with `torch` bound first when the program
  has no plain `import torch` of its own (as a prepended `import torch` would);
- stdout is the golden text, object addresses written 0xADDR; when the program raises, the
  error is the last line of Python's traceback for it, `ErrorClass: message` (its first line
  only, a module prefix for classes outside builtins), exactly as reference.py records it.

Only our own corpus programs are run this way: it is real Python, not a sandbox.

`run_programs(paths, fresh=True)` runs each program in its own child process (how the
goldens are made); `fresh=False` runs them all in one child, resetting grad mode, print
options and the default dtype between programs (how the test checks the goldens are still
what PyTorch prints: one `import torch` instead of one per program).
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from autodiff.interpreter import torch_child
from autodiff.interpreter.reference import FLOAT_ENV, has_torch_import, normalize_addresses

TIMEOUT = 300.0  # seconds for one child (a batch of programs or one program)


@dataclass
class TorchResult:
    stdout: str  # addresses written 0xADDR
    error: str | None  # "ErrorClass: message" when the program raised, else None
    stderr: str  # warnings and the traceback, never compared


# The child: argv is a JSON file of [{"path", "prepend"}, ...] and a results file that gets
# one JSON line per program as soon as it finishes.
_CHILD_TEMPLATE = r'''
import io, json, linecache, sys, traceback, warnings
jobs_path, results_path = sys.argv[1], sys.argv[2]
with open(jobs_path, encoding="utf-8") as f:
    jobs = json.load(f)
import numpy
import torch
numpy_options = numpy.get_printoptions()
real_out, real_err = sys.stdout, sys.stderr


{error_line}

with open(results_path, "w", encoding="utf-8") as results:
    for job in jobs:
        path = job["path"]
        with open(path, encoding="utf-8") as f:
            source = f.read()
        linecache.cache[path] = (len(source), None, source.splitlines(True), path)
        # what a fresh interpreter starts with
        torch.set_grad_enabled(True)
        torch.set_printoptions(profile="default")
        torch.set_default_dtype(torch.float32)
        numpy.set_printoptions(**numpy_options)
        namespace = {"__name__": "__main__"}
        out, err = io.StringIO(), io.StringIO()
        error = None
        sys.stdout, sys.stderr = out, err
        try:
            with warnings.catch_warnings():
                warnings.resetwarnings()
                code = compile(source, path, "exec")
                if job["prepend"]:
                    exec("import torch", namespace)
                exec(code, namespace)
        except SystemExit as exc:
            if not (exc.code is None or exc.code == 0):
                error = f"SystemExit: {exc.code}"
        except BaseException as exc:
            error = error_line(exc)
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != path:
                tb = tb.tb_next
            traceback.print_exception(type(exc), exc, tb, file=err)
        finally:
            sys.stdout, sys.stderr = real_out, real_err
        results.write(json.dumps({"stdout": out.getvalue(), "stderr": err.getvalue(),
                                  "error": error}) + "\n")
        results.flush()
'''
# the error line exactly as the torch reference's child records it: one definition for both
_CHILD = _CHILD_TEMPLATE.replace("{error_line}", inspect.getsource(torch_child.error_line))


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(FLOAT_ENV, PYTHONHASHSEED="0",
               PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONSTARTUP", None)
    env.pop("PYTHONINSPECT", None)
    return env


def _run_batch(paths: list[Path], python: str) -> list[TorchResult]:
    jobs = [{"path": str(p.resolve()), "prepend": not has_torch_import(p.read_text("utf-8"))}
            for p in paths]
    with tempfile.TemporaryDirectory(prefix="tg-corpus-") as tmp:
        child, jobs_file, results_file = (os.path.join(tmp, n) for n in
                                          ("child.py", "jobs.json", "results.jsonl"))
        Path(child).write_text(_CHILD, encoding="utf-8")
        Path(jobs_file).write_text(json.dumps(jobs), encoding="utf-8")
        proc = subprocess.run([python, child, jobs_file, results_file], cwd=tmp,
                              stdin=subprocess.DEVNULL, capture_output=True,
                              env=_child_env(), timeout=TIMEOUT)
        rows = []
        if os.path.exists(results_file):
            rows = [json.loads(line) for line in
                    Path(results_file).read_text(encoding="utf-8").splitlines()]
    if proc.returncode != 0 or len(rows) != len(paths):
        where = paths[len(rows)].name if len(rows) < len(paths) else "the batch"
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise RuntimeError(f"the torch run died at {where}: {tail[0] if tail else '?'}")
    # paths in the traceback are the child's absolute ones; the golden holds only stdout
    return [TorchResult(normalize_addresses(r["stdout"]), r["error"], r["stderr"])
            for r in rows]


def torch_python_available(python: str = sys.executable) -> bool:
    proc = subprocess.run([python, "-c", "import torch, numpy"], capture_output=True)
    return proc.returncode == 0


def run_programs(paths: list[Path], *, fresh: bool = True, jobs: int = 2,
                 python: str = sys.executable) -> list[TorchResult]:
    """Each program's stdout and error under real PyTorch, in the order given."""
    if not fresh:
        return _run_batch(list(paths), python)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return [batch[0] for batch in pool.map(lambda p: _run_batch([p], python), paths)]
