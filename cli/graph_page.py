"""`autodiff graph -o g.html`: one self-contained page (no network) showing Graphviz's SVG of
the graph, where clicking or hovering a node fills a panel with its grad_fn, the line that
made it, shape, dtype, value and gradient (and what it saved).

The node data rides in the page as JSON read by a short script; every program-made string
reaches the page through `textContent`, never as markup. The SVG is Graphviz's, drawn from
DOT whose labels cli/graph_formats.py escaped; the page's own texts (the title, the note of
an error) are escaped here, their control characters shown as escapes first.
"""

from __future__ import annotations

import html
import json

from autodiff.text.display import visible

from .graph import Graph
from .graph_formats import partial_note

_STYLE = """
body { margin: 0; font-family: Helvetica, Arial, sans-serif; display: flex; height: 100vh; }
#drawing { flex: 1; overflow: auto; padding: 12px; }
#drawing svg { max-width: 100%; height: auto; }
#panel { width: 34em; border-left: 1px solid #ccc; padding: 12px 16px; overflow: auto;
         background: #fafafa; }
#panel h2 { font-size: 1.1em; margin: 0 0 .6em; }
#panel dt { font-weight: bold; margin-top: .5em; color: #333; }
#panel dd { margin: .1em 0 0 0; }
#panel pre { margin: 0; font-size: .9em; white-space: pre-wrap; }
#partial { color: #b00020; margin: 0 0 .8em; }
g.node { cursor: pointer; }
g.node.selected path, g.node.selected polygon { stroke: #d2691e; stroke-width: 3px; }
"""

_SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById('graph-data').textContent);
  var fields = [['grad_fn', 'op'], ['variable', 'name'], ['line', 'line'], ['shape', 'shape'],
                ['dtype', 'dtype'], ['value', 'value'], ['gradient', 'grad']];
  var panel = document.getElementById('details');
  var heading = document.getElementById('node-title');
  function text(v) {
    if (v === null || v === undefined) return '(none)';
    if (Array.isArray(v)) return '[' + v.join(', ') + ']';
    return String(v);
  }
  function show(id, g) {
    var node = data[id];
    if (!node) return;
    document.querySelectorAll('g.node.selected').forEach(function (s) {
      s.classList.remove('selected');
    });
    g.classList.add('selected');
    heading.textContent = node.op + (node.name ? ' \u2014 ' + node.name : '');
    panel.textContent = '';
    var rows = fields.slice();
    if (node.saved) Object.keys(node.saved).forEach(function (k) {
      rows.push(['saved ' + k, null, node.saved[k]]);
    });
    rows.forEach(function (row) {
      var dt = document.createElement('dt');
      dt.textContent = row[0];
      var dd = document.createElement('dd');
      var pre = document.createElement('pre');
      pre.textContent = row[1] === null ? row[2] : text(node[row[1]]);
      dd.appendChild(pre);
      panel.appendChild(dt);
      panel.appendChild(dd);
    });
  }
  document.querySelectorAll('g.node').forEach(function (g) {
    var title = g.querySelector('title');
    var id = title ? title.textContent : null;
    g.addEventListener('click', function () { show(id, g); });
    g.addEventListener('mouseenter', function () { show(id, g); });
  });
})();
"""


def graph_page(graph: Graph, svg: bytes) -> str:
    """The page: the SVG inline (its XML prolog and doctype dropped), the panel, the data."""
    text = svg.decode("utf-8")
    start = text.find("<svg")
    drawing = text[start:] if start >= 0 else text
    nodes = {}
    for g in graph.nodes:
        document = g.document()
        nodes[g.id] = {key: document.get(key) for key in
                       ("op", "name", "line", "shape", "dtype", "value", "grad", "saved")}
    # a lone surrogate as its JSON escape; every `<` escaped, so no `</script` or `<!--` ends
    # or bends the script element
    data = json.dumps(nodes, ensure_ascii=False).encode("utf-8", "backslashreplace").decode(
        "utf-8").replace("<", "\\u003c")
    note = partial_note(graph)
    partial = f'<p id="partial">{_html_text(note)}</p>' if note else ""
    title = _html_text(f"autodiff graph: {graph.file}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{title}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            f"<div id=\"drawing\">{partial}{drawing}</div>\n"
            f"<div id=\"panel\"><h2 id=\"node-title\">Click or hover a node</h2>"
            f"<dl id=\"details\"></dl></div>\n"
            f"<script type=\"application/json\" id=\"graph-data\">{data}</script>\n"
            f"<script>{_SCRIPT}</script>\n</body>\n</html>\n")


def _html_text(text: str) -> str:
    return html.escape(visible(text, keep="\n"))
