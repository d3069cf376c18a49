"""The text form of a `Graph`: one line per node, then one per edge, what
`print(drawing)` shows, what nbval compares and what a screen reader reads.
A pure function of the graph, like the DOT source.

Floor: the text form, a sibling of `dot.py` under `draw.py`. It reads what
`layout.py` says is drawn (visible nodes and edges, saved values listed, the
cut notice) and imports `layout.py` and the graph floor (`graph.py`,
`roll.py`); never `dot.py`, its sibling, nor `draw.py` or `svg.py`.
"""

import textwrap
from collections.abc import Collection, Mapping

from .graph import Edge, Graph
from .layout import CUT_MARK, counted, cut_notice, rolled_out_notice, shown_saved, visible
from .roll import NO_REPEATS, NO_REPEATS_TEXT

HIGHLIGHT_MARK = "[highlighted]"
# No line of the text form is longer: a node's line goes on, indented by CONTINUED, on the next.
LINE_LIMIT = 120
CONTINUED = "    "


def to_text(graph: Graph, constants: bool = True, highlight: Collection[str] = frozenset(),
            notes: Mapping[str, str] | None = None) -> str:
    """The structure as text: one line per node, then one per edge.
    Highlighted nodes are marked, and notes follow a "#"."""
    nodes, edges = visible(graph, constants)
    notes = notes or {}
    cut = set(graph.cut)          # a set: one membership test per node (40k cut nodes: 18 s -> 0.1 s)
    lines = [f"{counted(len(nodes), 'node')}, {counted(len(edges), 'edge')} "
             "(an arrow goes from an input to the node that used it)"]
    for node in nodes:
        parts = [node.id, f"{node.kind}:", node.label + (f", {node.detail}" if node.detail else "")]
        parts += [f"| {s.name}: {s.text}" for s in shown_saved(node)]
        parts += [HIGHLIGHT_MARK] if node.id in highlight else []
        parts += [CUT_MARK] if node.id in cut else []
        parts += [f"# {notes[node.id]}"] if node.id in notes else []
        lines += _bounded(parts)
    lines += [f"{e.src} -> {e.dst}" + _edge_note(e) for e in edges]
    if graph.omitted:
        lines.append(cut_notice(graph))
    if graph.rolled_out:
        lines.append(rolled_out_notice(graph))
    if NO_REPEATS in graph.rolled:
        lines.append(NO_REPEATS_TEXT + ": the whole graph is drawn" + (", cut to max_nodes" if graph.omitted else ""))
    return "\n".join(piece for line in lines for piece in _wrapped(line))


def _wrapped(line: str) -> list[str]:
    """A line of at most LINE_LIMIT characters as it is; a longer one (a
    notice) broken between words, each line after the first indented."""
    if len(line) <= LINE_LIMIT:
        return [line]
    return textwrap.wrap(line, LINE_LIMIT, subsequent_indent=CONTINUED, break_on_hyphens=False)


def _bounded(parts: list[str]) -> list[str]:
    """A node's parts joined by spaces into lines of at most LINE_LIMIT
    characters, each line after the first indented by CONTINUED; a part too
    long for a line of its own is split."""
    lines = [""]
    for part in parts:
        room = LINE_LIMIT - len(lines[-1]) - 1
        if lines[-1] and len(part) <= room:
            lines[-1] += " " + part
            continue
        if lines[-1]:
            lines.append(CONTINUED)
        width = LINE_LIMIT - len(lines[-1])
        pieces = [part[i:i + width] for i in range(0, len(part), width)] or [""]
        lines[-1] += pieces[0]
        lines += [CONTINUED + piece for piece in pieces[1:]]
    return lines


def _edge_note(edge: Edge) -> str:
    return f" [input {edge.slot}" + (f", output {edge.output_nr}]" if edge.output_nr else "]")
