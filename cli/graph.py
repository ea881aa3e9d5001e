"""`autodiff graph`: the backward graph from a root tensor, as a tree, DOT, Mermaid or JSON.

`build_graph(trace, root)` flattens the engine's nodes into `GraphNode`s (ids in
depth-first order from the root); each format is a function of that list.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from typing import TextIO

from autodiff.engine.graph.nodes import AccumulateGrad, accumulate_node, watched_grad_fn
from autodiff.engine.tensors.inspection import input_meta as input_meta_of
from autodiff.engine.tensors.tensor import Tensor
from autodiff.text.i18n import _

from .graph_formats import partial_note, to_dot, to_json, to_mermaid
from .limits import RunLimits
from .names import Namer, dtype_text, shape_text
from .outcome import EXIT_OK, ToolError, UsageError, guarded
from .trace import Trace

FORMATS = ("tree", "dot", "mermaid", "json")
TEXT_SUFFIXES = {".dot": "dot", ".gv": "dot", ".mmd": "mermaid", ".json": "json", ".txt": "tree"}
RENDER_SUFFIXES = (".svg", ".png", ".pdf")
MAX_TREE_DEPTH = 100  # levels the tree view draws
PAGE_SUFFIX = ".html"
SHOWABLE = ("values", "grads", "saved")
PNG_DPI = 150  # Graphviz's default 72 makes a small, blurry picture
# a PNG's longest side at most: rasterizing costs by the pixel (a 600-node comb of leaves,
# unscaled, is 875 megapixels and 65 s); a larger drawing is scaled down to fit
MAX_PNG_SIDE = 4096
LABEL_ELEMENTS = 12  # a --show value with more elements is drawn as its first one and "…"
WIDE = 10_000  # the tree's width when not drawn on a terminal: never cut a line


@dataclass
class GraphNode:
    id: str
    op: str  # grad_fn name, "AccumulateGrad" for a leaf
    name: str | None  # the program's variable, when a top-level name holds this tensor
    line: int | None  # line of that variable's first assignment
    shape: list[int] | None
    dtype: str | None
    leaf: bool
    inputs: list[str] = field(default_factory=list)  # ids, in next_functions order
    # what --show asked for: "value" and "grad" (as PyTorch prints them), "saved" (name ->
    # value as PyTorch prints it); absent keys were not asked for or are not known
    details: dict = field(default_factory=dict)

    def document(self) -> dict:
        """The JSON node: the schema's fields, then the optional --show ones."""
        fields = asdict(self)
        details = fields.pop("details")
        fields.update({k: v for k, v in details.items() if k in ("value", "grad", "saved")})
        return fields

    def detail_lines(self) -> list[str]:
        """`value 4.5`, `grad 1`, `saved a = 2, b = 3`: short forms for drawings."""
        from .explain_text import value_text

        return [line for _kind, line in self.details_by_kind()]

    def details_by_kind(self) -> list[tuple[str, str]]:
        """(what --show names it: values, grads, saved; its line)."""
        from .explain_text import value_text

        words = {"value": _("value"), "grad": _("grad")}
        lines = [(key + "s", f"{words[key]} {value_text(self.details[key + '_array'], LABEL_ELEMENTS)}")
                 for key in ("value", "grad") if key + "_array" in self.details]
        saved = self.details.get("saved_arrays")
        if saved:
            lines.append(("saved", _("saved") + " " + ", ".join(
                f"{k} = {value_text(v, LABEL_ELEMENTS)}" for k, v in saved.items())))
        return lines

    def summary(self) -> str:
        if self.shape is None:
            return ""
        return f"{shape_text(self.shape)} {self.dtype}"


@dataclass
class Graph:
    file: str
    root: str
    nodes: list[GraphNode]
    error: str | None = None  # the program stopped with this error: the graph built before it
    folded: int = 0  # nodes a drawing leaves out, folded into one (cli/graph_fold.py)


def pick_root(trace: Trace, root: str | None) -> Tensor:
    """`--root NAME`; else the tensor passed to the backward call the program stopped in, or
    the last one passed to backward; else the last with a grad_fn."""
    tensors = trace.tensors()
    if root is not None:
        if root not in tensors:
            raise UsageError(_("--root {name}: no top-level tensor of that name (tensors: "
                               "{names})").format(name=root,
                                                  names=", ".join(tensors) or _("none")))
        t = tensors[root]
        if not t.requires_grad:
            raise UsageError(_("--root {name}: {name} does not require grad, so it has no "
                               "graph").format(name=root))
        return t
    if trace.error is not None and trace.failed_call is not None:
        return trace.failed_call.tensor  # the backward call the program stopped in
    if trace.calls:
        return trace.calls[-1].tensor
    with_graph = [t for t in tensors.values() if watched_grad_fn(t) is not None]
    if not with_graph:
        raise UsageError(_("no tensor with a grad_fn to draw: the program builds no graph"))
    return with_graph[-1]


def build_graph(trace: Trace, root: str | None = None, show: frozenset = frozenset()) -> Graph:
    tensor = pick_root(trace, root)
    namer = Namer(trace)
    node_lines = trace.node_lines()
    start = watched_grad_fn(tensor)
    if start is None:
        start = accumulate_node(tensor)
    if start is None:  # a view of a leaf taken under no_grad: it has no node at all
        raise UsageError(_("the chosen tensor is a view taken under no_grad: it has no graph"))
    ids: dict[int, GraphNode] = {}
    nodes: dict[int, object] = {}  # the engine's node behind each id
    order: list[GraphNode] = []
    # iterative depth-first walk (a .tg loop can build very long chains)
    stack = [(start, list(tensor.shape), dtype_text(tensor.dtype))]
    while stack:
        node, shape, dtype = stack.pop()
        if id(node) in ids:
            continue
        name = namer.name_of(node)
        leaf = type(node) is AccumulateGrad
        if leaf:
            shape, dtype = list(node.variable.shape), dtype_text(node.variable.dtype)
        line = trace.line_of(name) if leaf else node_lines.get(id(node), trace.line_of(name))
        g = GraphNode(f"n{len(order)}", "AccumulateGrad" if leaf else node.name(), name,
                      line, shape, dtype, leaf)
        ids[id(node)] = g
        nodes[id(node)] = node
        order.append(g)
        if leaf:
            continue
        pending = []
        for i, (child, _slot) in enumerate(node.next_functions):
            if child is None:
                continue
            shape_i, dtype_i = input_meta(node, i)
            pending.append((child, shape_i, dtype_i))
        stack.extend(reversed(pending))
    _link(start, ids)
    if show:
        from .graph_details import add_details

        add_details(trace, ids, nodes, show)
    error = None if trace.error is None else trace.error.headline()
    return Graph(trace.source.filename, order[0].id, order, error)


def _link(start, ids: dict) -> None:
    stack, seen = [start], {id(start)}
    while stack:
        node = stack.pop()
        for child, _slot in node.next_functions:
            if child is None:
                continue
            ids[id(node)].inputs.append(ids[id(child)].id)
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)


def input_meta(node, i: int) -> tuple[list[int] | None, str | None]:
    """Shape and dtype of a node's i-th input (the output of the node it points to)."""
    item = input_meta_of(node)[i]
    shape, dt = item if item is not None else (None, None)
    if shape is None:
        return None, None
    from autodiff.engine.core.dtypes import from_numpy

    return list(shape), dtype_text(from_numpy(dt))


# --- the tree (the other formats: cli/graph_formats.py) ------------------------------

def tree_text(graph: Graph) -> str:
    """The tree as plain text (what `-o graph.txt` writes)."""
    import io

    buffer = io.StringIO()
    render_tree(graph, buffer, no_color=True, width=WIDE)
    return buffer.getvalue()


def render_tree(graph: Graph, out: TextIO, *, no_color: bool = False,
                width: int | None = None) -> None:
    """The tree on `out`, cut to the terminal's width only when `out` is a terminal."""
    from rich.text import Text
    from rich.tree import Tree

    from .console import make_console

    by_id = {g.id: g for g in graph.nodes}

    def label(g: GraphNode, again: bool = False) -> Text:
        text = Text()
        if g.leaf:
            text.append("AccumulateGrad", style="leaf")
            text.append(" → ")
            text.append(g.name or _("(unnamed leaf)"), style="name")
            text.append(f" {g.summary()}")
            if g.line:
                text.append("  " + _("line {n}").format(n=g.line), style="dim")
            if again:
                text.append("  " + _("↑ shown above"), style="dim")
            return text if again else _with_details(text, g)
        text.append(g.op, style="op")
        if g.name:
            text.append(f"  {g.name}", style="name")
            if g.line:
                text.append(" " + _("line {n}").format(n=g.line), style="dim")
        text.append(f"  {g.summary()}")
        if again:
            text.append("  " + _("↑ shown above"), style="dim")
        return text if again else _with_details(text, g)

    root = by_id[graph.root]
    tree = Tree(label(root))
    drawn = {root.id}
    stack = [(root, tree, 1)]
    cut = False
    while stack:
        g, branch, depth = stack.pop()
        if depth >= MAX_TREE_DEPTH and g.inputs:
            # each level indents every line below it: a deep chain would draw a triangle of
            # guide lines (the terminal crops it anyway), so the tree stops here
            branch.add(Text("…", style="dim"))
            cut = True
            continue
        children = []
        for child_id in g.inputs:
            child = by_id[child_id]
            if child_id in drawn:
                branch.add(label(child, again=True))
                continue
            drawn.add(child_id)
            children.append((child, branch.add(label(child)), depth + 1))
        stack.extend(reversed(children))
    console = make_console(out, no_color=no_color)
    if width is not None:
        console.width = width
    elif not _is_terminal(out):
        console.width = WIDE
    note = partial_note(graph)
    if note:
        console.print(Text(note, style="error"))
    console.print(tree)
    if cut:
        console.print(Text(_("(the tree stops at {depth} levels: -f json or -f dot shows "
                             "every node)").format(depth=MAX_TREE_DEPTH), style="dim"))


def _is_terminal(out) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def _with_details(text, g: GraphNode):
    for line in g.detail_lines():
        text.append("\n" + line, style="value")
    return text


def render_graphviz(dot_text: str, suffix: str) -> bytes:
    """`dot -Tsvg|png|pdf`; a clear message when Graphviz is not installed."""
    exe = shutil.which("dot")
    if exe is None:
        raise ToolError(_("rendering {suffix} needs Graphviz's `dot`, which was not found: "
                          "install the `graphviz` package (Debian/Ubuntu: apt-get install "
                          "graphviz; macOS: brew install graphviz), or write .dot/.mmd/.json "
                          "instead").format(suffix=suffix))
    side = f"{MAX_PNG_SIDE / PNG_DPI:.2f}"
    extra = [f"-Gdpi={PNG_DPI}", f"-Gsize={side},{side}"] if suffix == ".png" else []
    done = subprocess.run([exe, f"-T{suffix[1:]}", *extra], input=dot_text.encode("utf-8"),
                          capture_output=True, check=False)
    if done.returncode != 0:
        raise ToolError(_("dot failed: {message}").format(
            message=done.stderr.decode(errors="replace").strip()))
    return done.stdout


# --- the command --------------------------------------------------------------------------

def parse_show(show: str | None) -> frozenset:
    """`--show values,grads,saved` (any of them, comma-separated)."""
    if not show:
        return frozenset()
    asked = frozenset(part.strip() for part in show.split(",") if part.strip())
    unknown = sorted(asked - set(SHOWABLE))
    if unknown:
        raise UsageError(_("--show {name}: choose among {names}").format(
            name=unknown[0], names=", ".join(SHOWABLE)))
    return asked


def graph_path(path: str, *, root: str | None = None, fmt: str = "tree",
               output: str | None = None, show: str | None = None, no_color: bool = False,
               out: TextIO | None = None, err: TextIO | None = None,
               limits: RunLimits | None = None) -> int:
    """`autodiff graph`: run the program quietly, then draw its backward graph (on a program
    that fails, the graph built before the error, marked so, then the error)."""
    import os
    import sys

    from .files import write_atomic
    from .limits import applied
    from .outcome import EXIT_FAILED, describe, write_diagnostic
    from .source import display_name, load_source
    from .trace import trace_source

    out = out or sys.stdout
    err = err or sys.stderr

    def action() -> int:
        if fmt not in FORMATS:
            raise UsageError(_("--format {name}: choose one of {names}").format(
                name=fmt, names=", ".join(FORMATS)))
        asked = parse_show(show)
        suffix = os.path.splitext(output)[1].lower() if output else None
        known = (*RENDER_SUFFIXES, PAGE_SUFFIX, *TEXT_SUFFIXES)
        if suffix is not None and suffix not in known:
            raise UsageError(_("-o {name}: the suffix must be one of {names}").format(
                name=output, names=", ".join(known)))
        page = suffix == PAGE_SUFFIX
        folded = 0  # nodes the drawing leaves out
        with applied(limits):  # the deadline covers the drawing and Graphviz too
            trace = trace_source(load_source(path), err=err, record_steps=bool(asked) or page)
            try:  # the page's panel shows every detail; its drawing only what --show asks
                graph = build_graph(trace, root, frozenset(SHOWABLE) if page else asked)
            except UsageError:
                trace.raise_error()  # a program that failed before building a graph: its error
                raise
            if output is None:
                if fmt == "tree":
                    render_tree(graph, out, no_color=no_color)
                else:
                    out.write(_TEXT_WRITERS[fmt](graph))
            elif suffix in RENDER_SUFFIXES or suffix == PAGE_SUFFIX:
                from .graph_fold import for_drawing

                drawing = for_drawing(graph)  # a graph too big for Graphviz: its first nodes
                folded = drawing.folded
                if suffix == PAGE_SUFFIX:
                    from .graph_page import graph_page

                    svg = render_graphviz(to_dot(drawing, details=asked), ".svg")
                    write_atomic(output, graph_page(graph, svg))
                else:
                    write_atomic(output, render_graphviz(to_dot(drawing), suffix))
            else:
                write_atomic(output, _TEXT_WRITERS[TEXT_SUFFIXES[suffix]](graph))
        if trace.error is not None:  # the drawing is out; now the error, as run shows it
            write_diagnostic(err, trace.error, describe(trace.error, trace.source.text), no_color)
        if output is not None:
            wrote = _("wrote {file} ({count} nodes, built before the program stopped with an "
                      "error)") if trace.error is not None else _("wrote {file} ({count} nodes)")
            err.write(wrote.format(file=display_name(output), count=len(graph.nodes)) + "\n")
            if folded:
                err.write(_("(too many for Graphviz to lay out: the drawing shows {drawn} of "
                            "them and folds the other {folded} into one node; -f json or -f dot "
                            "has every node)").format(drawn=len(graph.nodes) - folded,
                                                      folded=f"{folded:,}") + "\n")
        return EXIT_OK if trace.error is None else max(trace.error.exit_code, EXIT_FAILED)

    return guarded(action, err, subject=display_name(path), no_color=no_color)


_TEXT_WRITERS = {"dot": to_dot, "mermaid": to_mermaid, "json": to_json, "tree": tree_text}
