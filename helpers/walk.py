"""The walk itself: breadth-first over `next_functions` with an explicit queue
(no recursion limit), in tuple order, so the positions it gives (and the
`n0, n1, ...` numbering `graph.py` makes of them) are the same in every
process for the same computation; and the cut to `max_nodes`.

Floor: the bottom of the graph floor, under `graph.py`. It imports
`arguments.py` only; never a drawing module.
"""

from __future__ import annotations

import gc
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeAlias

import torch
from torch.autograd.graph import Node

from .arguments import Start

# A walk cut to max_nodes counts the whole graph up to COUNTED times max_nodes nodes
# (at least COUNTED_AT_LEAST); past that it stops, and totals are lower bounds.
COUNTED, COUNTED_AT_LEAST = 10, 1_000
# A walk that met more than SHALLOW_FROM nodes leaves nodes it stepped owning their
# inputs' Python wrappers (`hold_inputs`), so freeing the graph later stays shallow: one
# on every path at least every HOLD_EVERY nodes, or every node stepped by a walk cut short.
SHALLOW_FROM = 1_000
HOLD_EVERY = 16
HELD = "helpers: inputs held so that freeing this graph stays shallow"
# A paused collector hands what was made to its oldest generation only past this many new objects.
PROMOTE_FROM = 100_000
# What a walk meets: a tensor (an output or a leaf root), an autograd node, or
# None (a constant); links are (src, dst, slot, output_nr) positions in walk order.
Item: TypeAlias = torch.Tensor | Node | None
Link: TypeAlias = tuple[int, int, int, int]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a walk makes hundreds of
    thousands of small objects, none of them in a cycle: otherwise its passes
    over the growing heap take about half the time of a 200,000-node walk.

    On the way out, what the collector would look at first (everything made
    since its last pass: the walk's objects, mostly) goes straight into its
    oldest generation, which `gc.freeze()` then `gc.unfreeze()` do without
    looking at any object. Otherwise the first allocation after the walk
    starts a pass over all of them (0.3 to 0.5 s after a 200,000-node walk),
    and the next a second one, before they reach that generation anyway. A
    cycle made just before the walk is then collected by the next full pass
    rather than the next young one, so this is done only after a big walk
    (more than PROMOTE_FROM objects made: not after a widget's redraw of a
    small graph), and not when the program has frozen objects of its own
    (`gc.get_freeze_count()`), which unfreezing would release.

    After a smaller walk, a young pass (`gc.collect(0)`) runs on the way out,
    as the first allocation after it would, but never a full one: a program
    that has just built a long graph (100,000 steps: 100,000 live tensors)
    owes a full pass, which that first allocation would run, inside the
    drawing (0.1 s, against a 300-node drawing's 10 ms). It runs at the
    program's own next allocations instead."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            if gc.get_count()[0] > PROMOTE_FROM and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            else:
                gc.collect(0)
            gc.enable()


@contextmanager
def no_torch_function() -> Iterator[None]:
    """Read tensors without running user code: a tensor subclass's
    `__torch_function__` (fastai's, torchvision's tv_tensors') is otherwise
    called on every attribute read (`.grad_fn`, `.shape`, ...)."""
    with torch._C.DisableTorchFunctionSubclass():
        yield


def nearest(walker: Walker, limit: int) -> Sequence[int]:
    """Up to `limit` positions in walk order (nearest the outputs first), at
    most limit // 8 (at least 8) at any one depth; constants, which lead
    nowhere, are not held to that. A position is kept only when one of its
    consumers was kept before it (or it has none: a start), so every kept
    node leads to an output through kept nodes. A graph of at most `limit`
    nodes is kept whole; otherwise the walk goes only as far as the last
    kept position: what lies beyond, it never walks."""
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
    are tensors (outputs and leaf roots), autograd nodes, or `None` for
    constants; `links` are (src, dst, slot, output_nr) index tuples, grouped
    by dst in walk order. A node's links exist once it has been taken from
    the queue, which happens in walk order."""

    def __init__(self, starts: Sequence[Start]) -> None:
        self.items: list[Item] = []
        self.links: list[Link] = []
        self.index: dict[Node, int] = {}
        self.queue: deque[int] = deque()          # positions of nodes met and not yet stepped, in walk order
        # per position: for a node, the most nodes holding nothing on a path met so far from a start
        # or a holding node down to it, itself included (`hold_inputs`); 0 for a node that holds its
        # inputs, a tensor or a constant
        self.runs: list[int] = []
        self.stepped: list[tuple[Node, tuple[tuple[Node | None, int], ...]]] = []   # to hold, once past SHALLOW_FROM
        self.holding = False                      # past SHALLOW_FROM nodes: a node chosen to hold does so at once
        # in a walk bounded by `until` or `through` (one that may be cut short): each stepped node's
        # position and inputs, so that `hold_every_stepped` need not read them again
        self.read: list[tuple[int, tuple[tuple[Node | None, int], ...]]] = []
        self.leaf_roots: dict[int, int] = {}     # a leaf passed as a root is one node with its AccumulateGrad
        outputs = [s for s in starts if isinstance(s, torch.Tensor)]
        for tensor in outputs:
            if tensor.grad_fn is None:
                self.leaf_roots[id(tensor)] = len(self.items)
            self.items.append(tensor)
            self.runs.append(0)
        for pos, tensor in enumerate(outputs):
            if tensor.grad_fn is not None:
                self.links.append((self.visit(tensor.grad_fn), pos, 0, tensor.output_nr))
        for start in starts:
            if not isinstance(start, torch.Tensor):
                self.visit(start)

    def visit(self, fn: Node) -> int:
        position = self.index.get(fn)
        return self.meet(fn) if position is None else position

    def meet(self, fn: Node, run: int = 1) -> int:
        """The position of a node not met before: a new one (queued), at the
        end of a run of `run` nodes holding nothing, or a leaf root's for the
        AccumulateGrad of a leaf passed as a root."""
        position = None
        if self.leaf_roots and type(fn) is _ACCUMULATE_GRAD:
            position = self.leaf_roots.get(id(fn.variable))  # type: ignore[attr-defined]
        if position is None:
            position = len(self.items)
            self.items.append(fn)
            self.runs.append(run)
            self.queue.append(position)
        self.index[fn] = position
        return position

    def steps(self, until: int | None = None, through: int | None = None) -> None:
        """Take nodes from the queue, in walk order, and meet their inputs,
        while the queue has some, fewer than `until` positions are met
        (None: no bound), and, with `through`, the next node's position is at
        most `through` (or `through` is not met yet). One loop does it all, with
        `meet` written out in it: a 200,000-node walk steps every node here."""
        items, links, index, runs, queue, leaf_roots = (
            self.items, self.links, self.index, self.runs, self.queue, self.leaf_roots)
        take, link, add, add_run, enqueue = queue.popleft, links.append, items.append, runs.append, queue.append
        holding = self.holding
        read = self.read.append if until is not None or through is not None else None
        while queue:
            met = len(items)
            if (until is not None and met >= until) or (through is not None and through < met and queue[0] > through):
                break
            dst = take()
            fn: Node = items[dst]                   # type: ignore[assignment]  # the queue holds nodes only
            inputs = fn.next_functions
            if read is not None:
                read((dst, inputs))
            run = runs[dst]
            if run > HOLD_EVERY and inputs:
                self.hold(dst, fn, inputs)
                run = 0
            for slot, (child, output_nr) in enumerate(inputs):
                if child is None:
                    link((len(items), dst, slot, output_nr))
                    add(None)
                    add_run(0)
                    continue
                position = index.get(child)         # met before (a shared weight's node): most inputs of a loop
                if position is None:                # `meet`, written out
                    if leaf_roots and type(child) is _ACCUMULATE_GRAD:
                        position = leaf_roots.get(id(child.variable))  # type: ignore[attr-defined]
                    if position is None:
                        position = len(items)
                        add(child)
                        add_run(run + 1)
                        enqueue(position)
                    index[child] = position
                elif 0 < runs[position] <= run:     # a node (not a leaf root) met on a shorter path before
                    if position > dst:              # not yet stepped: its run is now longer
                        runs[position] = run + 1
                    else:                           # stepped, holding nothing: it holds now, ending the run
                        held: Node = items[position]    # type: ignore[assignment]
                        self.hold(position, held, held.next_functions)
                link((position, dst, slot, output_nr))
            if not holding and len(items) > SHALLOW_FROM:
                hold_inputs(self)
                holding = True

    def hold(self, position: int, fn: Node, inputs: tuple[tuple[Node | None, int], ...]) -> None:
        """The node at `position` holds its inputs: at once past SHALLOW_FROM
        nodes, else when the walk gets there (`hold_inputs`)."""
        self.runs[position] = 0
        if not inputs:
            return
        if self.holding:
            hold(fn, inputs)
        else:
            self.stepped.append((fn, inputs))

    def through(self, position: int) -> bool:
        """Walk until every node up to `position` has its links; False when
        the graph has no such position."""
        self.steps(through=position)
        return position < len(self.items)

    def run(self, until: int | None = None) -> bool:
        """Walk to the end, or until `until` nodes are met; True when the
        walk stopped before the end (the graph has more)."""
        self.steps(until=until)
        return bool(self.queue)


def walk_for(starts: Sequence[Start], limit: int | None) -> tuple[Walker, Sequence[int], bool]:
    """(walker, kept positions, more): the walk for a drawing of at most
    `limit` nodes (None: all). It keeps the nearest positions, then counts
    the rest up to `count_limit(limit)` nodes; `more` is True when it stopped
    there, before the end of the graph."""
    walker = Walker(starts)
    if limit is None:
        walker.run()
        return walker, range(len(walker.items)), False
    kept = nearest(walker, limit)
    more = walker.run(count_limit(limit))
    if more:
        hold_every_stepped(walker)
    return walker, kept, more


def count_limit(limit: int) -> int:
    """How many nodes a walk cut to `limit` counts before it stops: enough
    for exact totals on a lesson's graphs, bounded so a drawing of `limit`
    nodes costs about the same at any size of graph."""
    return max(COUNTED_AT_LEAST, COUNTED * limit)


def walk(starts: Sequence[Start]) -> tuple[list[Item], list[Link]]:
    """The whole breadth-first walk: (items, links), as `Walker` has them."""
    walker = Walker(starts)
    walker.run()
    return walker.items, walker.links


def hold_inputs(walker: Walker) -> None:
    """Keep freeing a big walked graph shallow: nodes the walk stepped hold,
    in their `metadata`, the tuple of their inputs' wrappers that
    `next_functions` gave them; on every path of the graph, at least one
    node in every HOLD_EVERY + 1 (a walk cut short: every node it stepped,
    `hold_every_stepped`). The walk calls it once it has met more than
    SHALLOW_FROM nodes, for the nodes chosen so far; from then on, a node
    chosen holds at once.

    Why: reading `next_functions` gives each input node a Python wrapper that
    its C++ node then owns for as long as anything else holds the node
    (torch's PyObject preservation, `c10::intrusive_ptr`). Freed later (a
    `del`, a reassignment, after `backward()`), a node that drops its last
    edge to an input frees that input's wrapper, whose dealloc frees the
    input, which frees its own input's wrapper, ...: one C stack frame set
    per node, past torch's iterative deleter, so a chain some 30,000 nodes
    deep overflows an 8 MB stack (SIGSEGV). Held in a tuple in a node's
    metadata dict, an input's wrapper is released by the dict's and the
    tuple's dealloc instead, and CPython's trashcan defers those past 50
    nested deallocs: the C stack then holds at most some 25 holding nodes
    and the HOLD_EVERY nodes between each two (about 0.1 MB), and the
    freeing goes on iteratively, at any depth. Which nodes hold: the walk
    counts, per node, the most nodes holding nothing on a path it has met
    down to it (`Walker.runs`); a node stepped at more than HOLD_EVERY
    holds, and so does a node stepped before a longer path to it was met.
    Holding about one node in HOLD_EVERY rather than all makes the first
    walk of a 200,000-node graph some 0.07 s faster, and the graph 55 MB
    smaller (a dict and tuples a node). Nothing is kept alive longer: a node's
    inputs live as long as it does anyway. Small walks (at most
    SHALLOW_FROM nodes, every lesson graph) leave `metadata` as it was;
    their frees nest at most that deep."""
    for fn, inputs in walker.stepped:
        hold(fn, inputs)
    walker.stepped.clear()
    walker.holding = True


def hold_every_stepped(walker: Walker) -> None:
    """A walk that stopped before the end of the graph leaves nodes it met
    but never stepped, whose inputs it did not count paths through: every
    node it stepped holds its inputs, as if HOLD_EVERY were 0 (such a walk
    is bounded by `count_limit`, so this costs little)."""
    if not walker.holding:
        return
    for position, inputs in walker.read:                # every node stepped, as `steps` read it
        if walker.runs[position]:
            walker.hold(position, walker.items[position], inputs)  # type: ignore[arg-type]  # a stepped item is a node


def hold(fn: Node, inputs: tuple[tuple[Node | None, int], ...]) -> None:
    """`fn` holds `inputs` (its `next_functions`) in its metadata (`hold_inputs`)."""
    try:                                        # noqa: SIM105  # suppress(...) takes three times as long
        fn.metadata[HELD] = inputs              # type: ignore[index]  # a property; the stubs call it a method
    except (RuntimeError, AttributeError):      # a node without metadata: nothing to hold it in
        pass


def leaf_variable(fn: Node) -> torch.Tensor | None:
    """The leaf tensor of an `AccumulateGrad` node, or None for any other
    node (told by what the node is, not by an attribute a custom Function's
    ctx could also have)."""
    return fn.variable if type(fn) is _ACCUMULATE_GRAD else None  # type: ignore[attr-defined]


# AccumulateGrad's class is missing from the type stubs of torch 2.13 (2.14 has it).
_ACCUMULATE_GRAD: type = torch._C._functions.AccumulateGrad  # type: ignore[attr-defined, unused-ignore]
