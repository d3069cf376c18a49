"""Roll a long graph up: the steps a loop recorded once per round, found from
the graph's own repeated structure, become one group node marked "× N steps".

How steps are found: an operation that occurs at least four times, each
occurrence reachable from the one nearer the output, is an anchor (the
TanhBackward0 of every RNN step, say). Step k is what a walk from anchor k
meets before anchor k + 1 (leaves shared by several steps stay apart). A run
of consecutive steps with the same operations is rolled: its first and last
step stay drawn, the ones between become a group node. Nothing is lost: the
graph's `rolled` field says how many steps and nodes each group holds.
"""

from collections import Counter, deque
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TypeAlias

from .graph import Edge, Graph, Node, Rolled

# A step: the ids of the nodes one round of the loop recorded, sorted.
Step: TypeAlias = list[str]

MIN_REPEATS = 4


def roll(graph: Graph) -> Graph:
    """The graph with its longest run of identical steps rolled up, or the
    graph itself when nothing repeats."""
    inputs: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
    for edge in graph.edges:
        inputs[edge.dst].append(edge.src)
    kinds = {n.id: n for n in graph.nodes}
    shared = {n.id for n in graph.nodes if n.kind == "leaf" and n.uses > 1}
    runs = (_longest_run(_steps(anchors, inputs, shared), kinds) for anchors in _anchor_chains(graph))
    run: list[Step] = max(runs, key=len, default=[])
    if len(run) < MIN_REPEATS:
        return graph
    middle = [node_id for step in run[1:-1] for node_id in step]
    return _grouped(graph, set(middle), len(run) - 2, kinds)


def _anchor_chains(graph: Graph) -> Iterator[list[str]]:
    counts = Counter(n.label for n in graph.nodes if n.kind == "op")
    for label, count in counts.items():
        if count >= MIN_REPEATS:
            yield [n.id for n in graph.nodes if n.kind == "op" and n.label == label]


def _steps(anchors: Sequence[str], inputs: Mapping[str, Sequence[str]], shared: Collection[str]) -> list[Step]:
    """Step k: the nodes a walk from anchor k meets before anchor k + 1; the
    chain ends where the next anchor is not met."""
    steps: list[Step] = []
    taken: set[str] = set()
    for here, below in zip(anchors, anchors[1:], strict=False):
        seen, queue, met = {here}, deque([here]), False
        while queue:
            for source in inputs[queue.popleft()]:
                if source == below:
                    met = True
                elif source not in seen and source not in taken and source not in shared:
                    seen.add(source)
                    queue.append(source)
        if not met:
            break
        steps.append(sorted(seen))
        taken |= seen
    return steps


def _longest_run(steps: Sequence[Step], kinds: Mapping[str, Node]) -> list[Step]:
    """The longest run of consecutive steps recording the same operations."""
    def signature(step: Step) -> tuple[str, ...]:
        return tuple(sorted(kinds[i].label for i in step))

    best: list[Step] = []
    start = 0
    for end in range(1, len(steps) + 1):
        if end == len(steps) or signature(steps[end]) != signature(steps[start]):
            best = max(best, list(steps[start:end]), key=len)
            start = end
    return best


def _grouped(graph: Graph, middle: set[str], count: int, kinds: Mapping[str, Node]) -> Graph:
    group_id = min(middle, key=lambda i: int(i[1:]))
    labels = sorted({kinds[i].label for i in middle if kinds[i].kind == "op"})
    group = Node(group_id, "group", f"× {count:,} steps", "each: " + ", ".join(labels))
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
