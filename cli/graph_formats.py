"""`autodiff graph`'s text formats, DOT, Mermaid and JSON, each a function of the Graph
(cli/graph.py builds it; the tree is drawn there, the page in cli/graph_page.py).

Every text in a label reaches its format through that format's one escaping function,
`dot_text` or `mermaid_text`: a program chooses its error message (the note of a graph built
before an error) and its file's name, and neither may end a label, start a statement of the
format or carry markup into the SVG or the page drawn from it. JSON escapes by itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autodiff.text.display import visible
from autodiff.text.i18n import _

if TYPE_CHECKING:
    from .graph import Graph, GraphNode

GRAPH_SCHEMA_ID = "autodiff.graph/1"
FOLD_ID = "more"  # the node a drawing too large to lay out folds the rest of the graph into
# what Mermaid reads as markup or syntax inside a "quoted" label, as its entity codes
_MERMAID = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;"}


def node_lines(g: "GraphNode", details: frozenset | None = None) -> list[str]:
    """The label lines every format shows: op, `name · line N`, `[shape] dtype`, then the
    --show details (only those in `details`, when given)."""
    lines = [g.op]
    if g.name:
        lines.append(f"{g.name} · " + _("line {n}").format(n=g.line) if g.line else g.name)
    if g.shape is not None:
        lines.append(g.summary())
    return lines + [line for kind, line in g.details_by_kind()
                    if details is None or kind in details]


def partial_note(graph: "Graph") -> str | None:
    return _("(the graph built before the program stopped with an error: {error})").format(
        error=graph.error) if graph.error else None


def dot_text(text: str) -> str:
    """`text` inside a DOT "quoted" label: a control character as its escape, a line break
    as DOT's \\n, `\\` and `"` escaped, and `&` as `&amp;` (Graphviz decodes HTML entities
    in every label: `&#27;` would put a raw ESC into the SVG, which is then not XML)."""
    shown = visible(text, keep="\n").replace("\\", "\\\\").replace('"', '\\"')
    return shown.replace("&", "&amp;").replace("\n", "\\n")


def mermaid_text(text: str) -> str:
    """`text` inside a Mermaid "quoted" label or a %% comment: what Mermaid reads as markup
    or syntax as its entity code (#quot;, #lt;), a control character as its escape, a line
    break as <br/>: nothing can end the label, or the line and start a statement."""
    shown = visible(text, keep="\n")
    return "".join(_MERMAID.get(ch, ch) for ch in shown).replace("\n", "<br/>")


def to_dot(graph: "Graph", details: frozenset | None = None) -> str:
    out = ["digraph autograd {", "  rankdir=TB;",
           '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica"];',
           '  edge [color="#555555"];']
    if graph.error:
        out += [f'  label="{dot_text(partial_note(graph))}";', "  labelloc=t;",
                '  fontname="Helvetica";', '  fontcolor="#b00020";']
    for g in graph.nodes:
        label = "\\n".join(dot_text(s) for s in node_lines(g, details))
        extra = ', fillcolor="#e3f4e1"' if g.leaf else \
            ', style="rounded,dashed", fillcolor="#ffffff"' if g.id == FOLD_ID else ""
        out.append(f'  {g.id} [label="{label}"{extra}];')
    for g in graph.nodes:
        out.extend(f"  {g.id} -> {child};" for child in g.inputs)
    out.append("}")
    return "\n".join(out) + "\n"


def to_mermaid(graph: "Graph") -> str:
    out = ["flowchart TD"]
    if graph.error:
        note = mermaid_text(partial_note(graph))
        out.append(f"  %% {note}")
        out.append(f'  partial["{note}"]')
        out.append("  style partial fill:#fde8e8,stroke:#b00020")
    for g in graph.nodes:
        label = "<br/>".join(mermaid_text(s) for s in node_lines(g))
        shape = ('(["', '"])') if g.leaf else ('["', '"]')
        out.append(f"  {g.id}{shape[0]}{label}{shape[1]}")
    for g in graph.nodes:
        out.extend(f"  {g.id} --> {child}" for child in g.inputs)
    return "\n".join(out) + "\n"


def to_json(graph: "Graph") -> str:
    document = {"schema": GRAPH_SCHEMA_ID, "file": graph.file, "root": graph.root,
                "nodes": [g.document() for g in graph.nodes]}
    if graph.error:
        document["error"] = graph.error  # optional: the graph is what was built before it
    from .report import dump_json

    return dump_json(document)
