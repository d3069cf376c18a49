"""A lesson's model, built once per build function and given back as built
on every use, so a widget's view does not rebuild it on each change. Keyed
weakly by the function object: an edited, re-run build function builds anew."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

import torch

Model = TypeVar("Model", bound=torch.nn.Module)


@dataclass(frozen=True)
class _AsBuilt:
    """A built model and what a use may change: requires_grad, buffers,
    training flags."""

    model: torch.nn.Module
    requires_grad: tuple[bool, ...]
    buffers: tuple[torch.Tensor, ...]
    training: tuple[bool, ...]

    def restored(self) -> torch.nn.Module:
        for parameter, flag in zip(self.model.parameters(), self.requires_grad, strict=True):
            parameter.requires_grad_(flag)
        with torch.no_grad():
            for buffer, value in zip(self.model.buffers(), self.buffers, strict=True):
                buffer.copy_(value)
        for module, training in zip(self.model.modules(), self.training, strict=True):
            module.training = training
        return self.model


# build function -> its model as built; the function is held weakly, so the entry goes with it.
_BUILT: weakref.WeakKeyDictionary[Callable[[], torch.nn.Module], _AsBuilt] = weakref.WeakKeyDictionary()


def as_built(build: Callable[[], Model]) -> Model:
    """`build()`'s model, built once for this function and given back as
    built on every later call."""
    found = _BUILT.get(build)
    if found is None:
        model = build()
        found = _BUILT[build] = _AsBuilt(model, tuple(p.requires_grad for p in model.parameters()),
                                         tuple(b.detach().clone() for b in model.buffers()),
                                         tuple(m.training for m in model.modules()))
    return cast(Model, found.restored())
