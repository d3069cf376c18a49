"""Read the values a backward node saved for later (`_saved_*`), noting
which ones `backward()` has freed."""

import re
from dataclasses import dataclass

import torch

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class Saved:
    """One saved value: `name` without the `_saved_` prefix, a short `text`
    ("tensor of shape (3, 3)", "2", "freed"), and whether backward() freed it."""

    name: str
    text: str
    freed: bool = False


def shape_text(tensor):
    """"scalar" for a 0-d tensor, else its shape as Python writes a tuple:
    "shape (3,)", "shape (3, 4)" (never a bare "3", which reads as a value)."""
    return "scalar" if tensor.dim() == 0 else f"shape {tuple(tensor.shape)}"


def _sizes(tensor):
    return str(tuple(tensor.shape))


def saved_values(fn):
    """The `Saved` values of one backward node, sorted by name.

    A saved slot holding None (nothing was needed) is left out. Custom
    `torch.autograd.Function` nodes report their `saved_tensors`."""
    found = []
    for attr in dir(fn):
        if attr.startswith("_saved_"):
            found.extend(_read(fn, attr, attr.removeprefix("_saved_")))
    if "saved_tensors" in dir(fn):
        found.extend(_read(fn, "saved_tensors", "saved_tensors"))
    return tuple(found)


def _read(fn, attr, name):
    try:
        value = getattr(fn, attr)
    except RuntimeError as err:
        freed = "freed" in str(err)
        return [Saved(name, "freed" if freed else "unreadable", freed)]
    if value is None:
        return []
    return [Saved(name, value_text(value))]


def tensor_text(tensor):
    """"scalar tensor", or "tensor of shape (3, 4)"."""
    return "scalar tensor" if tensor.dim() == 0 else f"tensor of shape {_sizes(tensor)}"


def value_text(value):
    """A short, deterministic description of a saved value."""
    if isinstance(value, torch.Tensor):
        return tensor_text(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return "tensors of shapes " + ", ".join(_sizes(v) for v in value)
    text = ADDRESS.sub("", repr(value))
    return text if len(text) <= 24 else text[:23] + "…"
