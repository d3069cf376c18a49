"""A corpus of graph shapes, each big enough to reach `max_nodes`: what the
layout must stay fast on (`make bench` times it) and what the rolled view
must find; tests/test_shapes.py checks the structure of every drawing."""

import re
from collections import Counter
from functools import partial

import torch

STEPS = 200


def rnn(steps):
    """h = tanh(W @ h), one shared 8x8 W, `steps` steps: 2 * steps + 3 nodes."""
    w = torch.randn(8, 8, requires_grad=True)
    h = torch.randn(8)
    for _ in range(steps):
        h = torch.tanh(w @ h)
    return w, h


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


def _cell_loop(kind):
    """An RNN cell of class `kind` stepped over STEPS inputs."""
    cell, zeros = kind(3, 4), torch.zeros(1, 4)
    state = (zeros, zeros) if kind is torch.nn.LSTMCell else zeros
    for x in torch.randn(STEPS, 1, 3):
        state = cell(x, state)
    return (state[0] if isinstance(state, tuple) else state).sum()


rnn_cell, lstm_cell, gru_cell = (partial(_cell_loop, kind) for kind in (torch.nn.RNNCell, torch.nn.LSTMCell,
                                                                         torch.nn.GRUCell))


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
    out, _ = kind(3, 4, num_layers=2)(torch.randn(STEPS // 2, 1, 3))
    return out.sum()


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


SHAPES = {**{f.__name__.replace("_", " "): f for f in (
    deep_chain, wide_fan_in, wide_fan_out, dense_skips, sum_over_unbind, rnn_over_embedding, many_roots)},
    "rnn cell": rnn_cell, "lstm cell": lstm_cell, "gru cell": gru_cell, "hand written lstm": hand_written_lstm,
    "two layer rnn": two_layer_rnn, **{f"{kind.__name__.lower()} layer": partial(_layer, kind)
                                       for kind in (torch.nn.RNN, torch.nn.LSTM, torch.nn.GRU)},
    "transformer": transformer, "multi output": multi_output}
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
