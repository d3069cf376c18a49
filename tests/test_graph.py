"""trace_graph: exact nodes and edges, checked against torch's own next_functions."""

import gc
import weakref
from dataclasses import replace

import pytest
import torch
import torch.fx
from graph_check import unconnected
from torch.autograd.graph import Node as AutogradNode

import helpers.graph
from helpers import draw_graph, saved_values, trace_graph
from helpers.arguments import roots_of
from helpers.graph import Edge, Graph, Node, autograd_nodes
from helpers.plan import CUT_MARK, plan_of
from helpers.saved_values import MAX_LABEL, Saved
from helpers.text_form import HIGHLIGHT_MARK, to_text
from helpers.walk import Walker, count_limit, nearest, walk_for
from tools.testkit.lessons import lesson_function
from tools.testkit.real_models import Counted, subclass_graph
from tools.testkit.shapes import rnn


def test_a_grad_fn_root_is_walked_as_torchs_next_functions(note_example):
    """The note's example walked from z: tests/test_dot.py's test_note_example_text."""
    x, _, z = note_example
    (pow_fn, _), (constant, _) = z.grad_fn.next_functions
    assert [n.label for n in trace_graph(z.grad_fn).nodes] == [z.grad_fn.name(), pow_fn.name(), "None", "tensor"]
    assert constant is None and pow_fn.next_functions[0][0].variable is x


def test_an_input_used_twice_gives_two_edges_and_the_output_used_is_recorded():
    x = torch.tensor(3.0, requires_grad=True)
    g = trace_graph(x * x, {"x": x})
    assert g.edges[1:] == (Edge("n2", "n1", 0, 0), Edge("n2", "n1", 1, 0)) and g.count("leaf") == 1
    second = torch.randn(2, 3, requires_grad=True).unbind(0)[1]
    assert trace_graph(second).edges[0] == Edge("n1", "n0", 0, 1) and second.output_nr == 1


def test_several_roots_share_one_walk():
    x = torch.tensor(1.0, requires_grad=True)
    h = x.exp()
    a, b = h * 2, h + 1
    g = trace_graph([a, b, a])
    assert [n.kind for n in g.nodes[:2]] == ["output", "output"]
    assert len(g.find("ExpBackward0")) == 1


def test_leaf_is_a_single_node():
    x = torch.ones(2, requires_grad=True)
    assert trace_graph(x, {"x": x}) == Graph((Node("n0", "leaf", "x", "shape (2,)"),), ())


def _double(held=None):
    """A custom autograd.Function class whose class holds `held` (a lookup table, say)."""

    class Double(torch.autograd.Function):
        table = held

        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return Double


def test_custom_function_saved_tensors():
    out = _double().apply(torch.ones(3, requires_grad=True))
    node = trace_graph(out).find("DoubleBackward")[0]
    assert node.saved == (Saved("saved_tensors", "tensor of shape (3,)"),)
    out.sum().backward()
    assert trace_graph(out).find("DoubleBackward")[0].saved[0].freed


def test_a_torch_whose_saved_tensors_do_not_say_gets_them_named_not_read(monkeypatch):
    """A SavedTensor without `unpack_hook`: torch < 2.10."""
    unpacked = []
    x = torch.ones(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: unpacked.append(t) or t):
        y = (x * x).sin().pow(2)
    monkeypatch.setattr(saved_values, "unpack_hook", lambda raw: saved_values._NO_ANSWER)
    graph = trace_graph(y)
    draw_graph(y)
    assert unpacked == []
    assert {s.text for n in graph.nodes for s in n.saved} == {saved_values.UNTOLD, "2"}
    assert len(saved_values.UNTOLD) <= saved_values.MAX_TEXT


def test_a_walk_leaves_the_garbage_collector_as_it_found_it(note_example, monkeypatch):
    """The walk pauses the cyclic collector for speed."""
    assert gc.isenabled()
    trace_graph(note_example[2])
    assert gc.isenabled()

    def failing_walk(starts, limit):
        assert not gc.isenabled()
        raise RuntimeError("a walk that fails")

    monkeypatch.setattr("helpers.graph.walk_for", failing_walk)
    with pytest.raises(RuntimeError, match="a walk that fails"):
        trace_graph(note_example[2])
    assert gc.isenabled()
    monkeypatch.undo()
    gc.disable()
    try:
        trace_graph(note_example[2])
        assert not gc.isenabled()
    finally:
        gc.enable()


def _drawn_cell(times):
    """A cell drawing, `times` times, a custom Function whose class holds 40 MB; a weak reference to those."""
    big = torch.zeros(10_000_000)
    out = _double(big).apply(torch.ones(3, requires_grad=True))
    for _ in range(times):
        assert trace_graph(out).find("DoubleBackward")
        draw_graph(out, roll=True)
        draw_graph(out)
    return weakref.ref(big)


def test_drawing_keeps_nothing_alive():
    cells = [_drawn_cell(times) for times in (0, 1, 3, 5)]
    gc.collect()
    assert [cell() is None for cell in cells] == [True] * 4


def test_drawing_a_tensor_subclass_runs_none_of_its_code():
    y, x, w = subclass_graph()
    Counted.calls.clear()
    assert y.shape == () and Counted.calls, "the subclass counts attribute reads"
    Counted.calls.clear()
    graph = trace_graph(y, {"x": x, "w": w})
    drawing = draw_graph(y, {"x": x})
    texts = [str(drawing), drawing.source, str(draw_graph(y, max_nodes=4)), str(draw_graph(y, roll=True))]
    assert autograd_nodes(y) and graph.find("x") and all(texts)
    assert Counted.calls == []


def _function_named(name):
    """A custom autograd.Function class named `name` (any string type() takes)."""

    def forward(ctx, a):
        return a * 2

    def backward(ctx, grad):
        return grad * 2

    methods = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    return type(name, (torch.autograd.Function,), methods)


def _odd_drawing():
    """Names and a note with a newline, a control character, a lone surrogate, long; a 40-dimensional shape."""
    x = torch.randn(*[1] * 40, requires_grad=True)
    y = _function_named("Two\nLines\x07" + "Long" * 100).apply(x).sum()
    return draw_graph(y, {"w\nx\x01\ud800" + "w" * 100: x}, notes={"n1": "a note\non two lines \ud800"})


def test_every_label_is_one_bounded_printable_line():
    drawing = _odd_drawing()
    graph = drawing.graph
    texts = [t for n in graph.nodes for t in (n.detail, *(s.text for s in n.saved))]
    assert all(t.isprintable() and len(t) <= 60 for t in texts), texts
    assert all(n.label.isprintable() and len(n.label) <= 100 for n in graph.nodes)
    every = str(drawing).splitlines()
    assert all(len(line) <= 120 for line in every), max(every, key=len)     # a long node line goes on, indented
    lines = [line for line in every if not line.startswith("    ")]
    assert len(lines) == 1 + len(graph.nodes) + len(graph.edges) and len(every) > len(lines)
    assert lines[2] == "n1 op: SumBackward0 # a note on two lines \\ud800"
    assert lines[3].startswith("n2 op: Two Lines\\x07LongLong") and lines[3].endswith("…")
    assert str(drawing).encode() and drawing.source.encode() and drawing.alternative().encode()


@pytest.mark.system
def test_dot_lays_out_labels_with_control_characters():
    drawing = _odd_drawing()
    assert "Two Lines" in drawing.svg() and drawing.html().encode()


def _kept(walkers, walked):
    walkers.append(walked[0])
    return walked


def test_a_drawing_of_max_nodes_walks_as_much_at_any_length(monkeypatch):
    """The times: make bench."""
    walkers = []
    monkeypatch.setattr(helpers.graph, "walk_for", lambda *a: _kept(walkers, walk_for(*a)))
    counts = []
    for steps in (10_000, 100_000):
        w, h = rnn(steps)
        walkers.clear()
        draw_graph(h, {"W": w})
        (walker,) = walkers                     # every node met and no longer queued was stepped
        counts.append(sum(isinstance(item, AutogradNode) for item in walker.items) - len(walker.queue))
    assert counts[0] == counts[1] <= count_limit(300)


def test_a_graph_walked_in_part_says_at_least_how_many_more():
    w, h = rnn(100_000)
    graph = trace_graph(h, {"W": w}, max_nodes=300)
    assert (graph.counted, len(graph.nodes), graph.omitted) == (False, 300, count_limit(300) - 300)
    drawing = draw_graph(h, {"W": w})
    assert "at least 2,700 more nodes not drawn: 300 shown, nearest the output first" in str(drawing)
    assert "of 200,003" not in str(drawing) and "shared: at least 1,498 uses, " in drawing.source
    w, h = rnn(1_000)
    graph = trace_graph(h, max_nodes=300)
    assert (graph.counted, graph.omitted) == (True, 2_003 - 300)
    drawing = draw_graph(h, {"W": w})
    assert "... 1,703 more nodes not drawn: 300 of 2,003 shown, nearest the output first" in str(drawing)
    assert "shared: 1,000 uses, " in drawing.source


@pytest.mark.parametrize("max_nodes", [1, 8, 30, 300])
def test_a_walk_stopped_early_keeps_what_the_whole_walk_keeps(max_nodes):
    torch.manual_seed(0)
    x = torch.randn(40, requires_grad=True)
    weights = torch.randn(40, 3, requires_grad=True)
    pieces = [torch.tanh(p * w) for p, w in zip(x.unbind(), weights.unbind(), strict=True)]
    roots = [sum(pieces), *rnn(3_000)[1:]]
    whole = Walker(roots_of(roots))
    whole.run()
    kept = set(nearest(whole, max_nodes))
    graph = trace_graph(roots, max_nodes=max_nodes)
    assert [n.id for n in graph.nodes] == [f"n{i}" for i in sorted(kept)]
    assert len(graph.edges) == sum(s in kept and d in kept for s, d, _, _ in whole.links)
    assert graph.cut == tuple(f"n{d}" for d in sorted({d for s, d, _, _ in whole.links if d in kept and s not in kept}))
    assert not graph.counted and graph.omitted < len(whole.items) - len(graph.nodes)
    assert unconnected(graph) == []


def test_a_from_scratch_engines_labels_are_one_bounded_line():
    value = lesson_function("07-autograd-from-scratch", "Value")
    x = value(2.0, label="x\nwith a newline\x07" + "y" * 200)
    z = value(3.0, inputs=(x,), op="mul\ttimes " + "z" * 200)
    graph = draw_graph(z).graph
    assert all(n.label.isprintable() and len(n.label) <= MAX_LABEL for n in graph.nodes)
    assert graph.find("x with a newline\\x07" + "y" * (MAX_LABEL - 21) + "…")


def _saved_corpus():
    """Saved values of every kind a walk describes from a key or must read in full, each kind more than once."""
    torch.manual_seed(0)
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, 3, requires_grad=True)
    pieces = [x.pow(0.0), x.pow(-0.0), x.pow(1), x.pow(True), x.pow(1.0), x.pow(2.5), x.pow(0.0),
              x.clamp(min=0), x.clamp(min=-0.0), x.clamp(min=False), x.sum(dim=(0,), keepdim=True).expand(3),
              x.sum(dim=0, keepdim=False).expand(3), (w @ x).sin(), (w @ x).sin(), x.exp(), x.exp().exp()]
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pieces += [x.sin(), x.sin()]
    pieces += [_double(torch.zeros(1)).apply(x), _double(torch.zeros(1)).apply(x)]
    changed = x.clone()
    pieces += [changed.sin(), changed.sin()]
    changed.add_(1)
    freed = (x.cos() * w[0]).sum()
    freed.backward()
    pieces += [freed.expand(3), x.cos()]
    h = x
    for _ in range(600):                      # past SHALLOW_FROM: a walk that holds inputs
        h = torch.tanh(w @ h)
    return sum(pieces) + h


def test_saved_values_of_every_kind_are_described():
    graph = trace_graph(_saved_corpus())
    texts = {s.text for n in graph.nodes for s in n.saved if s.name in ("exponent", "min")}
    assert {"0", "-0", "1", "True", "False", "2.5"} <= texts
    assert {"freed", "packed by a saved-tensor hook (as Tensor)"} <= {s.text for n in graph.nodes for s in n.saved}
    assert any(s.text.startswith("modified in place") for n in graph.nodes for s in n.saved)


def test_the_text_form_of_a_big_graph_keeps_its_marks_within_the_line_limit():
    graph = trace_graph(_saved_corpus(), max_nodes=900)
    long_id = replace(graph.nodes[5], id="n5" + "9" * 150)
    nodes = (*graph.nodes[:5], long_id, *graph.nodes[6:])
    edges = tuple(replace(e, src=long_id.id) if e.src == "n5" else e for e in graph.edges)
    graph = replace(graph, nodes=nodes, edges=edges)
    lit, notes = frozenset({"n7", "n40"}), {"n8": "a note", "n41": "a longer note " * 8}
    lines = to_text(plan_of(graph, highlight=lit, notes=notes)).splitlines()
    assert lines[6] == long_id.id[:120] and lines[7].startswith("    " + long_id.id[120:] + " op:")
    assert sum(HIGHLIGHT_MARK in line for line in lines) == 2 and sum("# a" in line for line in lines) == 2
    assert sum(CUT_MARK in line for line in lines) == len(graph.cut) > 0
    assert all(len(line) <= 120 for line in lines)


def test_the_cut_notice_of_a_graph_that_repeats_names_roll():
    w, h = rnn(1_000)
    said = " ".join(str(draw_graph(h, {"W": w})).split())
    assert "draw_graph(y, roll=True) folds its repeated steps; or raise max_nodes)" in said
    assert "not drawn" not in str(draw_graph(h, {"W": w}, roll=True))
    ops = [torch.sin, torch.cos, torch.exp, torch.tanh, torch.sigmoid, torch.neg, torch.abs, torch.square,
           torch.atan, torch.erf, torch.relu, torch.asinh]
    order = torch.randint(len(ops), (400,), generator=torch.Generator().manual_seed(0)).tolist()
    y = torch.randn(3, requires_grad=True)
    for k in order:                            # no run of identical steps: a random order of operations
        y = ops[k](y)
    plain = " ".join(str(draw_graph(y)).split())
    assert "not drawn" in plain and "(raise max_nodes to see more)" in plain and "roll=True" not in plain
