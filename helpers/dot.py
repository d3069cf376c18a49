"""Write a drawing's `Plan` as Graphviz DOT, and the visual vocabulary of
every drawing (`LEGEND`, the colours, `legend_text`, `legend_html`). Only
formats what `plan.py` decided; byte-identical in every process.
Floor: dot, beside `text_form.py` under `draw.py`; imports `plan.py`."""

from collections.abc import Mapping
from html import escape
from typing import Final

from .plan import CUT_MARK, FAN_LIMIT, SHARED_LIMIT, UNMARKED, Face, Marks, Notice, Plan
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


def to_dot(plan: Plan) -> str:
    """DOT source for the plan of a drawing, in `LEGEND`'s colours."""
    lines = [*HEADER, *plan.settings, *_dot_nodes(plan)]
    lines += [f"  {src} -> {dst}{_dot_edge(e.output_nr, chain)};" for src, dst, e, chain in plan.wires]
    # notes, not wired to any node: edges from one note to many nodes make dot slow
    lines += [_dot_note(notice) for notice in plan.notices]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_note(notice: Notice) -> str:
    text = notice.note.replace("\n", "\\n")        # its line breaks, as DOT writes them
    return (f'  {notice.name} [shape=note, style=filled, fillcolor="{CUT_FILL}", fontcolor="{CUT_COLOUR}", '
            f'label="{text}"];')


def _dot_nodes(plan: Plan) -> list[str]:
    """One DOT node per node shown, then its copies (a shared leaf only as copies)."""
    lines = []
    for node, face in zip(plan.nodes, plan.faces, strict=True):
        marks, copies = plan.marks.get(node.id, UNMARKED), plan.copies.get(node.id)
        if copies is None or copies.itself:
            lines.append(_dot_node(node.id, face, marks))
        if copies is not None:          # alike but for the name (a loop's weight: one per step)
            lines += [_dot_node(name, copies.face, copies.marks) for name in copies.names]
    return lines


def _dot_node(dot_id: str, face: Face, marks: Marks = UNMARKED) -> str:
    fill = LEGEND["highlight" if marks.lit else face.kind][0]
    rows = [f'<FONT POINT-SIZE="11">{escape(face.label)}</FONT>' if face.kind == "op" else escape(face.label)]
    if face.detail:
        rows.append(f'<FONT POINT-SIZE="8">{escape(face.detail)}</FONT>')
    if face.kind == "leaf":
        rows.append(f'<FONT POINT-SIZE="8">{face.leaf}</FONT>')
    if marks.fan:
        rows.append(f'<FONT POINT-SIZE="8"><I>{marks.fan}</I></FONT>')
    rows += [_saved_row(s) for s in face.saved[:MAX_SAVED_ROWS]]
    more = len(face.saved) - MAX_SAVED_ROWS
    if more > 0:
        rows.append(f'<FONT POINT-SIZE="8" COLOR="{SAVED_COLOUR}">… {more} more saved</FONT>')
    if marks.cut:
        rows.append(f'<FONT POINT-SIZE="8" COLOR="{CUT_COLOUR}">{CUT_MARK}</FONT>')
    if marks.note:
        rows.append(f'<FONT POINT-SIZE="9" COLOR="{NOTE_COLOUR}">{escape(marks.note)}</FONT>')
    extra = ', shape=ellipse, style=filled' if face.kind == "const" else ""
    extra += ', style="dashed,rounded,filled"' if face.freed else ""
    extra += ", penwidth=2" if marks.lit else ""
    extra += ", peripheries=2" if marks.fan else ""
    return f'  {dot_id} [label=<{"<BR/>".join(rows)}>, fillcolor="{fill}"{extra}];'


def _saved_row(value: Saved) -> str:
    if value.freed:
        return f'<FONT POINT-SIZE="8" COLOR="{FREED_COLOUR}"><I>{escape(value.name)}: freed</I></FONT>'
    return f'<FONT POINT-SIZE="8" COLOR="{SAVED_COLOUR}">{escape(value.name)}: {escape(value.text)}</FONT>'


def _dot_edge(output_nr: int, chain: bool) -> str:
    attributes = [f'label=" out {output_nr}", fontsize=8'] if output_nr else []
    attributes += [f"weight={CHAIN_WEIGHT}"] if chain else []
    return f" [{', '.join(attributes)}]" if attributes else ""
