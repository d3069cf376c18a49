"""Describe the values a backward node saved (`_saved_*`) without side
effects: a value a saved-tensor hook packed is described from its packed form
and never unpacked, so drawing runs no user code and re-runs no checkpoint."""

import weakref
from dataclasses import dataclass
from typing import Any, TypeAlias

import torch
from torch.autograd.graph import Node

from .checkpoint_policy import checkpoint_text

MAX_TEXT = 60
MAX_LABEL = 100     # a node's name: torch's own reach 94 ("GeneratedBackwardFor_torch_nn__linear_cross_...")
CHECKPOINT = "torch.utils.checkpoint"
# (attribute, packed-form attribute, name) of one `_saved_*` value of a node class
SavedName: TypeAlias = tuple[str, str, str]


@dataclass(frozen=True)
class Saved:
    """One saved value: `name` without `_saved_`, a one-line `text`, and
    whether backward() freed it."""

    name: str
    text: str
    freed: bool = False


def shape_text(tensor: torch.Tensor) -> str:
    """"scalar", or "shape (3, 4)" (never a bare "3", which reads as a value);
    a tensor whose sizes cannot be read says so."""
    try:
        return one_line(f"shape {tuple(tensor.shape)}" if tensor.shape else "scalar")
    except RuntimeError:
        return "nested, sizes vary" if getattr(tensor, "is_nested", False) else "sizes unreadable"


def tensor_text(tensor: torch.Tensor) -> str:
    """"scalar tensor", or "tensor of shape (3, 4)"."""
    shape = shape_text(tensor)
    return "scalar tensor" if shape == "scalar" else f"tensor of {shape}"


def read_saved(fn: Node) -> tuple[Saved, ...]:
    """The saved values of a node (a slot holding None left out)."""
    found: list[Saved] = []
    for attr, raw_attr, name in _saved_names(type(fn)):
        try:
            raw = getattr(fn, raw_attr, None)
        except RuntimeError as err:                 # freed
            found.append(_unreadable(name, str(err)))
            continue
        found += _describe(fn, attr, name, raw)
    return tuple(found)


def _saved_names(node_type: type) -> tuple[SavedName, ...]:
    """(attribute, packed attribute, name) of each `_saved_*` value of a node
    class, sorted; found once per class (dir() is slow)."""
    names = _SAVED_NAMES.get(node_type)
    if names is None:
        attributes = dir(node_type)
        found = [(a, "_raw" + a, a.removeprefix("_saved_")) for a in attributes if a.startswith("_saved_")]
        if "saved_tensors" in attributes:           # a custom torch.autograd.Function
            found.append(("saved_tensors", "_raw_saved_tensors", "saved_tensors"))
        names = _SAVED_NAMES[node_type] = tuple(found)
    return names


# node class -> its _saved_names; weak, so a custom Function's class is freed with its cell
_SAVED_NAMES: weakref.WeakKeyDictionary[type, tuple[SavedName, ...]] = weakref.WeakKeyDictionary()

# A saved value where this torch's SavedTensor cannot tell whether a hook packed it (no
# `unpack_hook`): reading could run the learner's hook, so it is named, never read.
UNTOLD = "not read: this torch cannot read it without unpacking"
_NO_ANSWER = object()


def unpack_hook(raw: Any) -> Any:
    """The unpack hook of a packed saved value (None: none), or `_NO_ANSWER`
    where this torch's SavedTensor does not say."""
    return getattr(raw, "unpack_hook", _NO_ANSWER)


def _describe(fn: Node, attr: str, name: str, raw: Any) -> list[Saved]:
    raws = raw if isinstance(raw, (list, tuple)) else [raw]
    told = [unpack_hook(r) for r in raws if r is not None]
    if _NO_ANSWER in told:
        return [Saved(name, UNTOLD)]
    hooks = [hook for hook in told if hook]
    if hooks:
        if all(getattr(hook, "__module__", "") == CHECKPOINT for hook in hooks):
            return [Saved(name, checkpoint_text(fn, name, hooks[0]))]
        kinds = sorted({type(r.data).__name__ for r in raws if r is not None})
        return [Saved(name, one_line(f"packed by a saved-tensor hook (as {', '.join(kinds)})"))]
    try:
        value = getattr(fn, attr)                 # no hook: reading runs no user code
    except RuntimeError as err:
        return [_unreadable(name, str(err))]
    if value is None or (isinstance(value, tuple) and not value):
        return []
    return [Saved(name, value_text(value))]


def _unreadable(name: str, message: str) -> Saved:
    if "modified by an inplace operation" in message:
        versions = message.split("is at version ")[-1].split(";")[0] if "is at version" in message else "?"
        expected = message.split("expected version ")[-1].split(" ")[0] if "expected version" in message else "?"
        return Saved(name, f"modified in place since saved (version {expected} then, {versions} now)")
    freed = "freed" in message
    return Saved(name, "freed" if freed else "unreadable", freed)


def value_text(value: object) -> str:
    """A short, one-line, deterministic description of a saved value."""
    return one_line(_text(value))


def _text(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return tensor_text(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return str(value - 2**64 if value >= 2**63 else value)    # torch hands out -1 as 2**64 - 1
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, torch.Tensor) for v in value):
            shapes = [shape_text(v).removeprefix("shape ") for v in value]
            return f"{len(value)} tensors of shapes {', '.join(shapes)}" if len(value) > 1 else tensor_text(value[0])
        inner = ", ".join(_text(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    return type(value).__name__ if " at 0x" in repr(value) else repr(value)


def one_line(text: str, limit: int = MAX_TEXT) -> str:
    """`text` as one printable line of at most `limit` characters: whitespace
    runs become one space, unprintable characters their escapes (a control
    character makes `dot` fail), a longer text is cut with "…"."""
    text = " ".join(text.split())
    if not text.isprintable():
        text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


