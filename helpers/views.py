"""The widget views several lessons share: pure functions from the controls'
values to a `Figure`, handed the lesson function the notebook defines (a
learner's edit shows). A lesson's own views live in helpers/lessons/nbNN.py."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from .arguments import wrong
from .draw import Drawing, Figure, draw_graph, natural_width
from .graph import autograd_nodes, node_label
from .models import TanhRNNCell, run_sequence
from .plan import counted as counted  # the lessons count their captions with it
from .quiz import MultipleChoice, feedback
from .svg import LAYOUT_LIMIT, DotUnavailable, node_count

# A sequence's cut view: about its last ten steps (six nodes each).
SEQUENCE_NODES = 60
# The rolled view folds at least this many steps, or draws the whole graph.
MIN_FOLDED = 3
QUIZ_COLOURS = {True: "#2e7d32", False: "#c62828", None: "#555555"}
VIEWS = ("rolled", "cut", "unrolled")


def unrolled(cell: TanhRNNCell, sequence: torch.Tensor, prefix: str, view: str) -> Figure:
    """The graph of `sequence` run through `cell`, drawn as `view` says
    (VIEWS), its caption starting with `prefix` and counting the cell's steps."""
    if view not in VIEWS:
        raise wrong(ValueError, f"view must be one of {', '.join(VIEWS)}; got {view!r}")
    h = run_sequence(cell, sequence)
    # counted over the whole graph (a walk that reads no saved values); the drawing is bounded
    steps = sum(node_label(fn) == "TanhBackward0" for _, fn in autograd_nodes(h))
    caption = f"{prefix}length {len(sequence)}, {counted(steps, 'cell step')} counted in its graph ({view})"
    whole = partial(draw_graph, h, cell, constants=False, max_nodes=None)
    drawing, why = _rolled(h, cell, whole) if view == "rolled" else \
        _cut(h, cell, whole) if view == "cut" else (whole(), "")
    if node_count(drawing.source) > LAYOUT_LIMIT:     # a widget never shows the text form
        return Figure(f"{caption}: {counted(len(drawing.graph.nodes), 'node')} are too many to lay out here; "
                      "the cut view draws the last ten steps, the rolled view the whole loop folded")
    return Figure(caption + why, drawing)


def _rolled(h: torch.Tensor, cell: TanhRNNCell, whole: Callable[[], Drawing]) -> tuple[Drawing, str]:
    """The rolled drawing, or the whole graph (and why) when rolling would
    fold fewer than MIN_FOLDED steps."""
    rolled = draw_graph(h, cell, constants=False, roll=True)
    folded = sum(group.steps for group in rolled.graph.rolled)
    if folded >= MIN_FOLDED:
        return rolled, ""
    return whole(), (f": drawn unrolled, as rolling would fold {counted(folded, 'step') if folded else 'no steps'} "
                     f"(the view rolls only when it folds {MIN_FOLDED} steps or more)")


def _cut(h: torch.Tensor, cell: TanhRNNCell, whole: Callable[[], Drawing]) -> tuple[Drawing, str]:
    """The drawing cut to SEQUENCE_NODES nodes, or the whole graph (and why)
    when that is no wider."""
    cut = draw_graph(h, cell, constants=False, max_nodes=SEQUENCE_NODES)
    if not 0 < cut.graph.omitted <= SEQUENCE_NODES:        # nothing cut, or the whole is too big to compare
        return cut, ""
    full = whole()
    try:
        if natural_width(full.svg()) > natural_width(cut.svg()):
            return cut, ""
    except DotUnavailable:                  # too big, or no dot: the cut it is
        return cut, ""
    return full, f": all {len(full.graph.nodes)} nodes drawn, as cutting {cut.graph.omitted} would make it wider"


def quiz_view(question: MultipleChoice, choice: str | None) -> Figure:
    right, text = feedback(question, choice)
    return Figure(text, colour=QUIZ_COLOURS[None if choice is None else right])



