"""A lesson's model, built once per build function and given back as built
on every use: a widget's view (`views.freeze_view`, `views.mode_view`) then
runs the model on each change without building it again (a build seeds the
random generator and initialises every layer: most of a small view's time).

The function stays the one source: the cache holds it weakly and is keyed by
the function object, so a learner who edits the function and runs its cell
again has a new function, and a panel made with it builds the new model."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

import torch

Model = TypeVar("Model", bound=torch.nn.Module)


@dataclass(frozen=True)
class _AsBuilt:
    """A built model and what a use may change: each parameter's
    requires_grad, each buffer's values (BatchNorm's running statistics),
    each module's training flag."""

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
    """`build()`'s model, built on the first call for this function and
    given back as it was built on every later one (parameters' requires_grad,
    buffers, train or eval), so each use is as if it were new. A callable
    that cannot be held weakly is built on every call."""
    found = _BUILT.get(build) if _weakly_held(build) else None
    if found is None:
        model = build()
        found = _AsBuilt(model, tuple(p.requires_grad for p in model.parameters()),
                         tuple(b.detach().clone() for b in model.buffers()), tuple(m.training for m in model.modules()))
        if _weakly_held(build):
            _BUILT[build] = found
    return cast(Model, found.restored())


def _weakly_held(build: object) -> bool:
    try:
        weakref.ref(build)
    except TypeError:
        return False
    return True
