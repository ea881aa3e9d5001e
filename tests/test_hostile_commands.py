"""Every command under hostile input, through the installed console script: each failure
measured in issue 15 is a case here. The promise: bounded, stoppable, never a traceback.

Time limits are short (1 s), so each case also checks that the command ended within its
deadline plus 1 s (plus the interpreter's own start, measured apart as START)."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tiers import slow

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
EXE = shutil.which("autodiff")
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
START = 2.0  # seconds the console script may take to start and to report, on a busy machine
LIMIT = 3  # the exit status for a limit reached

pytestmark = pytest.mark.skipif(EXE is None, reason="the autodiff console script is not installed")

C_LOOP = "print('started')\nprint(sum(range(10**15)))\n"  # C code: never back in the interpreter


def autodiff(*args, stdin: str | bytes | None = None, timeout: float = 120, cwd=None):
    """(process, seconds) of one console-script run."""
    start = time.monotonic()
    proc = subprocess.run([EXE, *map(str, args)], capture_output=True, env=ENV, timeout=timeout,
                          input=stdin.encode() if isinstance(stdin, str) else stdin, cwd=cwd)
    proc.out = proc.stdout.decode("utf-8", "replace")
    proc.err = proc.stderr.decode("utf-8", "replace")
    return proc, time.monotonic() - start


def clean(proc, code: int, *fragments: str) -> str:
    """The run ended with `code` and one diagnostic, no traceback; its stderr."""
    assert proc.returncode == code, (proc.returncode, proc.err)
    assert "Traceback" not in proc.err and "internal error" not in proc.err, proc.err
    for fragment in fragments:
        assert fragment in proc.err, proc.err
    return proc.err


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


# --- C-level loops stop within the deadline + 1 s under every command ---------------------

@slow
@pytest.mark.parametrize("command", ["run", "graph", "explain", "check"])
def test_a_loop_in_c_stops_at_the_deadline(tmp_path, command):
    program = write(tmp_path, "sum.tg", C_LOOP)
    proc, seconds = autodiff(command, program, "--timeout", "1")
    assert seconds < 1 + 1 + START
    err = clean(proc, LIMIT, "sum.tg: TimeoutError: the program ran longer than 1 s (--timeout)")
    assert len(err.strip().splitlines()) == 1


def test_a_loop_in_c_stops_in_test_and_the_others_pass(tmp_path):
    write(tmp_path, "sum.tg", C_LOOP)
    write(tmp_path, "sum.out", "started\n")
    for suffix in (".tg", ".out"):
        shutil.copy(SAMPLES / f"seed_scalar_derivative{suffix}", tmp_path)
    report = tmp_path / "report.xml"
    proc, seconds = autodiff("test", tmp_path, "--timeout", "1", "--junit-xml", report)
    assert seconds < 1 + 1 + START
    clean(proc, 1)
    assert "FAILED" in proc.out and "TimeoutError: the program ran longer than 1 s" in proc.out
    assert proc.out.splitlines()[-1] == "1 passed, 1 failed"
    assert ET.parse(report).getroot().get("failures") == "1"


def test_a_loop_in_c_stops_in_the_repl_and_the_session_goes_on():
    proc, seconds = autodiff("repl", "--timeout", "1",
                             stdin="x = 2\nprint(sum(range(10**15)))\nx + 1\n")
    assert seconds < 1 + 1 + START
    clean(proc, 0, "<stdin>: TimeoutError: the program ran longer than 1 s (--timeout)")
    assert proc.out.rstrip().endswith("3\n>>>") or "3\n" in proc.out


def test_an_input_over_the_memory_limit_runs_once_in_the_repl_and_the_session_goes_on():
    """Each input runs once, in a child under the limits that carries the session on: one
    over the memory limit is reported as the limit and dropped (it ran a second time in
    the uncapped session, 1.75 GB, and was kept)."""
    proc, _ = autodiff("repl", "--max-memory", "200M", stdin="x = 2\n"
                       "z = [[0]*9000000 for i in range(25)]\nprint(x + 1)\nz\n")
    err = clean(proc, 0, "<stdin>:1:6: MemoryError\n    z = [[0]*9000000 for i in range(25)]",
                "NameError: name 'z' is not defined")
    assert proc.out == "3\n" and err.count("MemoryError") == 1


def _repl_in_a_session_of_its_own(before: bytes, last: bytes = b"", settle: float = 1.5):
    """A REPL that ran ``before`` and is inside ``last`` (a loop), in a session of its own.

    The REPL prints no prompt into a pipe, so a marker line says when ``before`` has run:
    a fixed sleep was too short on a loaded machine, the signal arriving before the
    command's handlers were in place."""
    proc = subprocess.Popen([EXE, "repl", "--timeout", "30"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    proc.stdin.write(before + b"print('ready')\n" + last)
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    assert ready and proc.stdout.readline() == b"ready\n"
    # (inside the loop of ``last``; and the input's process has handed the session on)
    time.sleep(settle)
    return proc


def test_ctrl_c_drops_a_repl_input_in_a_loop_and_leaves_no_process_behind():
    proc = _repl_in_a_session_of_its_own(b"x = 1\ny = 2\n", b"print(sum(range(10**15)))\n")
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: to the whole process group
    time.sleep(0.5)
    proc.stdin.write(b"print(x + y)\n")
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert proc.stdout.read() == b"3\n" and proc.stderr.read().strip() == b"KeyboardInterrupt"
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # every process of the session ended and was waited for


# A known defect, not yet fixed: a SIGTERM to an idle REPL session whose inputs ran in
# chained processes is sometimes lost (exit 0 at the end of input) or raised a second time
# after the session reported it (a traceback at its exit): about 1 run in 3 on a loaded
# machine. The loop case holds.
@pytest.mark.parametrize("last", [b"", b"print(sum(range(10**15)))\n"])
def test_sigterm_ends_a_repl_session(last):
    proc = _repl_in_a_session_of_its_own(b"x = 1\n", last)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)  # to the command's process, which passes it on
    # (stdin stays open: an end of input racing the signal would end the session by itself)
    code = proc.wait(timeout=30)
    assert time.monotonic() - start < 2
    assert code == 143 and proc.stderr.read().decode().strip() == "autodiff: terminated"
    proc.stdin.close()


def test_sigterm_racing_the_end_of_input_never_gives_a_traceback():
    """The input ends as the signal arrives: the session ends either way (143, or 0 when the
    end of input came first), in one line or none, never a traceback."""
    for _ in range(3):
        proc = _repl_in_a_session_of_its_own(b"x = 1\n", settle=0)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)  # (closes stdin at once: the race)
        assert proc.returncode in (0, 143), err
        assert err.decode().strip() in ("", "autodiff: terminated")


@pytest.mark.parametrize("sig,code,message", [(signal.SIGINT, 130, "autodiff: interrupted"),
                                              (signal.SIGTERM, 143, "autodiff: terminated")])
def test_signals_stop_a_loop_in_c(tmp_path, sig, code, message):
    program = write(tmp_path, "sum.tg", C_LOOP)
    proc = subprocess.Popen([EXE, "run", "--quiet", str(program)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"started\n"
    start = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 2
    assert proc.returncode == code and err.decode().strip() == message


def test_ctrl_c_stops_every_worker_of_test_at_once(tmp_path):
    for i in range(4):
        write(tmp_path, f"s{i}.tg", C_LOOP)
        write(tmp_path, f"s{i}.out", "started\n")
    proc = subprocess.Popen([EXE, "test", str(tmp_path), "-j", "2"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(1.5)  # the first two programs are inside their loops (each may take 60 s)
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: to the whole process group
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 2
    assert proc.returncode == 130 and err.decode().strip() == "autodiff: interrupted"
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # no worker left behind


# --- process limits outside `run`, and input read through them --------------------------

@pytest.mark.parametrize("body,where", [
    ("    try:\n        x = 1 / 0\n    except Exception as e:\n        kept.append(e)\n", "2:"),
    ("    kept.append([1])\n", "3:5"),
])
@slow
def test_a_program_that_keeps_all_it_makes_ends_at_the_memory_limit(tmp_path, body, where):
    """It fills the address space with small objects: when every allocation fails, CPython
    cannot unwind the error by itself (it looped there until the deadline, or lost the
    exception: SystemError), nor could the diagnostic be written (an internal error). The
    reserve the capped process holds is let go at the limit: the usual diagnostic, exit 3."""
    program = write(tmp_path, "kept.tg", "kept = []\nwhile True:\n" + body)
    proc, seconds = autodiff("run", program, "--max-memory", "100M")
    err = clean(proc, LIMIT, f"kept.tg:{where}", ": MemoryError")
    assert "SystemError" not in err and seconds < 55


def test_a_shuffled_loader_over_the_memory_limit_is_refused_at_once(tmp_path):
    program = write(tmp_path, "loader.tg", "from torch.utils.data import Dataset, DataLoader\n"
                    "class Rows(Dataset):\n    def __len__(self):\n        return 2 * 10**8\n"
                    "    def __getitem__(self, i):\n        return i\n"
                    "for batch in DataLoader(Rows(), shuffle=True):\n    pass\n")
    proc, seconds = autodiff("run", program, "--max-memory", "100M")
    clean(proc, LIMIT, "loader.tg:7:14: MemoryError: a tensor of shape [200000000] (int64) "
                       "needs 1,600,000,000 bytes, over the memory limit of 104,857,600 bytes")
    assert seconds < 1 + START


@pytest.mark.parametrize("command", ["graph", "explain", "check"])
def test_memory_is_capped_under_every_command(tmp_path, command):
    program = write(tmp_path, "big.tg", "x = torch.ones(2, requires_grad=True)\n"
                                        "y = list(range(3 * 10**8))\n(x * x).sum().backward()\n")
    proc, _ = autodiff(command, program, "--max-memory", "100M")
    clean(proc, LIMIT, "big.tg:2:5: MemoryError")


def test_standard_input_is_read_up_to_the_size_limit():
    proc = subprocess.run(f"{EXE} run --max-memory 100M - < /dev/zero", shell=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == LIMIT
    assert b"<stdin>: MemoryError: the program is larger than 10,000,000 bytes" in proc.stderr


def test_a_fifo_with_no_writer_stops_at_the_deadline(tmp_path):
    fifo = tmp_path / "prog.tg"
    os.mkfifo(fifo)
    proc, seconds = autodiff("run", fifo, "--timeout", "1")
    assert seconds < 1 + 1 + START
    clean(proc, LIMIT, "prog.tg: TimeoutError")


def test_a_fifo_with_a_writer_is_read(tmp_path):
    proc = subprocess.run(["bash", "-c", f"{EXE} run --quiet <(echo 'print(6 * 7)')"],
                          capture_output=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, b"42\n")


# --- parser: Python's errors, never a traceback ---------------------------------------------

@pytest.mark.parametrize("text,message", [
    ('x = "\\N"\n', "malformed \\N character escape"),
    ('x = "\\N{bogus}"\n', "unknown Unicode character name"),
    ('x = "\\U00110000"\n', "illegal Unicode character"),
    ('x = "\\x4"\n', "truncated \\xXX escape"),
    ('x = f"{1}\\N{bogus}"\n', "unknown Unicode character name"),
    ("x = " + "7" * 5000 + "\n", "Exceeds the limit (4300 digits) for integer string conversion"),
    ("x = f'{1:" + "{1:" * 1200 + "}" * 1200 + "}'\n", "f-string: expressions nested too deeply"),
])
def test_malformed_literals_are_syntax_errors(tmp_path, text, message):
    proc, _ = autodiff("run", write(tmp_path, "lit.tg", text))
    clean(proc, 2, "lit.tg:1:5: SyntaxError", message)


def test_named_escapes_work_in_strings_and_f_strings(tmp_path):
    program = write(tmp_path, "named.tg", 'print("\\N{DEGREE SIGN}", f"{1}\\N{DEGREE SIGN}")\n')
    proc, _ = autodiff("run", "--quiet", program)
    assert (proc.returncode, proc.out) == (0, "° 1°\n")


def test_a_thousand_elifs_run_as_in_python(tmp_path):
    lines = ["x = 999", "if x == 0:", "    print('zero')"]
    for i in range(1, 1001):
        lines += [f"elif x == {i}:", f"    print({i})"]
    proc, _ = autodiff("run", "--quiet", write(tmp_path, "elif.tg", "\n".join(lines) + "\n"))
    assert (proc.returncode, proc.out, proc.err) == (0, "999\n", "")


def test_the_deadline_during_parsing_is_a_diagnostic(tmp_path):
    program = write(tmp_path, "long.tg", "x = 1\n" * 2_000_000)  # 12 MB: over the size limit
    proc, _ = autodiff("run", program, "--timeout", "1")
    clean(proc, LIMIT, "long.tg: MemoryError: the program is larger than")
    program = write(tmp_path, "long.tg", "x = 1 + 2 * 3\n" * 600_000)  # 8 MB: seconds to parse
    proc, seconds = autodiff("run", program, "--timeout", "0.5")
    assert seconds < 0.5 + 1 + START
    clean(proc, LIMIT, "long.tg: TimeoutError: the program ran longer than 0.5 s")


def test_the_deadline_during_the_report_is_a_diagnostic(tmp_path):
    text = "x = torch.ones(2, requires_grad=True)\n" + "".join(
        f"t{i} = x * {i}\n" for i in range(20_000)) + "t1.sum().backward()\n"
    proc, seconds = autodiff("run", write(tmp_path, "many.tg", text), "--timeout", "1")
    assert seconds < 1 + 1 + START
    clean(proc, LIMIT, "TimeoutError: the program ran longer than 1 s")


@slow
@pytest.mark.parametrize("value", ["nan", "inf", "1e300", "0", "-1"])
def test_bad_timeouts_are_usage_errors(tmp_path, value):
    program = write(tmp_path, "ok.tg", "print(1)\n")
    for command in ("run", "graph", "explain", "check"):
        proc, _ = autodiff(command, program, "--timeout", value)
        clean(proc, 2, "--timeout: expected a number of seconds")


@pytest.mark.parametrize("value", ["0", "nan", "-1e-6", "inf"])
def test_bad_eps_is_a_usage_error(value):
    proc, _ = autodiff("check", SAMPLES / "seed_scalar_derivative.tg", "--eps", value)
    clean(proc, 2, "--eps: expected a step above 0 and below 1")


# --- state a program makes, read by the report, the graph and the JSON ----------------------

@pytest.mark.parametrize("text,error", [
    ("x = torch.ones(3, requires_grad=True)\nx.requires_grad = torch.ones(3)\n",
     "2:1: RuntimeError: requires_grad must be a bool"),
    ("x = torch.ones(3)\nx.data = [1.0]\n", "2:1: TypeError: Variable data has to be a tensor, but got list"),
    ("x = torch.ones(3)\nx.grad = torch.ones(2)\n",
     "2:1: RuntimeError: attempting to assign a gradient of size '[2]' to a tensor of size '[3]'"),
    ("x = torch.tensor([2**63])\n", "1:5: ValueError: Overflow when unpacking long long"),
    ("x = torch.tensor([10**4000])\ny = x * x\n", "1:5: ValueError: Overflow when unpacking long long"),
    ("n = torch.Size([10**30000] * 20).numel()\n", "1:5: ValueError: Overflow when unpacking long long"),
    ("x = torch.Tensor.add(1, 2)\n",
     "1:5: TypeError: descriptor 'add' for 'torch._C.TensorBase' objects doesn't apply to a 'int' object"),
    ("n = torch.Size.numel([10**30000] * 20)\n",
     "1:5: TypeError: descriptor 'numel' for 'torch.Size' objects doesn't apply to a 'list' object"),
])
@pytest.mark.parametrize("command", [("run",), ("run", "--json"), ("graph",)])
def test_program_made_state_is_checked_where_it_is_made(tmp_path, text, error, command):
    proc, _ = autodiff(*command, write(tmp_path, "state.tg", text))
    clean(proc, 1, f"state.tg:{error}")


def test_a_lone_surrogate_under_json_fails_at_its_print_as_in_python(tmp_path):
    program = write(tmp_path, "s.tg", "print('ok')\nprint('\\ud800')\n")
    proc, _ = autodiff("run", "--json", program)
    document = json.loads(proc.out)
    assert document["output"] == "ok\n" and document["error"]["class"] == "UnicodeEncodeError"
    assert document["error"]["line"] == 2 and proc.returncode == 1
    program = write(tmp_path, "m.tg", "assert False, 'bad \\ud800'\n")
    proc, _ = autodiff("run", "--json", program)  # a surrogate in an error message
    assert json.loads(proc.out)["error"]["message"] == "bad \ud800"


def test_a_bad_escape_in_the_repl_keeps_the_session():
    proc, _ = autodiff("repl", stdin='x = "\\N"\n1 + 1\n')
    clean(proc, 0, "SyntaxError: (unicode error)")
    assert "2\n" in proc.out


@pytest.mark.parametrize("make", ["binary", "folder"])
def test_a_broken_golden_fails_its_case_and_the_run_goes_on(tmp_path, make):
    for name in ("seed_scalar_derivative", "retain_grad"):
        for suffix in (".tg", ".out"):
            shutil.copy(SAMPLES / f"{name}{suffix}", tmp_path)
    broken = tmp_path / "retain_grad.out"
    broken.unlink()
    if make == "binary":
        broken.write_bytes(bytes(range(256)))
    else:
        broken.mkdir()
    report = tmp_path / "r.xml"
    proc, _ = autodiff("test", tmp_path, "--junit-xml", report)
    clean(proc, 1)
    reason = "not UTF-8 text" if make == "binary" else "Is a directory"
    assert f"FAILED {tmp_path}/retain_grad.tg: cannot read {broken}: {reason}" in proc.out
    assert proc.out.splitlines()[-1] == "1 passed, 1 failed"
    assert ET.parse(report).getroot().get("tests") == "2"


def test_a_program_that_crashes_the_tool_fails_alone(tmp_path):
    # deep recursion inside C code (a repr nested 100,000 levels) is the kind of input that
    # could crash an interpreter: whatever happens to that program, the others run
    write(tmp_path, "deep.tg", "a = []\nfor i in range(100000):\n    a = [a]\nprint(a)\n")
    write(tmp_path, "deep.out", "")
    for suffix in (".tg", ".out"):
        shutil.copy(SAMPLES / f"seed_scalar_derivative{suffix}", tmp_path)
    proc, _ = autodiff("test", tmp_path, "--json")
    summary = json.loads(proc.out)
    assert (summary["passed"], summary["failed"]) == (1, 1) and proc.returncode == 1


# --- limits hold for every producer, not three operators ----------------------------------

@pytest.mark.parametrize("text", [
    "x = torch.ones(1).expand(20000, 20000).exp()",
    "x = torch.ones(1).expand(20000, 20000).clone()",
    "x = torch.where(torch.ones(20000, 1) > 0, torch.ones(1, 20000), 0.0)",
    "x = f\"{'':>1000000000}\"",
    "x = '%*d' % (10**9, 1)",
    "x = '{:>1000000000}'.format(1)",
    "s = 'a' * 10**7\nx = s + s",
    "s = 'a' * 10**6\nx = ''.join([s] * 11)",
    "s = 'a' * 10**4\nx = s.replace('', s)",
])
def test_sizes_are_bounded_whatever_makes_them(tmp_path, text):
    proc, seconds = autodiff("run", write(tmp_path, "big.tg", text + "\n"), "--max-memory", "100M")
    clean(proc, LIMIT, "big.tg:", "MemoryError")
    assert seconds < 10


# --- linear time -----------------------------------------------------------------------------

def test_a_long_power_chain_parses_in_linear_time(tmp_path):
    program = write(tmp_path, "pow.tg", "x = " + " ** ".join(["1"] * 10_000) + "\n")  # 50 KB
    proc, seconds = autodiff("run", program)
    clean(proc, 2, "SyntaxError: expression nested too deeply")
    assert seconds < 5


@slow
def test_ten_thousand_lines_report_in_linear_time(tmp_path):
    text = "x = torch.tensor(1.0, requires_grad=True)\n" + "".join(
        f"t{i} = (x * {i}).detach()\n" if i % 2 else f"t{i} = x * {i}\n" for i in range(2, 10_002))
    proc, seconds = autodiff("run", "--json", write(tmp_path, "lines.tg", text + "t2.backward()\n"))
    assert proc.returncode == 0 and seconds < 20
    reasons = {t["name"]: t["grad_none_reason"] for t in json.loads(proc.out)["tensors"]}
    assert reasons["t3"] == "made by detach(): cut from the graph, so it has no gradient"


DEEP = "x = torch.tensor(1.0, requires_grad=True)\ny = x\nfor i in range(6000):\n" \
       "    y = y * 1.0001\ny.backward()\n"


def test_the_tree_of_a_deep_chain_is_drawn_in_linear_time(tmp_path):
    proc, seconds = autodiff("graph", write(tmp_path, "deep.tg", DEEP))
    assert proc.returncode == 0 and seconds < 20
    assert proc.out.splitlines()[-1] == ("(the tree stops at 100 levels: -f json or -f dot "
                                         "shows every node)")
    # piped, the tree is drawn full width: 100 levels of 4-column guides and one label
    assert max(len(line) for line in proc.out.splitlines()) <= 4 * 100 + 80


def test_explain_skips_the_jacobian_of_a_large_output(tmp_path):
    program = write(tmp_path, "jac.tg", "x = torch.ones(2000, requires_grad=True)\ny = x * 2\n"
                                        "y.backward(torch.ones(2000))\n")
    proc, seconds = autodiff("explain", program)
    assert proc.returncode == 0 and seconds < 20
    assert "J is not shown: the output has 2,000 elements" in proc.out


@slow
def test_check_samples_many_leaves_and_says_so(tmp_path):
    # more leaves than the check's element budget (MAX_TOTAL), however fast one run is
    text = "".join(f"w{i} = torch.tensor([0.{i % 10}, 1.0], requires_grad=True)\n"
                   for i in range(2000))
    text += "loss = 0\n" + "".join(f"loss = loss + (w{i} * w{i}).sum()\n" for i in range(2000))
    proc, seconds = autodiff("check", write(tmp_path, "leaves.tg", text + "loss.backward()\n"))
    assert proc.returncode == 0, proc.out + proc.err
    assert seconds < 30 and "note: the program makes 2,000 leaves; an even sample of" in proc.out


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_graphviz_runs_under_the_deadline(tmp_path):
    proc, seconds = autodiff("graph", write(tmp_path, "deep.tg", DEEP), "-o", tmp_path / "g.svg",
                             "--timeout", "1")
    assert seconds < 1 + 1 + START
    assert proc.returncode in (0, LIMIT) and "Traceback" not in proc.err


# --- check and diagnostics ------------------------------------------------------------------

def test_check_fails_a_nan_gradient(tmp_path):
    program = write(tmp_path, "nan.tg", "x = torch.ones(3, requires_grad=True)\n"
                                        "y = 0 * torch.log(x - x)\ny.sum().backward()\n")
    proc, _ = autodiff("check", program)
    assert proc.returncode == 1 and "NaN gradient: x" in proc.out and "leaves ok" not in proc.out


def test_a_line_separator_in_a_comment_keeps_the_quoted_line(tmp_path):
    program = write(tmp_path, "sep.tg", "x = 1  # one\u2028two\ny = nope\n")
    proc, _ = autodiff("run", program)
    clean(proc, 1, "sep.tg:2:5: NameError: name 'nope' is not defined\n    y = nope\n")


# --- no text of a program drives the reader's terminal -----------------------------------

OSC52, CLEAR = "\x1b]52;c;cHduZWQ=\x07", "\x1b[2J"  # a clipboard write, a screen clear
RAW = ("\x1b", "\x07", "\x9b", "\u202e")  # ESC, BEL, CSI, a bidi override


def no_raw_control(proc) -> None:
    for text in (proc.out, proc.err):
        assert not any(ch in text for ch in RAW), text


def test_a_program_output_in_a_test_diff_is_shown_escaped(tmp_path):
    write(tmp_path, "p.tg", f"print({OSC52!r})\nprint({CLEAR!r})\nprint('tab\\tcr\\r')\n")
    write(tmp_path, "p.out", "something else\n")
    proc, _ = autodiff("test", tmp_path)
    clean(proc, 1)
    no_raw_control(proc)
    assert "+\\x1b]52;c;cHduZWQ=\\x07\n+\\x1b[2J\n+tab\tcr\\r\n" in proc.out


MESSAGE = OSC52 + " \u202eevil \x9b2J"
HOSTILE = ("x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x * x).sum()\ny.backward()\n"
           f"print({CLEAR!r})\nraise RuntimeError({MESSAGE!r})\n")


@pytest.mark.parametrize("command", [("graph",), ("graph", "-f", "mermaid"), ("explain",),
                                     ("check",), ("run",), ("run", "--quiet")])
def test_an_error_message_is_shown_escaped_by_every_command(tmp_path, command):
    write(tmp_path, "h.tg", HOSTILE)
    proc, _ = autodiff(*command, "h.tg", cwd=tmp_path)
    err = clean(proc, 1, "h.tg:5:1: RuntimeError: \\x1b]52;c;cHduZWQ=\\x07 \\u202eevil \\x9b2J")
    if command[0] == "run":  # the program's own output stays byte for byte, as PyTorch's
        assert proc.stdout.startswith(CLEAR.encode() + b"\n")
        proc.out = proc.out.replace(CLEAR, "")
    no_raw_control(proc)
    if command == ("graph",):  # the tree's headline too
        assert proc.out.startswith("(the graph built before the program stopped with an error: "
                                   "h.tg:5:1: RuntimeError: \\x1b]52;c;cHduZWQ=")
    assert err.count("h.tg:5:1: RuntimeError") == 1  # the diagnostic, once


def test_the_repl_shows_output_and_errors_escaped():
    proc, _ = autodiff("repl", stdin=f"print({CLEAR!r})\nraise RuntimeError({OSC52!r})\n")
    clean(proc, 0, "<stdin>:1:1: RuntimeError: \\x1b]52;c;cHduZWQ=\\x07\n")
    no_raw_control(proc)
    assert proc.out == "\\x1b[2J\n"


def test_a_file_name_is_shown_on_one_line(tmp_path):
    program = write(tmp_path, "two\nlines\x1b[2J.tg", "x = nope\n")
    proc, _ = autodiff("run", program)
    err = clean(proc, 1, "two\\nlines\\x1b[2J.tg:1:5: NameError: name 'nope' is not defined\n")
    no_raw_control(proc)
    assert "two\n" not in err
    write(tmp_path, "two\nlines\x1b[2J.out", "")
    proc, _ = autodiff("test", tmp_path)
    clean(proc, 1)
    no_raw_control(proc)
    assert "FAILED " in proc.out and "two\\nlines\\x1b[2J.tg: raised NameError" in proc.out


def test_a_control_character_in_a_source_line_keeps_the_caret_under_it(tmp_path):
    proc, _ = autodiff("run", write(tmp_path, "c.tg", "s = '\x1b[2J' + nope\n"))
    err = clean(proc, 1, "c.tg:1:14: NameError")  # Python counts the ESC as one column
    quoted, caret = err.splitlines()[1:3]
    assert quoted == "    s = '\\x1b[2J' + nope"
    assert caret.index("^") == quoted.index("nope")


# --- text no encoding can write ------------------------------------------------------------

SURROGATE = ("x = torch.tensor([1.0], requires_grad=True)\ny = x * 2\n"
             "raise RuntimeError('\\ud800')\n")


def test_a_lone_surrogate_in_an_error_keeps_the_test_report(tmp_path):
    write(tmp_path, "s.tg", "raise RuntimeError('\\ud800')\n")
    write(tmp_path, "s.err", "RuntimeError: something else\n")
    write(tmp_path, "g.tg", "print(1)\n")
    write(tmp_path, "g.out", "1\n")
    report = tmp_path / "r.xml"
    for env in ({}, {"PYTHONIOENCODING": "utf-8:strict"}):  # as under a UTF-8 locale
        proc = subprocess.run([EXE, "test", tmp_path, "--junit-xml", report], capture_output=True,
                              env={**ENV, **env}, timeout=120)
        proc.out, proc.err = proc.stdout.decode(), proc.stderr.decode()
        clean(proc, 1)
        assert "+RuntimeError: \\ud800\n" in proc.out and proc.out.endswith("1 passed, 1 failed\n")
        cases = {c.get("name"): c for c in ET.parse(report).getroot().iter("testcase")}
        assert "\\ud800" in cases["s.tg"].find("failure").text and list(cases["g.tg"]) == []
    proc, _ = autodiff("test", tmp_path, "--json")
    results = {r["program"]: r for r in json.loads(proc.out)["results"]}
    assert results[str(tmp_path / "g.tg")]["status"] == "passed"
    assert results[str(tmp_path / "s.tg")]["status"] == "failed"
    # --update writes the line as it is compared: the escape, which then passes
    proc, _ = autodiff("test", tmp_path / "s.tg", "--update")
    clean(proc, 0)
    assert (tmp_path / "s.err").read_text() == "RuntimeError: \\ud800\n"
    proc, _ = autodiff("test", tmp_path)
    clean(proc, 0)


@pytest.mark.parametrize("output", [None, "-f dot", "-f mermaid", "-f json", "g.txt", "g.svg",
                                    "g.html", "g.png"])
def test_a_lone_surrogate_in_an_error_keeps_every_graph_format(tmp_path, output):
    if output and output.startswith("g.") and output != "g.txt" and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    options = [] if output is None else output.split() if output.startswith("-") else \
        ["-o", tmp_path / output]
    proc, _ = autodiff("graph", write(tmp_path, "s.tg", SURROGATE), *options)
    clean(proc, 1, "s.tg:3:1: RuntimeError: \\ud800\n")
    drawn = proc.out if output is None or output.startswith("-") else \
        (tmp_path / output).read_bytes().decode("utf-8", "replace")
    assert "MulBackward0" in drawn or output == "g.png"
    if output == "-f json":
        assert json.loads(proc.out)["error"].endswith("s.tg:3:1: RuntimeError: \ud800")
    elif output not in ("g.png",):
        assert "\\ud800" in drawn
