"""Count the tensors autograd saves for backward, and the bytes graphs still
hold of them, with `saved_tensors_hooks`:

    with SavedTensors() as saved:
        loss = model(x).sum()        # every tensor saved here is counted
    saved.held_bytes()               # drops to 0 after backward()

Like any saved-tensor hook, they turn off backward's version check for what
they pack: a tensor changed in place afterwards is used as it is then."""

import weakref
from collections.abc import Callable
from typing import Any, Literal

import torch


class _Packed:
    """What autograd stores for a saved tensor while we count, living as long
    as the graph keeps it: a detached alias, so a saved output does not point back
    at its own graph."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


class SavedTensors:
    """Counts what autograd saves inside it: `saved_count` (ever),
    `held_count()` (still held), `held_bytes()` (each storage once), `peak_bytes`."""

    def __init__(self) -> None:
        self.saved_count = 0
        self.peak_bytes = 0
        self._held: weakref.WeakSet[_Packed] = weakref.WeakSet()
        self._hooks: torch.autograd.graph.saved_tensors_hooks | None = None

    def __enter__(self) -> "SavedTensors":
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, _unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        if self._hooks is not None:
            self._hooks.__exit__(*exc)
        self._hooks = None
        return False

    def _pack(self, tensor: torch.Tensor) -> _Packed:
        self.saved_count += 1
        packed = _Packed(tensor.detach())
        self._held.add(packed)
        self.peak_bytes = max(self.peak_bytes, self.held_bytes())
        return packed

    def held_count(self) -> int:
        return len(self._held)

    def held_bytes(self) -> int:
        storages: dict[int, int] = {}
        for packed in list(self._held):
            storage = packed.tensor.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
        return sum(storages.values())


def _unpack(packed: _Packed) -> torch.Tensor:
    return packed.tensor


def held_bytes(function: Callable[..., torch.Tensor], *args: Any) -> int:
    """Bytes of storage autograd saves while `function(*args)` builds its
    graph, counted while its output keeps that graph alive."""
    with SavedTensors() as saved:
        output = function(*args)          # held: its graph keeps the saved tensors
    held = saved.held_bytes()
    del output
    return held
