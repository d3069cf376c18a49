"""SavedTensors: what autograd saves, what graphs still hold, hooks removed."""

import pytest
import torch

from helpers.saved_memory import SavedTensors


def test_exp_saves_its_result_until_backward():
    x = torch.ones(100, requires_grad=True)
    with SavedTensors() as saved:
        y = x.exp()
    assert (saved.saved_count, saved.held_count(), saved.held_bytes()) == (1, 1, 400)
    y.sum().backward()
    assert (saved.held_count(), saved.held_bytes()) == (0, 0)


def test_retained_graphs_keep_their_buffers_and_release_them_when_dropped():
    w = torch.randn(8, 8, requires_grad=True)
    kept = []
    with SavedTensors() as saved:
        for _ in range(3):
            loss = torch.tanh(w @ torch.ones(8, 16)).sum()
            loss.backward(retain_graph=True)
            kept.append(loss)
    # each graph holds its tanh output and the ones(8, 16) that MmBackward0 needs for
    # w's gradient (512 bytes each); w itself is not saved, since the ones need no gradient
    assert saved.held_bytes() == 3 * (512 + 512)
    kept.clear()
    del loss
    assert saved.held_bytes() == 0


def test_hooks_end_with_the_block_even_on_error():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(ValueError), SavedTensors() as saved:
        raise ValueError("inside")
    x.exp()
    assert saved.saved_count == 0


def test_double_backward_still_works():
    x = torch.tensor(2.0, requires_grad=True)
    with SavedTensors():
        y = x**3
    (grad,) = torch.autograd.grad(y, x, create_graph=True)
    grad.backward()
    assert (grad.item(), x.grad.item()) == (12.0, 12.0)
