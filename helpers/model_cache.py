"""A lesson's model, built once per build function and given back as built
on every use, so a widget's view does not rebuild it on each change. Keyed
weakly by the function object: an edited, re-run build function builds anew."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar, cast

import torch

Model = TypeVar("Model", bound=torch.nn.Module)

# build function -> its model and what a use may change (requires_grad, buffers, training flags) as built;
# the function is held weakly, so the entry goes with it.
_BUILT: weakref.WeakKeyDictionary[Callable[[], torch.nn.Module], tuple[Any, ...]] = weakref.WeakKeyDictionary()


def as_built(build: Callable[[], Model]) -> Model:
    """`build()`'s model, built once for this function and given back as
    built on every later call."""
    if build not in _BUILT:
        model = build()
        _BUILT[build] = (model, [(p, p.requires_grad) for p in model.parameters()],
                         [(b, b.detach().clone()) for b in model.buffers()], [(m, m.training) for m in model.modules()])
    model, flags, buffers, modes = _BUILT[build]
    for parameter, flag in flags:
        parameter.requires_grad_(flag)
    with torch.no_grad():
        for buffer, value in buffers:
            buffer.copy_(value)
    for module, training in modes:
        module.training = training
    return cast(Model, model)
