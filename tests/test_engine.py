"""record_backward: the engine's real order, the gradients, and no hooks left behind."""

import pytest
import torch

from helpers import trace_graph
from helpers.engine import Step, grad_text, record_backward
from tools.testkit.lessons import lesson_function

diamond = lesson_function("02-inspecting-the-graph", "diamond")


def test_note_example_steps(note_example):
    _, _, z = note_example
    assert record_backward(z) == [
        Step(1, "n1", "MulBackward0", ("1",), ("3", "None")),
        Step(2, "n2", "PowBackward0", ("3",), ("12",)),
        Step(3, "n4", "AccumulateGrad", ("12",), ()),
    ]


def test_order_is_topological_and_each_node_runs_once():
    out, _ = diamond()
    graph = trace_graph(out)
    order = [s.node_id for s in record_backward(out)]
    runnable = [n.id for n in graph.nodes if n.kind in ("op", "leaf")]
    assert sorted(order) == sorted(runnable)
    assert graph.is_topological(order)
    assert not graph.is_topological(order[::-1])
    sin = graph.find("SinBackward0")[0].id
    assert order.index(sin) > order.index(graph.find("ExpBackward0")[0].id)


def test_hooks_are_removed_also_when_backward_fails(note_example, monkeypatch):
    x, _, z = note_example
    record_backward(z, retain_graph=True)
    calls = []
    monkeypatch.setattr("helpers.engine.grad_text", lambda g: calls.append(g) or "x")
    z.backward()
    assert calls == [] and x.grad.item() == 24.0
    with pytest.raises(RuntimeError, match="second time"):
        record_backward(z)
    calls.clear()
    (x * 5).backward()
    assert calls == []


@pytest.mark.parametrize("root, error", [(torch.ones(2, requires_grad=True) * 2, RuntimeError),
                                         (torch.ones(1), ValueError), (3.0, TypeError)])
def test_bad_roots_say_what_to_record(root, error):
    """torch's own words for a tensor that is not a scalar; the walk's for one without a graph."""
    with pytest.raises(error, match="scalar outputs|requires_grad=True"):
        record_backward(root)


def test_grad_text():
    assert [grad_text(g) for g in (None, torch.tensor(2.5), torch.tensor([1.0, 2.0]), torch.ones(3, 4))] == [
        "None", "2.5", "[1, 2]", "tensor of shape (3, 4)"]
