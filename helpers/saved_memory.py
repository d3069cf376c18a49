"""Count the tensors autograd saves for backward, and the bytes of them that
graphs still hold, with `torch.autograd.graph.saved_tensors_hooks`.

    with SavedTensors() as saved:
        loss = model(x).sum()        # every tensor saved here is counted
    saved.held_bytes()               # bytes still held by a graph: drops to 0 after backward()

The hooks are active only inside the `with` block; what was saved there
stays counted until the graph that holds it frees it. Like any saved-tensor
hook, they turn off backward's version check for what they pack: a tensor
saved inside and changed in place afterwards is used as it is then, with no
error (the hooks keep its memory, not a copy).
"""

import weakref
from collections.abc import Callable
from typing import Any, Literal

import torch


class _Packed:
    """What autograd stores in place of a saved tensor while we count: it
    lives exactly as long as the graph keeps the saved tensor. It holds a
    detached alias (same storage, no grad_fn), so that a saved output does
    not point back at its own graph; autograd reattaches the graph edge
    itself when it unpacks."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


class SavedTensors:
    """A context manager that counts what autograd saves inside it.

    saved_count   tensors saved so far (ever)
    held_count()  of those, how many a graph still holds
    held_bytes()  the bytes of storage they keep alive (each storage once;
                  a parameter saved by several nodes counts once)
    peak_bytes    the most bytes held at once, as seen at each save
    """

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
