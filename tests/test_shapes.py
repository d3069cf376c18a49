"""The corpus of graph shapes (tools/testkit/shapes.py): every drawing, cut or rolled, keeps within max_nodes,
leaves no node floating, gives no DOT node more than FAN_LIMIT edges, and its text form keeps every edge
drawn. Layout times are `make bench`'s, never a test's."""

import re

import pytest
import torch
from graph_check import unconnected

from helpers import draw_graph
from helpers.plan import FAN_LIMIT
from helpers.svg import LAYOUT_LIMIT, node_count
from tools.testkit.shapes import LOOPS, MAX_NODES, SHAPES, widest_fan


def _checked(drawing, max_nodes):
    graph = drawing.graph
    assert len(graph.nodes) <= max_nodes and unconnected(graph) == []
    assert widest_fan(drawing.source) <= FAN_LIMIT
    assert node_count(drawing.source) <= LAYOUT_LIMIT
    assert len(re.findall(r"^n\d+ -> n\d+ ", drawing.text, re.MULTILINE)) == len(graph.edges)


@pytest.mark.parametrize("max_nodes", MAX_NODES)
@pytest.mark.parametrize("name", SHAPES)
def test_every_shape_draws_within_bounds(name, max_nodes):
    torch.manual_seed(0)
    _checked(draw_graph(SHAPES[name](), max_nodes=max_nodes), max_nodes)


@pytest.mark.parametrize("max_nodes", MAX_NODES)
@pytest.mark.parametrize("name", LOOPS)
def test_every_loop_rolls_within_bounds(name, max_nodes):
    torch.manual_seed(0)
    drawing = draw_graph(SHAPES[name](), max_nodes=max_nodes, roll=True)
    assert sum(group.steps for group in drawing.graph.rolled) >= 100
    _checked(drawing, max_nodes)


@pytest.mark.parametrize("name", ["many roots", "wide fan in"])
def test_a_rolled_cut_keeps_the_rows_of_the_plain_cut(name):
    """Where nothing repeats, roll=True cuts as the plain cut does (at most max_nodes // 8 nodes at one depth), so the
    drawing reaches behind its outputs."""
    torch.manual_seed(0)
    y = SHAPES[name]()
    rolled, cut = draw_graph(y, roll=True).graph, draw_graph(y).graph
    assert len(rolled.nodes) == len(cut.nodes) and rolled.depth() == cut.depth()
