"""Bad input to the helpers gets a TypeError or ValueError that says what to pass."""

import traceback
from pathlib import Path

import pytest
import torch

from helpers import draw_graph, trace_graph
from helpers.node_arguments import id_ranges
from tools.testkit.lessons import lesson_function


def _no_grad_result():
    x = torch.tensor(2.0, requires_grad=True)
    with torch.no_grad():
        return x * 2


@pytest.mark.parametrize("root, error, words", [
    (None, TypeError, "forgot to return"),
    ([torch.nn.Linear(3, 2).weight.grad_fn], TypeError, "A leaf's .grad_fn is None: a tensor made with "
     "requires_grad=True, or a parameter, is a leaf and has no grad_fn, so pass the tensor itself"),
    (3, TypeError, "Python number 3"),
    ("y", TypeError, "not its name"),
    ({"y": 1}, TypeError, "got a dict: pass one of the tensors it holds"),
    (torch.ones(2), ValueError, "requires_grad is False"),
    (torch.ones(2, requires_grad=True).detach(), ValueError, ".detach()"),
    (_no_grad_result(), ValueError, "torch.no_grad()"),
    ([], ValueError, "empty list"),
    ((torch.ones(1, requires_grad=True) * 2, 7), TypeError, "item 1 of the tuple"),
])
def test_bad_roots(root, error, words):
    for helper in (trace_graph, draw_graph):
        with pytest.raises(error, match="requires_grad=True|tensor") as caught:
            helper(root)
        assert words in str(caught.value)


def test_a_bad_argument_is_reported_from_the_callers_line():
    """The traceback a learner sees ends one frame below their own call: the
    checks deep inside the helpers are not shown."""
    with pytest.raises(ValueError) as caught:
        draw_graph(torch.ones(2))
    frames = traceback.extract_tb(caught.value.__traceback__)
    helper_frames = [f for f in frames if Path(f.filename).parent.name == "helpers"]
    assert [(Path(f.filename).name, f.name) for f in helper_frames] == [("arguments.py", "checked")]


def test_other_errors_keep_their_whole_traceback(monkeypatch):
    def broken(*args):
        raise ValueError("a bug, not a bad argument")

    monkeypatch.setattr("helpers.graph.walk_for", broken)
    with pytest.raises(ValueError, match="a bug") as caught:
        trace_graph(torch.ones(2, requires_grad=True) * 2)
    assert "broken" in [f.name for f in traceback.extract_tb(caught.value.__traceback__)]


def test_after_a_cut_errors_name_the_ids_there_are():
    """A cut graph's ids have gaps: the message lists the real runs, not
    n0 to n(count - 1)."""
    x = torch.randn(3, requires_grad=True)
    shared = [x.sin(), x.cos(), x.exp(), x.tanh(), x.sigmoid(), x.relu(), x.neg(), x.abs()]
    y = torch.stack(shared + [torch.randn(3, requires_grad=True).exp() for _ in range(12)]).sum()
    graph = trace_graph(y, max_nodes=20)
    assert [n.id for n in graph.nodes][-2:] == ["n10", "n23"]
    for wrong_argument in ({"highlight": "n11"}, {"notes": {"n11": "here?"}}):
        with pytest.raises(ValueError, match=r"It has the ids n0 to n10, n23 and the operations AbsBackward0"):
            draw_graph(graph, **wrong_argument)


def test_id_ranges_are_runs_and_bounded():
    ids = ["n1", "n2", "n4", "n6", "n7", "n8", *(f"n{i}" for i in range(20, 40, 2))]
    assert id_ranges(ids) == "n1 and n2, n4, n6 to n8, n20, n22, n24, and 7 more"
    assert id_ranges([]) == "(none)"


def _inside_vmap():
    found = []
    w = torch.randn(3, requires_grad=True)
    torch.func.vmap(lambda row: found.append(row * w) or row.sum())(torch.randn(4, 3))
    return found[0]


def _inference_result():
    x = torch.randn(3, requires_grad=True)
    with torch.inference_mode():
        return x * 2


@pytest.mark.parametrize("make, words", [
    (_inference_result, "made under torch.inference_mode(), which records no graph"),
    (lambda: torch.arange(3), "an integer tensor (torch.int64): only floating-point and complex"),
    (lambda: torch.max(torch.randn(3, 2, requires_grad=True), 0)[1], "torch.max(x, 0).values"),
    (_inside_vmap, "made inside torch.func.vmap"),
])
def test_no_graph_says_what_the_tensor_is(make, words):
    """Each kind of tensor without a graph is named, with why and what to draw."""
    tensor = make()
    for draw in (trace_graph, draw_graph):
        with pytest.raises(ValueError) as raised:
            draw(tensor)
        assert words in str(raised.value) and "requires_grad is False" not in str(raised.value)


def _small_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))
    return model, model(torch.randn(4, 3)).sum()


@pytest.mark.parametrize("call, error, words", [
    (lambda y, model: trace_graph(y, [1, 2]), TypeError, "params.*got a list"),
    (lambda y, model: trace_graph(y, {"w": 3}), TypeError, "params.*'w' -> int"),
    (lambda y, model: trace_graph(y, {1: torch.ones(1)}), TypeError, "params.*1 -> Tensor"),
    *[(lambda y, model, n=n: draw_graph(y, max_nodes=n), error, "max_nodes")
      for n, error in ((0, ValueError), (2.5, TypeError), ("10", TypeError), (True, TypeError))],
    (lambda y, model: draw_graph(y, constants="no"), TypeError, "constants must be True or False; got 'no'"),
    (lambda y, model: draw_graph(y, roll="yes please"), TypeError, "roll must be True or False; got 'yes please'"),
    (lambda y, model: trace_graph(y, {"x": torch.ones(3)}), ValueError, "names no tensor that requires grad"),
    (lambda y, model: trace_graph(trace_graph(y)), TypeError, "got a Graph"),
    (lambda y, model: trace_graph(y, saved="yes"), TypeError, "saved must be True or False"),
    (lambda y, model: draw_graph(trace_graph(y), model), ValueError, "params is not used for a Graph"),
    (lambda y, model: draw_graph(trace_graph(y), max_nodes=300), ValueError, "max_nodes is not used for a Graph"),
    (lambda y, model: draw_graph(trace_graph(y), model, roll=True), ValueError, "params and roll are not used"),
    (lambda y, model: draw_graph(y, constants=False, highlight="n3"), ValueError,
     "highlight names 'n3', a constant .* constants=False leaves constants out"),
    (lambda y, model: draw_graph(y, constants=False, highlight="None"), ValueError, "highlight names 'None'"),
    (lambda y, model: draw_graph(y, constants=False, notes={"n3": "the 3"}), ValueError,
     "notes names 'n3', a constant"),
])
def test_every_argument_is_used_or_refused(call, error, words, note_example):
    """An argument that would change nothing is an error that says what to
    pass instead, never silently ignored."""
    model, _ = _small_model()
    y = note_example[2]                         # n3 is the constant 3
    assert trace_graph(y).nodes[3].kind == "const"
    with pytest.raises(error, match=words):
        call(y, model)


def test_arguments_that_are_used_still_work(note_example):
    y = note_example[2]
    assert "[highlighted]" in str(draw_graph(y, constants=True, highlight="n3"))
    assert "# kept" in str(draw_graph(y, constants=False, notes={"n2": "kept"}, highlight="n2"))
    assert str(draw_graph(trace_graph(y)))
    model, out = _small_model()
    assert {"0.weight", "2.bias"} <= {n.label for n in trace_graph(out, model.state_dict(keep_vars=True)).nodes}


def test_a_compiled_model_names_its_leaves_as_the_original_module():
    model, _ = _small_model()
    compiled = torch.compile(model, backend="eager")
    out = compiled(torch.randn(4, 3)).sum()
    leaves = {n.label for n in trace_graph(out, compiled).nodes if n.kind == "leaf"}
    assert leaves == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert "_orig_mod" not in str(draw_graph(out, compiled))


def test_a_scratch_value_refuses_what_it_does_not_use():
    value = lesson_function("07-autograd-from-scratch", "Value")
    z = value(2.0, label="x") * value(3.0, label="w")
    assert str(draw_graph(z))
    for options, words in (({"max_nodes": 10}, "max_nodes is not used for a value of an engine written from"),
                           ({"roll": True}, "roll is not used"), ({"params": {}}, "params is not used")):
        with pytest.raises(ValueError, match=words):
            draw_graph(z, **options)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_module_says_to_draw_its_output(compiled):
    model = torch.nn.Linear(3, 2)
    given = torch.compile(model) if compiled else model
    kind = "Linear compiled by torch.compile" if compiled else "Linear"
    for helper in (trace_graph, draw_graph):
        with pytest.raises(TypeError, match=f"got a module \\({kind}\\)") as caught:
            helper(given)
        assert "pass its output, model(x), not the model" in str(caught.value)
        assert "draw_graph(model(x), model)" in str(caught.value)
    assert draw_graph(model(torch.randn(1, 3)), model).graph.find("weight")
