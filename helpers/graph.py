"""Walk PyTorch's autograd graph into a plain `Graph` of nodes and edges.

Nothing here draws: `dot.py` and `text_form.py` turn a `Graph` into DOT and
text. The walk itself (breadth-first, no recursion) is in `walk.py`; nodes are
numbered `n0, n1, ...` in walk order, the same in every process for the same
computation.

Floor: graph, under `draw.py` and `plan.py`, over `walk.py`. It imports
`walk.py`, `arguments.py` and `saved_values.py`; never a floor above it
(`roll.py`, `from_scratch.py`, `plan.py`, `dot.py`, `text_form.py`, `draw.py`).
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from operator import itemgetter
from typing import Literal, NamedTuple, TypeAlias, TypeVar

import torch
from torch.autograd.graph import Node as AutogradNode

from .arguments import Params, Root, check_flag, check_max_nodes, leaf_names, learner_facing, roots_of
from .saved_values import MAX_LABEL, Saved, SavedReader, one_line, shape_text
from .walk import Item, Link, collector_paused, leaf_variable, no_torch_function, walk, walk_for

NodeKind: TypeAlias = Literal["output", "op", "leaf", "const", "group"]
H = TypeVar("H")
# Node ids by walk position: all of them, or those of the positions a cut keeps.
Ids: TypeAlias = Sequence[str] | Mapping[int, str]


@dataclass(frozen=True, slots=True)
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
    uses: int = 0          # for a leaf: its edges in the whole graph, drawn or not (walked, if not counted)


@dataclass(frozen=True, slots=True)
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
    entry per group of repeated steps (roll.py). `counted` is False when the
    graph was too big to walk whole for a cut (`walk.count_limit`): then `omitted`, and a leaf's `uses`, count only the
    nodes the walk met, and are lower bounds. `inputs` names the leaves that are an FX graph's inputs (`fx.py`),
    drawn as graph inputs rather than leaves with an AccumulateGrad node.
    `rolled_out` lists the groups of repeated steps a cut left out (roll.py),
    which the cut notice names. `repeats` says that a cut graph's kept part
    holds steps roll=True would fold (roll.py's trace_cut), which the cut
    notice suggests."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    omitted: int = 0
    cut: tuple[str, ...] = ()
    rolled: tuple[Rolled, ...] = ()
    counted: bool = True
    inputs: tuple[str, ...] = ()
    rolled_out: tuple[Rolled, ...] = ()
    repeats: bool = field(default=False, compare=False)   # what the graph says of itself, not its structure

    def find(self, label: str) -> list[Node]:
        """The nodes whose label is `label`, in walk order."""
        return [node for node in self.nodes if node.label == label]

    def count(self, kind: NodeKind) -> int:
        """How many nodes of this kind ("op", "leaf", "const", "output")."""
        return sum(node.kind == kind for node in self.nodes)

    def depth(self) -> int:
        """The most operations on any path from a leaf to an output."""
        ops = {n.id for n in self.nodes if n.kind == "op"}
        users: dict[str, list[str]] = {n.id: [] for n in self.nodes}
        inputs: dict[str, list[str]] = {n.id: [] for n in self.nodes}
        for edge in self.edges:
            users[edge.src].append(edge.dst)
            inputs[edge.dst].append(edge.src)
        best: dict[str, int] = {}
        for node_id in inputs_first(users):
            best[node_id] = (node_id in ops) + max((best[i] for i in inputs[node_id]), default=0)
        return max(best.values(), default=0)

    def is_topological(self, order: Sequence[str]) -> bool:
        """True when every node in `order` (node ids) comes after all the
        nodes that used it: gradients can flow from outputs to inputs in
        this order, as the engine requires."""
        position = {node_id: i for i, node_id in enumerate(order)}
        return all(position[e.dst] < position[e.src] for e in self.edges if e.src in position and e.dst in position)


def inputs_first(users: Mapping[H, Sequence[H]]) -> list[H]:
    """The nodes of `users` (node -> the nodes that use it, every one a key
    too) in an order where each comes after all its inputs: Kahn's
    algorithm, first in first out, from the nodes without inputs in
    `users`' order. Nodes on a cycle are left out. Plain dicts and lists:
    graphlib's TopologicalSorter took 2 to 3 s at 200,000 nodes."""
    waiting = dict.fromkeys(users, 0)
    for used_by in users.values():
        for user in used_by:
            waiting[user] += 1
    ready = [node for node, count in waiting.items() if not count]
    for node in ready:                      # grows as it goes
        for user in users[node]:
            waiting[user] -= 1
            if not waiting[user]:
                ready.append(user)
    return ready


def as_number(value: object) -> object:
    """A whole number of another library (numpy's int64) as an int, so
    max_nodes=np.int64(5) is taken; anything else as it is, for the checks."""
    index = getattr(value, "__index__", None)
    if index is not None and not isinstance(value, (bool, int)):
        return index()
    return value


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
        in `Graph.omitted`. Only what can be kept is walked, and the rest
        is counted up to 10 times max_nodes or 1,000 nodes (past that,
        `Graph.counted` is False and `omitted` a lower bound).
    saved: describe each kept node's saved values (`Node.saved`); False
        skips that (a walk of 200,000 nodes then takes about half the
        time). Reading them never unpacks a value a hook packed.
    A leaf tensor (requires grad, no `grad_fn`) gives a one-node graph.
    The walk runs no user code: no hook, no saved-value unpacking, no
    tensor subclass's `__torch_function__`.
    """
    limit, saved = check_max_nodes(as_number(max_nodes)), check_flag(saved, "saved")
    with collector_paused(), no_torch_function():
        names = leaf_names(params)
        walker, kept, more = walk_for(roots_of(root), limit)
        items, links = walker.items, walker.links
        whole = len(kept) == len(items)
        # a cut graph names only what it keeps (300 of 3,000 walked), so `ids` is also the kept set
        ids: Ids = [f"n{i}" for i in range(len(items))] if whole else {i: f"n{i}" for i in kept}
        nodes = _NodeMaker(names, saved).nodes(items, kept, ids, Counter(map(itemgetter(0), links)))
        if whole:                                   # the whole graph: every link an edge, nothing cut
            return Graph(nodes, _edges(links, ids), counted=not more)
        edges = _edges([link for link in links if link[0] in ids and link[1] in ids], ids)
    cut = sorted({d for s, d, _, _ in links if d in ids and s not in ids})
    return Graph(nodes, edges, len(items) - len(kept), tuple(ids[d] for d in cut), counted=not more)


# Node and Edge made without their __init__ (`_NodeMaker.nodes`, `_edges`): a frozen
# dataclass's __init__ sets each field through object.__setattr__ from a Python frame of
# its own, which doubles the cost of making the 400,000 of a 200,000-node walk. These set
# the same fields, in the same order, through each slot's own descriptor (a C call that
# the frozen __setattr__ does not see), from the caller's loop.
_new = object.__new__
_NODE_FIELDS, _EDGE_FIELDS = ("id", "kind", "label", "detail", "saved", "uses"), ("src", "dst", "slot", "output_nr")
if tuple(f.name for f in fields(Node)) != _NODE_FIELDS or tuple(f.name for f in fields(Edge)) != _EDGE_FIELDS or \
        hasattr(Node, "__post_init__") or hasattr(Edge, "__post_init__"):
    raise ImportError("graph.py makes Node and Edge field by field: update _NodeMaker.nodes and _edges")
_node_id, _node_kind, _node_label, _node_detail, _node_saved, _node_uses = (
    getattr(Node, name).__set__ for name in _NODE_FIELDS)
_edge_src, _edge_dst, _edge_slot, _edge_nr = (getattr(Edge, name).__set__ for name in _EDGE_FIELDS)


def _edges(links: Sequence[Link], ids: Ids) -> tuple[Edge, ...]:
    """The Edge of each link, as `Edge(ids[src], ids[dst], slot, output_nr)` makes it."""
    edges: list[Edge] = []
    append, new, src, dst, slot_of, nr_of = edges.append, _new, _edge_src, _edge_dst, _edge_slot, _edge_nr
    for s, d, slot, nr in links:
        edge = new(Edge)
        src(edge, ids[s])
        dst(edge, ids[d])
        slot_of(edge, slot)
        nr_of(edge, nr)
        append(edge)
    return tuple(edges)


def autograd_nodes(root: Root) -> list[tuple[str, AutogradNode]]:
    """The live autograd nodes behind `root`, as (node id, node) pairs with
    the same ids that `trace_graph(root)` gives. For hooks; outputs,
    constants and leaf roots are left out."""
    with no_torch_function():
        items, _ = walk(roots_of(root))
    return [(f"n{i}", item) for i, item in enumerate(items) if isinstance(item, AutogradNode)]


class _NodeMaker:
    """Makes the `Node`s of one walk. What it learns about a node class (its
    name; in its `SavedReader`, what it saves) is kept for this walk only: a
    cache that outlived the walk would keep every drawn custom
    autograd.Function class alive, and all that the class holds."""

    def __init__(self, names: Mapping[int, str], saved: bool) -> None:
        self.names = names
        self.labels: dict[type, str] = {}
        self.read_saved = SavedReader().read if saved else None

    def nodes(self, items: Sequence[Item], kept: Sequence[int], ids: Ids,
              uses: Mapping[int, int]) -> tuple[Node, ...]:
        """The Node of each kept position, as `node` makes it; an operation
        of a class met before (a loop's: nearly every node) is made here,
        without a call of `node` or of Node's __init__."""
        made: list[Node] = []
        append, labels, read, new = made.append, self.labels, self.read_saved, _new
        for i in kept:
            item = items[i]
            label = labels.get(type(item))          # only operations' classes are in `labels`
            if label is None:
                append(self.node(ids[i], item, uses[i]))
                continue
            node = new(Node)
            _node_id(node, ids[i])
            _node_kind(node, "op")
            _node_label(node, label)
            _node_detail(node, "")
            _node_saved(node, () if read is None else read(item))   # type: ignore[arg-type]
            _node_uses(node, 0)
            append(node)
        return tuple(made)

    def node(self, node_id: str, item: Item, uses: int) -> Node:
        if item is None:
            return Node(node_id, "const", "None")
        if isinstance(item, torch.Tensor):
            name = self.names.get(id(item), "tensor")
            if item.grad_fn is not None:
                return Node(node_id, "output", name, shape_text(item))
            return Node(node_id, "leaf", name, shape_text(item), uses=uses)
        variable = leaf_variable(item)
        if variable is not None:
            return Node(node_id, "leaf", self.names.get(id(variable), "tensor"), shape_text(variable), uses=uses)
        saved = self.read_saved(item) if self.read_saved is not None else ()
        return Node(node_id, "op", self.label(item), saved=saved)

    def label(self, fn: AutogradNode) -> str:
        label = self.labels.get(type(fn))
        if label is None:
            label = node_label(fn)
            if label == type(fn).__name__:       # a class of its own, not a shared wrapper class
                self.labels[type(fn)] = label
        return label


def node_label(fn: AutogradNode) -> str:
    """An autograd node's name without the C++ namespace ("AccumulateGrad"),
    as one bounded printable line (a custom Function's class may be named
    anything)."""
    return one_line(fn.name().removeprefix("torch::autograd::"), MAX_LABEL)
