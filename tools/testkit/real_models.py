"""Graphs from code nobody here wrote (torch.nn's own modules and friends),
built small, for the real-world tests."""

from functools import partial

import torch
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.checkpoint import checkpoint

from tools.testkit.shapes import (
    gru_cell,
    hand_written_lstm,
    lstm_cell,
    rnn_over_embedding,
    sum_over_unbind,
    two_layer_rnn,
)


def _lstm_packed():
    lstm = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    packed = pack_padded_sequence(torch.randn(3, 5, 4), [5, 3, 2], batch_first=True)
    out, (h, c) = lstm(packed)
    return out.data.sum() + h.sum() + c.sum()


def _gru_packed():
    gru = torch.nn.GRU(4, 6, num_layers=3, bidirectional=True, batch_first=True)
    packed = pack_padded_sequence(torch.randn(3, 5, 4), [5, 3, 2], batch_first=True)
    return gru(packed)[1].sum()


def _transformer():
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)(torch.randn(2, 5, 8)).sum()


def _attention():
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    return mha(x, x, x, need_weights=True)[0].sum()


def _cnn():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(4 * 3 * 3, 2))
    return torch.nn.functional.cross_entropy(model(torch.randn(2, 3, 8, 8)), torch.tensor([0, 1]))


def _embeddings():
    emb, bag = torch.nn.Embedding(10, 4), torch.nn.EmbeddingBag(10, 4, mode="mean")
    ids = torch.tensor([[1, 2, 3], [4, 5, 6]])
    logits = emb(ids).sum(1) + bag(ids)
    return torch.nn.functional.cross_entropy(logits, torch.tensor([0, 3]), ignore_index=-100)


def _double_backward():
    x = torch.randn(3, requires_grad=True)
    (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    return g.sum()


def _views_and_in_place():
    x = torch.randn(4, 4, requires_grad=True)
    y = x * 2
    y[:, 0].mul_(3)
    return y.t().reshape(-1)[-1] + y.diagonal().sum()


def _complex():
    z = torch.randn(3, dtype=torch.cfloat, requires_grad=True)
    return (z * z.conj()).real.sum()


def _torch_func():
    w = torch.randn(3, requires_grad=True)
    return torch.func.vmap(lambda row: (row * w).sin().sum())(torch.randn(4, 3)).sum()


def _checkpointed_encoder():
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    x = torch.randn(2, 5, 8, requires_grad=True)
    for _ in range(4):
        x = checkpoint(layer, x, use_reentrant=False)
    return x.sum()


def _distributions():
    """A Gaussian policy's loss with a KL term, and the log-likelihood of one
    sample under several families sharing the same parameters: wide rows."""
    policy = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 6))
    out = policy(torch.randn(8, 4))
    loc, scale = out[:, :3], torch.nn.functional.softplus(out[:, 3:]) + 1e-3
    normal = torch.distributions.Normal(loc, scale)
    prior = torch.distributions.Normal(torch.zeros(3, requires_grad=True), torch.ones(3, requires_grad=True))
    action = normal.rsample()
    kl = torch.distributions.kl_divergence(normal, prior).sum(-1)
    d = torch.distributions
    families = [d.Laplace(loc, scale), d.Cauchy(loc, scale), d.Gumbel(loc, scale), d.LogNormal(loc, scale),
                d.StudentT(3.0, loc, scale), d.Gamma(scale, scale + 1), d.Beta(scale, scale + 1)]
    sample = torch.rand(8, 3) * 0.9 + 0.05
    likelihood = sum(f.log_prob(sample).sum() for f in families)
    return (-normal.log_prob(action).sum(-1) + kl - normal.entropy().sum(-1)).mean() - likelihood


def _one_input_beside_many():
    """Eight operations on one input beside twelve on inputs of their own,
    all stacked: the row of inputs has room for inputs whose consumer was cut."""
    x = torch.randn(3, requires_grad=True)
    shared = [x.sin(), x.cos(), x.exp(), x.tanh(), x.sigmoid(), x.relu(), x.neg(), x.abs()]
    return torch.stack(shared + [torch.randn(3, requires_grad=True).exp() for _ in range(12)]).sum()


class Counted(torch.Tensor):
    """A tensor subclass with `__torch_function__`, as fastai's tensors and
    torchvision's tv_tensors are; it counts the calls, which drawing must not make."""

    calls: list[str] = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(getattr(func, "__name__", repr(func)))
        return super().__torch_function__(func, types, args, kwargs or {})


def subclass_graph():
    """(output, x, w): three operations on two leaves of the `Counted` subclass."""
    x, w = (torch.randn(3).as_subclass(Counted).requires_grad_() for _ in range(2))
    return ((x * w).sin() + x).sum(), x, w


def _multi_output():
    """Later outputs (k > 0) of split, topk, unbind and QR used downstream; one node fed two outputs of split."""
    x = torch.randn(6, requires_grad=True)
    first, second, third = (x * 2).split(2)
    values, _ = torch.topk(x, 3)
    q, r = torch.linalg.qr(x.reshape(3, 2) + 1)
    return (second * third).sum() + values[1:].sum() + r.sum() + q.unbind(1)[1].sum() + first.sum()


# Loops over 200 steps (tools/testkit/shapes.py): the rolled view must fold them, and
# drawing them cut must lay out quickly (one operation feeds every step).
LOOPS = {"LSTMCell loop": lstm_cell, "GRUCell loop": gru_cell, "hand-written LSTM loop": hand_written_lstm,
         "two stacked RNNCells in one loop": two_layer_rnn, "RNNCell over emb(tokens).unbind(0)": rnn_over_embedding,
         "sum(...) over x.unbind()": sum_over_unbind}

REAL = {"LSTM, 2 layers, bidirectional, packed": _lstm_packed, "GRU, 3 layers, bidirectional, packed": _gru_packed,
        "TransformerEncoder": _transformer, "MultiheadAttention": _attention, "CNN with BatchNorm2d": _cnn,
        "Embedding and EmbeddingBag with cross_entropy": _embeddings, "create_graph=True": _double_backward,
        "views and in-place": _views_and_in_place, "complex": _complex, "torch.func.vmap": _torch_func,
        "torch.distributions loss": _distributions, "one input beside many": _one_input_beside_many,
        "tensor subclass with __torch_function__": lambda: subclass_graph()[0],
        "multi-output operations": _multi_output, **LOOPS}


def _stack(layers, causal=False, decoder=False):
    """torch.nn's transformer stacks, `layers` identical layers (train mode: dropout on): (model, loss). Causal:
    a decoder-only model's mask; decoder: torch.nn.Transformer, an encoder and a decoder of `layers` layers each."""
    torch.manual_seed(0)
    if decoder:
        model = torch.nn.Transformer(32, 2, layers, layers, dim_feedforward=64, batch_first=True).train()
        return model, model(torch.randn(2, 6, 32), torch.randn(2, 5, 32)).sum()
    layer = torch.nn.TransformerEncoderLayer(32, 2, dim_feedforward=64, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).train()
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6) if causal else None
    return model, model(torch.randn(2, 6, 32), mask=mask, is_causal=causal).sum()


# Stacks of identical layers, which roll=True folds: (model, loss) builders
STACKS = {**{f"TransformerEncoder, {n} layers": partial(_stack, n) for n in (2, 4, 6)},
          **{f"causal TransformerEncoder, {n} layers": partial(_stack, n, causal=True) for n in (2, 4)},
          "Transformer, 6 layers": partial(_stack, 6, decoder=True)}
