"""The command matrix in its other modes: in Chinese (`--lang zh`), over the tutorial-patterns
corpus, and through the console script on a pseudo-terminal (colour on, the terminal's own
width, stdout and stderr each a terminal). Same expectations as tests/test_matrix.py, in the
case's language, and never a traceback.

The full space is (samples + corpus) × commands × modes; tests/test_matrix.py runs every
command on every sample in English. Here each (program, mode) pair runs a few commands,
chosen by a rotation so that within a mode every command meets about as many programs as the
others and each program meets different commands in different modes: every program and
every command is covered in every mode, at a fraction of the cross product's time.
"""

from __future__ import annotations

import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest
from test_matrix import (COMMANDS, CONSOLE_SAMPLES, EXE, HAS_DOT, ROOT, SAMPLES, Command,
                         Outcome, baseline, in_process, problems)

from tiers import sampled

from autodiff.cli.explain import explain_path
from autodiff.text.i18n import language

CORPUS = sorted((ROOT / "corpus").glob("*.tg"))
NAMES = list(COMMANDS)
# How many commands each (program, mode) pair runs. In process a case costs about a tenth
# of a second (check re-runs the program, so more); on a terminal a process about half.
PER_PROGRAM = {"zh": 2, "corpus": 3, "pty": 3}
PTY_PROGRAMS = [ROOT / "samples" / f"{s}.tg" for s in CONSOLE_SAMPLES] + CORPUS[::8]
# explain shows every backward call: a training loop's 1500 calls print 900,000 lines in
# 40 s. On a program with more calls than this, the matrix explains the first one only.
MANY_CALLS = 20
EXPLAIN_FIRST = Command(("explain", "--call", "1"),
                        lambda f, o, e, t: explain_path(f, call=1, out=o, err=e, no_color=True),
                        "backward", COMMANDS["explain"].drawn)
# Corpus programs on which check reports a mismatch (exit 1, its documented verdict), and
# why. A program that starts or stops doing so fails the test: record it here on purpose.
CHECK_MISMATCHES = {
    "blogzh_register_hook": "a hook doubles the gradient: autograd's value is not the slope",
    "pt_docs_extending_linear_function": "the last call passes weight.detach(): autograd gives "
                                         "weight nothing, its values still move the output",
}
ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def rotation(index: int, count: int, offset: int = 0) -> list[str]:
    """`count` commands for the program at `index`: consecutive in the command list, so
    consecutive programs share the commands out evenly."""
    start = (index * count + offset) % len(NAMES)
    return [NAMES[(start + k) % len(NAMES)] for k in range(count)]


def cases(programs: list[Path], mode: str, offset: int = 0) -> list[tuple[Path, str]]:
    return [(program, name) for i, program in enumerate(programs)
            for name in rotation(i, PER_PROGRAM[mode], offset)]


ZH_CASES = cases(SAMPLES + CORPUS, "zh", offset=4)
CORPUS_CASES = cases(CORPUS, "corpus")
PTY_CASES = [(program, name, ("en", "zh")[i % 2])
             for i, (program, name) in enumerate(cases(PTY_PROGRAMS, "pty", offset=2))]


def _id(case) -> str:
    return "-".join([case[0].parent.name[:1] + ":" + case[0].stem, *case[1:]])


def _skip_without_dot(name: str) -> None:
    if "-o" in COMMANDS[name].args and not HAS_DOT:
        pytest.skip("Graphviz's dot is not installed")


def command_for(program: Path, name: str) -> Command:
    if name == "explain" and baseline(program).backward_calls > MANY_CALLS:
        return EXPLAIN_FIRST
    return COMMANDS[name]


def check(program: Path, name: str, got: Outcome, tmp: Path, lang: str = "en") -> list[str]:
    mismatch = program.stem in CHECK_MISMATCHES
    found = problems(program, name, got, tmp, lang, command_for(program, name), mismatch)
    if mismatch and name == "check" and got.status == 0:
        found.append("check reports no mismatch now: take it out of CHECK_MISMATCHES")
    return found


@pytest.mark.parametrize("case", sampled(ZH_CASES, lambda i, _: i % 4 == 0, _id))
def test_command_in_chinese(case, tmp_path: Path) -> None:
    program, name = case
    _skip_without_dot(name)
    with language("zh"):
        got = in_process(program, command_for(program, name), tmp_path)
    found = check(program, name, got, tmp_path, "zh")
    assert not found, f"autodiff --lang zh {name} {program.name}: " + "; ".join(found)


@pytest.mark.parametrize("case", sampled(CORPUS_CASES, lambda i, _: i % 5 == 0, _id))
def test_command_on_the_corpus(case, tmp_path: Path) -> None:
    program, name = case
    _skip_without_dot(name)
    found = check(program, name, in_process(program, command_for(program, name), tmp_path),
                  tmp_path)
    assert not found, f"autodiff {name} {program.name}: " + "; ".join(found)


@pytest.mark.parametrize("program", sorted(CHECK_MISMATCHES))
def test_check_on_the_corpus_mismatches_where_recorded(program: str, tmp_path: Path) -> None:
    """The rotation meets few of them: each listed program is checked here, in English."""
    path = ROOT / "corpus" / f"{program}.tg"
    found = check(path, "check", in_process(path, COMMANDS["check"], tmp_path), tmp_path)
    assert not found, f"autodiff check {path.name}: " + "; ".join(found)


# --- on a pseudo-terminal -------------------------------------------------------------------

def on_terminal(args: list[str], columns: int = 100, timeout: float = 120) -> Outcome:
    """The console script with stdout and stderr each on its own pseudo-terminal, read to the
    end; what the terminal shows, with colours and the terminal's \\r\\n line ends taken out."""
    masters, slaves = [], []
    for _ in range(2):
        master, slave = pty.openpty()
        _set_size(slave, columns)
        masters.append(master)
        slaves.append(slave)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    process = subprocess.Popen([EXE, *args], stdin=subprocess.DEVNULL, stdout=slaves[0],
                               stderr=slaves[1], env=env, cwd=ROOT, close_fds=True)
    for slave in slaves:
        os.close(slave)
    chunks: dict[int, list[bytes]] = {m: [] for m in masters}
    open_ = set(masters)
    deadline = time.monotonic() + timeout
    while open_ and time.monotonic() < deadline:
        ready, _, _ = select.select(list(open_), [], [], 1.0)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the process closed its end
                data = b""
            if data:
                chunks[fd].append(data)
            else:
                open_.discard(fd)
    if open_:
        process.kill()
    status = process.wait(timeout=30)
    for master in masters:
        os.close(master)

    def shown(fd: int) -> str:
        text = b"".join(chunks[fd]).decode("utf-8", "replace").replace("\r\n", "\n")
        return ANSI.sub("", text)

    return Outcome(status, shown(masters[0]), shown(masters[1]))


def _set_size(fd: int, columns: int) -> None:
    import fcntl

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))


@pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")
@pytest.mark.parametrize("case", sampled(PTY_CASES, lambda i, _: i % 4 == 0, _id))
def test_command_on_a_terminal(case, tmp_path: Path) -> None:
    program, name, lang = case
    _skip_without_dot(name)
    command = command_for(program, name)
    args = ["--lang", lang, *[a.format(tmp=tmp_path) for a in command.args], str(program)]
    got = on_terminal(args)
    found = check(program, name, got, tmp_path, lang)
    assert not found, f"autodiff {' '.join(args)} (on a terminal): " + "; ".join(found)


def test_the_terminal_is_a_terminal() -> None:
    """Rich sees the pseudo-terminal: colour codes come out (taken out before the checks),
    and the report is drawn to the terminal's width."""
    if EXE is None:
        pytest.skip("the autodiff console script is not installed")
    sample = str(ROOT / "samples" / "seed_scalar_derivative.tg")
    got = on_terminal(["--lang", "zh", "run", sample], columns=60)
    assert got.status == 0 and "─ 张量 ─" in got.stdout
    rule = next(line for line in got.stdout.splitlines() if "张量" in line)
    from autodiff.text.display import text_width

    assert text_width(rule) == 60
    raw_master, raw_slave = pty.openpty()
    _set_size(raw_slave, 60)
    done = subprocess.run([EXE, "run", sample], stdout=raw_slave, stderr=subprocess.PIPE,
                          env={k: v for k, v in os.environ.items() if k != "NO_COLOR"},
                          cwd=ROOT, timeout=120)
    os.close(raw_slave)
    raw = os.read(raw_master, 65536)
    os.close(raw_master)
    assert done.returncode == 0 and b"\x1b[" in raw  # coloured: Rich took it for a terminal


# --- the size of the matrix ---------------------------------------------------------------

def test_the_sampling_covers_every_program_and_command_in_every_mode() -> None:
    for mode_cases, programs in ((ZH_CASES, SAMPLES + CORPUS), (CORPUS_CASES, CORPUS),
                                 ([c[:2] for c in PTY_CASES], PTY_PROGRAMS)):
        assert {p for p, _ in mode_cases} == set(programs)
        per_command = [sum(n == name for _, n in mode_cases) for name in NAMES]
        assert min(per_command) >= 1 and max(per_command) - min(per_command) <= 1
    assert {lang for *_, lang in PTY_CASES} == {"en", "zh"}
    assert len(CORPUS) >= 70 and len(SAMPLES) >= 100
