"""The process guard (cli/guard.py) and the last-resort catch (cli/outcome.py), directly."""

from __future__ import annotations

import io
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from autodiff.cli.guard import (
    ADDRESS_SPACE_SLACK,
    CAN_FORK,
    GRACE,
    Lost,
    ProcessLimits,
    call_in_child,
    run_all,
    supervise,
)
from autodiff.cli.outcome import EXIT_FAILED, EXIT_LIMIT, guarded

pytestmark = pytest.mark.skipif(not CAN_FORK, reason="the guard needs fork")


def test_a_value_comes_back_from_the_child():
    value = call_in_child(lambda: {"text": "caf\u00e9 \ud800", "n": [1, 2]}, ProcessLimits(5, None))
    assert value == {"text": "caf\u00e9 \ud800", "n": [1, 2]}  # even a lone surrogate


def test_the_child_runs_under_the_process_limits():
    limits = ProcessLimits(5, 200 << 20)
    address, cpu = call_in_child(lambda: (resource.getrlimit(resource.RLIMIT_AS)[0],
                                          resource.getrlimit(resource.RLIMIT_CPU)[0]), limits)
    assert address == (200 << 20) + ADDRESS_SPACE_SLACK
    assert 5 < cpu <= 5 * (os.cpu_count() or 1) + 3
    assert resource.getrlimit(resource.RLIMIT_AS)[0] != address  # the parent keeps its own


def test_a_loop_in_c_is_killed_after_its_deadline_and_grace():
    start = time.monotonic()
    with pytest.raises(Lost) as lost:
        call_in_child(lambda: sum(range(10**15)), ProcessLimits(0.5, None))
    assert 0.5 + GRACE <= time.monotonic() - start < 0.5 + GRACE + 1
    assert (lost.value.error_class, lost.value.code) == ("TimeoutError", EXIT_LIMIT)
    assert lost.value.describe("p.tg") == "p.tg: TimeoutError: the program ran longer than 0.5 s " \
                                          "(--timeout)"


@pytest.mark.parametrize("signum,code,words", [
    (signal.SIGSEGV, EXIT_FAILED, "internal error: the process crashed (SIGSEGV)"),
    (signal.SIGKILL, EXIT_LIMIT, "killed by the system, most likely for running out of memory"),
])
def test_a_child_that_dies_is_one_line(signum, code, words):
    with pytest.raises(Lost) as lost:
        call_in_child(lambda: os.kill(os.getpid(), signum), ProcessLimits(5, None))
    assert lost.value.code == code and words in lost.value.reason


def test_an_exception_in_the_child_is_an_internal_error():
    with pytest.raises(Lost) as lost:
        call_in_child(lambda: 1 / 0, ProcessLimits(5, None))
    assert "internal error: ZeroDivisionError: division by zero" in lost.value.reason


def test_supervise_passes_the_exit_code_and_the_output_through(capfd):
    assert supervise(lambda: (print("from the child"), 7)[1], ProcessLimits(5, None), "p.tg") == 7
    assert capfd.readouterr().out == "from the child\n"


def test_supervise_reports_a_child_killed_at_its_deadline():
    err = io.StringIO()
    assert supervise(lambda: sum(range(10**15)), ProcessLimits(0.3, None), "p.tg", err) == EXIT_LIMIT
    assert err.getvalue() == "p.tg: TimeoutError: the program ran longer than 0.3 s (--timeout)\n"


def test_run_all_keeps_the_order_and_stands_in_for_lost_children():
    tasks = [lambda: "a", lambda: sum(range(10**15)), lambda: os._exit(0), lambda: "d"]
    done = []
    results = run_all(tasks, 2, ProcessLimits(0.5, None),
                      lambda i, why: f"lost {i}: {why.reason}", lambda: done.append(1))
    assert results[0] == "a" and results[3] == "d" and len(done) == 4
    assert results[1] == "lost 1: the program ran longer than 0.5 s (--timeout)"
    assert results[2].startswith("lost 2: the process ended (exit code 0) without a result")


def test_ctrl_c_in_the_parent_kills_every_child_at_once():
    code = ("import os, signal, threading, time\n"
            "from autodiff.cli.guard import ProcessLimits, run_all\n"
            "threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
            "try:\n"
            "    run_all([lambda: sum(range(10**15))] * 4, 2, ProcessLimits(60, None),\n"
            "            lambda i, why: None, lambda: None)\n"
            "except KeyboardInterrupt:\n"
            "    print('stopped', flush=True)\n")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout == "stopped\n" and time.monotonic() - start < 10, done.stderr


def test_guarded_turns_an_exception_of_ours_into_one_line():
    err = io.StringIO()
    assert guarded(lambda: {}["missing"], err, subject="p.tg") == EXIT_FAILED
    line = err.getvalue()
    assert line.startswith("autodiff: internal error while running p.tg: KeyError: 'missing'.")
    assert "please report it" in line and line.count("\n") == 1


def test_guarded_reports_the_deadline_outside_a_program_line():
    from autodiff.interpreter.deadline import ProgramStopped

    def stopped():
        raise ProgramStopped("TimeoutError", "the program ran longer than 1 s (--timeout)",
                             EXIT_LIMIT)
    err = io.StringIO()
    assert guarded(stopped, err, subject="p.tg") == EXIT_LIMIT
    assert err.getvalue() == "p.tg: TimeoutError: the program ran longer than 1 s (--timeout)\n"
