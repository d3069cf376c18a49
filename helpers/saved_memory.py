"""Count the tensors autograd saves for backward, and the bytes graphs still
hold of them, with `saved_tensors_hooks`:

    with SavedTensors() as saved:
        loss = model(x).sum()        # every tensor saved here is counted
    saved.held_bytes()               # drops to 0 after backward()

Like any saved-tensor hook, they turn off backward's version check for what
they pack: a tensor changed in place afterwards is used as it is then."""

import weakref
from collections.abc import Callable
from typing import Any

import torch


class SavedTensors(torch.autograd.graph.saved_tensors_hooks):
    """Counts what autograd saves inside it: `saved_count` (ever),
    `held_count()` (still held), `held_bytes()` (each storage once), `peak_bytes`."""

    def __init__(self) -> None:
        super().__init__(self._pack, lambda packed: packed)
        self.saved_count = 0
        self.peak_bytes = 0
        # what autograd stores for each saved tensor while we count, living as long as the graph keeps
        # it: a detached alias, so a saved output does not point back at its own graph
        self._held: weakref.WeakSet[torch.Tensor] = weakref.WeakSet()

    def __enter__(self) -> "SavedTensors":  # type: ignore[override]  # `with ... as saved`: the counter
        super().__enter__()
        return self

    def _pack(self, tensor: torch.Tensor) -> torch.Tensor:
        self.saved_count += 1
        packed = tensor.detach()
        self._held.add(packed)
        self.peak_bytes = max(self.peak_bytes, self.held_bytes())
        return packed

    def held_count(self) -> int:
        return len(self._held)

    def held_bytes(self) -> int:
        storages: dict[int, int] = {}
        for packed in list(self._held):
            storage = packed.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
        return sum(storages.values())


def held_bytes(function: Callable[..., torch.Tensor], *args: Any) -> int:
    """Bytes of storage autograd saves while `function(*args)` builds its
    graph, counted while its output keeps that graph alive."""
    with SavedTensors() as saved:
        output = function(*args)          # held: its graph keeps the saved tensors
    held = saved.held_bytes()
    del output
    return held
