"""Check a traced graph against an independent walk of next_functions, and
that it draws; shared by the real-model tests and the operator sweep."""

import torch

from helpers import draw_graph, trace_graph


def independent_walk(roots):
    """Distinct autograd nodes and non-None edges behind the roots, by a plain walk sharing no code with helpers/."""
    seen, stack, edges = set(), [r.grad_fn for r in roots], 0
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        for child, _ in fn.next_functions:
            if child is not None:
                edges += 1
                stack.append(child)
    return len(seen), edges, sorted(fn.name().removeprefix("torch::autograd::") for fn in seen)


def check_graph(*roots):
    roots = [r for r in roots if isinstance(r, torch.Tensor) and r.grad_fn is not None]
    graph = trace_graph(roots)
    count, edges, names = independent_walk(roots)
    real = [n for n in graph.nodes if n.kind in ("op", "leaf")]
    kinds = {n.id: n.kind for n in graph.nodes}
    real_edges = [e for e in graph.edges if kinds[e.src] != "const" and kinds[e.dst] != "output"]
    assert (len(real), len(real_edges)) == (count, edges)
    assert sorted(n.label if n.kind == "op" else "AccumulateGrad" for n in real) == names
    drawing = draw_graph(roots, max_nodes=None if count < 400 else 300)
    assert drawing.source.startswith("digraph") and str(drawing)
    return graph, drawing


def unconnected(graph):
    """Ids of drawn nodes with no path of drawn edges to an output (or, for a graph started from grad_fn nodes, to a
    start nothing drawn consumes): a cut must leave none."""
    starts = [n.id for n in graph.nodes if n.kind == "output"] or [graph.nodes[0].id]
    reached, stack = set(starts), list(starts)
    inputs = {}
    for edge in graph.edges:
        inputs.setdefault(edge.dst, []).append(edge.src)
    while stack:
        for src in inputs.get(stack.pop(), []):
            if src not in reached:
                reached.add(src)
                stack.append(src)
    return [n.id for n in graph.nodes if n.id not in reached]
