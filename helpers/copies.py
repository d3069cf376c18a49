"""Which nodes a drawing shows more than once, and the DOT names of the
copies: what keeps `dot`'s layout bounded.

One node wired to every step of a long loop (the weight every step uses,
the unbind that hands each step its input, the stack that gathers every
step's output) makes edges that span the whole drawing, and `dot` then
takes seconds to minutes (an RNN over `emb(tokens).unbind(0)`: 11.6 s at
199 nodes; two stacked `nn.RNN` layers: 77 s). Drawn once beside each use,
or once beside each input, it lays out in a tenth of a second. Every copy
says it is the same node (render.py gives it a double border and a line);
the text form keeps each node once, with its true edges.
"""

from collections import Counter
from collections.abc import Collection, Iterator, Sequence

from .graph import Edge, Node

# A leaf used more often than this is drawn once beside each use.
SHARED_LIMIT = 4
# Any other node with more uses, or more inputs, than this is drawn once
# beside each of them: the original with its inputs (or its uses), saved
# values and marks; the copies with its name and the line that says so.
FAN_LIMIT = 8


def fans(nodes: Sequence[Node], edges: Sequence[Edge]) -> tuple[dict[str, int], dict[str, int]]:
    """(node id -> drawn uses, for nodes drawn once per use; node id ->
    drawn inputs, for nodes drawn once per input)."""
    uses = Counter(e.src for e in edges)
    inputs = Counter(e.dst for e in edges)
    shared = {n.id: uses[n.id] for n in nodes
              if uses[n.id] > (SHARED_LIMIT if n.kind == "leaf" else FAN_LIMIT)}
    gathered = {n.id: inputs[n.id] for n in nodes if n.kind != "leaf" and inputs[n.id] > FAN_LIMIT}
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


def edge_ends(edges: Sequence[Edge], leaves: Collection[str], shared: Collection[str],
              gathered: Collection[str]) -> Iterator[tuple[str, str, Edge]]:
    """(DOT source, DOT destination, edge) for every edge: each use of a
    shared node from its own copy, each input of a gathering node into its
    own copy, in the order `use_copies` and `input_copies` name them."""
    out_numbers: Counter[str] = Counter()
    in_numbers: Counter[str] = Counter()
    for e in edges:
        src, dst = e.src, e.dst
        if src in shared:
            out_numbers[src] += 1
            src = src if out_numbers[src] == 1 and src not in leaves else f"{src}_{out_numbers[src]}"
        if dst in gathered:
            in_numbers[dst] += 1
            dst = dst if in_numbers[dst] == 1 else f"{dst}_in{in_numbers[dst]}"
        yield src, dst, e
