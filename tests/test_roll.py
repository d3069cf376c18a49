"""The rolled view: repeated steps found from the graph itself, rolled into
one node whose × N is the true number of steps it holds; nothing is lost."""

import pytest
import torch

from helpers import draw_graph, trace_graph
from helpers.models import TanhRNNCell, run_sequence
from helpers.roll import roll


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


def test_a_graph_without_repeats_is_left_alone(note_example):
    graph = trace_graph(note_example[2])
    assert roll(graph) is graph


def test_roll_must_be_true_or_false(note_example):
    with pytest.raises(TypeError, match="roll must be True or False"):
        draw_graph(note_example[2], roll="yes")
