"""Turn a `Graph` into Graphviz DOT text, and the visual vocabulary of every
drawing (`LEGEND`, the colours, `legend_text`, `legend_html`).

A pure function of the graph, like the text form (`text_form.py`), so the
same computation gives byte-identical output in every process. Laying DOT
out as SVG is `svg.py`'s job.

Floor: dot, a sibling of `text_form.py` under `draw.py`. It reads what
`layout.py` says is drawn (visible nodes and edges, copies of fanned nodes,
the cut notice, dot's settings) and imports `layout.py`, the graph floor
(`graph.py`, `roll.py`) and `saved_values.py`; never `text_form.py`, its
sibling, nor `draw.py` or `svg.py`.
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from html import escape
from typing import Final

from .graph import Edge, Graph, Node
from .layout import (
    CUT_MARK,
    FAN_LIMIT,
    SHARED_LIMIT,
    cut_notice,
    edge_ends,
    fans,
    input_copies,
    rolled_out_notice,
    settings,
    shown_saved,
    use_copies,
    visible,
)
from .roll import NO_REPEATS, NO_REPEATS_TEXT
from .saved_values import Saved

# The visual vocabulary, in one place: draw_graph's docstring, the index
# notebook's legend table and every drawing are made from these constants.
# kind -> (fill colour, its name, what it means)
LEGEND: Final[Mapping[str, tuple[str, str, str]]] = {
    "output": ("#c8e6c9", "pale green", "the tensor you drew: the result of the forward pass"),
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
LEAF_LINES = {"torch": "AccumulateGrad", "unused": "no autograd node yet", "scratch": "leaf Value",
              "input": "graph input"}
SHARED_TEXT = (f"A leaf used more than {SHARED_LIMIT} times (a weight shared by every step of a loop), or an "
               f"operation with more than {FAN_LIMIT} uses or inputs (the unbind that hands each step its input, "
               "the stack that gathers each step's output), is drawn once beside each of them, with a double "
               "border and the line \"shared: N uses\" or \"one node: N inputs\" (an operation's saved values "
               "are on the copy that has its inputs); the text form keeps it as one node.")
SAVED_TEXT = ("Saved values are small rust-coloured lines inside a node (\"self: tensor of shape (3, 3)\"); once "
              "backward() has freed them they read \"freed\" in dark grey italics and the node's box "
              "turns dashed (a constant is a white oval, never dashed).")
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
    shared, gathered = fans(nodes, edges)
    ends = list(edge_ends(edges, {n.id: n.kind for n in nodes}, shared, gathered))
    lines = [*HEADER, *settings(len(nodes), ((src, dst) for src, dst, _ in ends))]
    lines += _dot_nodes(nodes, (shared, gathered), highlight, notes or {}, set(graph.cut), scratch,
                        whole=not graph.omitted, counted=graph.counted, graph_inputs=set(graph.inputs))
    ops = {n.id for n in nodes if n.kind in ("op", "group")}
    lines += [f"  {src} -> {dst}{_dot_edge(e, e.src in ops and e.dst in ops)};" for src, dst, e in ends]
    # notes, not wired to any node: edges from one note to many nodes make dot slow
    if graph.omitted:
        lines.append(_dot_note("cut", _lines(cut_notice(graph))))
    if graph.rolled_out:
        lines.append(_dot_note("rolled_out", _lines(rolled_out_notice(graph))))
    if NO_REPEATS in graph.rolled:
        lines.append(_dot_note("no_repeats", NO_REPEATS_TEXT.replace(": ", ":\\n", 1).replace(", so", ",\\nso", 1)))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_note(dot_id: str, text: str) -> str:
    return f'  {dot_id} [shape=note, style=filled, fillcolor="{CUT_FILL}", fontcolor="{CUT_COLOUR}", label="{text}"];'


def _lines(notice: str) -> str:
    """The cut notice on three short lines, so it does not widen the drawing."""
    return notice.replace(": ", ":\\n", 1).replace(", nearest", ",\\nnearest", 1)


def _dot_nodes(nodes: Sequence[Node], fanned: tuple[Mapping[str, int], Mapping[str, int]],
               highlight: Collection[str], notes: Mapping[str, str], cut: Collection[str], scratch: bool = False,
               whole: bool = True, counted: bool = True, graph_inputs: Collection[str] = ()) -> list[str]:
    """One DOT node per graph node, and the copies of a node drawn once per
    use or per input (`layout.py`): a shared leaf only as copies; any other
    node as itself (with its saved values and marks), then its copies.
    `whole`: nothing was cut, so every use is drawn; `counted`: a leaf's
    uses were all counted (`Graph.counted`), else they are a lower bound."""
    shared, gathered = fanned
    lines = []
    alike: dict[tuple[str, str, str, int, str], str] = {}
    for node in nodes:
        lit, note, lost = node.id in highlight, notes.get(node.id, ""), node.id in cut
        leaf = LEAF_LINES["input" if node.id in graph_inputs else "scratch" if scratch else
                          "torch" if node.uses else "unused"]
        uses, inputs = shared.get(node.id, 0), gathered.get(node.id, 0)
        if not (lit or note or lost or uses or inputs):
            # its line but for the DOT name is that of every such node of the same kind, label, detail
            # and saved values (a loop's: nearly all), made once; keyed by the saved tuple's identity
            key = (node.kind, node.label, node.detail, id(node.saved), leaf)
            rest = alike.get(key)
            if rest is None:
                rest = alike[key] = _dot_node("", node, lit, "", note, lost, leaf).removeprefix("  ")
            lines.append(f"  {node.id}{rest}")
            continue
        label = "; ".join(([_shared_line(node, uses, whole, counted)] if uses else []) +
                          ([f"one node: {inputs:,} inputs"] if inputs else []))
        if node.kind != "leaf" or not uses:
            lines.append(_dot_node(node.id, node, lit, label, note, lost, leaf))
        copies = (use_copies(node, uses) if uses else []) + (input_copies(node, inputs) if inputs else [])
        if copies:
            plain = replace(node, saved=()) if node.kind != "leaf" else node
            lines += [_dot_node(name, plain, lit, label, note, leaf=leaf) for name in copies]
    return lines


def _shared_line(node: Node, drawn: int, whole: bool, counted: bool = True) -> str:
    """"shared: N uses" (", K drawn" when fewer are drawn; "at least N" when
    the walk stopped counting); an operation's uses are known only when
    nothing was cut, else counted as drawn."""
    if node.kind == "leaf":
        least = "" if counted else "at least "
        return f"shared: {least}{node.uses:,} uses" + (f", {drawn} drawn" if drawn < node.uses else "")
    return f"shared: {drawn:,} uses" + ("" if whole else " drawn")


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
