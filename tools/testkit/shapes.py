"""A corpus of graph shapes, each big enough to reach `max_nodes`: what the
layout must stay fast on, and what the rolled view must find. The bench
prints, per shape, the nodes drawn, the time to build the drawing, the
time `dot` takes to lay it out and the CPU time dot itself used, which a
loaded machine does not inflate (`shape_rows`); tests/test_shapes.py checks
the structure of every drawing.

    .venv/bin/python -m tools.testkit.shapes      (the bench's section on its own)
"""

import re
import resource
import statistics
import sys
import time
from collections import Counter

import torch

from helpers import draw_graph
from helpers.svg import DotUnavailable, _laid_out

STEPS = 200


def deep_chain():
    x = torch.randn(3, requires_grad=True)
    for _ in range(2_000):
        x = x.sin()
    return x.sum()


def wide_fan_in():
    """One operation with 1,000 inputs, each an operation on a leaf of its own."""
    return torch.stack([torch.randn(3, requires_grad=True).exp() for _ in range(1_000)]).sum()


def wide_fan_out():
    """One operation used by 1,000 others, gathered again by a stack."""
    y = torch.randn(3, requires_grad=True) * 2
    return torch.stack([(y * i).sin() for i in range(1_000)]).sum()


def dense_skips():
    """Each step gathers the last eight steps' outputs (as DenseNet's blocks
    do): eight edges into every node, across eight ranks."""
    outputs = [torch.randn(3, requires_grad=True)]
    for _ in range(300):
        outputs.append(torch.stack(outputs[-8:]).sum(0).tanh())
    return outputs[-1].sum()


def sum_over_unbind():
    """sum(...) over x.unbind(): the unbind feeds every step of the running total."""
    x = torch.randn(400, 3, requires_grad=True)
    return sum(piece.sin().sum() for piece in (x * 2).unbind())


def rnn_over_embedding():
    """An RNN cell over emb(tokens).unbind(0): one operation feeds every step."""
    emb, cell = torch.nn.Embedding(50, 8), torch.nn.RNNCell(8, 8)
    h = torch.zeros(1, 8)
    for x in emb(torch.randint(0, 50, (STEPS, 1))).unbind(0):
        h = cell(x, h)
    return h.sum()


def many_roots():
    """1,000 outputs of one unbind, passed as a list of roots."""
    return list((torch.randn(1_000, requires_grad=True) * 2).unbind())


def _cell_loop(cell, state):
    for x in torch.randn(STEPS, 1, cell.input_size):
        state = cell(x, state)
    return (state[0] if isinstance(state, tuple) else state).sum()


def rnn_cell():
    return _cell_loop(torch.nn.RNNCell(3, 4), torch.zeros(1, 4))


def lstm_cell():
    return _cell_loop(torch.nn.LSTMCell(3, 4), (torch.zeros(1, 4), torch.zeros(1, 4)))


def gru_cell():
    return _cell_loop(torch.nn.GRUCell(3, 4), torch.zeros(1, 4))


def hand_written_lstm():
    """An LSTM written out: one matrix for the four gates, chunked."""
    w, b = torch.randn(16, 7, requires_grad=True), torch.zeros(16, requires_grad=True)
    h = c = torch.zeros(4)
    for x in torch.randn(STEPS, 3):
        i, f, g, o = (w @ torch.cat([x, h]) + b).chunk(4)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
    return h.sum()


def two_layer_rnn():
    """Two RNN cells stacked, stepped together in one loop."""
    lower, upper = torch.nn.RNNCell(3, 4), torch.nn.RNNCell(4, 4)
    h1 = h2 = torch.zeros(1, 4)
    for x in torch.randn(STEPS, 1, 3):
        h1 = lower(x, h1)
        h2 = upper(h1, h2)
    return h2.sum()


def _layer(kind):
    def build():
        out, _ = kind(3, 4, num_layers=2)(torch.randn(STEPS // 2, 1, 3))
        return out.sum()
    build.__name__ = kind.__name__.lower() + "_layer"
    return build


def transformer():
    model = torch.nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
                                 batch_first=True)
    source, target = torch.randn(2, 6, 8), torch.randn(2, 5, 8)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    return model(source, target, tgt_mask=mask).sum()


def multi_output():
    """Later outputs of split, unbind, topk and QR, each used downstream."""
    x = torch.randn(600, requires_grad=True)
    pieces = [p.exp() for p in (x * 2).split(2)]
    values, _ = torch.topk(x, 5)
    q, r = torch.linalg.qr(x[:6].reshape(3, 2) + 1)
    return torch.stack(pieces).sum() + values[1:].sum() + r.sum() + q.unbind(1)[1].sum()


SHAPES = {f.__name__.replace("_", " "): f for f in (
    deep_chain, wide_fan_in, wide_fan_out, dense_skips, sum_over_unbind, rnn_over_embedding, many_roots, rnn_cell,
    lstm_cell, gru_cell, hand_written_lstm, two_layer_rnn, _layer(torch.nn.RNN), _layer(torch.nn.LSTM),
    _layer(torch.nn.GRU), transformer, multi_output)}
# The shapes whose graph is a loop: the rolled view must fold their steps.
# (nn.LSTM on the CPU records one fused operation for the whole sequence: no loop to roll.)
LOOPS = ("rnn over embedding", "rnn cell", "lstm cell", "gru cell", "hand written lstm", "two layer rnn",
         "rnn layer", "gru layer", "sum over unbind", "deep chain")
MAX_NODES = (300, 199)


def widest_fan(source):
    """The most edges any one node of a DOT source has: out, or in from a
    node with inputs of its own (a leaf, a constant or a copy sits right
    beside its use, so its edge is short). Long edges into or out of one
    node, growing with the drawing, are what make dot slow."""
    pairs = re.findall(r"^\s*(\w+) -> (\w+)", source, re.MULTILINE)
    fed = {dst for _, dst in pairs}
    ends = Counter(("out", src) for src, _ in pairs)
    ends.update(("in", dst) for src, dst in pairs if src in fed)
    return max(ends.values(), default=0)


def timed(run, repeats=3):
    """(result, median seconds, median CPU seconds of child processes: dot's
    own work, which a loaded machine does not inflate) of `run()`, the
    layout cache cleared each time."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        _laid_out.cache_clear()
        before, start = _children_cpu(), time.perf_counter()
        result = run()
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - before)
    return result, statistics.median(walls), statistics.median(cpus)


def _children_cpu():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(name, max_nodes, roll=False, repeats=3):
    """(nodes drawn, build seconds, layout seconds and dot's CPU seconds, or
    None and None when dot refused or failed) of one shape's drawing."""
    torch.manual_seed(0)
    root = SHAPES[name]()
    drawing, build, _ = timed(lambda: draw_graph(root, max_nodes=max_nodes, roll=roll), repeats)
    try:
        _, layout, cpu = timed(drawing.svg, repeats)
    except DotUnavailable:
        layout = cpu = None
    return len(drawing.graph.nodes), build, layout, cpu


def shape_rows(repeats=3):
    """The bench's section: every shape at each max_nodes, the loops rolled
    too (median of `repeats` runs), and the slowest layout."""
    rows = ["| shape | max_nodes | view | nodes drawn | build | layout | dot's CPU |",
            "|---|---:|---|---:|---:|---:|---:|"]
    worst = (0.0, "")
    for name in SHAPES:
        for max_nodes in MAX_NODES:
            for roll in (False, True) if name in LOOPS else (False,):
                drawn, build, layout, cpu = measure(name, max_nodes, roll, repeats)
                view = "rolled" if roll else "cut"
                laid = "refused by dot | -" if layout is None else f"{layout:.3f} s | {cpu:.3f} s"
                rows.append(f"| {name} | {max_nodes} | {view} | {drawn} | {build:.3f} s | {laid} |")
                seconds = float("inf") if layout is None else layout
                worst = max(worst, (seconds, f"{name}, max_nodes={max_nodes}, {view}"))
    slowest = "refused by dot" if worst[0] == float("inf") else f"{worst[0]:.3f} s"
    rows.append(f"\nSlowest layout: {slowest} ({worst[1]}); the target is under 1 s. dot's CPU time is "
                "what a quiet machine's layout takes; the layout column grows with the machine's load.")
    return rows


if __name__ == "__main__":
    print("\n".join(shape_rows(int(sys.argv[1]) if len(sys.argv) > 1 else 3)))
