"""The walk: breadth-first over `next_functions` with an explicit queue (no
recursion limit), in tuple order, so positions (and `graph.py`'s `n0, n1, ...`)
are the same in every process; and the cut to `max_nodes`.
Floor: the bottom of the graph floor; imports `arguments.py` only."""

from __future__ import annotations

import gc
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeAlias

import torch
from torch.autograd.graph import Node

from .arguments import Start

# A walk cut to max_nodes counts up to COUNTED times max_nodes nodes (at least
# COUNTED_AT_LEAST); past that, totals are lower bounds.
COUNTED, COUNTED_AT_LEAST = 10, 1_000
# Past SHALLOW_FROM nodes, stepped nodes hold their inputs (`hold`).
SHALLOW_FROM = 1_000
HELD = "helpers: inputs held so that freeing this graph stays shallow"
Item: TypeAlias = torch.Tensor | Node | None
Link: TypeAlias = tuple[int, int, int, int]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector during a walk, whose hundreds of thousands of
    objects make no cycles (its passes would take half a 200,000-node walk's time)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def nearest(walker: Walker, limit: int) -> Sequence[int]:
    """Up to `limit` positions in walk order (nearest the outputs first), at
    most limit // 8 (at least 8) at one depth, constants not held to that; a
    position is kept only if a consumer of it was, so every kept node leads to an
    output. The walk goes no further than the last kept position."""
    items, links = walker.items, walker.links
    walker.run(limit + 1)
    if len(items) <= limit:
        return range(len(items))
    depth: dict[int, int] = {}
    per_depth: Counter[int] = Counter()
    kept: list[int] = []
    reached: set[int] = set()
    row_limit, position, next_link, placed = max(8, limit // 8), 0, 0, 0
    while len(kept) < limit and walker.through(position):
        for s, d, _, _ in links[placed:]:      # links come in walk order: d is placed before s
            depth.setdefault(s, depth.get(d, 0) + 1)
        level, start, placed = depth.get(position, 0), next_link, len(links)
        while next_link < len(links) and links[next_link][1] == position:   # links grouped by dst, in order
            next_link += 1
        if (not level or position in reached) and (items[position] is None or per_depth[level] < row_limit):
            per_depth[level] += 1
            kept.append(position)
            reached.update(s for s, *_ in links[start:next_link])
        position += 1
    return kept


class Walker:
    """A breadth-first walk that goes only as far as it is asked: `items`
    (tensors, autograd nodes, None for constants) and `links` (src, dst, slot,
    output_nr), grouped by dst in walk order."""

    def __init__(self, starts: Sequence[Start]) -> None:
        self.items: list[Item] = []
        self.links: list[Link] = []
        self.index: dict[Node, int] = {}
        self.queue: deque[int] = deque()          # positions met and not yet stepped, in walk order
        # nodes stepped with their inputs, to hold once past SHALLOW_FROM nodes; from then on each holds at once
        self.stepped: list[tuple[Node, tuple[tuple[Node | None, int], ...]]] = []
        self.holding = False
        self.leaf_roots: dict[int, int] = {}     # a leaf passed as a root is one node with its AccumulateGrad
        outputs = [s for s in starts if isinstance(s, torch.Tensor)]
        for tensor in outputs:
            if tensor.grad_fn is None:
                self.leaf_roots[id(tensor)] = len(self.items)
            self.items.append(tensor)
        for pos, tensor in enumerate(outputs):
            if tensor.grad_fn is not None:
                self.links.append((self.visit(tensor.grad_fn), pos, 0, tensor.output_nr))
        for start in starts:
            if not isinstance(start, torch.Tensor):
                self.visit(start)

    def visit(self, fn: Node) -> int:
        """The position of `fn`, queued when met first, or a leaf root's for
        the AccumulateGrad of a leaf passed as a root."""
        position = self.index.get(fn)
        if position is None:
            if self.leaf_roots and type(fn) is _ACCUMULATE_GRAD:
                position = self.leaf_roots.get(id(fn.variable))  # type: ignore[attr-defined]
            if position is None:
                position = len(self.items)
                self.items.append(fn)
                self.queue.append(position)
            self.index[fn] = position
        return position

    def steps(self, until: int | None = None, through: int | None = None) -> None:
        """Step queued nodes in walk order while fewer than `until` positions are
        met and, with `through`, the next node is at most `through` (or it is not met
        yet)."""
        items, links, queue = self.items, self.links, self.queue
        while queue:
            met = len(items)
            if (until is not None and met >= until) or (through is not None and through < met and queue[0] > through):
                break
            dst = queue.popleft()
            fn: Node = items[dst]                   # type: ignore[assignment]  # the queue holds nodes only
            inputs = fn.next_functions
            if self.holding:
                hold(fn, inputs)
            else:
                self.stepped.append((fn, inputs))
            for slot, (child, output_nr) in enumerate(inputs):
                if child is None:
                    links.append((len(items), dst, slot, output_nr))
                    items.append(None)
                else:
                    links.append((self.visit(child), dst, slot, output_nr))
            if not self.holding and len(items) > SHALLOW_FROM:
                for held in self.stepped:
                    hold(*held)
                self.stepped.clear()
                self.holding = True

    def through(self, position: int) -> bool:
        """Walk until every node up to `position` has its links; False when
        there is no such position."""
        self.steps(through=position)
        return position < len(self.items)

    def run(self, until: int | None = None) -> bool:
        """Walk to the end, or until `until` nodes are met; True when the
        graph has more."""
        self.steps(until=until)
        return bool(self.queue)


def walk_for(starts: Sequence[Start], limit: int | None) -> tuple[Walker, Sequence[int], bool]:
    """(walker, kept positions, more): the walk for a drawing of at most
    `limit` nodes (None: all); `more` is True when counting stopped at
    `count_limit(limit)`, before the end of the graph."""
    walker = Walker(starts)
    if limit is None:
        walker.run()
        return walker, range(len(walker.items)), False
    kept = nearest(walker, limit)
    return walker, kept, walker.run(count_limit(limit))


def count_limit(limit: int) -> int:
    """How many nodes a walk cut to `limit` counts: exact totals on a lesson's
    graphs, and a bounded cost at any size."""
    return max(COUNTED_AT_LEAST, COUNTED * limit)


def hold(fn: Node, inputs: tuple[tuple[Node | None, int], ...]) -> None:
    """Keep freeing a big walked graph shallow: past SHALLOW_FROM nodes, every
    stepped node holds its inputs' wrappers (as `next_functions` gave them) in its
    `metadata`; small walks (every lesson graph) leave `metadata` as it was.

    Why: reading `next_functions` makes each input's Python wrapper owned by its
    C++ node. Freed later, node after node frees its input's wrapper from inside
    the previous dealloc, one C stack frame set per node: a chain some 30,000
    deep overflows an 8 MB stack. Held in a dict's tuple, the wrappers are freed
    under CPython's trashcan, which defers nesting past 50 deallocs."""
    if not inputs:
        return
    try:                                        # noqa: SIM105  # suppress(...) takes three times as long
        fn.metadata[HELD] = inputs              # type: ignore[index]  # a property; the stubs call it a method
    except (RuntimeError, AttributeError):      # a node without metadata: nothing to hold it in
        pass


def leaf_variable(fn: Node) -> torch.Tensor | None:
    """The leaf of an `AccumulateGrad` node, else None (told by the node's
    type, not an attribute a custom Function's ctx could also have)."""
    return fn.variable if type(fn) is _ACCUMULATE_GRAD else None  # type: ignore[attr-defined]


# AccumulateGrad's class is missing from the type stubs of torch 2.13 (2.14 has it).
_ACCUMULATE_GRAD: type = torch._C._functions.AccumulateGrad  # type: ignore[attr-defined, unused-ignore]
