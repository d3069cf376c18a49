"""What is drawn of a `Graph`, read by both of its forms (the DOT source,
`dot.py`, and the text form, `text_form.py`): the visible nodes and edges,
the saved values a drawing lists, the cut notice, and what keeps `dot`'s
layout of a drawing of at most `max_nodes` nodes under a second: which
nodes are drawn more than once (and the DOT names of the copies), and how
much work `dot` may spend on the layout.

Floor: layout, under `draw.py` and the two forms (`dot.py`, `text_form.py`),
over the graph floor. It imports `graph.py` (the Graph's types) and
`saved_values.py`; never a floor above it (`dot.py`, `text_form.py`,
`draw.py`), nor `svg.py`.

One node wired to every step of a long loop (the weight every step uses,
the unbind that hands each step its input, the stack that gathers every
step's output) makes edges that span the whole drawing, and `dot` then
takes seconds to minutes (an RNN over `emb(tokens).unbind(0)`: 11.6 s at
199 nodes; two stacked `nn.RNN` layers: 77 s). Drawn once beside each use,
or once beside each input, it lays out in a tenth of a second. Every copy
says it is the same node (dot.py gives it a double border and a line);
the text form keeps each node once, with its true edges.

What remains is bounded by `dot`'s own settings (`settings`): above
BOUNDED_LAYOUT nodes, fewer network-simplex and crossing rounds; above
QUICK_LAYOUT, straight edges too; and when the edges span many ranks
(each step gathering the last eight steps' outputs, as DenseNet's blocks
do), no network-simplex rounds for the x coordinates at all: dot lays out
a graph of N nodes with a virtual node on every rank an edge crosses, and
its x-coordinate rounds grow with those (300 nodes, 7,800 crossed ranks:
3.9 s with rounds, 0.3 s without, in a narrower if less straight drawing).
"""

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

from .graph import Edge, Graph, Node
from .saved_values import Saved

# The mark on a node whose inputs were cut, in both forms.
CUT_MARK = "[inputs not drawn]"
BOUNDED_LAYOUT = 100
BOUNDED = '  graph [nslimit=2, nslimit1=2, mclimit=0.3];'
QUICK_LAYOUT = 200
QUICK = '  graph [splines=line, nslimit=2, nslimit1=2, mclimit=0.3];'
# Above this many ranks crossed by edges (the virtual nodes of dot's layout), no x-coordinate rounds.
CROSSED_LIMIT = 4_000
FASTEST = '  graph [splines=line, nslimit=0, nslimit1=2, mclimit=0.1];'
# A leaf used more often than this is drawn once beside each use.
SHARED_LIMIT = 4
# Any other node with more uses, or more inputs, than this is drawn once
# beside each of them: the original with its inputs (or its uses), saved
# values and marks; the copies with its name and the line that says so.
FAN_LIMIT = 8
# Kinds of node dot places right beside their use: their edges are never long.
NEAR = ("leaf", "const")


def visible(graph: Graph, constants: bool = True) -> tuple[list[Node], list[Edge]]:
    """The nodes and edges to draw: constants left out unless asked for."""
    shown = [n for n in graph.nodes if constants or n.kind != "const"]
    ids = {n.id for n in shown}
    return shown, [e for e in graph.edges if e.src in ids and e.dst in ids]


def shown_saved(node: Node) -> list[Saved]:
    """The saved values a drawing lists: sizes and strides kept only for
    shape bookkeeping (names with "_sym_") are left out; the Graph has them."""
    return [s for s in node.saved if "_sym_" not in s.name]


def counted(number: int, noun: str, plural: str = "") -> str:
    """`number` and `noun`, agreeing: "1 operation", "2 operations", "0
    operations" (`plural` where adding an s is wrong: "leaf", "leaves")."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def cut_notice(graph: Graph) -> str:
    """The line that says how much of the graph was left out (at least how
    much, when the walk stopped counting: `Graph.counted` False)."""
    if not graph.counted:
        return (f"... at least {counted(graph.omitted, 'more node')} not drawn: {len(graph.nodes)} shown, "
                f"nearest the output first (raise max_nodes to see more)")
    total = len(graph.nodes) + graph.omitted
    return (
        f"... {counted(graph.omitted, 'more node')} not drawn: {len(graph.nodes):,} of {total:,} shown, "
        f"nearest the output first (raise max_nodes to see more)"
    )


def rolled_out_notice(graph: Graph) -> str:
    """The line that says the cut left out groups of rolled steps ("" when
    it left out none), so a rolled drawing is never silently unrolled-looking."""
    if not graph.rolled_out:
        return ""
    steps = sum(r.steps for r in graph.rolled_out)
    return (f"roll=True: the cut left out {counted(len(graph.rolled_out), 'rolled group')} "
            f"({counted(steps, 'step')} folded): raise max_nodes to draw them")


def fans(nodes: Sequence[Node], edges: Sequence[Edge]) -> tuple[dict[str, int], dict[str, int]]:
    """(node id -> drawn uses, for nodes drawn once per use; node id ->
    drawn inputs from other operations, for nodes drawn once per such
    input). Leaves and constants sit right beside their use, so inputs from
    them are not counted (the weights of a rolled loop's group stay with it)."""
    kinds = {n.id: n.kind for n in nodes}
    uses = Counter(e.src for e in edges)
    inputs = Counter(e.dst for e in edges if kinds[e.src] not in NEAR)
    shared = {n.id: uses[n.id] for n in nodes
              if uses[n.id] > (SHARED_LIMIT if n.kind == "leaf" else FAN_LIMIT)}
    gathered = {n.id: inputs[n.id] for n in nodes if inputs[n.id] > FAN_LIMIT}
    return shared, gathered


def use_copies(node: Node, uses: int) -> list[str]:
    """The DOT names of a node drawn once per use, beyond the node itself:
    all of a leaf's (`id_1`, `id_2`, ...); an operation's from `id_2` (its
    first use is drawn from the node itself, which has its inputs)."""
    return [f"{node.id}_{k}" for k in range(1 if node.kind == "leaf" else 2, uses + 1)]


def input_copies(node: Node, inputs: int) -> list[str]:
    """The DOT names of a node drawn once per input, beyond the node itself
    (which takes its first input and all its uses): `id_in2`, `id_in3`, ..."""
    return [f"{node.id}_in{k}" for k in range(2, inputs + 1)]


def edge_ends(edges: Sequence[Edge], kinds: Mapping[str, str], shared: Collection[str],
              gathered: Collection[str]) -> Iterator[tuple[str, str, Edge]]:
    """(DOT source, DOT destination, edge) for every edge (`kinds`: node id
    -> kind): each use of a shared node from its own copy, each input from
    another operation into a gathering node's own copy, in the order
    `use_copies` and `input_copies` name them."""
    out_numbers: Counter[str] = Counter()
    in_numbers: Counter[str] = Counter()
    for e in edges:
        src, dst = e.src, e.dst
        if src in shared:
            out_numbers[src] += 1
            src = src if out_numbers[src] == 1 and kinds[src] != "leaf" else f"{src}_{out_numbers[src]}"
        if dst in gathered and kinds[e.src] not in NEAR:
            in_numbers[dst] += 1
            dst = dst if in_numbers[dst] == 1 else f"{dst}_in{in_numbers[dst]}"
        yield src, dst, e


def settings(nodes: int, ends: Iterable[tuple[str, str]]) -> list[str]:
    """The DOT lines that bound `dot`'s work on `nodes` nodes joined by
    edges `ends` (DOT source, DOT destination)."""
    # a drawing of at most BOUNDED_LAYOUT nodes crosses fewer (the corpus's densest: 2,121 at 100)
    if nodes > BOUNDED_LAYOUT and crossed_ranks(ends) > CROSSED_LIMIT:
        return [FASTEST]
    return [QUICK] if nodes > QUICK_LAYOUT else [BOUNDED] if nodes > BOUNDED_LAYOUT else []


def crossed_ranks(ends: Iterable[tuple[str, str]]) -> int:
    """About how many virtual nodes dot's layout makes: ranks counted from
    the outputs (a node one rank above its highest use), and every edge
    crossing the ranks between its ends."""
    consumers: dict[str, list[str]] = {}
    inputs: dict[str, list[str]] = {}
    pairs = list(ends)
    for src, dst in pairs:
        consumers.setdefault(src, []).append(dst)
        consumers.setdefault(dst, [])
        inputs.setdefault(dst, []).append(src)
    # consumers first, by Kahn's algorithm in plain dicts (graphlib's TopologicalSorter: 2 to 3 s at 200,000 nodes)
    waiting = {node: len(uses) for node, uses in consumers.items()}
    ready = [node for node, count in waiting.items() if not count]
    height: dict[str, int] = {}
    while ready:
        node = ready.pop()
        uses = consumers[node]
        height[node] = 1 + max(map(height.__getitem__, uses)) if uses else 0
        for src in inputs.get(node, ()):
            waiting[src] -= 1
            if not waiting[src]:
                ready.append(src)
    if len(height) < len(consumers):
        raise ValueError("crossed_ranks: the edges make a cycle")
    return sum(height[src] - height[dst] - 1 for src, dst in pairs)
