"""Turn a captured FX graph (a backend's, AOTAutograd's) into the `Graph`
`trace_graph` makes, drawn in the same vocabulary: inputs as leaves, calls as
operations, numbers as constants. Numbered as the autograd walk numbers:
breadth first from the output through each node's arguments, then the nodes
the output does not use, in the FX graph's order."""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import torch
import torch.fx
from torch.utils._pytree import tree_leaves

from .arguments import MAX_NODES, check_flag, check_max_nodes, learner_facing, wrong
from .draw import Drawing, draw_graph
from .graph import Edge, Graph, Node
from .roll import cut_rolled
from .roll import roll as roll_up
from .saved_values import MAX_LABEL, one_line, shape_text

# Where the collection's FX graphs come from (helpers.compiled), for what fx_of refuses.
CAPTURE = ("capture one with compile_calls(f, [(x,)]).graphs[0] (what dynamo captured) or aot_split(f, x).forward "
           "and .backward (AOTAutograd's two graphs), both from helpers.compiled (for a model torch.compile "
           "returned, pass them model._orig_mod), or torch.fx.symbolic_trace(f); an ExportedProgram holds its "
           "graph in .graph_module. A tensor's autograd graph is drawn by draw_graph(y)")


def fx_of(source: object) -> torch.fx.Graph:
    if isinstance(source, torch.fx.GraphModule):
        return source.graph
    if isinstance(source, torch.fx.Graph):
        return source
    raise wrong(TypeError, f"expected a captured FX graph, a torch.fx.GraphModule or torch.fx.Graph; got a "
                f"{type(source).__name__}: {CAPTURE}")


@learner_facing
def fx_graph(source: torch.fx.GraphModule | torch.fx.Graph) -> Graph:
    """The `Graph` of an FX graph, numbered in walk order."""
    fx = fx_of(source)
    every = list(fx.nodes)
    starts = [node for node in every if node.op == "output"]
    ids = {node: f"n{i}" for i, node in enumerate(starts)}
    nodes, edges, queue = [_node(ids[node], node) for node in starts], [], deque(starts)
    unused = iter(every)
    while queue or len(ids) < len(every):
        if not queue:                   # a node the output does not use: on from the first of them
            rest = next(node for node in unused if node not in ids)
            ids[rest] = f"n{len(nodes)}"
            nodes.append(_node(ids[rest], rest))
            queue.append(rest)
        user = queue.popleft()
        for slot, given in enumerate(_inputs(user)):
            if not isinstance(given, torch.fx.Node):        # a number the call took: its own constant
                nodes.append(Node(f"n{len(nodes)}", "const", one_line(repr(given), MAX_LABEL)))
                edges.append(Edge(nodes[-1].id, ids[user], slot))
                continue
            if given not in ids:
                ids[given] = f"n{len(nodes)}"
                nodes.append(_node(ids[given], given))
                queue.append(given)
            edges.append(Edge(ids[given], ids[user], slot))
    uses = Counter(edge.src for edge in edges)
    nodes = [replace(n, uses=uses[n.id]) if n.kind == "leaf" else n for n in nodes]
    return Graph(tuple(nodes), tuple(edges), inputs=tuple(n.id for n in nodes if n.kind == "leaf"))


def _inputs(node: torch.fx.Node) -> list[Any]:
    """What a node takes, flattened in order: other nodes and constants (None left out)."""
    return [item for item in tree_leaves((node.args, dict(node.kwargs))) if item is not None]


def _node(node_id: str, node: torch.fx.Node) -> Node:
    if node.op == "output":
        return Node(node_id, "output", "output")
    if node.op in ("placeholder", "get_attr"):
        return Node(node_id, "leaf", one_line(_input_name(node), MAX_LABEL), _shape(node))
    shape, module_class = _shape(node), _module_class(node)
    if module_class:                    # Linear, its path beside the shape: layers alike roll
        return Node(node_id, "op", one_line(module_class, MAX_LABEL),
                    one_line(", ".join(filter(None, (str(node.target), shape)))))
    return Node(node_id, "op", operation_name(node), shape)


def _input_name(node: torch.fx.Node) -> str:
    """An input's name as the learner wrote it, from dynamo's: L_x_ is x,
    L_args_0_ is args[0], a parameter as `named_parameters()` names it
    (L_fn_modules_0_parameters_weight_ is 0.weight), another module's as written
    (G_m_modules_0_parameters_weight_ is m[0].weight)."""
    name = str(node.target)
    if not (name[:2] in ("L_", "G_") and name.endswith("_")):
        return name
    root, *path = _SOURCE_PARTS.split(name[2:-1])
    names = path[1::2]
    if root in ("self", "fn") and names:
        return ".".join(names)
    spelled = "".join(f"[{n}]" if n.isdigit() else f".{n}" for n in names)
    return re.sub(r"^(args)_(\d+)$", r"\1[\2]", root) + spelled


# Dynamo names an input by its source, each attribute step spelled _modules_, _parameters_ or _buffers_.
_SOURCE_PARTS = re.compile(r"_(modules|parameters|buffers)_")


def operation_name(node: torch.fx.Node) -> str:
    """A call's short name: "mul" for operator.mul and aten.mul.Tensor, a
    method's name, a submodule's class (or its path without the module)."""
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return one_line(target._opname, MAX_LABEL)
    module_class = _module_class(node)
    if module_class:
        return one_line(module_class, MAX_LABEL)
    name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
    return one_line(str(name), MAX_LABEL)


def _module_class(node: torch.fx.Node) -> str:
    owner = node.graph.owning_module
    if node.op != "call_module" or owner is None or not isinstance(node.target, str):
        return ""
    try:
        return type(owner.get_submodule(node.target)).__name__
    except AttributeError:
        return ""


def _shape(node: torch.fx.Node) -> str:
    value = node.meta.get("val", node.meta.get("example_value"))
    return shape_text(value) if isinstance(value, torch.Tensor) else ""


def operations(source: torch.fx.GraphModule | torch.fx.Graph) -> list[str]:
    """The short names of the graph's calls, in the FX graph's own order."""
    return [operation_name(node) for node in fx_of(source).nodes if node.op not in ("placeholder", "get_attr",
                                                                                    "output")]


@learner_facing
def draw_fx(source: torch.fx.GraphModule | torch.fx.Graph, *, max_nodes: int | None = MAX_NODES,
            roll: bool = False, **options: Any) -> Drawing:
    """`draw_graph(fx_graph(source), **options)`, each input's second line
    saying it is a graph input. max_nodes and roll as draw_graph's (the FX
    graph is read whole first); no params: the capture names the inputs."""
    if "params" in options:
        raise wrong(TypeError, "draw_fx takes no params: an FX graph names its own inputs (x for dynamo's L_x_, "
                    "0.weight for a parameter of the module compiled); to name leaves, draw the autograd graph: "
                    "draw_graph(model(x), model)")
    limit = check_max_nodes(max_nodes)
    graph = fx_graph(source)
    graph = roll_up(graph, limit) if check_flag(roll, "roll") else cut_rolled(graph, limit)
    return draw_graph(graph, **options)


def joined(parts: Sequence[tuple[str, Graph]]) -> Graph:
    """Several graphs in one, each (title, graph) in turn, its nodes
    renumbered on, its output named by its title."""
    nodes: list[Node] = []
    edges: list[Edge] = []
    inputs: list[str] = []
    for title, graph in parts:
        new = {node.id: f"n{len(nodes) + i}" for i, node in enumerate(graph.nodes)}
        nodes += [replace(n, id=new[n.id], label=title if n.kind == "output" else n.label) for n in graph.nodes]
        edges += [replace(e, src=new[e.src], dst=new[e.dst]) for e in graph.edges]
        inputs += [new[i] for i in graph.inputs]
    return Graph(tuple(nodes), tuple(edges), inputs=tuple(inputs))
