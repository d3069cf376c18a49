"""The rolled view: repeated steps found from the graph itself, rolled into
one node whose × N is the true number of steps it holds; nothing is lost."""

import pytest
import torch
from graph_check import unconnected

from helpers import draw_graph, trace_graph
from helpers.graph import inputs_first
from helpers.roll import NO_REPEATS, NO_REPEATS_TEXT, roll
from tools.testkit.real_models import STACKS
from tools.testkit.shapes import SHAPES, STEPS, rnn


def _accounted(full, rolled):
    """Assert every node and edge of the full graph is drawn (edges with group ends) or inside a group."""
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
    w, h = rnn(steps)
    full = trace_graph(h, {"W": w}, saved=False)
    rolled = roll(full)
    (_, count, nodes), = rolled.rolled
    drawn_steps = len(rolled.find("TanhBackward0"))
    assert count + drawn_steps == steps == len(full.find("TanhBackward0"))
    assert nodes == 2 * count
    assert f"× {count:,} steps" in str(draw_graph(h, {"W": w}, roll=True))
    _accounted(full, rolled)


@pytest.mark.parametrize("name, groups", [("lstm cell", 1), ("gru cell", 1), ("hand written lstm", 1),
                                         ("two layer rnn", 1), ("rnn cell", 1), ("rnn over embedding", 1),
                                         ("rnn layer", 2), ("gru layer", 2), ("sum over unbind", 1)])
def test_every_common_loop_rolls(name, groups):
    """Two stacked cells are told apart by their weights; nn.RNN and nn.GRU with num_layers=2 run one layer over the
    whole sequence, then the next: two runs of steps, two groups."""
    torch.manual_seed(0)
    full = trace_graph(SHAPES[name](), saved=False)
    rolled = roll(full)
    length = 400 if name == "sum over unbind" else STEPS      # its pieces: tools/testkit/shapes.py
    assert [length // groups - 5 <= steps < length for _, steps, _ in rolled.rolled] == [True] * groups
    assert all(nodes % steps == 0 for _, steps, nodes in rolled.rolled)
    _accounted(full, rolled)
    assert "one node:" not in draw_graph(SHAPES[name](), roll=True).source   # the weights stay with their group


def test_the_rolled_view_respects_max_nodes():
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


def test_three_identical_layers_are_no_run():
    """Four layers or more fold: test_a_named_stack_of_four_layers_folds_two, and unnamed test_real_models.py's
    test_roll_folds_a_layer_stack."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)
    encoder = torch.nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    drawing = draw_graph(encoder(torch.randn(5, 2, 16)).sum(), roll=True)
    assert [r.steps for r in drawing.graph.rolled] == [0] and NO_REPEATS_TEXT in drawing.text


def test_a_cut_that_leaves_out_a_rolled_group_says_so():
    w, x = torch.randn(4, 4, requires_grad=True), torch.randn(4, requires_grad=True)
    h = torch.tanh(w @ (x * 2))
    for _ in range(50):
        h = torch.tanh(w @ h)
    drawing = draw_graph((h * 3).sin().cos().exp(), roll=True, max_nodes=4)
    assert not drawing.graph.rolled and [r.steps for r in drawing.graph.rolled_out] == [49]
    assert "the cut left out 1 rolled group (49 steps folded)" in drawing.text
    assert "the cut left out 1 rolled group" in drawing.source


def test_named_leaves_do_not_stop_a_loop_from_rolling():
    """A leaf counts by its shape, so with each step's input named (x[0], x[1], ...) an RNN still repeats."""
    w, xs = torch.randn(4, 4, requires_grad=True), [torch.randn(4, requires_grad=True) for _ in range(20)]
    h = torch.zeros(4)
    for x in xs:
        h = torch.tanh(w @ h + x)
    names = {"W": w, **{f"x[{t}]": x for t, x in enumerate(xs)}}
    (_, steps, nodes), = draw_graph(h, names, roll=True).graph.rolled
    assert (steps, nodes) == (18, 18 * 4)


class _ScanLayer(torch.nn.Module):
    """A residual layer around a scan over the input's steps: torch.nn.RNN's, or a loop of its own."""

    def __init__(self, loop):
        super().__init__()
        self.loop, self.rnn, self.cell, self.out = loop, torch.nn.RNN(8, 8, batch_first=True), torch.nn.Linear(8, 8), \
            torch.nn.Linear(8, 8)

    def forward(self, x):
        h, states = torch.zeros_like(x[:, 0]), []
        for t in range(x.shape[1] if self.loop else 0):
            states.append(h := torch.tanh(self.cell(h) + x[:, t]))
        return x + self.out(torch.stack(states, 1) if self.loop else self.rnn(x)[0])


@pytest.mark.parametrize("loop", [True, False], ids=["loop", "nn.RNN"])
def test_no_fold_draws_a_cycle(loop):
    """Six scan layers: folding the layers once their scans were folded made a step feed an earlier one (once a
    KeyError from the layout's estimate); that fold is not taken, an autograd graph has no cycle."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[_ScanLayer(loop) for _ in range(6)])
    loss = model(torch.randn(2, 6, 8)).sum()
    full = trace_graph(loss, saved=False)
    for drawn in (roll(full), draw_graph(loss, model, roll=True, max_nodes=None).graph):
        assert [r.steps for r in drawn.rolled] == [4] * 6
        users = {n.id: [e.dst for e in drawn.edges if e.src == n.id] for n in drawn.nodes}
        assert len(inputs_first(users)) == len(users)
    _accounted(full, roll(full))


def test_a_named_stack_of_four_layers_folds_two():
    """torch.nn.TransformerEncoder with named parameters (unnamed: test_real_models.py): the middle layers fold."""
    model, loss = STACKS["TransformerEncoder, 4 layers"]()
    full = trace_graph(loss, saved=False)
    drawing = draw_graph(loss, model, roll=True)
    (_, steps, nodes), = drawing.graph.rolled
    assert steps == 2 and nodes % 2 == 0 and drawing.graph.omitted == 0 and NO_REPEATS_TEXT not in drawing.text
    _accounted(full, roll(full))


def test_a_cut_that_leaves_out_some_groups_says_which():
    """Six scan layers cut to 40 nodes: the note counts the groups the cut left out."""
    torch.manual_seed(0)
    loss = torch.nn.Sequential(*[_ScanLayer(loop=True) for _ in range(6)])(torch.randn(2, 6, 8)).sum()
    drawing = draw_graph(loss, roll=True, max_nodes=40)
    out = drawing.graph.rolled_out
    assert len(out) == 6 - len(drawing.graph.rolled) >= 4
    note = f"the cut left out {len(out)} rolled groups ({sum(r.steps for r in out)} steps folded)"
    assert note in drawing.text and note in drawing.source.replace("\\n", " ")
