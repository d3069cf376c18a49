"""Record the order in which autograd's engine really runs the nodes of a
graph during backward(), and the gradients each node receives and passes on.

Hooks are registered with `Node.register_prehook` / `Node.register_hook`
for one backward() call and always removed afterwards, even when it fails.
"""

from dataclasses import dataclass

import torch

from .draw import draw_graph
from .graph import autograd_nodes, node_label, trace_graph


@dataclass(frozen=True)
class Step:
    """One node run by the engine: `number` counts from 1; `received` is the
    gradient arriving from the output side, `passed_on` what it sends to each
    of its inputs (one entry per `next_functions` entry)."""

    number: int
    node_id: str
    label: str
    received: tuple
    passed_on: tuple


def record_backward(root, retain_graph=False):
    """Run `root.backward()` and return the `Step`s in the order they ran.
    `root` must be a scalar tensor with a graph (node ids as in trace_graph)."""
    if not isinstance(root, torch.Tensor) or root.grad_fn is None:
        raise TypeError("record_backward needs a tensor computed from inputs that require grad, such as y = x ** 2")
    if root.numel() != 1:
        raise ValueError(f"backward() needs a scalar; this tensor has shape {tuple(root.shape)}: record y.sum()")
    started, steps, handles = {}, [], []
    try:
        for node_id, fn in autograd_nodes(root):
            handles.append(fn.register_prehook(_before(started, node_id)))
            handles.append(fn.register_hook(_after(started, steps, node_id, fn)))
        root.backward(retain_graph=retain_graph)
    finally:
        for handle in handles:
            handle.remove()
    return sorted(steps, key=lambda step: step.number)


def _before(started, node_id):
    def hook(grad_outputs):
        started[node_id] = (len(started) + 1, tuple(grad_text(g) for g in grad_outputs))

    return hook


def _after(started, steps, node_id, fn):
    def hook(grad_inputs, grad_outputs):
        number, received = started[node_id]
        steps.append(Step(number, node_id, node_label(fn), received, tuple(grad_text(g) for g in grad_inputs)))

    return hook


def grad_text(grad):
    """A short text for a gradient: its values when small, else its shape."""
    if grad is None:
        return "None"
    if grad.numel() <= 4:
        values = [f"{v:.4g}" for v in grad.detach().flatten().tolist()]
        return values[0] if grad.dim() == 0 else "[" + ", ".join(values) + "]"
    return "tensor " + "x".join(str(s) for s in grad.shape)


def is_topological(graph, order):
    """True when every node in `order` (node ids) comes after all the nodes
    that used it, i.e. gradients flow from outputs to inputs in this order."""
    position = {node_id: i for i, node_id in enumerate(order)}
    return all(
        position[e.dst] < position[e.src] for e in graph.edges if e.src in position and e.dst in position
    )


def step_view(build, step):
    """The graph that `build()` returns (a tensor and a dict of names), each
    node numbered by the backward step that ran it, step `step` highlighted."""
    root, params = build()
    graph = trace_graph(root, params)          # before backward() frees the saved values
    steps = record_backward(root)
    if not 1 <= step <= len(steps):
        raise ValueError(f"step must be from 1 to {len(steps)}; got {step}")
    now = steps[step - 1]
    notes = {s.node_id: f"step {s.number}" for s in steps}
    passes = f"passes on ({', '.join(now.passed_on)})" if now.passed_on else "adds it to the leaf's .grad"
    caption = f"step {now.number} of {len(steps)}: {now.label} receives {', '.join(now.received)} and {passes}"
    return draw_graph(graph, notes=notes, highlight=(now.node_id,)).html(caption)
