"""The widget views: pure functions from the controls' values to a `Figure`
(a caption over a drawing). `widgets.panel` redraws one on every change;
tests call them directly, without a browser, and read the figure's caption
and its drawing's graph, not its HTML.

A view that shows a lesson function is handed that function (the one the
notebook defines), so a learner who edits it sees the edit in the widget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol

import torch

from .arguments import learner_facing, wrong
from .draw import Drawing, Figure, draw_graph, natural_width
from .engine import record_backward
from .from_scratch import ScratchValue, scratch_graph
from .graph import autograd_nodes, node_label, trace_graph
from .model_cache import as_built
from .models import TanhRNNCell, run_sequence
from .quiz import MultipleChoice, feedback
from .svg import LAYOUT_LIMIT, DotUnavailable, node_count

# A sequence's cut view draws the SEQUENCE_NODES nodes nearest the output:
# about its last ten steps (a step is six nodes); the step count is always
# taken from the whole graph.
SEQUENCE_NODES = 60
# The rolled view folds at least this many steps, or draws the whole graph:
# a box standing for one or two steps, with its long edges, is harder to
# follow than the steps themselves.
MIN_FOLDED = 3
QUIZ_COLOURS = {True: "#2e7d32", False: "#c62828", None: "#555555"}
# How a long sequence's graph is drawn: its repeated steps rolled into one
# node, cut to the nodes nearest the output, or every node.
VIEWS = ("rolled", "cut", "unrolled")


class SteppedValue(ScratchValue, Protocol):
    """A value of notebook 07's engine whose backward runs a step at a time."""

    grad: float

    def topological_order(self) -> list[Any]: ...

    def backward(self, steps: int | None = None) -> None: ...


def branch_view(forward: Callable[[torch.Tensor, bool], torch.Tensor], use_extra_layer: bool, x: float) -> Figure:
    """`forward(x, use_extra_layer)` for one setting: its graph, with the
    operations only the `True` branch records highlighted, and x.grad."""
    value = float(x)
    leaf = torch.tensor(value, requires_grad=True)
    y = forward(leaf, use_extra_layer)
    # what only the True branch records: compared with the other branch, run on a fresh x
    extra = _op_labels(y) - _op_labels(forward(torch.tensor(value, requires_grad=True), False)) \
        if use_extra_layer else set()
    drawing = draw_graph(y, {"x": leaf}, highlight=sorted(extra))
    y.backward()
    ops = drawing.graph.count("op")
    return Figure(f"use_extra_layer={use_extra_layer}: y = {y.item():g}, x.grad = {_grad(leaf):g}, "
                  f"{ops} operations", drawing)


def _op_labels(tensor: torch.Tensor) -> set[str]:
    return {node.label for node in trace_graph(tensor, saved=False).nodes if node.kind == "op"}


def _grad(leaf: torch.Tensor) -> float:
    return 0.0 if leaf.grad is None else leaf.grad.item()


def loop_view(forward: Callable[[torch.Tensor, int], torch.Tensor], n: int) -> Figure:
    """The graph of `forward(x, n)` (a loop of `n` rounds), with its counts:
    autograd nodes (operations and the leaf's AccumulateGrad) apart from
    the boxes the drawing adds (None placeholders, the output)."""
    x = torch.tensor(1.0, requires_grad=True)
    y = forward(x, n)
    drawing = draw_graph(y, {"x": x})
    graph = drawing.graph
    return Figure(f"n = {n}: {graph.count('op')} operations, {len(autograd_nodes(y))} autograd nodes, "
                  f"{len(graph.nodes)} boxes drawn", drawing)


def while_view(forward: Callable[[torch.Tensor], torch.Tensor], value: float) -> Figure:
    """The graph of `forward(x)` for x = `value` (a loop that halves until
    small): its number of halvings and its depth follow the value."""
    x = torch.tensor(float(value), requires_grad=True)
    drawing = draw_graph(forward(x), {"x": x})
    halvings = len(drawing.graph.find("DivBackward0"))
    return Figure(f"x = {value:g}: {halvings} halvings, depth {drawing.graph.depth()}", drawing)


@learner_facing
def sequence_view(cell: TanhRNNCell, sequences: Sequence[torch.Tensor], index: int, view: str = "cut") -> Figure:
    """The graph of sequence number `index` run through `cell`, drawn as
    `view` says (see VIEWS), with its step count."""
    if not 0 <= index < len(sequences):
        raise wrong(ValueError, f"index must be from 0 to {len(sequences) - 1}; got {index}")
    return _unrolled(cell, sequences[index], f"sequence {index}: ", view)


@learner_facing
def length_view(cell: TanhRNNCell, length: int, view: str = "cut") -> Figure:
    """The graph for one random sequence of `length` steps (the same
    sequence for the same length), drawn as `view` says, steps counted."""
    generator = torch.Generator().manual_seed(length)
    return _unrolled(cell, torch.randn(length, cell.w_x.shape[1], generator=generator), "", view)


def _unrolled(cell: TanhRNNCell, sequence: torch.Tensor, prefix: str, view: str) -> Figure:
    if view not in VIEWS:
        raise wrong(ValueError, f"view must be one of {', '.join(VIEWS)}; got {view!r}")
    h = run_sequence(cell, sequence)
    # counted over the whole graph (a walk that reads no saved values); the drawing is bounded
    steps = sum(node_label(fn) == "TanhBackward0" for _, fn in autograd_nodes(h))
    caption = f"{prefix}length {len(sequence)}, {steps} cell steps counted in its graph ({view})"
    whole = partial(draw_graph, h, cell, constants=False, max_nodes=None)
    drawing, why = _rolled(h, cell, whole) if view == "rolled" else \
        _cut(h, cell, whole) if view == "cut" else (whole(), "")
    if node_count(drawing.source) > LAYOUT_LIMIT:     # a widget never shows the text form
        return Figure(f"{caption}: {len(drawing.graph.nodes):,} nodes are too many to lay out here; "
                      "the cut view draws the last ten steps, the rolled view the whole loop folded")
    return Figure(caption + why, drawing)


def _rolled(h: torch.Tensor, cell: TanhRNNCell, whole: Callable[[], Drawing]) -> tuple[Drawing, str]:
    """The rolled drawing, or the whole graph (and why) when rolling would
    fold fewer than MIN_FOLDED steps."""
    rolled = draw_graph(h, cell, constants=False, roll=True)
    folded = sum(group.steps for group in rolled.graph.rolled)
    if folded >= MIN_FOLDED:
        return rolled, ""
    return whole(), (f": drawn unrolled, as rolling would fold {folded or 'no'} steps "
                     f"(the view rolls only when it folds {MIN_FOLDED} steps or more)")


def _cut(h: torch.Tensor, cell: TanhRNNCell, whole: Callable[[], Drawing]) -> tuple[Drawing, str]:
    """The drawing cut to SEQUENCE_NODES nodes, or the whole graph (and why)
    when that is no wider: a cut that leaves out a few nodes can be wider."""
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


@learner_facing
def step_view(build: Callable[[], tuple[torch.Tensor, dict[str, torch.Tensor]]], step: int) -> Figure:
    """The graph that `build()` returns (a tensor and a dict of names), each
    node numbered by the backward step that ran it, step `step` highlighted."""
    root, params = build()
    graph = trace_graph(root, params)          # before backward() frees the saved values
    steps = record_backward(root)
    if not 1 <= step <= len(steps):
        raise wrong(ValueError, f"step must be from 1 to {len(steps)}; got {step}")
    now = steps[step - 1]
    notes = {s.node_id: f"step {s.number}" for s in steps}
    passes = f"passes on ({', '.join(now.passed_on)})" if now.passed_on else "adds it to the leaf's .grad"
    caption = f"step {now.number} of {len(steps)}: {now.label} receives {', '.join(now.received)} and {passes}"
    return Figure(caption, draw_graph(graph, notes=notes, highlight=(now.node_id,)))


def quiz_view(question: MultipleChoice, choice: str | None) -> Figure:
    """The feedback on one choice of a multiple-choice question, coloured
    (right, wrong, or no choice yet); no drawing."""
    right, text = feedback(question, choice)
    return Figure(text, colour=QUIZ_COLOURS[None if choice is None else right])


@learner_facing
def scratch_step_view(build: Callable[[], SteppedValue], step: int) -> Figure:
    """The graph of the scratch engine's value that `build()` returns, after
    the first `step` backward rules have run: every node's grad so far, the
    node that just ran highlighted (notebook 07)."""
    root = build()
    order = root.topological_order()
    ops = [v for v in reversed(order) if v.inputs]
    if not 1 <= step <= len(ops):
        raise wrong(ValueError, f"step must be from 1 to {len(ops)}; got {step}")
    root.backward(steps=step)
    _, ids = scratch_graph(root)               # the same numbering draw_graph gives
    notes = {ids[id(v)]: f"grad {v.grad:.3g}" for v in order if getattr(v, "requires_grad", True)}
    now = ops[step - 1]
    caption = f"step {step} of {len(ops)}: the {now.op} node passes its grad {now.grad:.3g} on to its inputs"
    return Figure(caption, draw_graph(root, notes=notes, highlight=(ids[id(now)],)))


def freeze_view(build: Callable[[], torch.nn.Sequential], x: torch.Tensor, **frozen: bool) -> Figure:
    """`build()`'s model with the layers named in `frozen` (freeze_0=True:
    layer 0) frozen by requires_grad_(False): the graph of model(x).sum()."""
    model = as_built(build)
    for name, on in frozen.items():
        model[int(name.removeprefix("freeze_"))].requires_grad_(not on)
    loss = model(x).sum()
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    caption = f"trainable: {', '.join(trainable) or 'nothing'}; {len(trainable)} AccumulateGrad leaves"
    if loss.grad_fn is None:
        return Figure(f"{caption}: no graph at all, nothing to train")
    return Figure(caption, draw_graph(loss, model, constants=False))


def mode_view(build: Callable[[], torch.nn.Module], x: torch.Tensor, training: bool) -> Figure:
    """`build()`'s model in train() or eval() mode: the graph of one forward
    pass, and whether BatchNorm's running statistics moved."""
    model = as_built(build).train(training)
    means = [m.running_mean for m in model.modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None]
    before = [mean.clone() for mean in means]
    drawing = draw_graph(model(x).sum(), model, constants=False)
    moved = any(not torch.equal(b, mean) for b, mean in zip(before, means, strict=True))
    caption = (f"{'train' if training else 'eval'}(): {drawing.graph.count('op')} operations recorded; "
               f"BatchNorm running statistics {'updated' if moved else 'unchanged'}")
    return Figure(caption, drawing)

