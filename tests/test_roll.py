"""The rolled view: repeated steps found from the graph itself, rolled into
one node whose × N is the true number of steps it holds; nothing is lost."""

import pytest
import torch
from graph_check import unconnected

from helpers import draw_graph, trace_graph
from helpers.models import TanhRNNCell, run_sequence
from helpers.roll import NO_REPEATS, NO_REPEATS_TEXT, roll
from tools.testkit.shapes import SHAPES, STEPS


def _rnn(steps):
    w, h = torch.randn(4, 4, requires_grad=True), torch.randn(4)
    for _ in range(steps):
        h = torch.tanh(w @ h)
    return w, h


def _accounted(full, rolled):
    """Every node of the full graph is drawn or inside a group, and every
    edge is drawn (with group ends) or inside a group."""
    members = {group: nodes for group, _, nodes in rolled.rolled}
    drawn = {n.id for n in rolled.nodes}
    assert len(drawn) - len(members) + sum(members.values()) == len(full.nodes)
    inside = {n.id for n in full.nodes} - drawn | set(members)
    mapped = {(s if s not in inside else "g", d if d not in inside else "g") for s, d in
              ((e.src, e.dst) for e in full.edges)}
    ends = {(s if s not in members else "g", d if d not in members else "g") for s, d in
            ((e.src, e.dst) for e in rolled.edges)}
    assert ends == mapped - {("g", "g")}


@pytest.mark.parametrize("steps", [10, 50, 400])
def test_the_group_holds_the_true_number_of_steps(steps):
    w, h = _rnn(steps)
    full = trace_graph(h, {"W": w}, saved=False)
    rolled = roll(full)
    (_, count, nodes), = rolled.rolled
    drawn_steps = len(rolled.find("TanhBackward0"))
    assert count + drawn_steps == steps == len(full.find("TanhBackward0"))
    assert nodes == 2 * count
    assert f"× {count:,} steps" in str(draw_graph(h, {"W": w}, roll=True))
    _accounted(full, rolled)


def test_an_rnn_cell_over_a_sequence():
    cell = TanhRNNCell(3, 4)
    h = run_sequence(cell, torch.randn(60, 3))
    full = trace_graph(h, cell, saved=False)
    rolled = roll(full)
    (_, count, _), = rolled.rolled
    assert count + len(rolled.find("TanhBackward0")) == 60
    _accounted(full, rolled)


@pytest.mark.parametrize("name", ["lstm cell", "gru cell", "hand written lstm", "two layer rnn", "rnn cell",
                                  "rnn over embedding"])
def test_every_common_loop_rolls(name):
    """nn.LSTMCell, nn.GRUCell, a hand-written LSTM (several sigmoids and
    tanhs a step) and two stacked cells (two TanhBackward0 a step, told
    apart by the layer's weights) each fold all but a few of their steps."""
    torch.manual_seed(0)
    full = trace_graph(SHAPES[name](), saved=False)
    rolled = roll(full)
    (_, count, nodes), = rolled.rolled
    assert STEPS - 5 <= count < STEPS and nodes % count == 0
    _accounted(full, rolled)
    assert "one node:" not in draw_graph(SHAPES[name](), roll=True).source   # the weights stay with their group


@pytest.mark.parametrize("name", ["rnn layer", "gru layer"])
def test_each_of_two_stacked_layers_is_rolled(name):
    """nn.RNN and nn.GRU with num_layers=2 run one layer over the whole
    sequence, then the next: two runs of steps, two groups."""
    torch.manual_seed(0)
    full = trace_graph(SHAPES[name](), saved=False)
    rolled = roll(full)
    assert [steps >= STEPS // 2 - 5 for _, steps, _ in rolled.rolled] == [True, True]
    _accounted(full, rolled)


def test_the_rolled_view_respects_max_nodes():
    """LSTMCell x 200 drew 3,208 nodes with roll=True, which dot refuses."""
    torch.manual_seed(0)
    y = SHAPES["lstm cell"]()
    whole = draw_graph(y, roll=True)
    assert whole.graph.rolled[0].steps > 150 and len(whole.graph.nodes) <= 300
    cut = draw_graph(y, roll=True, max_nodes=30)
    assert len(cut.graph.nodes) == 30 and cut.graph.omitted > 0 and unconnected(cut.graph) == []
    assert str(cut).splitlines()[-1].startswith(f"... {cut.graph.omitted} more nodes not drawn")


def test_when_nothing_repeats_the_drawing_says_so(note_example):
    graph = trace_graph(note_example[2])
    rolled = roll(graph)
    assert (rolled.nodes, rolled.edges, rolled.rolled) == (graph.nodes, graph.edges, (NO_REPEATS,))
    drawing = draw_graph(note_example[2], roll=True)
    assert NO_REPEATS_TEXT in str(drawing).splitlines()[-1]
    assert "no_repeats [shape=note" in drawing.source and "no run of 4 or more identical steps" in drawing.source


def test_roll_must_be_true_or_false(note_example):
    with pytest.raises(TypeError, match="roll must be True or False"):
        draw_graph(note_example[2], roll="yes")


def _encoder_loss(layers):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)
    encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    return encoder(torch.randn(5, 2, 16)).sum()


@pytest.mark.parametrize("layers", [4, 5, 6])
def test_a_stack_of_four_or_more_identical_layers_rolls(layers):
    """The first layer's step also takes everything upstream of it; it starts
    as the others do, so it counts as the run's first step."""
    drawing = draw_graph(_encoder_loss(layers), roll=True)
    (_, steps, _), = drawing.graph.rolled
    assert steps == layers - 2 and NO_REPEATS_TEXT not in drawing.text


def test_three_identical_layers_are_not_a_run():
    assert draw_graph(_encoder_loss(3), roll=True).graph.rolled == (NO_REPEATS,)


def test_a_cut_that_leaves_out_a_rolled_group_says_so():
    w, x = torch.randn(4, 4, requires_grad=True), torch.randn(4, requires_grad=True)
    h = torch.tanh(w @ (x * 2))
    for _ in range(50):
        h = torch.tanh(w @ h)
    drawing = draw_graph((h * 3).sin().cos().exp(), roll=True, max_nodes=4)
    assert not drawing.graph.rolled and [r.steps for r in drawing.graph.rolled_out] == [49]
    assert "the cut left out 1 rolled group (49 steps folded)" in drawing.text
    assert "the cut left out 1 rolled group" in drawing.source
