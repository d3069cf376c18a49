"""`draw_graph`: the live autograd graph as an object Jupyter shows as SVG;
`Figure`: a caption over a drawing, what a widget view returns.
Floor: draw, the top of the drawing path: traces (graph floor), plans
(`plan.py`), formats (`dot.py`, `text_form.py`) and lays out (`svg.py`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

from .arguments import (
    MAX_NODES,
    Params,
    Root,
    ScratchValue,
    check_flag,
    check_walked,
    is_scratch_value,
    learner_facing,
    wrong,
)
from .dot import legend_text, to_dot
from .from_scratch import scratch_graph
from .graph import Graph, trace_graph
from .node_arguments import check_highlight, check_notes
from .plan import plan_of
from .roll import roll as roll_up
from .roll import trace_cut
from .svg import DotUnavailable, to_svg
from .text_form import to_text
from .walk import collector_paused

# What draw_graph draws: tensors or grad_fn nodes (one or a sequence), a Graph,
# or a value of notebook 07's from-scratch engine.
Drawable = Root | Graph | ScratchValue
# A screen reader's text for a drawing is its text form, cut to this many characters.
ALT_LIMIT = 400
# The legibility budget: dot's pt are 4/3 CSS px, so at SMALLEST the 8 pt text is 8 px.
SMALLEST = 0.75
# Output metadata that keeps a stored SVG at its natural size in JupyterLab.
UNCONFINED = {"image/svg+xml": {"unconfined": True}}


def natural_width(svg: str) -> float:
    found = re.search(r'<svg[^>]*?\swidth="([0-9.]+)pt"', svg)
    return float(found.group(1)) if found else 0.0


# How far down (in pt) a drawing's first view reaches: 520 px, a widget's box, at 0.75 scale.
FIRST_VIEW = 390.0


def opens_at_right(svg: str) -> bool:
    """Whether the text in the drawing's top FIRST_VIEW pt lies mostly in its
    right half (a loop's chain, its leaves to its left): a scrolling box then
    opens at its right edge."""
    box = re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) ([0-9.]+)"', svg)
    if not box:
        return False
    width, height = float(box.group(1)), float(box.group(2))
    places = re.findall(r'<text[^>]*? x="([-0-9.]+)" y="([-0-9.]+)"', svg)
    top = [float(x) for x, y in places if float(y) < FIRST_VIEW - height]
    return bool(top) and sum(top) / len(top) > width / 2


def fitted(svg: str) -> str:
    """The SVG as HTML in a box of its own: it fills the box's width, shrinks
    down to SMALLEST of its natural size and scrolls sideways beyond that, never
    cut in height; opened at its right edge when `opens_at_right`."""
    points = natural_width(svg)
    size = f"width:100%;min-width:{points * 4 / 3 * SMALLEST:.0f}px;max-width:{points * 4 / 3:.0f}px;height:auto"
    box = "overflow-x:auto;overflow-y:hidden;max-width:100%"
    if opens_at_right(svg):
        box, size = box + ";direction:rtl", size + ";direction:ltr"
    return f'<div class="autograd-drawing" style="{box}">' + svg.replace("<svg ", f'<svg style="{size}" ', 1) + "</div>"


class Drawing:
    """A drawn graph, shown as SVG (or as text with a line on what went wrong
    when `dot` is missing or the graph too big). `.graph`, `.source` (DOT),
    `str()` the text form, `.svg()`."""

    def __init__(self, graph: Graph, source: str, text: str, shown: int, advice: str) -> None:
        self.graph, self.source, self.text = graph, source, text
        # the nodes drawn, as the text form counts them; what to do when the graph is too big to lay out
        self._shown, self._advice = shown, advice

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__

    def svg(self) -> str:
        return to_svg(self.source, self._shown, self._advice)

    def alternative(self) -> str:
        """A screen reader's text: the text form on one line, cut to about
        ALT_LIMIT characters."""
        lines = self.text.splitlines()
        kept: list[str] = []
        while lines and len("; ".join([*kept, lines[0]])) <= ALT_LIMIT:
            kept.append(lines.pop(0))
        more = f"; and {len(lines)} more lines (print the drawing for all of them)" if lines else ""
        return "autograd graph: " + "; ".join(kept) + more

    def html(self) -> str:
        """The SVG as HTML (`fitted`), or the text drawing with the reason in a <pre>."""
        try:
            return fitted(self._labelled_svg())
        except DotUnavailable as err:
            return f"<pre>{escape(str(err))}\n{escape(self.text)}</pre>"

    def _labelled_svg(self, attributes: str = "") -> str:
        label = f'role="img" aria-label="{escape(self.alternative(), quote=True)}" '
        return self.svg().replace("<svg ", f"<svg {label}{attributes}", 1)

    def _repr_mimebundle_(self, include: object = None,
                          exclude: object = None) -> tuple[dict[str, str], dict[str, dict[str, bool]]]:
        """(data, metadata): "unconfined" keeps JupyterLab from shrinking the
        SVG below the legibility budget."""
        try:
            return {"image/svg+xml": self._labelled_svg(), "text/plain": self.text}, UNCONFINED
        except DotUnavailable as err:
            return {"text/plain": f"{err}\n{self.text}"}, {}


@dataclass(frozen=True)
class Figure:
    """What a widget view shows: a one-line caption over a drawing (or alone),
    in `colour` if given. str(): the caption, then the drawing's text form (what
    nbval compares); .html(): for the widget."""

    caption: str
    drawing: Drawing | None = None
    colour: str | None = None

    def __str__(self) -> str:
        return self.caption if self.drawing is None else f"{self.caption}\n{self.drawing.text}"

    def html(self) -> str:
        style = "font-family:monospace;margin:0 0 0.5em 0" + (f";color:{self.colour}" if self.colour else "")
        caption = f'<figcaption style="{style}">{escape(self.caption)}</figcaption>'
        drawing = self.drawing.html() if self.drawing is not None else ""
        return f'<figure style="margin:0">{caption}{drawing}</figure>'


@learner_facing
def draw_graph(root: Drawable, params: Params | None = None, *,
               constants: bool = True, highlight: str | Iterable[str] = (), max_nodes: int | None = MAX_NODES,
               notes: Mapping[str, str] | None = None, roll: bool = False) -> Drawing:
    """Draw the autograd graph behind `root`; returns a `Drawing`.

    root: a tensor, a `grad_fn` node, a sequence of tensors, a `Graph` from
        `trace_graph`, or a value of notebook 07's engine (for these two,
        params, max_nodes and roll are errors: they are drawn whole).
    params: a dict of name -> tensor, or an `nn.Module` (compiled or not),
        naming leaves; an unnamed leaf is labelled "tensor".
    constants: draw the `None` inputs of `next_functions` (the 3 in `y * 3`).
    highlight: node labels ("AddBackward0") or ids ("n2") to colour.
    max_nodes: draw at most this many nodes, nearest the output; a red note
        counts what was left out, "[inputs not drawn]" marks where.
    notes: a dict of node id -> a short note, in blue under the node (after
        "#" in the text form), such as {"n1": "backward step 1"}.
    roll: fold each run of a loop's repeated steps (an RNN cell, stacked
        layers) into one node marked "× N steps", then cut to max_nodes;
        saved values are left out. When nothing repeats, the drawing says so.

    Arrows follow the forward pass, from an input to the node that used it;
    backward() walks them in reverse. A name that matches no node is an error
    listing what there is."""
    constants, roll = check_flag(constants, "constants"), check_flag(roll, "roll")
    # paused for the whole drawing, which makes no cycles (walk.collector_paused)
    with collector_paused():
        graph, scratch = _traced(root, params, max_nodes, roll)
        lit, notes = check_highlight(highlight, graph, constants), check_notes(notes, graph, constants)
        plan = plan_of(graph, constants, lit, notes, scratch)
        return Drawing(graph, to_dot(plan), to_text(plan), len(plan.nodes), _advice(root, graph, scratch))


def _traced(root: Drawable, params: Params | None, max_nodes: int | None, roll: bool) -> tuple[Graph, bool]:
    if isinstance(root, Graph):
        check_walked("Graph", params, max_nodes, roll)
        return root, False
    if is_scratch_value(root):    # a value of notebook 07's engine, not a tensor
        check_walked("scratch", params, max_nodes, roll)
        return scratch_graph(root)[0], True
    if roll:        # the whole graph walked (saved values not read), rolled, then cut to max_nodes
        return roll_up(trace_graph(root, params, saved=False), max_nodes), False
    return trace_cut(root, params, max_nodes), False


def _advice(root: Drawable, graph: Graph, scratch: bool) -> str:
    if isinstance(root, Graph):
        return "trace the nodes nearest the output (trace_graph(y, max_nodes=300)) and draw that Graph"
    if scratch:
        return "draw a value computed in fewer steps"
    smaller = "pass a smaller max_nodes (the nodes nearest the output are drawn)"
    return smaller if graph.rolled else smaller + ", or roll=True to fold a loop's repeated steps"


draw_graph.__doc__ = (draw_graph.__doc__ or "") + "\n    " + legend_text().replace("\n", "\n    ") + "\n"


class Row:
    """Drawings side by side, each under its title; its text form lists each."""

    def __init__(self, drawings: Mapping[str, Drawing]) -> None:
        self.drawings = dict(drawings)

    def __str__(self) -> str:
        return "\n\n".join(f"== {title} ==\n{d.text}" for title, d in self.drawings.items())

    __repr__ = __str__

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        cells = "".join(
            f'<div style="margin-right:2em;min-width:0;max-width:100%">'
            f'<div style="font-weight:bold">{escape(title)}</div>{d.html()}</div>'
            for title, d in self.drawings.items()
        )
        html = f'<div style="display:flex;align-items:flex-start;flex-wrap:wrap">{cells}</div>'
        return {"text/html": html, "text/plain": str(self)}


@learner_facing
def side_by_side(drawings: Mapping[str, Drawing]) -> Row:
    """Show several drawings in a row: `drawings` maps a title to a Drawing."""
    if not isinstance(drawings, dict) or not all(isinstance(d, Drawing) for d in drawings.values()):
        raise wrong(TypeError, "side_by_side takes a dict of title -> draw_graph(...) result, "
                    "for example side_by_side({'with': draw_graph(a), 'without': draw_graph(b)})")
    return Row(drawings)
