"""`autodiff run`: load a program, run it, then report on its tensors.

Library code: the Typer command in main.py is one call into `run_path`. With
`quiet`, only the interpreter is loaded (no Rich, no observers): the output is
exactly the program's.
"""

from __future__ import annotations

import sys
from typing import TextIO

from .limits import RunLimits, applied
from .outcome import EXIT_INTERRUPTED, EXIT_OK, ProgramError, guarded
from .source import LoadedSource, display_name, load_source

__all__ = ["run_path", "load_source", "LoadedSource", "EXIT_OK", "EXIT_INTERRUPTED"]


def run_path(path: str, *, quiet: bool = False, out: TextIO | None = None,
             err: TextIO | None = None, show: list[str] | None = None, as_json: bool = False,
             no_color: bool = False, limits: RunLimits | None = None) -> int:
    """Run the program at `path` and return the process exit code."""
    out = out or sys.stdout
    err = err or sys.stderr

    def action() -> int:
        try:
            with applied(limits):
                source = load_source(path)
                if quiet and not as_json:
                    return _run_quiet(source, out, err)
                return _run_reported(source, out, err, show, as_json, no_color)
        finally:
            out.flush()  # what the program printed is kept, whatever stopped it

    return guarded(action, err, subject=display_name(path), no_color=no_color)


def _run_quiet(source: LoadedSource, out: TextIO, err: TextIO) -> int:
    from autodiff.interpreter import run_source

    from .terminal import raw_stream

    result = run_source(source.text, source.filename, out=raw_stream(out), err=err)
    out.flush()
    if result.error is not None:
        raise ProgramError(result.error, source.text)
    return EXIT_OK


def _run_reported(source: LoadedSource, out: TextIO, err: TextIO, show, as_json: bool,
                  no_color: bool) -> int:
    from .report import build_report, render_report, report_document, write_json
    from .trace import trace_source

    from .terminal import raw_stream

    # the program's output byte for byte, as PyTorch prints it; the report after it is ours
    trace = trace_source(source, out=None if as_json else raw_stream(out), err=err)
    out.flush()
    if as_json:
        from autodiff.text.i18n import language

        code = trace.error.exit_code if trace.error is not None else EXIT_OK
        with language("en"):  # a document for programs: its texts do not change with the locale
            write_json(report_document(trace, build_report(trace, show), code), out)
    trace.raise_error()
    if not as_json:
        render_report(build_report(trace, show), out, no_color=no_color)
    return EXIT_OK
