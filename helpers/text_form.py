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

from .graph import Edge, Graph, Node
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
    plain: dict[tuple[str, str, str, int], tuple[list[str], str]] = {}
    for node in nodes:
        if node.id in highlight or node.id in cut or node.id in notes:
            marks = [HIGHLIGHT_MARK] if node.id in highlight else []
            marks += [CUT_MARK] if node.id in cut else []
            marks += [f"# {notes[node.id]}"] if node.id in notes else []
            lines += _bounded([node.id, *_rest(node), *marks])
            continue
        # A node without marks or a note: its line but for the id is that of every node of the same
        # kind, label, detail and saved values (a loop's: nearly all), made once. Keyed by the saved
        # tuple's identity: equal ones are mostly one object (saved_values.SavedReader), and the
        # graph holds each while this runs.
        key = (node.kind, node.label, node.detail, id(node.saved))
        found = plain.get(key)
        if found is None:
            rest = _rest(node)
            found = plain[key] = (rest, " " + " ".join(rest))
        rest, joined = found
        if len(node.id) + len(joined) <= LINE_LIMIT and node.id:
            lines.append(node.id + joined)           # what _bounded makes of a line that fits
        else:
            lines += _bounded([node.id, *rest])
    notes_of: dict[tuple[int, int], str] = {}
    for e in edges:
        note = notes_of.get((e.slot, e.output_nr))
        if note is None:
            note = notes_of[(e.slot, e.output_nr)] = _edge_note(e)
        lines.append(f"{e.src} -> {e.dst}{note}")
    if graph.omitted:
        lines.append(cut_notice(graph))
    if graph.rolled_out:
        lines.append(rolled_out_notice(graph))
    if NO_REPEATS in graph.rolled:
        lines.append(NO_REPEATS_TEXT + ": the whole graph is drawn" + (", cut to max_nodes" if graph.omitted else ""))
    return "\n".join(line if len(line) <= LINE_LIMIT else "\n".join(_wrapped(line)) for line in lines)


def _rest(node: Node) -> list[str]:
    """The parts of a node's line after its id, without marks or a note."""
    return [f"{node.kind}:", node.label + (f", {node.detail}" if node.detail else ""),
            *(f"| {s.name}: {s.text}" for s in shown_saved(node))]


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
