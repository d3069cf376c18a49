"""Walk the graph of a small autograd engine written from scratch (notebook
07) into the same `Graph` that `trace_graph` makes of PyTorch's, so the two
draw side by side with the same numbering rules.

A value of such an engine is anything with
  .inputs  the values it was computed from (a tuple; empty for a leaf)
  .op      the operation's name ("*", "sin", ...; "" for a leaf)
  .data    its number
and optionally .label (a leaf's name), .requires_grad (False: a constant,
drawn like PyTorch's None input) and .grad (shown by the step view).

Floor: graph, beside `roll.py` and over `graph.py`, whose `Graph` it makes.
It imports `graph.py` and `saved_values.py`; never `plan.py`, `dot.py`,
`text_form.py` or `draw.py`.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping

from .arguments import ScratchValue as ScratchValue  # the protocol above, with the other arguments' types
from .graph import Edge, Graph, Node
from .saved_values import MAX_LABEL, one_line


def trace_scratch(root: ScratchValue) -> Graph:
    """The `Graph` of a scratch value: an output node, then its operations,
    leaves and constants, breadth-first in `inputs` order."""
    graph, _ = scratch_graph(root)
    return graph


def scratch_graph(root: ScratchValue) -> tuple[Graph, dict[int, str]]:
    """(Graph, {id(value): node id}) for a scratch value."""
    order, index, queue = [root], {id(root): "n1"}, deque([root])
    links: list[Edge] = []
    while queue:
        value = queue.popleft()
        for slot, child in enumerate(value.inputs):
            if id(child) not in index:
                index[id(child)] = f"n{len(order) + 1}"
                order.append(child)
                queue.append(child)
            links.append(Edge(index[id(child)], index[id(value)], slot))
    uses = Counter(edge.src for edge in links)
    nodes = [Node("n0", "output", _name(root, "out"), one_line(f"data {root.data:.4g}"))]
    nodes += [_node(index[id(value)], value, uses) for value in order]
    return Graph(tuple(nodes), (Edge("n1", "n0"), *links)), index


def _node(node_id: str, value: ScratchValue, uses: Mapping[str, int]) -> Node:
    """A value's node; its labels are one bounded printable line, as the
    walk of PyTorch's graph makes them (a learner's engine may name an
    operation or a leaf anything)."""
    if value.inputs:
        return Node(node_id, "op", one_line(str(value.op), MAX_LABEL))
    if getattr(value, "requires_grad", True):
        return Node(node_id, "leaf", _name(value, "value"), one_line(f"data {value.data:.4g}"), uses=uses[node_id])
    return Node(node_id, "const", one_line(f"{value.data:g}"))


def _name(value: ScratchValue, unnamed: str) -> str:
    return one_line(str(getattr(value, "label", "") or unnamed), MAX_LABEL)
