"""A long fuzz campaign over the commands, run as the console script runs them:

    nice -n 10 python tests/fuzz_campaign.py --command graph --count 20000 --seed 1

Each input goes to `autodiff COMMAND ...` in a forked process that enters the console
script's own entry point (`autodiff.cli.main:app`) with its stdout and stderr in files, so
everything after the interpreter's start-up is what a user's shell would run: the Typer
parsing, the guard's watched child, the views. The promise checked for every input: exit
status 0, 1, 2 or 3; no traceback, no internal error, no crash dump on stderr; stdout valid
UTF-8 (and JSON where JSON was asked for); and the command over within its --timeout plus
1 s of CPU time (HANG below says why CPU time). Prints the seed, the count, the time and every input that broke the promise (saved
under --save, so each can become a regression test).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzgen import SAMPLES, fuzz_input  # noqa: E402

COMMANDS = ("run", "graph", "explain", "check", "test", "repl")
CODES = {0, 1, 2, 3}
BAD = ("Traceback", "internal error", "Fatal Python error")
# A command past its deadline is caught by its CPU time (deadline + 1 s at most: the guard
# kills what runs longer), not its wall time, which a loaded machine stretches for anyone;
# HANG seconds of wall past the deadline count as a hang whatever the load.
HANG = 10.0
PASSING = Path(__file__).resolve().parent.parent / "samples" / "seed_scalar_derivative"


def command_line(command: str, folder: Path, program: Path, rng: random.Random,
                 timeout: float) -> tuple[list[str], bytes | None, str]:
    """(arguments after `autodiff`, stdin, what stdout must be: text | json | junit)."""
    limit = ["--timeout", f"{timeout:g}"]
    if command == "run":
        mode = rng.choice([[], ["--quiet"], ["--json"]])
        return ["run", str(program), *mode, *limit], None, "json" if mode == ["--json"] else "text"
    if command == "graph":
        fmt = rng.choice(["tree", "dot", "mermaid", "json"])
        return ["graph", str(program), "-f", fmt, *limit], None, "json" if fmt == "json" else "text"
    if command in ("explain", "check"):
        return [command, str(program), *limit], None, "text"
    if command == "repl":
        return ["repl", *limit], program.read_bytes() + b"\n1 + 1\n", "text"
    # test: the fuzz program with a golden of any kind, beside a sample that must pass
    golden = rng.randrange(6)
    out, err = program.with_suffix(".out"), program.with_suffix(".err")
    if golden == 0:
        out.write_text("")
    elif golden == 1:
        out.write_text(fuzz_input(rng)[:200], errors="surrogateescape")
    elif golden == 2:
        out.write_bytes(bytes(rng.randrange(256) for _ in range(64)))
    elif golden == 3:
        out.mkdir()
    elif golden == 4:
        err.write_text("RuntimeError: boom\n")
    for suffix in (".tg", ".out"):
        shutil.copy(PASSING.with_suffix(suffix), folder / f"passing{suffix}")
    return (["test", str(folder), "-j", "2", "--junit-xml", str(folder / "report.xml"), *limit],
            None, "junit")


def run_once(args: list[str], stdin: bytes | None, folder: Path, timeout: float) -> tuple:
    """Run the console script's entry point in a forked process; (code, out, err, seconds)."""
    out_path, err_path, in_path = folder / "stdout", folder / "stderr", folder / "stdin"
    in_path.write_bytes(stdin or b"")
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the console script, from its entry point on
        code = 99
        try:
            for fd, path, mode in ((0, in_path, os.O_RDONLY), (1, out_path, os.O_WRONLY | os.O_CREAT),
                                   (2, err_path, os.O_WRONLY | os.O_CREAT)):
                os.dup2(os.open(path, mode, 0o644), fd)
            sys.stdin = open(0, "r", closefd=False)
            sys.stdout = open(1, "w", encoding="utf-8", errors="strict", closefd=False)
            sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
            sys.argv = ["autodiff", *args]
            from autodiff.cli.main import app

            app()
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
        except BaseException:  # noqa: BLE001 - shows as a traceback on stderr: caught below
            import traceback

            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    hard = time.monotonic() + timeout + HANG  # far past the promise: a hang of the command
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > hard:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None, b"", b"HANG", time.monotonic() - start, 0.0
        time.sleep(0.002)
    seconds = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime  # of the command and the children it waited for
    return (os.waitstatus_to_exitcode(status), out_path.read_bytes(), err_path.read_bytes(),
            seconds, cpu)


def problem_of(command: str, kind: str, result: tuple, folder: Path, timeout: float,
               stdin: bytes | None) -> str | None:
    code, out, err, seconds, cpu = result
    if code is None:
        return f"hung: killed {HANG:g} s past its deadline"
    # the repl's limit is per input: a session of n lines may take n times as long
    inputs = max(1, len((stdin or b"").splitlines())) if command == "repl" else 1
    if cpu > (timeout + 1) * inputs:
        return f"used {cpu:.2f} s of CPU with --timeout {timeout:g}"
    if code not in CODES:
        return f"exit status {code}"
    text = err.decode("utf-8", "replace")
    for bad in BAD:
        if bad in text:
            return f"{bad!r} on stderr: {text[-400:]!r}"
    try:
        stdout = out.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"stdout is not UTF-8: {exc}"
    if kind == "json" and code in (0, 1) and stdout:
        try:
            json.loads(stdout)
        except ValueError as exc:
            return f"stdout is not JSON: {exc}"
    if kind == "junit":
        if code not in (0, 1):
            return f"test exited {code}: {text[-300:]!r}"
        try:
            cases = ET.parse(folder / "report.xml").getroot().iter("testcase")
        except (OSError, ET.ParseError) as exc:
            return f"no JUnit report: {exc}"
        passing = [c for c in cases if c.get("name") == "passing.tg"]
        if len(passing) != 1 or list(passing[0]):
            return "the passing sample did not pass beside the fuzz program"
    if command == "repl" and code != 0:
        return f"the repl ended with {code}"
    return None


def _warm() -> None:
    """Import once what every command imports, so each forked run starts warm: the code
    paths are the console script's, only the imports are not repeated for each input."""
    import importlib

    for name in ("autodiff.cli.main", "autodiff.cli.run", "autodiff.cli.report",
                 "autodiff.cli.graph", "autodiff.cli.explain", "autodiff.cli.check",
                 "autodiff.cli.golden", "autodiff.cli.repl", "autodiff.cli.console",
                 "autodiff.engine.api", "rich.console", "rich.tree", "rich.table", "rich.text"):
        importlib.import_module(name)
    from autodiff.parser import parse

    parse("x = 1\n", "<warm-up>")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--command", choices=COMMANDS, default="run")
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--save", type=Path, default=Path("fuzz-failures"))
    args = parser.parse_args()
    _warm()

    rng = random.Random(args.seed)
    start = time.perf_counter()
    failures = 0
    slowest = busiest = 0.0  # the longest wall time, the most CPU time of one input
    codes: dict = {}  # exit status -> how many inputs ended so
    with tempfile.TemporaryDirectory(prefix="autodiff-fuzz-") as scratch:
        for index in range(args.count):
            text = fuzz_input(rng, slow=True)
            folder = Path(scratch) / str(index)
            folder.mkdir()
            program = folder / "fuzz.tg"
            program.write_text(text, errors="surrogateescape")
            argv, stdin, kind = command_line(args.command, folder, program, rng, args.timeout)
            result = run_once(argv, stdin, folder, args.timeout)
            slowest = max(slowest, result[3])
            busiest = max(busiest, result[4])
            codes[result[0]] = codes.get(result[0], 0) + 1
            problem = problem_of(args.command, kind, result, folder, args.timeout, stdin)
            if problem:
                failures += 1
                args.save.mkdir(exist_ok=True)
                (args.save / f"{args.command}{index}.tg").write_text(text, errors="surrogateescape")
                print(f"[{index}] autodiff {' '.join(argv)}: {problem}", flush=True)
            shutil.rmtree(folder, ignore_errors=True)
            if (index + 1) % 1000 == 0:
                print(f"... {index + 1} inputs, {failures} violations, slowest {slowest:.2f} s "
                      f"(CPU {busiest:.2f} s), {time.perf_counter() - start:.0f} s", flush=True)
    elapsed = time.perf_counter() - start
    print(f"autodiff {args.command}: {args.count} inputs, seed {args.seed}, --timeout "
          f"{args.timeout:g}, {elapsed:.0f} s, slowest {slowest:.2f} s wall / {busiest:.2f} s "
          f"CPU, {failures} violations; "
          f"exit statuses {dict(sorted(codes.items(), key=str))}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
