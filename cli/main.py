"""The `autodiff` command line: each command is a typed signature and one library call.

Library modules are imported inside the commands, so start-up stays fast and
`autodiff run --quiet` never loads Rich.
"""

from __future__ import annotations

from typing import Annotated, Callable, Optional

import typer

from autodiff.text.i18n import N_

from .help_text import Command, Group

app = typer.Typer(
    name="autodiff",
    cls=Group,
    help=N_("Run PyTorch-style tensor programs (.tg) on a NumPy autograd engine and see "
            "every gradient."),
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

File = Annotated[str, typer.Argument(help=N_("The .tg program; '-' reads standard input."),
                                     metavar="FILE")]
NoColor = Annotated[bool, typer.Option("--no-color", help=N_("Plain text, no colour (also when "
                                       "NO_COLOR is non-empty or output is not a terminal)."))]
MaxMemory = Annotated[Optional[str], typer.Option(
    "--max-memory", metavar="SIZE", help=N_("Memory for the program's data, e.g. 512M or 2G: no "
    "tensor larger, and the process capped at that plus 1G (default: a quarter of this "
    "machine's memory)."))]
Timeout = Annotated[Optional[float], typer.Option(
    "--timeout", metavar="SECONDS", help=N_("Stop after this many seconds of wall time "
                                         "(default: 60); exit status 3."))]
Root = Annotated[Optional[str], typer.Option(
    "--root", help=N_("Start from this top-level tensor (default: the tensor last passed to "
                   "backward, else the last one assigned with a grad_fn)."), metavar="NAME")]


def _supervised(subject: str, max_memory: str | None, timeout: float | None,
                work: Callable[..., int]) -> int:
    """`work(limits)` in the guard's watched child process (cli/guard.py), under the limits."""
    import sys
    import time

    from .guard import supervise
    from .limits import RunLimits, process_limits
    from .outcome import EXIT_USAGE, UsageError
    from .source import display_name

    limits = RunLimits.for_command(max_memory, timeout)
    try:
        checked = process_limits(limits)
    except UsageError as exc:
        from autodiff.text.i18n import _

        sys.stderr.write(_("autodiff: error: {message}").format(message=exc) + "\n")
        return EXIT_USAGE
    limits.started = time.monotonic()
    return supervise(lambda: work(limits), checked, display_name(subject))


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"autodiff {version('autodiff-tg')}")
        except PackageNotFoundError:
            from autodiff.text.i18n import _

            typer.echo(_("autodiff (not installed)"))
        raise typer.Exit()


def _language(ctx: typer.Context, value: Optional[str]) -> Optional[str]:
    """--lang, eager so that a --help after it is already in that language; the choice
    holds for this command (the context variable is put back when the command ends)."""
    if value is not None:
        from autodiff.text.i18n import choose, forget

        try:
            token = choose(value)
        except ValueError:
            raise typer.BadParameter(f"{value!r}: choose en or zh") from None
        ctx.call_on_close(lambda: forget(token))
    return value


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", help=N_("Show the version and exit."),
                                          callback=_version, is_eager=True)] = False,
    lang: Annotated[Optional[str], typer.Option(
        "--lang", metavar="en|zh", callback=_language, is_eager=True,
        help=N_("The language of what autodiff writes (default: from LC_ALL, LC_MESSAGES or "
                "LANG; zh when it starts with zh). PyTorch's messages and the program's "
                "output stay as PyTorch prints them."))] = None,
) -> None:
    import numpy

    from .terminal import guard_streams

    # Whatever a program prints or names, no text autodiff writes can drive the terminal
    guard_streams()
    # The views compute on the program's values after it ran (differences, norms): inf and
    # nan there are results to show, not NumPy warnings for the user. This process is ours.
    numpy.seterr(all="ignore")


@app.command(cls=Command, help=N_(
    "Run a program, print what PyTorch would print, then report on every "
    "tensor."
    "\n\nExample: autodiff run samples/seed_scalar_derivative.tg --show x"))
def run(
    file: File,
    quiet: Annotated[bool, typer.Option("--quiet", "-q",
                                        help=N_("Print only what the program prints."))] = False,
    show: Annotated[Optional[list[str]], typer.Option(
        "--show", metavar="NAME", help=N_("Report only this tensor (repeatable)."))] = None,
    json: Annotated[bool, typer.Option("--json", help=N_("One JSON document (schema "
                                       "autodiff.run/1, see docs/json-schema.md) instead."))] = False,
    no_color: NoColor = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
) -> None:
    from .run import run_path

    raise typer.Exit(_supervised(file, max_memory, timeout, lambda limits: run_path(
        file, quiet=quiet, show=show, as_json=json, no_color=no_color, limits=limits)))


@app.command(cls=Command, help=N_(
    "Draw the backward graph from a root tensor down to its leaves."
    "\n\nExample: autodiff graph samples/graph_grad_fn.tg --root out -o graph.svg"))
def graph(
    file: File,
    root: Root = None,
    format: Annotated[str, typer.Option("--format", "-f", metavar="tree|dot|mermaid|json",
                                        help=N_("What to print when no -o is given."))] = "tree",
    output: Annotated[Optional[str], typer.Option(
        "--output", "-o", metavar="FILE",
        help=N_("Write to FILE: .svg/.png/.pdf (rendered by Graphviz), .html (a page: click a "
             "node to see it), .dot, .mmd, .json, .txt."))] = None,
    show: Annotated[Optional[str], typer.Option(
        "--show", metavar="values,grads,saved", help=N_("Also show each node's value, its "
                                                     "gradient, what it saved."))] = None,
    no_color: NoColor = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
) -> None:
    from .graph import graph_path

    raise typer.Exit(_supervised(file, max_memory, timeout, lambda limits: graph_path(
        file, root=root, fmt=format, output=output, show=show, no_color=no_color,
        limits=limits)))


@app.command(cls=Command, help=N_(
    "Compare each leaf's gradient with float64 central differences; exit 1 on "
    "a mismatch."
    "\n\nExample: autodiff check samples/seed_scalar_derivative.tg"))
def check(
    file: File,
    eps: Annotated[float, typer.Option("--eps", help=N_("Central-difference step."))] = 1e-6,
    no_color: NoColor = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
) -> None:
    from .check import check_path

    raise typer.Exit(_supervised(file, max_memory, timeout, lambda limits: check_path(
        file, eps=eps, no_color=no_color, limits=limits)))


@app.command(cls=Command, help=N_(
    "Walk through the backward pass step by step, in the order the engine "
    "runs it."
    "\n\nExample: autodiff explain samples/seed_jacobian_vector.tg"))
def explain(
    file: File,
    root: Root = None,
    call: Annotated[Optional[int], typer.Option(
        "--call", metavar="N", help=N_("Explain only the Nth backward call (default: every "
                                    "one, in order)."))] = None,
    no_color: NoColor = False,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
) -> None:
    from .explain import explain_path

    raise typer.Exit(_supervised(file, max_memory, timeout, lambda limits: explain_path(
        file, root=root, call=call, no_color=no_color, limits=limits)))


@app.command(cls=Command, help=N_(
    "An interactive session: expression values are printed as Python's REPL "
    "does."
    "\n\nExample: autodiff repl (then: x = torch.ones(2, requires_grad=True))"))
def repl(
    no_color: NoColor = False,
    max_memory: MaxMemory = None,
    timeout: Annotated[Optional[float], typer.Option(
        "--timeout", metavar="SECONDS", help=N_("Stop an input that runs longer (default: 60)."))] = None,
) -> None:
    from .limits import RunLimits
    from .repl import repl_session

    raise typer.Exit(repl_session(no_color=no_color,
                                  limits=RunLimits.for_command(max_memory, timeout)))


@app.command(cls=Command, help=N_(
    "Check each NAME.tg against NAME.out (its stdout) and NAME.err (its "
    "error) beside it."
    "\n\nExample: autodiff test samples/ -j 2 --junit-xml report.xml"))
def test(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help=N_("Folders to search for *.tg (recursively) and .tg files; default: here."),
        metavar="[PATH]...")] = None,
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", metavar="N", help=N_("Programs run at once (default: the number of cores)."))] = None,
    update: Annotated[bool, typer.Option(
        "--update", help=N_("Write NAME.out/NAME.err from autodiff's own output instead."))] = False,
    reference: Annotated[Optional[str], typer.Option(
        "--reference", metavar="torch", help=N_("Write NAME.out/NAME.err by running each program "
                                            "under this reference (torch: real PyTorch). The "
                                            "program runs as real Python: it is refused unless "
                                            "every name it uses is of the .tg language, and "
                                            "runs behind the walls docs/security.md "
                                            "describes."))] = None,
    junit_xml: Annotated[Optional[str], typer.Option(
        "--junit-xml", metavar="FILE", help=N_("Also write a JUnit XML report for CI."))] = None,
    json: Annotated[bool, typer.Option("--json", help=N_("One JSON summary (schema "
                                       "autodiff.test/1) instead of the text report."))] = False,
    timeout: Annotated[Optional[float], typer.Option(
        "--timeout", metavar="SECONDS", help=N_("Stop a program that runs longer (default: 60; "
                                             "each program has its own)."))] = None,
    max_memory: MaxMemory = None,
    no_color: NoColor = False,
) -> None:
    from .golden import DEFAULT_TIMEOUT, golden_tests

    raise typer.Exit(golden_tests(paths, jobs=jobs, update=update, reference=reference,
                                  junit_xml_path=junit_xml, as_json=json, no_color=no_color,
                                  timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                                  max_memory=max_memory))
