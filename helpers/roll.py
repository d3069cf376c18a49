"""Roll a long graph up: the steps a loop recorded once per round, found from
the graph's own repeated structure, become one group node marked "× N steps".

Anchors are operations of one kind, one per step (every RNN step's
TanhBackward0); a kind is first a name, then a colour refined by what feeds a
node, a few operations deep (a two-layer RNN's two tanh per step). Taken from
the input end, step k is what anchor k reaches that no earlier anchor did, and
must reach anchor k - 1. A run of at least MIN_REPEATS steps recording the
same operations keeps its first and last step drawn; the ones between become a
group. The kind whose runs cover the most nodes wins (a stack's layers, not
the scan inside each), and the rolled graph is searched again, groups kept
apart; a fold that would draw a cycle is not taken. Leaves count by shape, so named layers still repeat. `Graph.rolled`
says what each group holds (`NO_REPEATS` when nothing repeats); `cut_rolled`
keeps the result within `max_nodes`. Tables are lists indexed by a node's place
in `graph.nodes`: the bench's 200,003-node RNN rolls in under a second.
Floor: graph, over `graph.py`; never imports a drawing module."""

from collections import Counter, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeAlias

from .arguments import Params, Root, check_max_nodes
from .graph import Edge, Graph, Node, Rolled, inputs_first, trace_graph
from .saved_values import MAX_LABEL, one_line
from .walk import collector_paused

# A step: the places (in graph.nodes) of the nodes one round of the loop recorded, anchor first.
Step: TypeAlias = list[int]
Run: TypeAlias = list[Step]

MIN_REPEATS = 4
# Colour refinement goes at most this many operations deep.
ROUNDS = 6
# A kind whose first this many anchors give no two equal steps in a row is given up.
GIVE_UP = 12
# How many times the graph is searched: once, then again in what the folds left drawn.
PASSES = 3
# `rolled` holds this entry when the graph was searched and nothing repeats.
NO_REPEATS = Rolled("", 0, 0)
NO_REPEATS_TEXT = (f"roll=True: no run of {MIN_REPEATS} or more identical steps of a loop was found, "
                   "so nothing is rolled")


def roll(graph: Graph, max_nodes: int | None = None) -> Graph:
    """The graph with its runs of identical steps rolled up (`NO_REPEATS` in
    `rolled` when nothing repeats), cut to `max_nodes` nodes nearest the outputs."""
    limit = check_max_nodes(max_nodes)
    with collector_paused():        # hundreds of thousands of small lists, none in a cycle
        folded = _folded(_Tables(graph))
        if folded is None:
            return cut_rolled(replace(graph, rolled=(*graph.rolled, NO_REPEATS)), limit)
        for _ in range(PASSES - 1):
            again = _folded(_Tables(folded))
            if again is None:
                break
            folded = again
        return cut_rolled(folded, limit)


def _acyclic(folded: Graph) -> bool:
    """Whether the fold's steps make no cycle (a step whose inputs come from a later one, as a stack
    of RNN layers folded again can): such a fold is not taken."""
    users: dict[str, list[str]] = {node.id: [] for node in folded.nodes}
    for edge in folded.edges:
        users[edge.src].append(edge.dst)
    return len(inputs_first(users)) == len(users)


def trace_cut(root: Root, params: Params | None = None, max_nodes: int | None = None) -> Graph:
    """What draw_graph draws without roll=True: trace_graph's graph, and for
    a cut one whether its kept part repeats (the cut notice then names roll=True)."""
    graph = trace_graph(root, params, max_nodes)
    if not graph.omitted or graph.rolled:
        return graph
    kept = {node.id for node in graph.nodes}
    inside = replace(graph, edges=tuple(e for e in graph.edges if e.src in kept and e.dst in kept))
    with collector_paused():
        return replace(graph, repeats=_folded(_Tables(inside)) is not None)


@dataclass
class _Tables:
    """A graph's nodes as their places in `graph.nodes`, with the lists the
    search reads: inputs, edge ends, names for step signatures, nodes no step takes."""

    graph: Graph

    def __post_init__(self) -> None:
        nodes = self.graph.nodes
        place = {node.id: k for k, node in enumerate(nodes)}
        self.src: list[int] = []
        self.dst: list[int] = []
        self.inputs: list[list[int]] = [[] for _ in nodes]
        sources, ends, inputs = self.src.append, self.dst.append, self.inputs
        for edge in self.graph.edges:              # one pass: 300,000 edges in the bench's graph
            s, d = place[edge.src], place[edge.dst]
            sources(s)
            ends(d)
            inputs[d].append(s)
        names: dict[object, int] = {}
        # An operation by its name, a leaf by its shape (its name differs from layer to layer).
        self.name = [names.setdefault(n.label if n.kind == "op" else (n.kind, n.detail)
                                      if n.kind == "leaf" else (n.kind, n.label), len(names)) for n in nodes]
        # Leaves several steps share, and groups an earlier pass made, belong to no step.
        self.apart = bytearray([n.kind == "group" or (n.kind == "leaf" and n.uses > 1) for n in nodes])

    def inputs_first(self) -> list[int]:
        """Each node's rank in an inputs-first order (`graph.inputs_first`)."""
        users: list[list[int]] = [[] for _ in self.inputs]
        for s, d in zip(self.src, self.dst, strict=True):
            users[s].append(d)
        rank = [len(users)] * len(users)
        for k, node in enumerate(inputs_first(dict(enumerate(users)))):
            rank[node] = k
        return rank


def _folded(tables: _Tables) -> Graph | None:
    """The graph with the runs of the anchor kind covering the most nodes
    rolled up, or None when no kind gives a run whose fold makes no cycle."""
    rank = tables.inputs_first()
    best: list[Run] = []
    covered, step_of = 0, [0] * len(rank)
    for candidates in _anchor_kinds(tables):
        for anchors in candidates:
            if best and _same_period(anchors, step_of):
                continue
            found = _runs(sorted(anchors, key=rank.__getitem__), tables)
            size = sum(len(step) for run in found for step in run)
            if size > covered:
                best, covered, step_of = found, size, _step_numbers(found, len(rank))
        if best:
            grouped = _grouped(tables, best)
            if _acyclic(grouped):
                return grouped
            best, covered, step_of = [], 0, [0] * len(rank)     # the next round's kinds are tried
    return None


def _step_numbers(runs: Sequence[Run], count: int) -> list[int]:
    """Each node's step, numbered from 1 across the runs (0: in none, or in a
    run's first step)."""
    step_of = [0] * count
    for number, step in enumerate((step for run in runs for step in run[1:]), start=1):
        for node in step:
            step_of[node] = number
    return step_of


def _same_period(anchors: Sequence[int], step_of: Sequence[int]) -> bool:
    """Whether these anchors sit one to a step of the runs already found (but
    for two): their runs would be the same steps cut elsewhere (an RNN's
    MvBackward0 after its TanhBackward0), so they are not searched."""
    hit = [step_of[a] for a in anchors if step_of[a]]
    return len(anchors) - len(hit) <= 2 and len(hit) == len(set(hit))


def _anchor_kinds(tables: _Tables) -> Iterator[list[list[int]]]:
    """Candidate anchors, round by round: operations of one name, then of one
    colour after each refinement (a list tried before left out). A leaf several
    steps use is a colour of its own."""
    nodes, name = tables.graph.nodes, tables.name
    ops = [k for k, n in enumerate(nodes) if n.kind == "op"]
    colour = name
    tried: set[tuple[int, ...]] = set()
    for round_number in range(ROUNDS + 1):
        members: dict[int, list[int]] = {}
        for k in ops:
            members.setdefault(colour[k], []).append(k)
        fresh = [a for a in members.values() if len(a) >= MIN_REPEATS and tuple(a) not in tried]
        tried.update(tuple(a) for a in fresh)
        yield fresh
        if not round_number:
            colour = [-1 - k if apart else here for k, (here, apart) in enumerate(zip(name, tables.apart, strict=True))]
        numbers: dict[tuple[int, tuple[int, ...]], int] = {}
        colour = [numbers.setdefault((here, tuple([colour[i] for i in srcs])), len(numbers))
                  for here, srcs in zip(colour, tables.inputs, strict=True)]


def _runs(anchors: Sequence[int], tables: _Tables) -> list[Run]:
    """The runs of at least MIN_REPEATS consecutive steps recording the same
    operations, as many of each: step k is what anchor k reaches that no earlier
    anchor did, and continues a run only if it reaches anchor k - 1."""
    inputs, apart, name = tables.inputs, tables.apart, tables.name
    reached = bytearray(len(inputs))
    runs: list[Run] = [[]]
    earlier: list[Step] = [[]]          # per run: the step before it, when its first step reached that one
    signature: tuple[int, ...] = ()
    before, paired = -1, False
    last: Step = []
    for count, anchor in enumerate(anchors):
        step: Step = []
        linked = False
        if not reached[anchor]:
            reached[anchor] = 1
            step.append(anchor)
            for node in step:           # grows as it goes: breadth first
                for source in inputs[node]:
                    if source == before:
                        linked = True
                    if not reached[source] and not apart[source]:
                        reached[source] = 1
                        step.append(source)
        mine = tuple([name[i] for i in step])
        if linked and step and (mine == signature or len(mine) == len(signature) and sorted(mine) == sorted(signature)):
            runs[-1].append(step)
            paired = True
        else:
            earlier.append(last if linked and step and len(runs[-1]) < MIN_REPEATS else [])
            runs.append([step] if step else [])
            signature = mine
        if count >= GIVE_UP and not paired:
            break
        before, last = anchor, step
    whole = [[first, *run] if first and run and _starts_alike(run[0], first, tables) else run
             for run, first in zip(runs, earlier, strict=True)]
    return [run for run in whole if len(run) >= MIN_REPEATS]


def _starts_alike(step: Step, first: Step, tables: _Tables) -> bool:
    """Whether `first`, the step before a run, counts as the run's first step
    (a stack's first layer, with what lies upstream): it begins as `step` does and
    holds at least half of its operations (an embedding in front does not)."""
    name = tables.name
    def begins(anchor: int) -> list[int]:
        return [name[i] for i in (anchor, *tables.inputs[anchor])]
    shared = Counter(name[i] for i in first) & Counter(name[i] for i in step)
    return begins(step[0]) == begins(first[0]) and 2 * shared.total() >= len(step)


def _grouped(tables: _Tables, runs: Sequence[Run]) -> Graph:
    """The graph with each run's middle steps (all but the first and last) as
    one group node, in the place of the group's first node."""
    graph, nodes = tables.graph, tables.graph.nodes
    group_of = [-1] * len(nodes)
    groups: dict[int, Node] = {}
    rolled: list[Rolled] = []
    for number, run in enumerate(runs):
        middle = [node for step in run[1:-1] for node in step]
        for node in middle:
            group_of[node] = number
        place = min(middle)
        labels = sorted({nodes[k].label for k in run[1] if nodes[k].kind == "op"})
        groups[place] = Node(nodes[place].id, "group", f"× {len(run) - 2:,} steps",
                             one_line("each: " + ", ".join(labels), MAX_LABEL))
        rolled.append(Rolled(nodes[place].id, len(run) - 2, len(middle)))
    ids_of = {group_of[place]: nodes[place].id for place in groups}
    kept = tuple(groups.get(k, node) for k, node in enumerate(nodes) if group_of[k] < 0 or k in groups)
    edges: list[Edge] = []
    seen: set[tuple[str, str]] = set()
    for edge, s, d in zip(graph.edges, tables.src, tables.dst, strict=True):
        into, out_of = group_of[d], group_of[s]
        if into >= 0 and into == out_of:
            continue
        src = edge.src if out_of < 0 else ids_of[out_of]
        dst = edge.dst if into < 0 else ids_of[into]
        if (src, dst) not in seen:
            seen.add((src, dst))
            edges.append(edge if into < 0 and out_of < 0 else Edge(src, dst, edge.slot, edge.output_nr))
    return replace(graph, nodes=kept, edges=tuple(edges), rolled=(*graph.rolled, *rolled))


def cut_rolled(graph: Graph, limit: int | None) -> Graph:
    """At most `limit` nodes, nearest the outputs, as `walk.nearest` keeps
    them; a group left out counts as the nodes it holds."""
    if limit is None or len(graph.nodes) <= limit:
        return graph
    inputs: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
    for edge in graph.edges:
        inputs[edge.dst].append(edge.src)
    used, kinds = {e.src for e in graph.edges}, {n.id: n.kind for n in graph.nodes}
    queue = deque(n.id for n in graph.nodes if n.id not in used)
    depth, per_depth, row_limit = dict.fromkeys(queue, 0), Counter[int](), max(8, limit // 8)
    keep: dict[str, None] = {}
    while queue and len(keep) < limit:
        node = queue.popleft()
        if kinds[node] != "const" and per_depth[depth[node]] >= row_limit:
            continue
        per_depth[depth[node]] += kinds[node] != "const"
        keep[node] = None
        for source in inputs[node]:
            if source not in depth:
                depth[source] = depth[node] + 1
                queue.append(source)
    sizes = {r.group: r.nodes for r in graph.rolled}
    omitted = sum(sizes.get(n.id, 1) for n in graph.nodes if n.id not in keep)
    cut = tuple(n.id for n in graph.nodes if n.id in keep and any(i not in keep for i in inputs[n.id]))
    return replace(graph, nodes=tuple(n for n in graph.nodes if n.id in keep),
                   edges=tuple(e for e in graph.edges if e.src in keep and e.dst in keep),
                   omitted=graph.omitted + omitted, cut=cut,
                   rolled=tuple(r for r in graph.rolled if r.group in keep or r == NO_REPEATS),
                   rolled_out=graph.rolled_out + tuple(r for r in graph.rolled if r.steps and r.group not in keep))
