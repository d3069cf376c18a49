"""What an activation checkpoint keeps, read without unpacking anything.

`checkpoint(..., use_reentrant=False)` packs every saved value with its own
hook and re-runs the function in backward; a selective policy keeps the
outputs of the operations it saves in a store the re-run reads. A leaf and
the checkpoint's own inputs are read again, not recomputed; a view of one made
inside (`weight.t()`) is recomputed, but a view node does not tell where it
ran, so its label names both. A value's producer is found from the
operation's schema (its tensor arguments are `next_functions`' entries, in
order); where that cannot be told, the label says what it could be."""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Mapping
from typing import Any

import torch
from torch.autograd.graph import Node
from torch.utils import checkpoint

# Each label is a saved value's text: at most saved_values.MAX_TEXT (60) characters.
RECOMPUTED = "not kept: recomputed in backward (checkpoint)"
KEPT = "kept: the checkpoint's policy saved it"
EITHER = "kept or recomputed, as the policy chose per call"
LEAF = "not recomputed: a leaf, read again in backward"
LEAF_VIEW = "view of a leaf: recomputed if made inside, else read again"
INPUT = "not recomputed: an input the checkpoint keeps"
INPUT_VIEW = "view of an input: recomputed if made inside, else read again"
NO_GRAD = "needs no grad: read again, or recomputed if made inside"
NO_GRAD_POLICY = "needs no grad: read again, or per the policy if made inside"
OUTSIDE = "not recomputed: made before the checkpoint, read again"
UNKNOWN = "recomputed in backward, or read again if made outside"
UNKNOWN_POLICY = "kept or recomputed (policy), or read again if made outside"
_NO_EDGE = -1                                     # an input autograd does not differentiate: no next_functions entry

_ACCUMULATE = "torch::autograd::AccumulateGrad"
_MAX_VIEWS = 32                                   # views followed back to what they view
# nodes of operations that return a view although their schema does not say so
_VIEWS = frozenset({"UnsafeViewBackward0", "ReshapeAliasBackward0"})


def checkpoint_text(fn: Node, name: str, hook: Any) -> str:
    """The label of saved value `name` of `fn`, packed by checkpoint's `hook`."""
    frame = _cell(hook, "_CheckpointFrame")
    store = _store(frame)
    if re.fullmatch(r"result\d*", name) or _is_output(_base(fn.name()), name):   # an output of fn, which ran in it
        return RECOMPUTED if store is None else _verdict(fn, store)
    known, edge = _producer(fn, name)
    if not known:                                 # which input it is cannot be told
        return UNKNOWN if store is None else UNKNOWN_POLICY
    if edge is None:                              # no grad_fn: a tensor that needs no grad
        return NO_GRAD if store is None else NO_GRAD_POLICY
    inputs = _inputs(frame)
    if edge in inputs:                            # the checkpoint's input itself, a view passed in included
        return INPUT
    (node, output), viewed = _through_views(edge)
    if node.name() == _ACCUMULATE:
        return LEAF_VIEW if viewed else LEAF
    if (node, output) in inputs:
        return INPUT_VIEW
    where = _where(node, frame)
    if where == "outside":                        # a tensor the function read from outside (a closure's)
        return OUTSIDE
    if store is None:
        return RECOMPUTED
    if where is None:
        return EITHER
    return _verdict(node, store)


def _verdict(fn: Node, store: Mapping[Any, Mapping[int, object]]) -> str:
    """What the policy's store holds for the calls of `fn`'s operation: kept, recomputed, or either."""
    base = _base(fn.name())
    kept = {entry is not checkpoint._RECOMPUTE for op, entries in store.items()
            if _plain(getattr(getattr(op, "_schema", None), "name", "")) == base for entry in entries.values()}
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


def _inputs(frame: Any) -> set[tuple[Node, int]]:
    """(grad_fn, output number) of each tensor input of the checkpoint with a
    grad_fn (held without a hook: reading `.data` runs nothing)."""
    found = set()
    for saved in getattr(frame, "saved_args", None) or ():
        if isinstance(saved, torch._C._autograd.SavedTensor) and getattr(saved, "unpack_hook", False) is None:
            try:
                tensor = saved.data                                                        # type: ignore[attr-defined]
            except (RuntimeError, AttributeError):  # released (or a torch that does not say): it names no input
                continue
            if isinstance(tensor, torch.Tensor) and tensor.grad_fn is not None:
                found.add((tensor.grad_fn, tensor.output_nr))
    return found


def _where(fn: Node, frame: Any) -> str | None:
    """"inside" when `frame`'s hook packed one of `fn`'s saved values,
    "outside" when none did, None when fn saved nothing to tell by."""
    saw_other = False
    for attribute in _raw_names(type(fn)):
        try:
            raws = getattr(fn, attribute, None)
        except RuntimeError:                      # freed by backward
            continue
        for raw in raws if isinstance(raws, (list, tuple)) else (raws,):
            if not isinstance(raw, torch._C._autograd.SavedTensor):
                continue
            hook = getattr(raw, "unpack_hook", None)     # a torch whose SavedTensor does not say: tells nothing
            if hook is not None and _cell(hook, "_CheckpointFrame") is frame:
                return "inside"
            saw_other = saw_other or hook is not None or not _wrapped_number(raw)
    return "outside" if saw_other else None


def _wrapped_number(raw: Any) -> bool:
    """Whether a value saved without a hook tells nothing of where its node
    ran: an empty slot, or maybe a Python number (the 2 in `a * 2`), which
    autograd saves without the hook even inside the checkpoint."""
    try:
        data = raw.data
    except (RuntimeError, AttributeError):        # released, or a torch whose SavedTensor does not say
        return True
    return not isinstance(data, torch.Tensor) or (data.dim() == 0 and not data.requires_grad)


def _raw_names(node_type: type) -> tuple[str, ...]:
    names = _RAW_NAMES.get(node_type)
    if names is None:
        names = _RAW_NAMES[node_type] = tuple(a for a in dir(node_type) if a.startswith("_raw_saved_"))
    return names


# node class -> its _raw_names, holding the class weakly (a custom Function's class goes with its cell)
_RAW_NAMES: weakref.WeakKeyDictionary[type, tuple[str, ...]] = weakref.WeakKeyDictionary()


@functools.lru_cache(maxsize=1024)
def _base(node_name: str) -> str:
    """The operation a node records, as `_plain` writes it: "mm"."""
    return re.sub(r"Backward\d*$", "", node_name.removeprefix("torch::autograd::")).lower()


def _plain(schema_name: str) -> str:
    return schema_name.split("::")[-1].replace("_", "").lower()


@functools.lru_cache(maxsize=1024)                # keyed by strings: holds no node
def _schemas(base: str) -> tuple[Any, ...]:
    """The schemas of the aten operations named `base` (as `_plain` writes
    it) that write none of their arguments."""
    found = []
    for qualified in _operator_names().get(base, ()):
        for schema in torch._C._jit_get_schemas_for_operator(qualified):
            if not any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments):
                found.append(schema)
    return tuple(found)


@functools.cache
def _operator_names() -> Mapping[str, tuple[str, ...]]:
    found: dict[str, set[str]] = {}
    for name in torch._C._dispatch_get_all_op_names():
        if name.startswith("aten::"):
            qualified = name.split(".")[0]
            found.setdefault(_plain(qualified), set()).add(qualified)
    return {plain: tuple(sorted(names)) for plain, names in found.items()}


def _producer(fn: Node, name: str) -> tuple[bool, tuple[Node, int] | None]:
    """(True, the `next_functions` entry of input `name`, None without a
    grad_fn), or (False, None) when the schemas cannot tell."""
    place = _place(_base(fn.name()), name, len(fn.next_functions))
    if place is None:
        return False, None
    if place == _NO_EDGE:
        return True, None
    node, output = fn.next_functions[place]
    return True, None if node is None else (node, output)


@functools.lru_cache(maxsize=4096)
def _place(base: str, name: str, inputs: int) -> int | None:
    """Input `name`'s entry in `next_functions`: its place among the schema's
    tensor arguments; `_NO_EDGE` for trailing optional tensors autograd takes no
    gradient for (batch norm's running_mean); None when no single place fits."""
    places = set()
    for schema in _schemas(base):
        arguments = [(a.name, str(a.type)) for a in schema.arguments if str(a.type) in ("Tensor", "Optional[Tensor]")]
        tensors = [argument for argument, _ in arguments]
        if name not in tensors:
            continue
        if len(tensors) == inputs:
            places.add(tensors.index(name))
        elif len(tensors) > inputs and all(kind == "Optional[Tensor]" for _, kind in arguments[inputs:]):
            places.add(tensors.index(name) if tensors.index(name) < inputs else _NO_EDGE)
    return places.pop() if len(places) == 1 else None


@functools.lru_cache(maxsize=4096)
def _is_output(base: str, name: str) -> bool:
    """Whether `name` is an output the schema names and none of its inputs
    (scaled_dot_product_attention's `logsumexp`)."""
    schemas = _schemas(base)
    return any(name in [r.name for r in s.returns] for s in schemas) and \
        not any(name in [a.name for a in s.arguments] for s in schemas)


@functools.lru_cache(maxsize=1024)
def _is_view(node_name: str) -> bool:
    """Whether this node's operation returns a view of its first input."""
    if node_name in _VIEWS:
        return True
    schemas = _schemas(_base(node_name))
    return bool(schemas) and all(
        bool(s.returns) and s.returns[0].alias_info is not None and bool(s.arguments)
        and s.arguments[0].alias_info is not None for s in schemas)


def _through_views(edge: tuple[Node, int]) -> tuple[tuple[Node, int], bool]:
    """The entry a chain of views views, and whether there was a view."""
    viewed = False
    for _ in range(_MAX_VIEWS):
        node = edge[0]
        viewed_node, output = node.next_functions[0] if node.next_functions else (None, 0)
        if viewed_node is None or not _is_view(node.name()):
            break
        edge, viewed = (viewed_node, output), True
    return edge, viewed
