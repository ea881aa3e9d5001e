"""Run a .tg program under the reference implementation: real PyTorch.

This runs the program text as real Python: that is the reference's purpose, and the reason
it runs only inside walls (docs/security.md, "The torch reference"). Here, in autodiff's
process, autodiff's own parser and compiler must accept the text (reference_gate); the rest
happens in a child Python (torch_child.py, run by `python`, which needs only torch): the
allow-list on CPython's reading of the text, every attribute access checked on its object,
an audit hook, resource limits, an empty working folder and a scrubbed environment.

The contract (shared/spec/tg-language.md) says a .tg program must print exactly what
``python`` prints for the same text with PyTorch installed, with ``import torch`` prepended
when the program lacks it, after replacing object addresses ``0x[0-9a-f]+`` by a fixed
token. The child binds ``torch`` in the program's namespace instead of editing the text
(line numbers stay the program's own). A program "lacks" ``import torch`` when it has no
plain ``import torch`` statement (``import torch.nn as nn`` alone binds only ``nn``).

The child runs with ``FLOAT_ENV`` (one thread, and MKL's compatible code path: stable float
results on any x86 CPU), ``PYTHONHASHSEED=0`` and ``PYTHONIOENCODING=utf-8``. Each program's stdout is
its golden text; stderr (warnings, the traceback) is kept apart. When the program raises,
``error`` is Python's own last traceback line, ``ErrorClass: message`` (non-builtin classes
keep their module prefix, ``torch._C._LinAlgError: ...``; of a message of several lines,
the line naming the class).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from autodiff.parser import TgError, parse
from autodiff.parser import ast as tg_ast
from autodiff.text.diagnostics import restored

from .reference_gate import REFUSED, STOPPED, check_program, language_surface

__all__ = [
    "ADDRESS_RE",
    "ADDRESS_TOKEN",
    "ReferenceResult",
    "ReferenceRunError",
    "ReferenceRefused",
    "ReferenceTimeout",
    "ReferenceLimit",
    "normalize_addresses",
    "has_torch_import",
    "torch_available",
    "run_with_torch",
    "run_many_with_torch",
    "reference_outcomes",
]

ADDRESS_RE = re.compile(r"0x[0-9a-f]+")
ADDRESS_TOKEN = "0xADDR"


# torch's float results as one machine gives them: one thread (reductions add in one order), and
# MKL's compatible code path, which MKL takes on AMD CPUs and which an Intel CPU otherwise leaves
# for its own AVX paths (other sums, other signs of zero in matrix products).
FLOAT_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MKL_CBWR": "COMPATIBLE"}


def normalize_addresses(text: str) -> str:
    """Replace every ``0x[0-9a-f]+`` (object addresses) with ``0xADDR``."""
    return ADDRESS_RE.sub(ADDRESS_TOKEN, text)


@dataclass
class ReferenceResult:
    """Outcome of running one program under real PyTorch."""

    stdout: str  # address-normalized stdout, exact text otherwise
    exit_code: int  # 0 when the program ran to the end, 1 when it raised
    error: str | None  # "ErrorClass: message" (one line) when it raised, else None
    stderr: str = field(default="", repr=False)  # raw stderr: warnings, traceback


class ReferenceRunError(RuntimeError):
    """The reference run itself could not be carried out (not a program error)."""


class ReferenceTimeout(ReferenceRunError):
    """The program did not finish within the timeout."""


class ReferenceLimit(ReferenceRunError):
    """The program reached the memory limit under torch: no golden comes of it."""


class ReferenceRefused(ReferenceRunError):
    """The program is not valid .tg, so it was not run as real Python, or it was stopped
    while it ran (`error.error_class` is "stopped"); its text is the diagnostic
    (`FILE:LINE:COL: Class: message`, the source line, a caret)."""

    def __init__(self, error: TgError, source: str) -> None:
        super().__init__(error.render(source))
        self.error, self.source = error, source

    def __reduce__(self):  # (it crosses process pools)
        return restored, (type(self), self.args, self.__dict__)


def refuse_unless_tg(source: str, filename: str) -> None:
    """Raise ReferenceRefused unless autodiff's parser, compiler and name checks accept it."""
    error = check_program(source, filename)
    if error is not None:
        raise ReferenceRefused(error, source)


def _child_refusal(diagnostic: dict, source: str, filename: str) -> ReferenceRefused:
    """The child's gate refused the text as CPython reads it, or stopped it while it ran."""
    error = TgError(STOPPED if diagnostic.get("stopped") else REFUSED, diagnostic["message"], filename=filename, line=diagnostic["line"],
                    col=diagnostic["col"], end_col=diagnostic["end_col"])
    return ReferenceRefused(error, source)


def torch_available() -> bool:
    """True when ``torch`` can be imported by this interpreter (not imported here)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


_IMPORT_TORCH_LINE = re.compile(r"^[ \t]*import[ \t]+torch[ \t]*(?:#.*)?$", re.MULTILINE)


def has_torch_import(source: str) -> bool:
    """Whether the program has its own plain ``import torch`` statement.

    Read with autodiff's parser, not Python's: compile() can fail spuriously in CPython 3.11
    while another thread changes the recursion limit (see interpreter._RECURSION_LIMIT)."""
    try:
        tree = parse(source, "<program>")
    except TgError:
        return bool(_IMPORT_TORCH_LINE.search(source))
    return any(type(node) is tg_ast.Import and node.module == "torch" and node.asname is None
               for node in tg_ast.walk(tree))




CHILD = Path(__file__).with_name("torch_child.py")
# the run's in-memory files, which the child gives its programs as autodiff does
FILES = Path(__file__).resolve().parent.parent / "engine" / "core" / "files.py"
# Top-level packages the child may import after it started (torch loads parts on first use);
# everything already loaded stays usable
IMPORTABLE = ("torch", "numpy", "functorch", "torchgen", "sympy", "mpmath", "typing_extensions",
              "filelock", "fsspec", "jinja2", "markupsafe", "networkx", "opt_einsum")
# what torch.optim (an optimizer's first step) and torch.func load on first use: loaded before
# the program runs and any wall is up (it makes cache folders), for a program that names them
DYNAMO_PRELOAD = ("torch._dynamo",)
_NEEDS_DYNAMO = re.compile(r"optim|\bfunc\b")
MEMORY_SLACK = 256 << 20  # thread stacks and the allocator's own, above the program's data


def default_max_memory() -> int | None:
    """As autodiff's own default: a quarter of the machine's memory."""
    from autodiff.engine.core.session import DEFAULT_MAX_BYTES

    return DEFAULT_MAX_BYTES


def _child_env(home: str) -> dict[str, str]:
    """Only what Python and torch need: nothing of the user's own environment (its tokens and
    paths) reaches a program, nor a PYTHON* variable that would change how the child starts.
    `home` is a folder of the child's own for what torch writes while it starts (a cache
    folder), before the program runs and any wall is up."""
    env = {"PATH": os.defpath, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
           "LC_ALL": "C.UTF-8", **FLOAT_ENV,
           "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONNOUSERSITE": "" if _user_site_has_torch() else "1"}
    if "LD_LIBRARY_PATH" in os.environ:  # some installations find torch's libraries only so
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    return {k: v for k, v in env.items() if v}


def _user_site_has_torch() -> bool:
    """torch installed with `pip install --user`: the child needs the user's site then."""
    import site

    user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    return bool(user) and os.path.isdir(os.path.join(user, "torch"))


def _read_rows(pipe: int, rows: list) -> None:
    with os.fdopen(pipe, encoding="utf-8", errors="replace") as results:
        for line in results:
            if line.endswith("\n"):
                rows.append(json.loads(line))


def _run_jobs(jobs: list[dict], *, timeout: float, python: str, max_memory: int | None,
              what: str) -> tuple[list[dict], subprocess.CompletedProcess]:
    """Run the jobs from one child, each in a process of its own: (one result row per job
    it finished, the child process)."""
    limits = {"max_memory": max_memory, "slack": MEMORY_SLACK,
              "cpu_seconds": timeout + 5, "importable": IMPORTABLE,
              "preload": DYNAMO_PRELOAD if any(_NEEDS_DYNAMO.search(job["source"])
                                               for job in jobs) else ()}
    with tempfile.TemporaryDirectory(prefix="tg-ref-") as tmp:
        work, home = os.path.join(tmp, "work"), os.path.join(tmp, "home")
        os.mkdir(work)  # the child's working folder: empty, and it stays so
        os.mkdir(home)
        paths = {}
        for name, data in (("jobs.json", json.dumps(jobs)),
                           ("surface.json", json.dumps(language_surface())),
                           ("torch_child.py", CHILD.read_text(encoding="utf-8")),
                           ("files.py", FILES.read_text(encoding="utf-8"))):
            paths[name] = os.path.join(tmp, name)
            with open(paths[name], "w", encoding="utf-8") as f:
                f.write(data)
        limits["files_module"] = paths["files.py"]
        read_end, write_end = os.pipe()
        rows: list[dict] = []
        reader = threading.Thread(target=_read_rows, args=(read_end, rows), daemon=True)
        cmd = [python, paths["torch_child.py"], paths["jobs.json"], paths["surface.json"],
               str(write_end), json.dumps(limits)]
        try:  # a session of its own: a timeout ends the program's process with the child's
            child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=work, env=_child_env(home),
                                     pass_fds=(write_end,), start_new_session=True)
        except OSError as exc:
            os.close(read_end)
            raise ReferenceRunError(f"cannot start {python!r}: {exc}") from exc
        finally:
            os.close(write_end)
        reader.start()
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            child.communicate()
            raise ReferenceTimeout(f"{what} did not finish within {timeout:g} s") from exc
        finally:
            reader.join()
        left = os.listdir(work)  # nothing can write there: a tripwire for the walls
        if left:
            raise ReferenceRunError(f"the {what} wrote into its folder ({', '.join(left[:3])}): "
                                    "its output is not trusted")
    return rows, subprocess.CompletedProcess(cmd, child.returncode, stdout, stderr)


def _outcome(row: dict, source: str, shown: str) -> ReferenceResult | ReferenceRunError:
    if "refused" in row:
        return _child_refusal(row["refused"], source, shown)
    if row.get("limit") == "memory":
        return ReferenceLimit(f"{shown}: the program reached the memory limit under torch "
                              f"(--max-memory): {row['error']}")
    if row.get("limit") == "cpu":
        return ReferenceTimeout(f"{shown}: {row['error']} under torch")
    if "crashed" in row:
        return ReferenceRunError(row["crashed"])
    return ReferenceResult(normalize_addresses(row["stdout"]), row["exit_code"], row["error"],
                           row["stderr"])


def reference_outcomes(
    sources: list[str],
    *,
    timeout: float | None = None,
    python: str = sys.executable,
    filenames: list[str] | None = None,
    max_memory: int | None = None,
    misspellings: str = "refuse",
) -> list[ReferenceResult | ReferenceRunError | None]:
    """Run many programs under real PyTorch from ONE child process (torch is imported once),
    each in a process forked for it: for each, its result, or the error that refused,
    stopped or limited it (a stop or a crash ends that program's process alone).

    Each program starts from the state of a fresh process (torch's random generator, its
    default dtype, warning filters), with a fresh ``__main__`` namespace, ``torch`` bound
    unless it imports it itself, grad mode enabled, and its own captured stdout, stderr
    and one-line ``ErrorClass: message``. A program ending
    with ``exit(n)``, n != 0, gets exit code n and no error. ``timeout`` bounds the whole
    batch (default: 60 s plus 2 s per program): past it ``ReferenceTimeout`` is raised, and
    ``ReferenceRunError`` when the child dies without a word. ``max_memory``: the programs'
    memory (default: autodiff's own).

    ``misspellings``: "refuse" (what every command does: a name outside the language may be
    one torch has) or "fail", for the project's own programs whose goldens must show
    PyTorch's error for a typo: a name outside the language then passes the allow-list, and
    the guard lets it fail with Python's own AttributeError where nothing has it (it still
    stops one that something has).
    """
    if misspellings not in ("refuse", "fail"):
        raise ValueError(f"misspellings must be 'refuse' or 'fail', not {misspellings!r}")
    sources = list(sources)
    if filenames is None:
        filenames = [f"<program {i}>" for i in range(len(sources))]
    if len(filenames) != len(sources):
        raise ValueError("filenames must name each source once")
    if timeout is None:
        timeout = 60.0 + 2.0 * len(sources)
    outcomes: list = []
    for source, shown in zip(sources, filenames):  # autodiff's own checks: no process yet
        try:
            refuse_unless_tg(source, shown)
            outcomes.append(None)
        except ReferenceRefused as refused:
            outcomes.append(refused)
    todo = [i for i, outcome in enumerate(outcomes) if outcome is None]
    if not todo:
        return outcomes
    jobs = [{"source": sources[i], "prepend": not has_torch_import(sources[i]),
             "shown": filenames[i], "misspellings": misspellings == "fail"} for i in todo]
    rows, proc = _run_jobs(jobs, timeout=timeout, python=python, what="reference run",
                           max_memory=max_memory or default_max_memory())
    for i, row in zip(todo, rows):
        outcomes[i] = _outcome(row, sources[i], filenames[i])
    if proc.returncode != 0 or len(rows) < len(todo):
        tail = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:]
        where = f" while running {filenames[todo[len(rows)]]}" if len(rows) < len(todo) else ""
        raise ReferenceRunError(f"reference run failed with exit code {proc.returncode}{where}: "
                                f"{tail[0] if tail else '(no stderr)'}")
    return outcomes


def run_many_with_torch(sources: list[str], **options) -> list[ReferenceResult]:
    """``reference_outcomes``' results (same options), raising the first refusal or limit."""
    outcomes = reference_outcomes(sources, **options)
    for outcome in outcomes:
        if outcome is None or isinstance(outcome, ReferenceRunError):
            raise outcome or ReferenceRunError("the reference run ended early")
    return outcomes


def run_with_torch(
    source: str,
    *,
    timeout: float = 60.0,
    python: str = sys.executable,
    filename: str = "<program>",
    max_memory: int | None = None,
    misspellings: str = "refuse",
) -> ReferenceResult:
    """Run one program under real PyTorch, in a child process of its own.

    Returns the address-normalized stdout, the exit code (0 ok, 1 the program raised) and
    the one-line ``ErrorClass: message``; raises ``ReferenceRefused`` (refused before it ran,
    or stopped while it ran), ``ReferenceLimit``, ``ReferenceTimeout`` (``timeout`` includes
    torch's start-up) or ``ReferenceRunError``. ``filename`` is the name shown in
    diagnostics and in the traceback kept in ``stderr``.
    """
    [outcome] = run_many_with_torch([source], timeout=timeout, python=python,
                                    filenames=[filename], max_memory=max_memory,
                                    misspellings=misspellings)
    return outcome
