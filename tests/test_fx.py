"""helpers/fx.py: an FX graph as the collection's Graph, numbered in walk
order, drawn with the autograd graphs' vocabulary; bad input refused with
what to pass instead."""

import operator

import pytest
import torch
import torch.fx

from helpers.arguments import MARK
from helpers.compiled import aot_split, compile_calls
from helpers.fx import draw_fx, fx_graph, operation_name, operations
from helpers.graph import trace_graph
from helpers.plan import LEAF_LINES
from tools.testkit.lessons import lesson_function

KINDS = {"output", "op", "leaf", "const"}


def _captured(function, *args):
    """The graphs dynamo hands a backend for one call of `function`."""
    return list(compile_calls(function, [args]).graphs)


def _square_times_three(x):
    return (x ** 2) * 3


def test_a_captured_branch_has_the_shape_of_its_autograd_graph():
    forward = lesson_function("01-dynamic-control-flow", "dynamic_forward")
    x = torch.tensor(3.0, requires_grad=True)
    (captured,) = _captured(forward, x, True)
    graph, eager = fx_graph(captured), trace_graph(forward(x, True))
    assert [n.kind for n in graph.nodes] == [n.kind for n in eager.nodes]
    assert graph.edges == eager.edges
    assert [n.label for n in graph.nodes if n.kind == "op"] == ["add", "mul"]
    assert [n.label for n in graph.nodes if n.kind == "const"] == ["1", "2"]
    assert graph.find("x")[0].detail == "scalar"


def test_the_same_graph_gives_the_same_ids_and_text_every_time():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    first, second = _captured(_square_times_three, x)[0], _captured(_square_times_three, x)[0]
    assert first is not second
    assert str(draw_fx(first)) == str(draw_fx(second))
    graph = fx_graph(first)
    assert [n.id for n in graph.nodes] == [f"n{i}" for i in range(len(graph.nodes))]
    assert graph.nodes[0].kind == "output" and {n.kind for n in graph.nodes} <= KINDS


def test_walk_order_is_breadth_first_from_the_output_and_unused_nodes_follow():
    fx = torch.fx.Graph()
    a, b, c = fx.placeholder("a"), fx.placeholder("b"), fx.placeholder("c")
    fx.call_function(torch.cos, (b,))                   # used by nothing
    product = fx.call_function(operator.mul, (fx.call_function(torch.cat, ([a, b],)),
                                              fx.call_function(torch.sin, (c,))))
    fx.output(fx.call_function(operator.add, (product, 2.0)))
    graph = fx_graph(fx)
    assert [(n.id, n.kind, n.label) for n in graph.nodes] == [
        ("n0", "output", "output"), ("n1", "op", "add"), ("n2", "op", "mul"), ("n3", "const", "2.0"),
        ("n4", "op", "cat"), ("n5", "op", "sin"), ("n6", "leaf", "a"), ("n7", "leaf", "b"), ("n8", "leaf", "c"),
        ("n9", "op", "cos")]
    assert [(e.src, e.dst, e.slot) for e in graph.edges] == [
        ("n1", "n0", 0), ("n2", "n1", 0), ("n3", "n1", 1), ("n4", "n2", 0), ("n5", "n2", 1), ("n6", "n4", 0),
        ("n7", "n4", 1), ("n8", "n5", 0), ("n7", "n9", 0)]
    assert graph.find("b")[0].uses == 2 and graph.find("a")[0].uses == 1


def test_aot_autograd_names_and_graph_module_or_graph_alike():
    traced = torch.fx.symbolic_trace(_square_times_three)
    assert operations(traced) == operations(traced.graph) == ["pow", "mul"]
    assert fx_graph(traced) == fx_graph(traced.graph)
    aten = torch.fx.Graph()
    aten.output(aten.call_function(torch.ops.aten.mul.Tensor, (aten.placeholder("primals_1"), 3)))
    assert operation_name(next(n for n in aten.nodes if n.op == "call_function")) == "mul"


@pytest.mark.system
def test_a_drawn_fx_graph_lays_out():
    svg = draw_fx(torch.fx.symbolic_trace(_square_times_three)).svg()
    assert svg.count('class="node"') == 6 and LEAF_LINES["input"] in svg


def test_an_input_used_more_than_the_shared_limit_is_a_graph_input_in_every_copy():
    """An input drawn once per use (plan.py) says "graph input" in each copy."""
    def five_uses(x):
        return x * 1 + x * 2 + x * 3 + x * 4 + x * 5

    source = draw_fx(torch.fx.symbolic_trace(five_uses)).source
    assert source.count(LEAF_LINES["input"]) == 5 and "AccumulateGrad" not in source


def _encoder_backward(layers=4):
    """AOTAutograd's backward graph of a small transformer encoder, hundreds of nodes."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)
    encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    return aot_split(encoder, torch.randn(5, 2, 16, requires_grad=True)).backward


def test_a_big_fx_graph_is_cut_to_max_nodes_as_draw_graph_cuts():
    backward = _encoder_backward()
    whole = fx_graph(backward)
    assert len(whole.nodes) > 300
    default, small = draw_fx(backward), draw_fx(backward, max_nodes=100)
    assert len(default.graph.nodes) == 300 and len(small.graph.nodes) == 100
    assert small.graph.omitted == len(whole.nodes) - 100 and small.graph.cut
    assert "not drawn" in small.text
    assert len(draw_fx(backward, max_nodes=None).graph.nodes) == len(whole.nodes)


def test_draw_fx_says_why_it_takes_no_params_and_rolls_when_asked():
    traced = torch.fx.symbolic_trace(_square_times_three)
    with pytest.raises(TypeError, match="FX graph names its own inputs") as caught:
        draw_fx(traced, params={"x": torch.ones(1)})
    assert getattr(caught.value, MARK, False)
    assert draw_fx(traced, roll=True).graph.rolled            # nothing repeats here, and the drawing says so
    with pytest.raises(TypeError, match="roll must be True or False"):
        draw_fx(traced, roll="yes")


def test_fx_inputs_are_named_as_the_learner_wrote_them():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))

    def through(*args):
        return model(args[0]).sum()

    (of_function,) = _captured(through, torch.randn(2, 3))
    (of_module,) = _captured(model, torch.randn(2, 3))
    inputs = [sorted(n.label for n in fx_graph(g).nodes if n.kind == "leaf") for g in (of_function, of_module)]
    assert inputs == [["args[0]", "model[0].bias", "model[0].weight", "model[2].bias", "model[2].weight"],
                      ["0.bias", "0.weight", "2.bias", "2.weight", "args[0]"]]


@pytest.mark.parametrize("bad", [42, None, torch.tensor(1.0), _square_times_three, torch.nn.Linear(3, 2),
                                 torch.compile(torch.nn.Linear(3, 2))])
def test_what_is_not_an_fx_graph_says_how_to_capture_one(bad):
    for helper in (fx_graph, draw_fx, operations):
        with pytest.raises(TypeError, match=f"got a {type(bad).__name__}: capture one with compile_calls") as caught:
            helper(bad)
        assert getattr(caught.value, MARK, False)
        assert "model._orig_mod" in str(caught.value) and "draw_graph(y)" in str(caught.value)


def test_the_captures_the_message_names_draw():
    model, x = torch.nn.Linear(3, 2), torch.randn(4, 3)
    assert draw_fx(torch.export.export(model, (x,)).graph_module).graph.count("op")
    assert draw_fx(compile_calls(model, [(x,)]).graphs[0]).graph.count("op")
    assert draw_fx(aot_split(model, x).backward).graph.count("op")


def test_a_traced_stack_of_layers_names_each_call_by_its_class_and_rolls():
    torch.manual_seed(0)
    stack = torch.nn.Sequential(torch.nn.Linear(4, 4),
                                *[torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()) for _ in range(6)])
    traced = torch.fx.symbolic_trace(stack)
    graph = fx_graph(traced)
    calls = [(n.label, n.detail) for n in graph.nodes if n.kind == "op"]
    assert calls[:3] == [("ReLU", "6.1"), ("Linear", "6.0"), ("ReLU", "5.1")], calls
    assert operations(traced) == ["Linear"] + ["Linear", "ReLU"] * 6
    rolled = draw_fx(traced, roll=True).graph
    assert [(r.steps, r.nodes) for r in rolled.rolled] == [(4, 8)]    # as an autograd graph rolls: T - 2 steps
    assert "each: Linear, ReLU" in draw_fx(traced, roll=True).text
    # a bare Graph has no module to look the path up in: the call is named by its path
    bare = torch.fx.Graph()
    bare.output(bare.call_module("layer.0", (bare.placeholder("x"),)))
    assert [n.label for n in fx_graph(bare).nodes if n.kind == "op"] == ["layer.0"]
