"""What an activation checkpoint keeps, read without unpacking anything.

`torch.utils.checkpoint.checkpoint(..., use_reentrant=False)` packs every
value a node saves with its own saved-tensor hook and recomputes it in
backward; with a selective policy (`create_selective_checkpoint_contexts`)
the outputs of the operations the policy saves are kept instead, in a store
the checkpoint's recomputation reads from (one entry per call of each
operation). A saved value is labelled from that store: the entries of the
operation that produced it (the node itself for `result`, else the input
the value is) say whether it is kept, recomputed, or (when the policy chose
per call, or the producer is not known to be in the same checkpoint) either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from torch.autograd.graph import Node
from torch.utils import checkpoint

RECOMPUTED = "not kept: recomputed in backward (checkpoint)"
KEPT = "kept: the checkpoint's policy saved it"
EITHER = "kept or recomputed, as the checkpoint's policy chose per call"
LEAF = "not recomputed: a leaf, read again in backward"


def checkpoint_text(fn: Node, name: str, hook: Any) -> str:
    """The label of saved value `name` of `fn`, packed by checkpoint's `hook`."""
    frame = _cell(hook, "_CheckpointFrame")
    store = _store(frame)
    if store is None:                              # no policy: everything is recomputed
        return RECOMPUTED
    if re.fullmatch(r"result\d*", name):
        return _verdict(_entries(fn, store))
    producer = _producer(fn, name, store)
    if producer is not None and producer.name() == "torch::autograd::AccumulateGrad":
        return LEAF
    if producer is None or _frame_of(producer) is not frame:
        return EITHER
    return _verdict(_entries(producer, store))


def _verdict(entries: list[object]) -> str:
    kept = {entry is not checkpoint._RECOMPUTE for entry in entries}
    return EITHER if len(kept) != 1 else KEPT if kept == {True} else RECOMPUTED


def _cell(function: Any, kind: str) -> Any:
    """The object of checkpoint's class `kind` that `function` closes over, or None."""
    wanted = getattr(checkpoint, kind)
    for cell in getattr(function, "__closure__", None) or ():
        try:
            if isinstance(cell.cell_contents, wanted):
                return cell.cell_contents
        except ValueError:                         # a cell not filled yet
            continue
    return None


def _store(frame: Any) -> Mapping[Any, Mapping[int, object]] | None:
    """The selective policy's store of kept outputs, or None (plain checkpoint)."""
    recompute = getattr(frame, "recompute_fn", None)
    store = getattr(_cell(recompute, "_CachedTorchDispatchMode"), "storage", None)
    return store if isinstance(store, Mapping) else None


def _frame_of(fn: Node) -> Any:
    """The checkpoint frame whose hook packed one of `fn`'s saved values, or None."""
    for attribute in dir(type(fn)):
        if attribute.startswith("_raw_saved_"):
            raw = getattr(fn, attribute, None)
            frame = _cell(getattr(raw, "unpack_hook", None), "_CheckpointFrame")
            if frame is not None:
                return frame
    return None


def _operations(fn: Node, store: Mapping[Any, Any]) -> list[Any]:
    """The store's operations (OpOverloads) that a node of this name records."""
    base = re.sub(r"Backward\d*$", "", fn.name().removeprefix("torch::autograd::")).lower()
    return [op for op in store if _plain(getattr(getattr(op, "_schema", None), "name", "")) == base]


def _plain(schema_name: str) -> str:
    return schema_name.split("::")[-1].replace("_", "").lower()


def _entries(fn: Node, store: Mapping[Any, Mapping[int, object]]) -> list[object]:
    return [entry for op in _operations(fn, store) for entry in store[op].values()]


def _producer(fn: Node, name: str, store: Mapping[Any, Any]) -> Node | None:
    """The node that made input `name` of `fn` (AccumulateGrad for a leaf), found
    from the operation's schema: its tensor arguments, in order, are the
    entries of `next_functions`. None when that cannot be told."""
    operations = _operations(fn, store)
    if len({str(op._schema) for op in operations}) != 1:
        return None
    arguments = operations[0]._schema.arguments
    tensors = [a.name for a in arguments if str(a.type) in ("Tensor", "Optional[Tensor]")]
    if name not in tensors or len(tensors) != len(fn.next_functions):
        return None
    child: Node | None = fn.next_functions[tensors.index(name)][0]
    return child
