"""One measured run, in its own process: `python benchmarks/child.py MODE ARG`.

Modes
    autodiff PATH   parse and compile the .tg program, import the engine, then time `run()`
    torch PATH      `import torch` (and, for a program that uses torch.optim, torch._dynamo, which
                    the first optimizer imports lazily: ~2.5 s, an import like any other),
                    compile the program text, then time `exec` in a fresh namespace
    numpy PATH      the same for a plain Python/NumPy script (the bare-NumPy baselines)
    parse LINES     generate a LINES-line program, build the parser, then time one `parse`

Everything before the clock starts (imports, parsing, compiling, parser construction)
is excluded from `compute_s`. The program's printed output is captured, not shown; the
child writes exactly one JSON object to stdout:

    {"out": ..., "error": ..., "compute_s": ..., "maxrss_kb": ..., "rss_before_kb": ...,
     "run_peak_kb": ...}

`maxrss_kb` is `getrusage(RUSAGE_SELF).ru_maxrss`: the peak of the whole process, imports
included. `run_peak_kb` is the peak during the timed part alone: the kernel's high-water
mark (VmHWM) is reset through /proc/self/clear_refs just before the clock starts; where
that is not possible it falls back to `maxrss_kb`. `rss_before_kb` is VmRSS at that moment.

This file imports nothing from the benchmarks package, so it runs as a plain script.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import time


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where that is unsupported."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _measure(body) -> dict:
    """Run `body()` between the RSS probes and the clock; it returns (output, error)."""
    rss_before = _status_kb("VmRSS")
    reset = _reset_peak()
    start = time.perf_counter()
    out, error = body()
    compute = time.perf_counter() - start
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run_peak = _status_kb("VmHWM") if reset else None
    return {"out": out, "error": error, "compute_s": compute, "maxrss_kb": maxrss,
            "rss_before_kb": rss_before, "run_peak_kb": run_peak or maxrss}


def _autodiff(path: str) -> dict:
    from autodiff.interpreter import compile_program, default_modules
    from autodiff.parser import parse

    with open(path, encoding="utf-8") as f:
        source = f.read()
    program = compile_program(parse(source, path), path, source)
    default_modules()  # imports the engine now, outside the clock

    def body():
        buf = io.StringIO()
        result = program.run(out=buf)
        error = None if result.error is None else str(result.error)
        return buf.getvalue(), error

    return _measure(body)


def _python(path: str, preimport: str) -> dict:
    __import__(preimport)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    if preimport == "torch" and "optim" in source:
        __import__("torch._dynamo")
    code = compile(source, path, "exec")

    def body():
        namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        buf = io.StringIO()
        error = None
        with contextlib.redirect_stdout(buf):
            try:
                exec(code, namespace)
            except Exception as exc:  # reported, not raised: the runner shows it
                error = f"{type(exc).__name__}: {exc}"
        return buf.getvalue(), error

    return _measure(body)


def _parse(lines: int) -> dict:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from parse_bench import make_program

    from autodiff.parser import parse

    source = make_program(lines)
    parse("x = 1\n")  # loads (or builds) the parser tables outside the clock

    def body():
        parse(source, "<generated>")
        return f"{source.count(chr(10))} lines\n", None

    return _measure(body)


def main(argv: list[str]) -> None:
    mode, arg = argv
    if mode == "autodiff":
        result = _autodiff(arg)
    elif mode in ("torch", "numpy"):
        result = _python(arg, mode)
    elif mode == "parse":
        result = _parse(int(arg))
    else:
        raise SystemExit(f"child.py: unknown mode {mode!r}")
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
