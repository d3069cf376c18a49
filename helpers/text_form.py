"""The text form of a `Graph`: one line per node, then one per edge, what
`print(drawing)` shows, what nbval compares and what a screen reader reads.
A pure function of the graph, like the DOT source (`render.py`)."""

from collections.abc import Collection, Mapping

from .graph import Edge, Graph, Node
from .roll import NO_REPEATS, NO_REPEATS_TEXT
from .saved_values import Saved

HIGHLIGHT_MARK = "[highlighted]"
CUT_MARK = "[inputs not drawn]"


def shown_saved(node: Node) -> list[Saved]:
    """The saved values a drawing lists: sizes and strides kept only for
    shape bookkeeping (names with "_sym_") are left out; the Graph has them."""
    return [s for s in node.saved if "_sym_" not in s.name]


def visible(graph: Graph, constants: bool = True) -> tuple[list[Node], list[Edge]]:
    """The nodes and edges to draw: constants left out unless asked for."""
    shown = [n for n in graph.nodes if constants or n.kind != "const"]
    ids = {n.id for n in shown}
    return shown, [e for e in graph.edges if e.src in ids and e.dst in ids]


def to_text(graph: Graph, constants: bool = True, highlight: Collection[str] = frozenset(),
            notes: Mapping[str, str] | None = None) -> str:
    """The structure as text: one line per node, then one per edge.
    Highlighted nodes are marked, and notes follow a "#"."""
    nodes, edges = visible(graph, constants)
    notes = notes or {}
    cut = set(graph.cut)          # a set: one membership test per node (40k cut nodes: 18 s -> 0.1 s)
    lines = [f"{len(nodes)} nodes, {len(edges)} edges (an arrow goes from an input to the node that used it)"]
    for node in nodes:
        parts = [node.id, f"{node.kind}:", node.label + (f", {node.detail}" if node.detail else "")]
        parts += [f"| {s.name}: {s.text}" for s in shown_saved(node)]
        parts += [HIGHLIGHT_MARK] if node.id in highlight else []
        parts += [CUT_MARK] if node.id in cut else []
        parts += [f"# {notes[node.id]}"] if node.id in notes else []
        lines.append(" ".join(parts))
    lines += [f"{e.src} -> {e.dst}" + _edge_note(e) for e in edges]
    if graph.omitted:
        lines.append(cut_notice(graph))
    if NO_REPEATS in graph.rolled:
        lines.append(NO_REPEATS_TEXT + ": the whole graph is drawn" + (", cut to max_nodes" if graph.omitted else ""))
    return "\n".join(lines)


def cut_notice(graph: Graph) -> str:
    """The line that says how much of the graph was left out (at least how
    much, when the walk stopped counting: `Graph.counted` False)."""
    if not graph.counted:
        return (f"... at least {graph.omitted:,} more nodes not drawn: {len(graph.nodes)} shown, "
                f"nearest the output first (raise max_nodes to see more)")
    total = len(graph.nodes) + graph.omitted
    return (
        f"... {graph.omitted} more nodes not drawn: {len(graph.nodes)} of {total} shown, "
        f"nearest the output first (raise max_nodes to see more)"
    )


def _edge_note(edge: Edge) -> str:
    return f" [input {edge.slot}" + (f", output {edge.output_nr}]" if edge.output_nr else "]")
