"""The walk itself: breadth-first over `next_functions` with an explicit queue
(no recursion limit), in tuple order, so the positions it gives (and the
`n0, n1, ...` numbering `graph.py` makes of them) are the same in every
process for the same computation; and the cut to `max_nodes`.
"""

import gc
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeAlias

import torch
from torch.autograd.graph import Node

from .arguments import Start

# What a walk meets: a tensor (an output or a leaf root), an autograd node, or
# None (a constant); links are (src, dst, slot, output_nr) positions in walk order.
Item: TypeAlias = torch.Tensor | Node | None
Link: TypeAlias = tuple[int, int, int, int]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a walk makes hundreds of
    thousands of small objects, none of them in a cycle: otherwise its passes
    over the growing heap take about half the time of a 200,000-node walk."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@contextmanager
def no_torch_function() -> Iterator[None]:
    """Read tensors without running user code: a tensor subclass's
    `__torch_function__` (fastai's, torchvision's tv_tensors') is otherwise
    called on every attribute read (`.grad_fn`, `.shape`, ...)."""
    with torch._C.DisableTorchFunctionSubclass():
        yield


def nearest(items: Sequence[Item], links: Sequence[Link], limit: int) -> Sequence[int]:
    """Up to `limit` positions in walk order (nearest the outputs first), at
    most limit // 8 (at least 8) at any one depth; constants, which lead
    nowhere, are not held to that. A position is kept only when one of its
    consumers was kept before it (or it has none: a start), so every kept
    node leads to an output through kept nodes."""
    if limit >= len(items):
        return range(len(items))
    depth: dict[int, int] = {}
    for s, d, _, _ in links:             # links come in walk order: d is placed before s
        depth.setdefault(s, depth.get(d, 0) + 1)
    per_depth: Counter[int] = Counter()
    row_limit, kept, next_link = max(8, limit // 8), [], 0
    reached: set[int] = set()
    for position, item in enumerate(items):
        level = depth.get(position, 0)
        start = next_link
        while next_link < len(links) and links[next_link][1] == position:   # links grouped by dst, in order
            next_link += 1
        if (level and position not in reached) or (item is not None and per_depth[level] >= row_limit):
            continue
        per_depth[level] += 1
        kept.append(position)
        reached.update(s for s, *_ in links[start:next_link])
        if len(kept) == limit:
            break
    return kept


def walk(starts: Sequence[Start]) -> tuple[list[Item], list[Link]]:
    """Breadth-first walk. Returns (items, links): items are tensors (outputs
    and leaf roots), autograd nodes, or `None` for constants; links are
    (src, dst, slot, output_nr) index tuples."""
    items: list[Item] = []
    index: dict[Node, int] = {}
    links: list[Link] = []
    queue: deque[Node] = deque()
    leaf_roots: dict[int, int] = {}      # a leaf passed as a root is one node with its AccumulateGrad

    def visit(fn: Node) -> int:
        if fn not in index:
            variable = leaf_variable(fn)
            position = None if variable is None else leaf_roots.get(id(variable))
            index[fn] = len(items) if position is None else position
            if position is None:
                items.append(fn)
                queue.append(fn)
        return index[fn]

    outputs = [s for s in starts if isinstance(s, torch.Tensor)]
    for tensor in outputs:
        if tensor.grad_fn is None:
            leaf_roots[id(tensor)] = len(items)
        items.append(tensor)
    for pos, tensor in enumerate(outputs):
        if tensor.grad_fn is not None:
            links.append((visit(tensor.grad_fn), pos, 0, tensor.output_nr))
    for start in starts:
        if not isinstance(start, torch.Tensor):
            visit(start)
    while queue:
        fn = queue.popleft()
        for slot, (child, output_nr) in enumerate(fn.next_functions):
            if child is None:
                items.append(None)
                links.append((len(items) - 1, index[fn], slot, output_nr))
            else:
                links.append((visit(child), index[fn], slot, output_nr))
    return items, links


def leaf_variable(fn: Node) -> torch.Tensor | None:
    """The leaf tensor of an `AccumulateGrad` node, or None for any other
    node (told by what the node is, not by an attribute a custom Function's
    ctx could also have)."""
    return fn.variable if type(fn) is _ACCUMULATE_GRAD else None  # type: ignore[attr-defined]


# AccumulateGrad's class is missing from torch's type stubs.
_ACCUMULATE_GRAD: type = torch._C._functions.AccumulateGrad  # type: ignore[attr-defined]
