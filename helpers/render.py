"""Turn a `Graph` into Graphviz DOT text and into a plain text form.

Both are pure functions of the graph, so the same computation gives
byte-identical output in every process. Laying DOT out as SVG is in `svg.py`.
"""

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from html import escape
from typing import Final

from .graph import Edge, Graph, Node
from .saved_values import Saved

# The visual vocabulary, in one place: draw_graph's docstring, the index
# notebook's legend table and every drawing are made from these constants.
# kind -> (fill colour, its name, what it means)
LEGEND: Final[Mapping[str, tuple[str, str, str]]] = {
    "output": ("#c8e6c9", "pale green", "a tensor you passed in: the result of the forward pass"),
    "op": ("#e0e0e8", "grey", "a backward node (grad_fn): one recorded operation, its name in larger type"),
    "leaf": ("#bbdefb", "light blue", "a leaf (AccumulateGrad): backward writes into its .grad"),
    "const": ("#ffffff", "white oval", "None in next_functions: an input that needs no gradient"),
    "group": ("#f8d8b0", "pale orange", "repeated steps of a loop rolled into one (draw_graph(..., roll=True))"),
    "highlight": ("#fff176", "yellow", "a node you asked to highlight, with a thick border"),
}
# Every text colour reads at 4.5:1 or more on every fill above, and the fills
# stay apart under protanopia, deuteranopia and tritanopia (tests/test_colours.py).
SAVED_COLOUR = "#9a2e06"
FREED_COLOUR = "#555555"
CUT_COLOUR = "#b71c1c"
NOTE_COLOUR = "#0d47a1"
CUT_FILL = "#ffebee"
TEXT_COLOUR = "#000000"
# A leaf's second line: PyTorch makes its AccumulateGrad node when the leaf is
# first used in an operation; a leaf of notebook 07's engine has no such node.
LEAF_LINES = {"torch": "AccumulateGrad", "unused": "no autograd node yet", "scratch": "leaf Value"}
# A leaf used more often than this is drawn once beside each use (with a
# double border): one node wired to every step of a long loop makes dot's
# layout take minutes, while the copies lay out in well under a second.
SHARED_LIMIT = 4
SHARED_TEXT = (f"A leaf used more than {SHARED_LIMIT} times (a weight shared by every step of a loop) is "
               "drawn once beside each use, with a double border and the line \"shared: N uses\"; "
               "the text form keeps it as one node.")
SAVED_TEXT = ("Saved values are small rust-coloured lines inside a node (\"self: tensor of shape (3, 3)\"); once "
              "backward() has freed them they read \"freed\" in dark grey italics and the node's box "
              "turns dashed (a constant is a white oval, never dashed).")
HIGHLIGHT_MARK = "[highlighted]"
CUT_MARK = "[inputs not drawn]"
# Above this many drawn nodes, dot gets straight edges and a bounded number of
# network-simplex rounds: a 300-node LSTM graph lays out in 0.1 s instead of 0.3 s.
QUICK_LAYOUT = 200
QUICK = '  graph [splines=line, nslimit=2, nslimit1=2];'
MAX_SAVED_ROWS = 6
CHAIN_WEIGHT = 8


def legend_text() -> str:
    """The legend as plain lines (draw_graph's docstring ends with it)."""
    rows = [f"  {name:<14} {kind:<9} -- {meaning}" for kind, (_, name, meaning) in LEGEND.items()]
    return "\n".join(["Colours (fill):", *rows, SHARED_TEXT, SAVED_TEXT])


def legend_html() -> str:
    """The colour legend as an HTML table (shown in the index notebook)."""
    rows = "".join(
        f'<tr><td style="background-color:{fill};border:1px solid #546e7a;width:3em"></td>'
        f'<td style="text-align:left">{kind}</td><td style="text-align:left">{escape(meaning)}</td></tr>'
        for kind, (fill, _, meaning) in LEGEND.items()
    )
    head = "".join(f'<th style="text-align:left">{name}</th>' for name in ("colour", "kind", "meaning"))
    notes = f'<p>{escape(SHARED_TEXT)}</p><p>{escape(SAVED_TEXT)}</p>'
    return f"<table><tr>{head}</tr>{rows}</table>{notes}"


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
    return "\n".join(lines)


def cut_notice(graph: Graph) -> str:
    """The line that says how much of the graph was left out."""
    total = len(graph.nodes) + graph.omitted
    return (
        f"... {graph.omitted} more nodes not drawn: {len(graph.nodes)} of {total} shown, "
        f"nearest the output first (raise max_nodes to see more)"
    )


HEADER = (
    "digraph autograd {",
    '  graph [rankdir=TB, ranksep=0.3, nodesep=0.25, fontname="Helvetica"];',
    '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, '
    'color="#546e7a", height=0.3, margin="0.11,0.03"];',
    '  edge [color="#546e7a", arrowsize=0.6];',
)


def to_dot(graph: Graph, constants: bool = True, highlight: Collection[str] = frozenset(),
           notes: Mapping[str, str] | None = None, scratch: bool = False) -> str:
    """DOT source for the graph; `highlight` is a set of node ids. The
    colours are `LEGEND`'s (see `legend_text`); `scratch`: the graph is of
    notebook 07's engine (its leaves have no AccumulateGrad node)."""
    nodes, edges = visible(graph, constants)
    uses = Counter(e.src for e in edges)
    shared = {n.id: uses[n.id] for n in nodes if n.kind == "leaf" and uses[n.id] > SHARED_LIMIT}
    lines = list(HEADER) + ([QUICK] if len(nodes) > QUICK_LAYOUT else [])
    lines += _dot_nodes(nodes, shared, highlight, notes or {}, set(graph.cut), scratch)
    ops = {n.id for n in nodes if n.kind in ("op", "group")}
    lines += _dot_edges(edges, shared, ops)
    if graph.omitted:
        # a note, not wired to the cut nodes: edges from one note to many nodes make dot slow
        lines.append(f'  cut [shape=note, style=filled, fillcolor="{CUT_FILL}", fontcolor="{CUT_COLOUR}", '
                     f'label="{_lines(cut_notice(graph))}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _lines(notice: str) -> str:
    """The cut notice on three short lines, so it does not widen the drawing."""
    return notice.replace(": ", ":\\n", 1).replace(", nearest", ",\\nnearest", 1)


def _dot_nodes(nodes: Sequence[Node], shared: Mapping[str, int], highlight: Collection[str],
               notes: Mapping[str, str], cut: Collection[str], scratch: bool = False) -> list[str]:
    """One DOT node per graph node; a shared leaf once per drawn use (`id_1`, ...)."""
    lines = []
    for node in nodes:
        lit, note, lost = node.id in highlight, notes.get(node.id, ""), node.id in cut
        leaf = LEAF_LINES["scratch" if scratch else "torch" if node.uses else "unused"]
        if node.id not in shared:
            lines.append(_dot_node(node.id, node, lit, note=note, lost=lost, leaf=leaf))
            continue
        drawn = shared[node.id]
        label = f"shared: {node.uses:,} uses" + (f", {drawn} drawn" if drawn < node.uses else "")
        lines += [_dot_node(f"{node.id}_{k}", node, lit, label, note, leaf=leaf) for k in range(1, drawn + 1)]
    return lines


def _dot_edges(edges: Sequence[Edge], shared: Collection[str], ops: Collection[str] = ()) -> list[str]:
    """One DOT edge per graph edge; each use of a shared leaf from its own
    copy. Edges between operations weigh more, so dot keeps a loop's chain
    straight instead of stepping it sideways (a 10-step RNN: 2,817 pt wide
    without, 1,337 pt with)."""
    lines: list[str] = []
    copy_numbers: Counter[str] = Counter()
    for e in edges:
        src = e.src
        if src in shared:
            copy_numbers[src] += 1
            src = f"{src}_{copy_numbers[src]}"
        lines.append(f"  {src} -> {e.dst}{_dot_edge(e, e.src in ops and e.dst in ops)};")
    return lines


def _dot_node(dot_id: str, node: Node, lit: bool, shared: str = "", note: str = "", lost: bool = False,
              leaf: str = LEAF_LINES["torch"]) -> str:
    fill = LEGEND["highlight" if lit else node.kind][0]
    rows = [f'<FONT POINT-SIZE="11">{escape(node.label)}</FONT>' if node.kind == "op" else escape(node.label)]
    if node.detail:
        rows.append(f'<FONT POINT-SIZE="8">{escape(node.detail)}</FONT>')
    if node.kind == "leaf":
        rows.append(f'<FONT POINT-SIZE="8">{leaf}</FONT>')
    if shared:
        rows.append(f'<FONT POINT-SIZE="8"><I>{shared}</I></FONT>')
    saved = shown_saved(node)
    rows += [_saved_row(s) for s in saved[:MAX_SAVED_ROWS]]
    if len(saved) > MAX_SAVED_ROWS:
        rows.append(f'<FONT POINT-SIZE="8" COLOR="{SAVED_COLOUR}">… {len(saved) - MAX_SAVED_ROWS} more saved</FONT>')
    if lost:
        rows.append(f'<FONT POINT-SIZE="8" COLOR="{CUT_COLOUR}">{CUT_MARK}</FONT>')
    if note:
        rows.append(f'<FONT POINT-SIZE="9" COLOR="{NOTE_COLOUR}">{escape(note)}</FONT>')
    extra = ', shape=ellipse, style=filled' if node.kind == "const" else ""
    extra += ', style="dashed,rounded,filled"' if any(s.freed for s in node.saved) else ""
    extra += ", penwidth=2" if lit else ""
    extra += ", peripheries=2" if shared else ""
    return f'  {dot_id} [label=<{"<BR/>".join(rows)}>, fillcolor="{fill}"{extra}];'


def _saved_row(value: Saved) -> str:
    if value.freed:
        return f'<FONT POINT-SIZE="8" COLOR="{FREED_COLOUR}"><I>{escape(value.name)}: freed</I></FONT>'
    return f'<FONT POINT-SIZE="8" COLOR="{SAVED_COLOUR}">{escape(value.name)}: {escape(value.text)}</FONT>'


def _dot_edge(edge: Edge, chain: bool = False) -> str:
    attributes = [f'label=" out {edge.output_nr}", fontsize=8'] if edge.output_nr else []
    attributes += [f"weight={CHAIN_WEIGHT}"] if chain else []
    return f" [{', '.join(attributes)}]" if attributes else ""


def _edge_note(edge: Edge) -> str:
    return f" [input {edge.slot}" + (f", output {edge.output_nr}]" if edge.output_nr else "]")
