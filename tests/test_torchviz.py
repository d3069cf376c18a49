"""torchviz, the comparison drawing, imports and draws the same operations."""

import re

import torchviz

from helpers import trace_graph


def test_make_dot_draws_the_same_operations(note_example):
    x, _, z = note_example
    theirs = torchviz.make_dot(z, params={"x": x}).source
    ours = {n.label for n in trace_graph(z).nodes if n.kind == "op"}
    assert set(re.findall(r"label=(\w+Backward\d)", theirs)) == ours == {"MulBackward0", "PowBackward0"}
