"""Walk the graph of notebook 07's from-scratch engine into the `Graph`
`trace_graph` makes of PyTorch's, with the same numbering rules. A value has
`.inputs` (empty for a leaf), `.op` ("" for a leaf) and `.data`, and may have
`.label`, `.requires_grad` (False: a constant) and `.grad`.
Floor: graph, beside `roll.py`, over `graph.py`."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping

from .arguments import ScratchValue
from .graph import Edge, Graph, Node
from .saved_values import MAX_LABEL, one_line


def scratch_graph(root: ScratchValue) -> tuple[Graph, dict[int, str]]:
    """(Graph, {id(value): node id}) for a scratch value: the output node,
    then its operations, leaves and constants, breadth-first in `inputs` order."""
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
    """A value's node, its labels one bounded printable line."""
    if value.inputs:
        return Node(node_id, "op", one_line(str(value.op), MAX_LABEL))
    if getattr(value, "requires_grad", True):
        return Node(node_id, "leaf", _name(value, "value"), one_line(f"data {value.data:.4g}"), uses=uses[node_id])
    return Node(node_id, "const", one_line(f"{value.data:g}"))


def _name(value: ScratchValue, unnamed: str) -> str:
    return one_line(str(getattr(value, "label", "") or unnamed), MAX_LABEL)
