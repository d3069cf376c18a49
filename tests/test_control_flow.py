"""Notebook 01's forward passes and the pure views its widgets call."""

import re

import pytest
import torch

from helpers import trace_graph
from helpers.control_flow import (
    SEQUENCE_NODES,
    TanhRNNCell,
    branch_view,
    dynamic_forward,
    halve_until_small,
    loop_view,
    repeat_forward,
    run_sequence,
    sequence_view,
    while_view,
)


def _caption(html):
    return re.match(r"<p[^>]*>(.*?)</p>", html)[1]


def test_branch_view_draws_the_branch_taken():
    on, off = branch_view(True, 3.0), branch_view(False, 3.0)
    assert "AddBackward0" in on and "AddBackward0" not in off
    assert _caption(on) == "use_extra_layer=True: y = 7, x.grad = 2, 2 operations"
    assert _caption(off) == "use_extra_layer=False: y = 6, x.grad = 2, 1 operations"
    assert "<svg" in on and "#fff176" in on


@pytest.mark.parametrize("n", [0, 1, 5, 12])
def test_loop_grows_four_nodes_a_round(n):
    graph = trace_graph(repeat_forward(torch.tensor(1.0, requires_grad=True), n))
    assert len(graph.nodes) == (1 if n == 0 else 2 + 4 * n)
    assert _caption(loop_view(n)) == f"n = {n}: {2 * n} operations, {len(graph.nodes)} nodes in all"


@pytest.mark.parametrize("value, halvings", [(0.5, 0), (1.0, 0), (3.0, 2), (37.0, 6), (1000.0, 10)])
def test_while_depth_follows_the_value(value, halvings):
    x = torch.tensor(value, requires_grad=True)
    y = halve_until_small(x)
    assert trace_graph(y).depth() == halvings
    assert _caption(while_view(value)) == f"x = {value:g}: {halvings} halvings, depth {halvings}"


def test_each_sequence_has_as_many_steps_as_it_is_long():
    cell = TanhRNNCell(3, 4)
    sequences = [torch.randn(n, 3) for n in (1, 4, 7)]
    for i, seq in enumerate(sequences):
        graph = trace_graph(run_sequence(cell, seq), cell)
        assert len(graph.find("TanhBackward0")) == len(seq)
        assert len(graph.find("MvBackward0")) == 2 * len(seq)
        assert sorted(n.label for n in graph.nodes if n.kind == "leaf") == ["b", "w_h", "w_x"]
        assert _caption(sequence_view(cell, sequences, i)).endswith(f"{len(seq)} cell steps counted in its graph")


def test_long_sequence_is_drawn_bounded():
    cell = TanhRNNCell(3, 4)
    html = sequence_view(cell, [torch.randn(300, 3)], 0)
    assert "300 cell steps counted" in html
    assert f"{SEQUENCE_NODES} of " in html and "more nodes not drawn" in html


def test_sequence_index_out_of_range():
    with pytest.raises(ValueError, match="index must be from 0 to 1"):
        sequence_view(TanhRNNCell(3, 4), [torch.randn(2, 3)] * 2, 2)


def test_dynamic_forward_matches_the_note():
    x = torch.tensor(3.0, requires_grad=True)
    y = dynamic_forward(x, use_extra_layer=True)
    y.backward()
    assert (y.item(), x.grad.item(), y.grad_fn.name()) == (7.0, 2.0, "AddBackward0")


@pytest.mark.parametrize("length", [1, 6, 40])
def test_length_view_counts_every_step(length):
    from helpers.control_flow import length_view

    cell = TanhRNNCell(3, 4)
    html = length_view(cell, length)
    assert _caption(html) == f"length {length}, {length} cell steps counted in its graph"
    assert html == length_view(cell, length)
