"""Notebook 01's forward passes, whose graphs follow Python control flow,
and the pure views its widgets redraw (each returns HTML; tests call them
directly, without a browser)."""

import torch

from .draw import draw_graph
from .graph import autograd_nodes, node_label

# A sequence's drawing keeps the last dozen steps; the step count is always
# taken from the whole graph.
SEQUENCE_NODES = 60


def dynamic_forward(x, use_extra_layer):
    """The note's example: a Python `if` decides whether `+ 1` is recorded."""
    y = x * 2
    if use_extra_layer:
        y = y + 1
    return y


def repeat_forward(x, n):
    """`n` rounds of `y = y * 2 + 1`, in a plain Python loop."""
    y = x
    for _ in range(n):
        y = y * 2 + 1
    return y


def halve_until_small(x, limit=1.0):
    """Halve `x` until its size is at most `limit`: how many rounds run
    depends on the tensor's value, read by Python's `while`."""
    y = x
    while y.abs() > limit:
        y = y / 2
    return y


class TanhRNNCell(torch.nn.Module):
    """A hand-written RNN cell: h' = tanh(w_x @ x + w_h @ h + b)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.w_x = torch.nn.Parameter(torch.randn(hidden_size, input_size) * 0.5)
        self.w_h = torch.nn.Parameter(torch.randn(hidden_size, hidden_size) * 0.5)
        self.b = torch.nn.Parameter(torch.zeros(hidden_size))

    def forward(self, x, h):
        return torch.tanh(self.w_x @ x + self.w_h @ h + self.b)


def run_sequence(cell, sequence):
    """Unroll `cell` over the rows of `sequence`, one step per row."""
    h = torch.zeros(cell.b.shape[0])
    for x in sequence:
        h = cell(x, h)
    return h


def branch_view(use_extra_layer, x):
    """The note's example for one setting: its graph (the extra node
    highlighted) and the gradient backward() gives."""
    x = torch.tensor(float(x), requires_grad=True)
    y = dynamic_forward(x, use_extra_layer)
    drawing = draw_graph(y, {"x": x, "y": y}, highlight="AddBackward0")
    y.backward()
    ops = drawing.graph.count("op")
    return drawing.html(f"use_extra_layer={use_extra_layer}: y = {y.item():g}, x.grad = {x.grad.item():g}, "
                        f"{ops} operations")


def loop_view(n):
    """The graph of `repeat_forward` after `n` rounds, with its node count."""
    x = torch.tensor(1.0, requires_grad=True)
    drawing = draw_graph(repeat_forward(x, n), {"x": x})
    graph = drawing.graph
    return drawing.html(f"n = {n}: {graph.count('op')} operations, {len(graph.nodes)} nodes in all")


def while_view(value):
    """The graph of `halve_until_small(value)`: its depth follows the value."""
    x = torch.tensor(float(value), requires_grad=True)
    drawing = draw_graph(halve_until_small(x), {"x": x})
    halvings = len(drawing.graph.find("DivBackward0"))
    return drawing.html(f"x = {value:g}: {halvings} halvings, depth {drawing.graph.depth()}")


def sequence_view(cell, sequences, index):
    """The unrolled graph of sequence number `index`, with its step count."""
    if not 0 <= index < len(sequences):
        raise ValueError(f"index must be from 0 to {len(sequences) - 1}; got {index}")
    return _unrolled_html(cell, sequences[index], f"sequence {index}: ")


def length_view(cell, length):
    """The unrolled graph for one random sequence of `length` steps (the
    same sequence for the same length), with its steps counted."""
    generator = torch.Generator().manual_seed(length)
    return _unrolled_html(cell, torch.randn(length, cell.w_x.shape[1], generator=generator), "")


def _unrolled_html(cell, sequence, prefix):
    h = run_sequence(cell, sequence)
    # counted over the whole graph (a walk that reads no saved values); the drawing is bounded
    steps = sum(node_label(fn) == "TanhBackward0" for _, fn in autograd_nodes(h))
    drawing = draw_graph(h, cell, constants=False, max_nodes=SEQUENCE_NODES)
    return drawing.html(f"{prefix}length {len(sequence)}, {steps} cell steps counted in its graph")
