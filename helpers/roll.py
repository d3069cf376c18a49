"""Roll a long graph up: the steps a loop recorded once per round, found from
the graph's own repeated structure, become one group node marked "× N steps".

How steps are found. Anchors are operations of one kind, one per step: the
TanhBackward0 of every RNN step, the UnsafeSplitBackward0 (the gates) of
every LSTMCell step. A kind is first an operation's name; when no name gives
a run of steps (a two-layer RNN has two TanhBackward0 per step), names are
refined by what feeds each node, a few operations deep (colour refinement),
until the TanhBackward0 of one layer differs from the other's. Taking the
anchors from the input end, step k is what anchor k reaches through its
inputs that no anchor before it reached: one period of the loop (leaves
shared by several steps stay apart). Anchor k must reach anchor k - 1, so
parallel operations (the sin of every piece of an unbind) are no chain. A
run of consecutive steps recording the same operations is rolled: its
first and last step stay drawn, the ones between become a group node.
Nothing is lost: the graph's `rolled` field says how many steps and nodes
each group holds, and when nothing repeats it holds `NO_REPEATS`, which the
drawing states. `cut_rolled` then keeps the drawing within `max_nodes`.

Floor: graph, beside `from_scratch.py` and over `graph.py`, whose `Graph` it
rolls. It imports `graph.py`, `walk.py` (the collector pause), `arguments.py` and
`saved_values.py`; never
`layout.py`, `dot.py`, `text_form.py` or `draw.py`.
"""

from collections import Counter, deque
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TypeAlias

from .arguments import check_max_nodes
from .graph import Edge, Graph, Node, Rolled
from .saved_values import MAX_LABEL, one_line
from .walk import collector_paused

# A step: the ids of the nodes one round of the loop recorded.
Step: TypeAlias = list[str]

MIN_REPEATS = 4
# Colour refinement goes at most this many operations deep.
ROUNDS = 6
# A kind whose first this many anchors give no two equal steps in a row is given up.
GIVE_UP = 12
# `rolled` holds this entry when the graph was searched and nothing repeats.
NO_REPEATS = Rolled("", 0, 0)
NO_REPEATS_TEXT = (f"roll=True: no run of {MIN_REPEATS} or more identical steps of a loop was found, "
                   "so nothing is rolled")


def roll(graph: Graph, max_nodes: int | None = None) -> Graph:
    """The graph with its runs of identical steps rolled up (or with
    `NO_REPEATS` in `rolled` when nothing repeats), then cut to `max_nodes`
    nodes nearest the outputs."""
    limit = check_max_nodes(max_nodes)
    with collector_paused():        # hundreds of thousands of small lists, none in a cycle
        return _rolled(graph, limit)


def _rolled(graph: Graph, limit: int | None) -> Graph:
    inputs: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
    for edge in graph.edges:
        inputs[edge.dst].append(edge.src)
    kinds = {n.id: n for n in graph.nodes}
    shared = {n.id for n in graph.nodes if n.kind == "leaf" and n.uses > 1}
    order = _inputs_first(inputs)
    runs: list[list[Step]] = []
    for candidates in _anchor_kinds(graph, inputs):
        for anchors in candidates:
            found = _runs(sorted(anchors, key=order.__getitem__), inputs, shared, kinds)
            runs = max(runs, found, key=lambda r: sum(map(len, r)))
        if runs:
            break
    if not runs:
        return cut_rolled(replace(graph, rolled=(*graph.rolled, NO_REPEATS)), limit)
    for run in runs:
        graph = _grouped(graph, {node_id for step in run[1:-1] for node_id in step}, len(run) - 2, kinds)
    return cut_rolled(graph, limit)


def _inputs_first(inputs: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Each node's place in an order where every node comes after its inputs
    (Kahn's algorithm; graphlib's TopologicalSorter took 2 s at 200,000 nodes)."""
    waiting = {node: len(srcs) for node, srcs in inputs.items()}
    users: dict[str, list[str]] = {node: [] for node in inputs}
    for node, srcs in inputs.items():
        for src in srcs:
            users[src].append(node)
    ready = [node for node, count in waiting.items() if not count]
    for node in ready:                  # grows as it goes
        for user in users[node]:
            waiting[user] -= 1
            if not waiting[user]:
                ready.append(user)
    return {node: k for k, node in enumerate(ready)}


def _anchor_kinds(graph: Graph, inputs: Mapping[str, Sequence[str]]) -> Iterator[list[list[str]]]:
    """Candidate anchors, round by round: operations of one name, then of
    one colour after each round of refinement (each list in walk order, a
    list tried in an earlier round left out). The caller stops asking once
    a round gave a run."""
    colour = {n.id: _first_colour(n) for n in graph.nodes}
    tried: set[tuple[str, ...]] = set()
    for _ in range(ROUNDS + 1):
        members: dict[object, list[str]] = {}
        for node in graph.nodes:
            if node.kind == "op":
                members.setdefault(colour[node.id], []).append(node.id)
        fresh = [a for a in members.values() if len(a) >= MIN_REPEATS and tuple(a) not in tried]
        tried.update(tuple(a) for a in fresh)
        yield fresh
        colour = _refined(colour, inputs)


def _first_colour(node: Node) -> object:
    """An operation by its name; a leaf used by several steps as itself, other leaves by name and shape."""
    if node.kind == "leaf" and node.uses > 1:
        return ("shared leaf", node.id)
    return (node.kind, node.label, node.detail if node.kind == "leaf" else "")


def _refined(colour: Mapping[str, object], inputs: Mapping[str, Sequence[str]]) -> dict[str, object]:
    """Each node's colour with its inputs' colours, renumbered compactly."""
    numbers: dict[object, int] = {}
    return {node_id: numbers.setdefault((here, tuple(colour[i] for i in inputs[node_id])), len(numbers))
            for node_id, here in colour.items()}


def _runs(anchors: Sequence[str], inputs: Mapping[str, Sequence[str]], shared: Collection[str],
          kinds: Mapping[str, Node]) -> list[list[Step]]:
    """The runs of at least MIN_REPEATS consecutive steps recording the same
    operations. Anchors come inputs first; step k is what anchor k reaches
    that no earlier anchor reached, and continues a run only when anchor k
    reaches anchor k - 1."""
    reached: set[str] = set()
    runs: list[list[Step]] = [[]]
    earlier: list[Step] = [[]]          # per run: the step before it, when its first step reached that one
    signature: tuple[str, ...] = ()
    before = ""
    last: Step = []
    for count, anchor in enumerate(anchors):
        step, linked = _new_reach(anchor, before, inputs, shared, reached)
        mine = tuple(sorted(kinds[i].label for i in step))
        if linked and step and mine == signature:
            runs[-1].append(step)
        else:
            earlier.append(last if linked and step and len(runs[-1]) < MIN_REPEATS else [])
            runs.append([step] if step else [])
            signature = mine
        if count >= GIVE_UP and max(map(len, runs)) < 2:
            break
        before, last = anchor, step
    whole = [[first, *run] if first and run and _starts_alike(run[0], first, inputs, kinds) else run
             for run, first in zip(runs, earlier, strict=True)]
    return [run for run in whole if len(run) >= MIN_REPEATS]


def _starts_alike(step: Step, first: Step, inputs: Mapping[str, Sequence[str]], kinds: Mapping[str, Node]) -> bool:
    """Whether `first`, the step before a run (a stack's first layer, whose
    step also took everything upstream of it), begins as the run's step
    `step` does: the same anchor with inputs of the same kinds and labels,
    in order. Then it counts as the run's first step (drawn, never folded):
    a stack of N layers folds N - 2 of them, an RNN of T steps T - 2."""
    def begins(anchor: str) -> list[tuple[str, str]]:
        return [(kinds[i].kind, kinds[i].label) for i in (anchor, *inputs[anchor])]
    return begins(step[0]) == begins(first[0])


def _new_reach(anchor: str, before: str, inputs: Mapping[str, Sequence[str]], shared: Collection[str],
               reached: set[str]) -> tuple[Step, bool]:
    """(the nodes `anchor` reaches through its inputs that are not yet in
    `reached`, now added to it; whether the walk met `before`)."""
    if anchor in reached:
        return [], False
    reached.add(anchor)
    step, queue, met = [anchor], deque([anchor]), False
    while queue:
        for source in inputs[queue.popleft()]:
            met = met or source == before
            if source not in reached and source not in shared:
                reached.add(source)
                step.append(source)
                queue.append(source)
    return step, met


def _grouped(graph: Graph, middle: set[str], count: int, kinds: Mapping[str, Node]) -> Graph:
    group_id = min(middle, key=lambda i: int(i[1:]))
    labels = sorted({kinds[i].label for i in middle if kinds[i].kind == "op"})
    group = Node(group_id, "group", f"× {count:,} steps", one_line("each: " + ", ".join(labels), MAX_LABEL))
    nodes = [group if n.id == group_id else n for n in graph.nodes if n.id not in middle or n.id == group_id]
    edges: list[Edge] = []
    seen: set[tuple[str, str]] = set()
    for edge in graph.edges:
        src = group_id if edge.src in middle else edge.src
        dst = group_id if edge.dst in middle else edge.dst
        if src != dst and (src, dst) not in seen:
            seen.add((src, dst))
            edges.append(Edge(src, dst, edge.slot, edge.output_nr))
    rolled = (*graph.rolled, Rolled(group_id, count, len(middle)))
    return replace(graph, nodes=tuple(nodes), edges=tuple(edges), rolled=rolled)


def cut_rolled(graph: Graph, limit: int | None) -> Graph:
    """At most `limit` nodes, nearest the outputs first (breadth first from
    the nodes nothing drawn uses), so every kept node leads to an output;
    as `walk.nearest` does, at most limit // 8 (at least 8) at any one depth,
    constants not held to that. A group left out counts as the nodes it holds."""
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
