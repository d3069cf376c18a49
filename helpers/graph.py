"""Walk PyTorch's autograd graph (`walk.py`) into a plain `Graph` of nodes
and edges, numbered `n0, n1, ...` in walk order. Nothing here draws.
Floor: graph, under `roll.py` and the drawing, over `walk.py`."""

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, TypeAlias, TypeVar

import torch
from torch.autograd.graph import Node as AutogradNode

from .arguments import Params, Root, check_flag, check_max_nodes, leaf_names, learner_facing, roots_of
from .saved_values import MAX_LABEL, Saved, one_line, read_saved, shape_text
from .walk import Item, collector_paused, leaf_variable, walk_for

NodeKind: TypeAlias = Literal["output", "op", "leaf", "const", "group"]
H = TypeVar("H")


@dataclass(frozen=True, slots=True)
class Node:
    """One node: kind "output" (a tensor passed in), "op" (a `grad_fn`),
    "leaf" (an `AccumulateGrad`), "const" (a `None` input) or "group" (roll.py)."""

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
    """The walked graph. `omitted`: nodes a cut left out (a lower bound when
    `counted` is False); `cut`: kept nodes with inputs left out; `rolled` and
    `rolled_out`: groups of repeated steps drawn and cut away (roll.py); `inputs`:
    an FX graph's input leaves (fx.py); `repeats`: a cut graph's kept part would
    roll (the cut notice suggests roll=True)."""

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
        """Whether every node in `order` (ids) comes after all the nodes that
        used it, as the engine's order must."""
        position = {node_id: i for i, node_id in enumerate(order)}
        return all(position[e.dst] < position[e.src] for e in self.edges if e.src in position and e.dst in position)


def inputs_first(users: Mapping[H, Sequence[H]]) -> list[H]:
    """The nodes of `users` (node -> its users, each a key) with each after
    all its inputs (Kahn's algorithm, in `users`' order; a cycle is left out).
    Plain lists: graphlib took 2 to 3 s at 200,000 nodes."""
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


@learner_facing
def trace_graph(root: Root, params: Params | None = None, max_nodes: int | None = None, saved: bool = True) -> Graph:
    """Walk the autograd graph behind `root` and return a `Graph`.

    root: a tensor, a `grad_fn` node, or a sequence of tensors.
    params: a mapping of names to tensors, or an `nn.Module`, naming leaves.
    max_nodes: keep at most this many nodes, nearest the outputs, at most an
        eighth of them (or 8) at one distance from the outputs; the rest are
        counted in `Graph.omitted` (up to 10 times max_nodes or 1,000 nodes).
    saved: describe each node's saved values (`Node.saved`); False is faster.
    The walk runs no user code: no hook, no unpacking, no `__torch_function__`."""
    limit, saved = check_max_nodes(max_nodes), check_flag(saved, "saved")
    # no subclass's __torch_function__ (fastai's, tv_tensors') runs on each tensor attribute read
    with collector_paused(), torch._C.DisableTorchFunctionSubclass():
        names = leaf_names(params)
        walker, kept, more = walk_for(roots_of(root), limit)
        items, links = walker.items, walker.links
        ids = {i: f"n{i}" for i in kept}
        uses = Counter(s for s, *_ in links)
        nodes = tuple(_node(ids[i], items[i], uses[i], names, saved) for i in kept)
        edges = tuple(Edge(ids[s], ids[d], slot, nr) for s, d, slot, nr in links if s in ids and d in ids)
    cut = sorted({d for s, d, _, _ in links if d in ids and s not in ids})
    return Graph(nodes, edges, len(items) - len(kept), tuple(ids[d] for d in cut), counted=not more)


def autograd_nodes(root: Root) -> list[tuple[str, AutogradNode]]:
    """The live autograd nodes behind `root` as (id, node) pairs, with
    `trace_graph`'s ids; outputs, constants and leaf roots left out."""
    with torch._C.DisableTorchFunctionSubclass():
        items = walk_for(roots_of(root), None)[0].items
    return [(f"n{i}", item) for i, item in enumerate(items) if isinstance(item, AutogradNode)]


def _node(node_id: str, item: Item, uses: int, names: Mapping[int, str], saved: bool) -> Node:
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
    return Node(node_id, "op", node_label(item), saved=read_saved(item) if saved else ())


def node_label(fn: AutogradNode) -> str:
    """A node's name without the C++ namespace, as one bounded printable line."""
    return _short_name(fn.name())


@functools.lru_cache(maxsize=1024)              # keyed by a name: holds no node class
def _short_name(name: str) -> str:
    return one_line(name.removeprefix("torch::autograd::"), MAX_LABEL)
