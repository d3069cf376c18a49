"""Record the order in which autograd's engine runs a graph's nodes during
backward(), and the gradients each receives and passes on (node hooks, removed
afterwards even when backward fails)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch.autograd.graph import Node

from .arguments import learner_facing
from .graph import autograd_nodes, node_label
from .saved_values import tensor_text


@dataclass(frozen=True)
class Step:
    """One node run by the engine (`number` from 1): the gradients it received
    and what it passed to each `next_functions` entry."""

    number: int
    node_id: str
    label: str
    received: tuple[str, ...]
    passed_on: tuple[str, ...]


@learner_facing
def record_backward(root: torch.Tensor, retain_graph: bool = False) -> list[Step]:
    """Run `root.backward()` and return the `Step`s in the order they ran.
    `root` must be a scalar tensor with a graph (node ids as in trace_graph)."""
    started: dict[str, tuple[int, tuple[str, ...]]] = {}
    steps: list[Step] = []
    handles: list[torch.utils.hooks.RemovableHandle] = []
    try:
        for node_id, fn in autograd_nodes(root):
            handles.append(fn.register_prehook(_before(started, node_id)))
            handles.append(fn.register_hook(_after(started, steps, node_id, fn)))
        root.backward(retain_graph=retain_graph)
    finally:
        for handle in handles:
            handle.remove()
    return sorted(steps, key=lambda step: step.number)


Started = dict[str, tuple[int, tuple[str, ...]]]     # node id -> (its number, the gradients it received)
Gradients = Sequence[torch.Tensor | None]


def _before(started: Started, node_id: str) -> Callable[[Gradients], None]:
    def hook(grad_outputs: Gradients) -> None:
        started[node_id] = (len(started) + 1, tuple(grad_text(g) for g in grad_outputs))

    return hook


def _after(started: Started, steps: list[Step], node_id: str, fn: Node) -> Callable[[Gradients, Gradients], None]:
    def hook(grad_inputs: Gradients, grad_outputs: Gradients) -> None:
        number, received = started[node_id]
        steps.append(Step(number, node_id, node_label(fn), received, tuple(grad_text(g) for g in grad_inputs)))

    return hook


def grad_text(grad: torch.Tensor | None) -> str:
    """A short text for a gradient: its values when small, else its shape."""
    if grad is None:
        return "None"
    if grad.numel() <= 4:
        values = [f"{v:.4g}" for v in grad.detach().flatten().tolist()]
        return values[0] if grad.dim() == 0 else "[" + ", ".join(values) + "]"
    return tensor_text(grad)
