"""`autodiff repl`: an interactive session on Python's own `code.InteractiveConsole`.

Our parser decides when an input is complete (a string holding a bracket is just a
string; a block ends with an empty line), the state lives on between inputs (cli/live.py:
nothing is replayed), readline gives history and tab completion of names and attributes,
and a few commands open the views on the session so far: `:graph NAME`, `:explain [N]`,
`:report [NAME]`. With standard input not a terminal there is no banner and no prompt, so
piped input gives just the output.
"""

from __future__ import annotations

import code
import io
import os
import sys
from typing import TextIO

from autodiff.text.diagnostics import TgError

from autodiff.text.i18n import N_, _

from . import repl_process
from .live import LiveProgram, incomplete
from .outcome import (
    EXIT_LIMIT,
    EXIT_OK,
    ProgramError,
    ToolError,
    UsageError,
    describe,
    guarded,
    write_diagnostic,
)

BANNER = N_("autodiff repl: .tg statements, `torch` is imported. A block ends with an empty "
            "line; help for the commands; exit() or Ctrl-D quits.")
HELP = N_("""Type .tg statements (Python syntax, PyTorch's API); an expression's value is printed.
  :graph NAME      the backward graph from the tensor NAME
  :explain [N]     the backward calls so far, step by step (or only call N)
  :report [NAME]   every tensor so far (or only NAME): value, grad_fn chain, gradient
  help             this text
  exit() quit()    leave (Ctrl-D too)
""")
HISTORY = os.path.join(os.path.expanduser("~"), ".autodiff_history")
QUIT = frozenset({"exit()", "quit()"})


class Session:
    """The session's program; `submit` runs one complete input and returns what to print."""

    def __init__(self, *, no_color: bool = True, limits=None) -> None:
        self.program = LiveProgram(limits)
        self.no_color = no_color
        self.limits = limits

    def submit(self, text: str) -> tuple[str, str]:
        """(stdout, stderr) for one input (a statement, a block or a `:` command)."""
        out, err = io.StringIO(), io.StringIO()
        stripped = text.strip()
        if stripped.startswith(":"):
            self.command(stripped, out, err)
        elif stripped == "help":
            out.write(_(HELP))
        elif stripped in ("exit", "quit"):
            out.write(_("Use {name}() or Ctrl-D (i.e. EOF) to exit").format(name=stripped) + "\n")
        elif self.limits is not None and repl_process.chained():
            # once, in a watched child under the limits, which carries the session on
            from .limits import process_limits

            return repl_process.run_input(lambda: self._run(text), process_limits(self.limits))
        else:
            printed, problem, _stopped = self._run(text)
            return printed, problem
        return out.getvalue(), err.getvalue()

    def _run(self, text: str) -> tuple[str, str, bool]:
        """Run one input here: (stdout, stderr, whether a limit stopped it)."""
        out, err = io.StringIO(), io.StringIO()
        error = self.program.run(text, out, err)
        if error is not None:
            write_diagnostic(err, error, describe(error, text, scope=self.program.globals))
        return out.getvalue(), err.getvalue(), error is not None and error.exit_code == EXIT_LIMIT

    def command(self, text: str, out: TextIO, err: TextIO) -> None:
        word, _space, argument = text.partition(" ")
        argument = argument.strip() or None
        views = {":graph": self._graph, ":explain": self._explain, ":report": self._report}
        if word not in views:
            err.write(_("unknown command {word}: try :graph NAME, :explain, :report or "
                        "help").format(word=word) + "\n")
            return
        try:
            views[word](argument, out)
        except (UsageError, ToolError) as exc:
            err.write(f"{word}: {exc}\n")
        except ProgramError as exc:
            write_diagnostic(err, exc.error, describe(exc.error, exc.source))

    def _graph(self, name: str | None, out: TextIO) -> None:
        from .graph import build_graph, render_tree

        render_tree(build_graph(self.program.trace, name), out, no_color=self.no_color)

    def _explain(self, call: str | None, out: TextIO) -> None:
        from .explain import explain_from, render_explain

        if call is not None and not call.isdigit():
            raise UsageError(_("{call}: give the number of a backward call").format(call=call))
        lines = explain_from(self.program.trace, call=int(call) if call else None,
                             jacobians=False)
        render_explain(lines, out, no_color=self.no_color)

    def _report(self, name: str | None, out: TextIO) -> None:
        from .report import build_report, render_report

        render_report(build_report(self.program.trace, [name] if name else None), out,
                      no_color=self.no_color)


class Console(code.InteractiveConsole):
    """Python's console loop, with our parser judging completeness and our session running
    each complete input."""

    def __init__(self, session: Session, out: TextIO, err: TextIO, interactive: bool) -> None:
        super().__init__(filename="<stdin>")
        self.session, self.out, self.err, self.interactive = session, out, err, interactive
        self.done = False

    def runsource(self, source: str, filename: str = "<stdin>", symbol: str = "single") -> bool:
        """True: the input is unfinished, read another line (Python's own contract)."""
        stripped = source.strip()
        if stripped in QUIT:
            self.done = True
            return False
        if not stripped or stripped.startswith(":") or stripped in ("help", "exit", "quit"):
            return self._submit(source)
        from autodiff.parser import parse

        try:
            module = parse(source + "\n", filename)
        except TgError as error:
            if incomplete(error, source) and not source.endswith("\n"):
                return True
            return self._submit(source)
        # a compound statement ends with an empty line, as in Python's REPL
        lines = source.split("\n")
        compound = module.body and type(module.body[-1]).__name__ in (
            "If", "While", "For", "FunctionDef", "With", "ClassDef", "Try")
        if compound and lines[-1].strip():
            return True
        return self._submit(source)

    def _submit(self, source: str) -> bool:
        if source.strip():
            printed, problem = self.session.submit(source.rstrip("\n"))
            self.out.write(printed)
            self.out.flush()
            self.err.write(problem)
            self.err.flush()
        return False

    def raw_input(self, prompt: str = "") -> str:
        if self.done:
            raise EOFError
        if self.interactive:
            return input(prompt)
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def write(self, data: str) -> None:
        if data == "\n" and not self.interactive:
            return  # the newline after EOF only ends a prompt's line; piped, there is none
        self.err.write(data)


class Completer:
    """readline completion: names of the session (and builtins), then attributes of the
    object a dotted name reaches, as far as the sandbox lets a program see them."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.matches: list[str] = []

    def candidates(self, text: str) -> list[str]:
        from autodiff.interpreter.sandbox import default_policy, private, public_names

        program = self.session.program
        if "." not in text:
            pool = [*program.names(), *program.builtins, "help", "exit()", "quit()"]
            return sorted({n for n in pool if n.startswith(text) and not n.startswith("_")})
        head, _dot, tail = text.rpartition(".")
        parts = head.split(".")
        obj = program.globals.get(parts[0], program.builtins.get(parts[0]))
        for part in parts[1:]:
            if obj is None or private(part) or not default_policy(obj, part):
                return []
            obj = getattr(obj, part, None)
        if obj is None:
            return []
        names = public_names(obj) or {n for n in dir(obj) if default_policy(obj, n)}
        # (`_version` reads, but completion offers no '_' name: none is the user's to reach for)
        return sorted(f"{head}.{n}" for n in names if n.startswith(tail)
                      and not n.startswith("_"))

    def complete(self, text: str, state: int) -> str | None:
        if state == 0:
            try:
                self.matches = self.candidates(text)
            except Exception:  # completion must never break the prompt
                self.matches = []
        return self.matches[state] if state < len(self.matches) else None


def _readline(session: Session) -> None:
    try:
        import readline
    except ImportError:
        return
    readline.set_completer(Completer(session).complete)
    readline.set_completer_delims(" \t\n()[]{},:;+-*/%<>=!&|^~'\"")
    readline.parse_and_bind("tab: complete")
    try:
        readline.read_history_file(HISTORY)
    except OSError:
        pass
    import atexit

    def save() -> None:
        try:
            readline.write_history_file(HISTORY)
        except OSError:
            pass

    atexit.register(save)


def repl_session(*, no_color: bool = False, out: TextIO | None = None,
                 err: TextIO | None = None, interactive: bool | None = None,
                 limits=None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    if interactive is None:
        interactive = sys.stdin.isatty()

    def action() -> int:
        session = Session(no_color=no_color, limits=limits)  # (a bad limit: before the banner)
        if interactive:
            _readline(session)
        console = Console(session, out, err, interactive)
        if not interactive:
            sys.ps1 = sys.ps2 = ""
        else:
            sys.ps1, sys.ps2 = ">>> ", "... "
        try:
            console.interact(banner=_(BANNER) if interactive else "", exitmsg="")
        except SystemExit:
            pass
        return EXIT_OK

    if limits is None or out is not sys.stdout or err is not sys.stderr:
        return guarded(action, err)  # (the chain's processes write to the standard streams)
    return repl_process.front(lambda: guarded(action, err))
