"""`autodiff run`'s report: one entry per top-level tensor, as Rich text or versioned JSON.

`build_report(trace)` makes plain dicts (the JSON document, schema in docs/schemas/);
`render_report` draws them with Rich. The JSON carries the program's output instead
of printing it, so stdout holds exactly one JSON document.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

from autodiff.engine.graph.nodes import watched_grad_fn
from autodiff.engine.tensors.tensor import Tensor
from autodiff.text.diagnostics import source_lines
from autodiff.text.display import text_width
from autodiff.text.i18n import N_, _

from .names import Namer, dtype_text, grad_of, shape_text
from .outcome import UsageError
from .trace import Trace

RUN_SCHEMA_ID = "autodiff.run/1"


def build_report(trace: Trace, show: list[str] | None = None) -> list[dict[str, Any]]:
    """The report's entries, in order of first assignment (only `show` names when given)."""
    tensors = trace.tensors()
    if show:
        unknown = [n for n in show if n not in tensors]
        if unknown:
            raise UsageError(_("--show {name}: no top-level tensor of that name (tensors: "
                               "{names})").format(name=unknown[0],
                                                  names=", ".join(tensors) or _("none")))
        tensors = {n: tensors[n] for n in show}
    namer = Namer(trace)
    reached = {key for call in trace.calls for key in call.delivered}
    cuts = GraphCuts(trace.source.text)
    earlier: dict[str, list] = {}
    for binding, t, count, later in trace.earlier_bindings():
        earlier.setdefault(binding.name, []).append((binding, t, count, later))
    entries = []
    for name, t in tensors.items():
        for binding, old, count, later in earlier.get(name, ()):
            entry = _entry(name, old, trace, namer, reached, binding.line, cuts)
            entry["rebound_at"] = later  # optional: an earlier binding, still in the graph
            if count > 1:
                entry["bindings_at_line"] = count
            entries.append(entry)
        entries.append(_entry(name, t, trace, namer, reached, trace.line_of(name), cuts))
    return entries


def _entry(name: str, t: Tensor, trace: Trace, namer: Namer, reached: set,
           line: int | None, cuts: "GraphCuts") -> dict[str, Any]:
    grad = grad_of(t)
    node = watched_grad_fn(t)
    return {
        "name": name,
        "line": line,
        "shape": list(t.shape),
        "dtype": dtype_text(t.dtype),
        "value": repr(t),
        "requires_grad": bool(t.requires_grad),
        "is_leaf": node is None,
        "grad_fn": None if node is None else node.name(),
        "chain": namer.chain(t) if t.requires_grad else None,
        "grad": None if grad is None else repr(grad),
        "grad_none_reason": None if grad is not None else
        why_no_grad(name, t, trace, reached, cuts),
    }


def why_no_grad(name: str, t: Tensor, trace: Trace, reached: set,
                cuts: "GraphCuts | None" = None) -> str:
    """One line saying why `t.grad` is None."""
    if watched_grad_fn(t) is not None:
        if t.retains_grad:
            return _("retain_grad() was called, but no backward pass reached it")
        return _("a non-leaf: PyTorch keeps a non-leaf's .grad only after "
                 "{name}.retain_grad()").format(name=name)
    cuts = cuts or GraphCuts(trace.source.text)
    if not t.requires_grad:
        cut = cuts.on_line(trace.line_of(name))
        if cut:
            return _("made by {cut}: cut from the graph, so it has no gradient").format(
                cut=_(cut))
        return _("does not require grad (requires_grad=False)")
    if not trace.calls:
        return _("backward() was never called")
    if id(t) in reached:
        return _("reset by the program after backward ({name}.grad = None)").format(name=name)
    if cuts.anywhere:
        return _("not reached by any backward pass: not used by the output, or its path was "
                 "cut by detach()/.data/no_grad")
    return _("not used by the output backward() was called on")


_NO_GRAD = re.compile(r"^(\s*)with\s+torch\.(no_grad\(\)|set_grad_enabled\(\s*False\s*\))")
_DATA = re.compile(r"\.data\b")


class GraphCuts:
    """Where the source cuts the graph (`detach()`, `.data`, a `with torch.no_grad():` block),
    read in one pass over the lines, so the report costs the same for every tensor."""

    def __init__(self, text: str) -> None:
        self.reasons: list[str | None] = []
        self.anywhere = False
        open_blocks: list[tuple[int, bool]] = []  # (indent, is no_grad) of enclosing lines
        under = 0  # how many of them are no_grad blocks
        for raw in source_lines(text):
            code = raw.split("#", 1)[0]
            reason = None
            if ".detach(" in code:
                reason = "detach()"
            elif _DATA.search(code):
                reason = ".data"
            if code.strip():
                indent = len(code) - len(code.lstrip())
                while open_blocks and open_blocks[-1][0] >= indent:
                    under -= open_blocks.pop()[1]
                if reason is None and under:
                    reason = N_("an op under torch.no_grad()")
                no_grad = bool(_NO_GRAD.match(code))
                self.anywhere = self.anywhere or no_grad
                open_blocks.append((indent, no_grad))
                under += no_grad
            self.anywhere = self.anywhere or reason is not None
            self.reasons.append(reason)

    def on_line(self, line: int | None) -> str | None:
        """`detach()`, `.data` or no_grad when that line makes a tensor outside the graph."""
        if line is None or not 1 <= line <= len(self.reasons):
            return None
        return self.reasons[line - 1]


def report_document(trace: Trace, entries: list[dict[str, Any]], exit_code: int) -> dict:
    error = trace.error
    return {
        "schema": RUN_SCHEMA_ID,
        "file": trace.source.filename,
        "exit_code": exit_code,
        "output": trace.output,
        "error": None if error is None else {
            "class": error.error_class, "message": error.message,
            "line": error.line, "col": error.col},
        "backward_calls": len(trace.calls),
        "tensors": entries,
    }


def write_json(document: dict, out: TextIO) -> None:
    out.write(dump_json(document))


def dump_json(document: dict) -> str:
    """A document as indented UTF-8 JSON text. A lone surrogate (in an error message, a file
    name) cannot be UTF-8: it is written as the JSON escape `\\udXXX` that stands for it."""
    import json

    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def render_report(entries: list[dict[str, Any]], out: TextIO, *, no_color: bool = False) -> None:
    from rich.text import Text

    from .console import make_console

    if not entries:
        return
    console = make_console(out, no_color=no_color)
    console.print()
    console.rule(Text(_("tensors"), style="bold"), style="dim")
    for e in entries:
        head = Text()
        head.append(e["name"], style="name")
        if e["line"]:
            head.append("  " + _("line {n}").format(n=e["line"]), style="dim")
        head.append(f"  {shape_text(e['shape'])} {e['dtype']}  ")
        if e.get("rebound_at"):
            times = e.get("bindings_at_line", 1)
            note = (_("(an earlier binding (the last of {times} made by this line), rebound at "
                      "line {line}; still in the graph)") if times > 1 else
                    _("(an earlier binding, rebound at line {line}; still in the graph)"))
            head.append(note.format(times=times, line=e["rebound_at"]) + "  ", style="dim")
        if e["is_leaf"]:
            head.append(_("leaf, requires_grad") if e["requires_grad"] else _("leaf"),
                        style="leaf")
        else:
            head.append(f"grad_fn={e['grad_fn']}", style="op")
        console.print(head)
        if e["chain"] and not e["is_leaf"]:
            _field(console, _("chain"), e["chain"], "op")
        _field(console, _("value"), e["value"], "value")
        if e["grad"] is not None:
            _field(console, _("grad"), e["grad"], "grad")
        else:
            _field(console, _("grad"), _("None: {reason}").format(reason=e["grad_none_reason"]),
                   "dim")


def _field(console, label: str, text: str, style: str) -> None:
    from rich.text import Text

    width = max(6, text_width(label))  # a label in Chinese takes two columns a character
    pad = " " * (width + 3)
    body = text.replace("\n", "\n" + pad)
    line = Text("  " + label + " " * (width - text_width(label) + 1), style="dim")
    line.append(body, style=style)
    console.print(line)
