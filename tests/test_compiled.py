"""helpers/compiled.py and compiled_view.py: what torch.compile makes of the
lessons' functions, as counts and operation names; the compile widget's view."""

import gc
import types
import weakref
from unittest.mock import Mock

import nbformat
import pytest
import torch

from helpers import compiled_view
from helpers.arguments import MARK
from helpers.compiled import aot_split, compile_calls, graph_breaks
from helpers.compiled_view import EARLIER, compile_view
from helpers.fx import operations
from helpers.lessons.nb09 import CALLS, CLIPPED
from helpers.models import TanhRNNCell, run_sequence
from helpers.plan import LEAF_LINES
from helpers.saved_memory import held_bytes
from tools.notebooks import NOTEBOOKS
from tools.testkit.lessons import lesson_function

NOTEBOOK = NOTEBOOKS / "09-torch-compile.ipynb"


def _lesson(name):
    return lesson_function("01-dynamic-control-flow", name)


def _square_times_three(x):
    return (x ** 2) * 3


def _sin_cos(x):
    return x.sin().cos()


def _doubled_sum(sequence):
    return (sequence * 2).sum(0)


def test_each_capture_starts_from_nothing():
    """Dynamo remembers a size that varied, by the function's place in its file: without a reset it starts dynamic."""
    calls = [(torch.ones(n, 2),) for n in (3, 4, 5)]
    assert len(compile_calls(_doubled_sum, calls, dynamic=False).graphs) == 3
    automatic = compile_calls(_doubled_sum, calls)       # static first, then one graph for any size
    assert len(automatic.graphs) == 2 and automatic.recompiles == 1


def test_a_branch_on_a_value_breaks_the_graph_and_cond_does_not():
    found = graph_breaks(_lesson("data_dependent"), torch.tensor([1.0, 2.0]))
    assert found.graphs == [["mul", "sum", "gt"], ["add"]] and found.count == 1 and len(found.reasons) == 1
    cond = graph_breaks(_lesson("cond_forward"), torch.tensor([1.0, 2.0]))
    assert cond.count == 0 and len(cond.graphs) == 1 and "cond" in cond.graphs[0]


def test_aot_autograd_splits_the_notes_example_into_a_forward_and_a_backward_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    split = aot_split(_square_times_three, x)
    assert split.forward.graph is not split.backward.graph
    assert operations(split.forward) == ["pow", "mul"]
    assert operations(split.backward) == ["mul", "pow", "mul", "mul"]
    assert split.saved_count() == 1 and split.before_backward == 1
    aot_split(_square_times_three, x)
    assert x.grad is None                                       # no .grad of the learner's is written
    _square_times_three(x).sum().backward()
    assert torch.equal(x.grad, torch.tensor([6.0, 12.0]))       # the learner's own backward, once


def test_aot_split_takes_a_module_and_a_function_returning_a_tuple():
    model, x = torch.nn.Linear(3, 2), torch.randn(4, 3, requires_grad=True)
    split = aot_split(model, x)
    assert "addmm" in operations(split.forward) and "mm" in operations(split.backward)
    assert model.weight.grad is None and model.bias.grad is None and x.grad is None
    both = aot_split(lambda a: (a.sin(), a.cos()), x)
    assert operations(both.forward) == ["sin", "cos"] and x.grad is None
    params = dict(model.named_parameters())
    functional = aot_split(lambda p, a: torch.func.functional_call(model, p, (a,)).sum(), params, x)
    assert "addmm" in operations(functional.forward) and model.weight.grad is None


def test_aot_split_refuses_a_lambda_over_a_module_with_what_to_pass():
    model = torch.nn.Linear(3, 2)
    with pytest.raises(TypeError, match="functional_call") as caught:
        aot_split(lambda a: model(a).sum(), torch.randn(4, 3))
    assert getattr(caught.value, MARK, False) and "aot_split(model, x)" in str(caught.value)
    with pytest.raises(ValueError, match="requires grad"):
        aot_split(lambda a: a * 2, torch.randn(3))


def test_aot_split_takes_a_models_tensors_in_a_dict_with_integer_inputs():
    """The dict's tensors are the ones that need grad (the token ids need none), and they are copied."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 2))
    model.register_buffer("scale", torch.tensor(2.0))
    ids, before = torch.tensor([1, 2, 3]), [p.detach().clone() for p in model.parameters()]
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    split = aot_split(lambda st, i: torch.func.functional_call(model, st, (i,)).sum() * st["scale"], state, ids)
    assert "embedding" in operations(split.forward) and "embedding_dense_backward" in operations(split.backward)
    assert all(p.grad is None for p in model.parameters())
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before, strict=True))
    with pytest.raises(TypeError, match="parameters or buffers") as caught:     # a buffer read from outside
        aot_split(lambda st, i: torch.func.functional_call(model, st, (i,)).sum() * model.scale,
                  dict(model.named_parameters()), ids)
    assert "named_buffers" in str(caught.value)


def test_aot_split_of_what_torch_compile_returns_says_to_pass_what_was_compiled():
    model, x = torch.nn.Linear(3, 2), torch.randn(4, 3)
    for compiled in (torch.compile(model), torch.compile(_square_times_three)):
        with pytest.raises(TypeError, match="give it what torch.compile was given") as caught:
            aot_split(compiled, x)
        assert getattr(caught.value, MARK, False) and "aot_split(model._orig_mod, x)" in str(caught.value)
    assert operations(aot_split(torch.compile(model)._orig_mod, x).forward)


def test_the_partitioner_saves_less_by_recomputing():
    x = torch.randn(1000, requires_grad=True)
    kept, recomputed = aot_split(_sin_cos, x), aot_split(_sin_cos, x, recompute=True)
    assert (kept.saved_count(), recomputed.saved_count()) == (2, 1)
    assert operations(recomputed.backward).count("sin") == operations(kept.backward).count("sin") + 1
    compiled = torch.compile(_sin_cos, backend="aot_eager")
    assert (held_bytes(_sin_cos, x), held_bytes(compiled, x)) == (8000, 4000)


def test_each_sequence_length_compiles_its_own_graph_until_marked_dynamic():
    torch.manual_seed(0)
    cell, batch = TanhRNNCell(3, 4), [torch.randn(n, 3) for n in (3, 7, 2)]
    captured = compile_calls(run_sequence, [(cell, s) for s in batch])
    assert [ops.count("tanh") for ops in captured.operations()] == [3, 7, 2] and captured.recompiles == 2


@pytest.mark.parametrize("earlier, flag, words, ops", [
    ("no call", True, "no graph yet, so dynamo captured graph 1; 1 graph compiled; graph 1 ran: mul, add",
     ["add", "mul"]),
    ("True", False, "guard use_extra_layer == True failed, so dynamo compiled graph 2; 2 graphs compiled; graph 2 "
     "ran: mul", ["mul"]),                       # the guard's own test, its comment cut
    ("True", True, "the guards of graph 1 (made for use_extra_layer=True) held: no recompile", ["add", "mul"]),
    ("True, False", False, "the guards of graph 2 (made for use_extra_layer=False) held", ["mul"]),
])
def test_the_compile_view_says_what_decided_and_draws_the_graph_that_ran(earlier, flag, words, ops):
    figure = compile_view(_lesson("dynamic_forward"), flag, earlier)
    assert figure.caption.startswith(f"use_extra_layer={flag} after {earlier}: ") and words in figure.caption
    graph = figure.drawing.graph
    compiled_ops = [n.label for n in graph.nodes if n.kind == "op" and not n.label.endswith("Backward0")]
    assert compiled_ops == ops
    assert [n.label for n in graph.nodes if n.kind == "output"][0].startswith("compiled graph")
    assert len([n for n in graph.nodes if n.label.endswith("Backward0")]) == len(ops)
    source = figure.drawing.source
    assert source.count(LEAF_LINES["input"]) == 1 and source.count("AccumulateGrad") == 1


def _defined_again(function):
    """The function as a learner who runs its cell again gets it: a new object."""
    return types.FunctionType(function.__code__, function.__globals__, function.__name__)


def test_the_compile_view_compiles_a_combination_once_per_function(monkeypatch):
    made = Mock(wraps=compile_calls)
    monkeypatch.setattr(compiled_view, "compile_calls", made)
    forward = _defined_again(_lesson("dynamic_forward"))
    first = compile_view(forward, False, "True")
    assert compile_view(forward, True, "True") is not first and made.call_count == 2
    assert compile_view(forward, False, "True") is first and made.call_count == 2     # a revisit compiles nothing
    redefined = _defined_again(forward)
    assert redefined is not forward and str(compile_view(redefined, False, "True")) == str(first)
    assert made.call_count == 3


def test_the_compile_views_memo_keeps_no_function_alive():
    forward = _defined_again(_lesson("dynamic_forward"))
    compile_view(forward, True, "no call")
    gone = weakref.ref(forward)
    del forward
    gc.collect()
    assert gone() is None


def test_bad_arguments_say_what_to_pass():
    with pytest.raises(ValueError, match="earlier is one of") as caught:
        compile_view(_lesson("dynamic_forward"), True, "twice")
    assert getattr(caught.value, MARK, False) and set(EARLIER) == {"no call", "True", "False", "True, False"}
    with pytest.raises(TypeError, match="list of argument tuples"):
        compile_calls(_square_times_three, [torch.tensor(1.0)])


def test_notebook_09_shows_the_code_its_exercises_run():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    question = next(c.source for c in nb.cells if c.source.startswith("### 1. "))
    assert " ".join(f"({a}, {b})," for a, b in CALLS).rstrip(",") in " ".join(question.split())
    slots = [c.source for c in nb.cells if "answer-slot" in c.metadata.get("tags", [])]
    assert [line for line in slots[1].splitlines() if "____" not in line] == CLIPPED.strip().splitlines()


def test_the_compile_view_says_so_when_a_redefined_function_gives_no_graph():
    def no_operation(x, use_extra_layer):
        return x

    with pytest.raises(ValueError, match="ran no compiled graph"):
        compile_view(no_operation, True, "True")
