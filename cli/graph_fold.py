"""A drawing Graphviz can lay out in about a second, for the renders (svg, png, pdf, html).

Graphviz's `dot` is far worse than linear in what it lays out: every node, and a virtual
node for each rank an edge passes on its way down. A loop of `y = y * x + y` gives each of
its levels an edge to the leaf x at the bottom; 50 levels (101 nodes) take it 5 s, 100
levels minutes. So a graph over LAYOUT_BUDGET is drawn as its first nodes from the root
(breadth first, at most MAX_DRAWN, within the budget) and its leaves (when there are few),
with one dashed node standing for the rest: how many, of which grad_fn (`MulBackward0 ×399`),
and that `-f json` or `-f dot` has every node. A graph within the budget is drawn whole,
unchanged.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import replace

from autodiff.text.i18n import _

from .graph import Graph, GraphNode
from .graph_formats import FOLD_ID

LAYOUT_BUDGET = 1200  # nodes, real and virtual: dot lays that many out in well under a second
MAX_DRAWN = 200  # nodes drawn of a folded graph: more is no picture a person reads anyway
MAX_LEAVES_KEPT = 30  # the leaves of a folded graph are drawn when there are no more than this
OPS_NAMED = 4  # grad_fn names the fold node counts; the rest are "…"


def layout_cost(nodes: list[GraphNode]) -> int:
    """The nodes dot lays out: each node, and each rank an edge crosses (ranks as the longest
    path from the root gives them; dot's own ranking can only shorten the edges)."""
    parents = Counter(child for g in nodes for child in g.inputs)
    by_id = {g.id: g for g in nodes}
    rank = {g.id: 0 for g in nodes}
    ready = deque(g.id for g in nodes if parents[g.id] == 0)
    while ready:  # Kahn's order: a node's rank is final once all its parents are ranked
        g = by_id[ready.popleft()]
        for child in g.inputs:
            rank[child] = max(rank[child], rank[g.id] + 1)
            parents[child] -= 1
            if parents[child] == 0:
                ready.append(child)
    return len(nodes) + sum(max(rank[c] - rank[g.id] - 1, 0) for g in nodes for c in g.inputs)


def for_drawing(graph: Graph) -> Graph:
    """`graph` when dot can lay it out within the budget; else its folded drawing."""
    if layout_cost(graph.nodes) <= LAYOUT_BUDGET:
        return graph
    order = _breadth_first(graph)
    leaves = [g.id for g in graph.nodes if g.leaf]
    always = set(leaves) if len(leaves) <= MAX_LEAVES_KEPT else set()
    low, high = 1, min(MAX_DRAWN, len(order))  # the longest prefix that fits (1 always does)
    while low < high:
        middle = (low + high + 1) // 2
        if layout_cost(_folded(graph, order[:middle], always).nodes) <= LAYOUT_BUDGET:
            low = middle
        else:
            high = middle - 1
    return _folded(graph, order[:low], always)


def _breadth_first(graph: Graph) -> list[str]:
    by_id = {g.id: g for g in graph.nodes}
    order, seen, queue = [], {graph.root}, deque([graph.root])
    while queue:
        node = by_id[queue.popleft()]
        order.append(node.id)
        for child in node.inputs:
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return order


def _folded(graph: Graph, first: list[str], always: set) -> Graph:
    kept = set(first) | always
    nodes, hidden_targets, hidden = [], [], Counter()
    for g in graph.nodes:
        if g.id in kept:
            inputs = [c for c in g.inputs if c in kept]
            if len(inputs) < len(g.inputs):  # one edge into the fold, however many it hides
                inputs.append(FOLD_ID)
            nodes.append(replace(g, inputs=inputs))
        else:
            hidden[g.op] += 1
            hidden_targets.extend(c for c in g.inputs if c in kept)
    if hidden:
        targets = list(dict.fromkeys(hidden_targets))
        nodes.append(GraphNode(FOLD_ID, _fold_label(hidden), None, None, None, None, False,
                               targets))
    return replace(graph, nodes=nodes, folded=sum(hidden.values()))


def _fold_label(hidden: Counter) -> str:
    named = [f"{op} ×{count}" for op, count in hidden.most_common(OPS_NAMED)]
    if len(hidden) > OPS_NAMED:
        named.append("…")
    return "\n".join([
        _("{count} more nodes, not drawn:").format(count=f"{sum(hidden.values()):,}"),
        ", ".join(named),
        _("-f json or -f dot has every node")])
