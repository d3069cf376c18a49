"""Walk PyTorch's autograd graph into a plain `Graph` of nodes and edges.

Nothing here draws: `render.py` turns a `Graph` into DOT and text.
The walk is breadth-first with an explicit queue (no recursion limit) and
follows each node's `next_functions` in tuple order, so the numbering
`n0, n1, ...` is the same in every process for the same computation.
"""

import gc
from collections import Counter, deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from graphlib import TopologicalSorter
from typing import Literal, NamedTuple, TypeAlias

import torch
from torch.autograd.graph import Node as AutogradNode

from .arguments import Params, Root, Start, check_flag, check_max_nodes, leaf_names, learner_facing, roots_of
from .saved_values import Saved, saved_values, shape_text

NodeKind: TypeAlias = Literal["output", "op", "leaf", "const", "group"]
# What a walk meets: a tensor (an output or a leaf root), an autograd node, or
# None (a constant); links are (src, dst, slot, output_nr) positions in walk order.
Item: TypeAlias = torch.Tensor | AutogradNode | None
Link: TypeAlias = tuple[int, int, int, int]


@dataclass(frozen=True)
class Node:
    """One node of the graph.

    kind is one of:
      "output" -- a tensor you passed in (the root of the walk)
      "op"     -- a backward node (`grad_fn`) that records one operation
      "leaf"   -- an `AccumulateGrad` node, which writes into a leaf's `.grad`
      "const"  -- a `None` entry of `next_functions`: an input needing no gradient
      "group"  -- repeated steps rolled into one (roll.py; never made by the walk)
    """

    id: str
    kind: NodeKind
    label: str
    detail: str = ""
    saved: tuple[Saved, ...] = ()
    uses: int = 0          # for a leaf: its edges in the whole graph, drawn or not


@dataclass(frozen=True)
class Edge:
    """`src` is an input of `dst`: entry `slot` of dst's `next_functions`,
    which is output number `output_nr` of src. Arrows follow the forward pass."""

    src: str
    dst: str
    slot: int = 0
    output_nr: int = 0


class Rolled(NamedTuple):
    """A group of repeated steps (roll.py): its node id, how many steps and
    how many nodes it stands for."""

    group: str
    steps: int
    nodes: int


@dataclass(frozen=True)
class Graph:
    """The walked graph. `omitted` counts nodes left out by `max_nodes`;
    `cut` lists the kept nodes that have inputs among them; `rolled` has an
    entry per group of repeated steps (roll.py)."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    omitted: int = 0
    cut: tuple[str, ...] = ()
    rolled: tuple[Rolled, ...] = ()

    def find(self, label: str) -> list[Node]:
        """The nodes whose label is `label`, in walk order."""
        return [node for node in self.nodes if node.label == label]

    def count(self, kind: NodeKind) -> int:
        """How many nodes of this kind ("op", "leaf", "const", "output")."""
        return sum(node.kind == kind for node in self.nodes)

    def depth(self) -> int:
        """The most operations on any path from a leaf to an output."""
        ops = {n.id for n in self.nodes if n.kind == "op"}
        inputs: dict[str, set[str]] = {n.id: set() for n in self.nodes}
        for edge in self.edges:
            inputs[edge.dst].add(edge.src)
        best: dict[str, int] = {}
        for node_id in TopologicalSorter(inputs).static_order():   # inputs come first
            best[node_id] = (node_id in ops) + max((best[i] for i in inputs[node_id]), default=0)
        return max(best.values(), default=0)

    def is_topological(self, order: Sequence[str]) -> bool:
        """True when every node in `order` (node ids) comes after all the
        nodes that used it: gradients can flow from outputs to inputs in
        this order, as the engine requires."""
        position = {node_id: i for i, node_id in enumerate(order)}
        return all(position[e.dst] < position[e.src] for e in self.edges if e.src in position and e.dst in position)


@learner_facing
def trace_graph(root: Root, params: Params | None = None, max_nodes: int | None = None, saved: bool = True) -> Graph:
    """Walk the autograd graph behind `root` and return a `Graph`.

    root: a tensor, a `grad_fn` node, or a sequence of tensors.
    params: a mapping of names to tensors, or an `nn.Module` (its
        `named_parameters()`), used to name leaves and outputs.
    max_nodes: keep at most `max_nodes` nodes, nearest the outputs first,
        and at most an eighth of them (or 8) at any one distance from the
        outputs, so a wide row (a thousand outputs, a stack of many inputs)
        does not crowd out the structure behind it; the rest are counted
        in `Graph.omitted`.
    saved: describe each kept node's saved values (`Node.saved`); False
        skips that (a walk of 200,000 nodes then takes about two thirds
        of the time). Reading them never unpacks a value a hook packed.
    A leaf tensor (requires grad, no `grad_fn`) gives a one-node graph.
    """
    starts = roots_of(root)
    names = leaf_names(params)
    limit, saved = check_max_nodes(max_nodes), check_flag(saved, "saved")
    with _collector_paused():
        items, links = _walk(starts)
        kept = range(len(items)) if limit is None else _nearest(items, links, limit)
        keep = set(kept)
        uses = Counter(s for s, *_ in links)
        ids = [f"n{i}" for i in range(len(items))]
        nodes = tuple(_make_node(ids[i], items[i], names, uses[i], saved) for i in kept)
        edges = tuple(Edge(ids[s], ids[d], slot, nr) for s, d, slot, nr in links if s in keep and d in keep)
    cut = sorted({d for s, d, _, _ in links if d in keep and s not in keep})
    return Graph(nodes, edges, len(items) - len(keep), tuple(ids[d] for d in cut))


@contextmanager
def _collector_paused() -> Iterator[None]:
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


def _nearest(items: Sequence[Item], links: Sequence[Link], limit: int) -> Sequence[int]:
    """Up to `limit` positions in walk order (nearest the outputs first), at
    most limit // 8 (at least 8) at any one depth; constants, which lead
    nowhere, are not held to that."""
    if limit >= len(items):
        return range(len(items))
    depth: dict[int, int] = {}
    for s, d, _, _ in links:             # links come in walk order: d is placed before s
        depth.setdefault(s, depth.get(d, 0) + 1)
    per_depth: Counter[int] = Counter()
    row_limit, kept = max(8, limit // 8), []
    for position, item in enumerate(items):
        level = depth.get(position, 0)
        if item is not None and per_depth[level] >= row_limit:
            continue
        per_depth[level] += 1
        kept.append(position)
        if len(kept) == limit:
            break
    return kept


def autograd_nodes(root: Root) -> list[tuple[str, AutogradNode]]:
    """The live autograd nodes behind `root`, as (node id, node) pairs with
    the same ids that `trace_graph(root)` gives. For hooks; outputs,
    constants and leaf roots are left out."""
    items, _ = _walk(roots_of(root))
    return [(f"n{i}", item) for i, item in enumerate(items) if isinstance(item, AutogradNode)]


def _walk(starts: Sequence[Start]) -> tuple[list[Item], list[Link]]:
    """Breadth-first walk. Returns (items, links): items are tensors (outputs
    and leaf roots), autograd nodes, or `None` for constants; links are
    (src, dst, slot, output_nr) index tuples."""
    items: list[Item] = []
    index: dict[AutogradNode, int] = {}
    links: list[Link] = []
    queue: deque[AutogradNode] = deque()
    leaf_roots: dict[int, int] = {}      # a leaf passed as a root is one node with its AccumulateGrad

    def visit(fn: AutogradNode) -> int:
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


def _make_node(node_id: str, item: Item, names: Mapping[int, str], uses: int, saved: bool) -> Node:
    if item is None:
        return Node(node_id, "const", "None")
    if isinstance(item, torch.Tensor):
        name = names.get(id(item), "tensor")
        if item.grad_fn is not None:
            return Node(node_id, "output", name, shape_text(item))
        return Node(node_id, "leaf", name, shape_text(item), uses=uses)
    variable = leaf_variable(item)
    if variable is not None:
        return Node(node_id, "leaf", names.get(id(variable), "tensor"), shape_text(variable), uses=uses)
    return Node(node_id, "op", node_label(item), saved=saved_values(item) if saved else ())


def leaf_variable(fn: AutogradNode) -> torch.Tensor | None:
    """The leaf tensor of an `AccumulateGrad` node, or None for any other
    node (told by what the node is, not by an attribute a custom Function's
    ctx could also have)."""
    return fn.variable if type(fn) is _ACCUMULATE_GRAD else None  # type: ignore[attr-defined]


# AccumulateGrad's class is missing from torch's type stubs.
_ACCUMULATE_GRAD: type = torch._C._functions.AccumulateGrad  # type: ignore[attr-defined]


def node_label(fn: AutogradNode) -> str:
    """An autograd node's name without the C++ namespace ("AccumulateGrad")."""
    label = _LABELS.get(type(fn))
    if label is None:
        label = fn.name().removeprefix("torch::autograd::")
        if label == type(fn).__name__:       # a class of its own, not a shared wrapper class
            _LABELS[type(fn)] = label
    return label


_LABELS: dict[type, str] = {}      # node class -> name, for classes named as their nodes are
