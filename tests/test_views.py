"""The pure views the widgets call, run on the lesson functions the notebooks
themselves define (loaded from the notebooks: one source)."""

import re

import pytest
import torch
from tools.lessons import lesson_function

from helpers import trace_graph
from helpers.models import TanhRNNCell, run_sequence
from helpers.quiz import Question
from helpers.render import LEGEND
from helpers.views import (
    QUIZ_COLOURS,
    SEQUENCE_NODES,
    branch_view,
    freeze_view,
    length_view,
    loop_view,
    mode_view,
    quiz_view,
    scratch_step_view,
    sequence_view,
    step_view,
    while_view,
)

dynamic_forward = lesson_function("01-dynamic-control-flow", "dynamic_forward")
repeat_forward = lesson_function("01-dynamic-control-flow", "repeat_forward")
halve_until_small = lesson_function("01-dynamic-control-flow", "halve_until_small")
diamond = lesson_function("02-inspecting-the-graph", "diamond")


def _caption(html):
    return re.match(r"<p[^>]*>(.*?)</p>", html)[1]


def test_branch_view_draws_the_branch_taken():
    on, off = branch_view(dynamic_forward, True, 3.0), branch_view(dynamic_forward, False, 3.0)
    assert "AddBackward0" in on and "AddBackward0" not in off
    assert _caption(on) == "use_extra_layer=True: y = 7, x.grad = 2, 2 operations"
    assert _caption(off) == "use_extra_layer=False: y = 6, x.grad = 2, 1 operations"
    assert "<svg" in on and LEGEND["highlight"][0] in on and LEGEND["highlight"][0] not in off


def test_branch_view_highlights_whatever_only_one_branch_records():
    def two_extra(x, flag):
        return (x.exp() * 2).sin() if flag else x * 2

    html = branch_view(two_extra, True, 1.0)
    assert html.count(LEGEND["highlight"][0]) == 2 and "ExpBackward0" in html and "SinBackward0" in html


@pytest.mark.parametrize("n", [0, 1, 5, 12])
def test_loop_counts_autograd_nodes_apart_from_drawn_boxes(n):
    graph = trace_graph(repeat_forward(torch.tensor(1.0, requires_grad=True), n))
    boxes = 1 if n == 0 else 2 + 4 * n
    autograd = 0 if n == 0 else 2 * n + 1
    assert len(graph.nodes) == boxes
    assert _caption(loop_view(repeat_forward, n)) == (f"n = {n}: {2 * n} operations, {autograd} autograd nodes, "
                                                      f"{boxes} boxes drawn")


@pytest.mark.parametrize("value, halvings", [(0.5, 0), (1.0, 0), (3.0, 2), (37.0, 6), (1000.0, 10)])
def test_while_depth_follows_the_value(value, halvings):
    x = torch.tensor(value, requires_grad=True)
    assert trace_graph(halve_until_small(x)).depth() == halvings
    assert _caption(while_view(halve_until_small, value)) == f"x = {value:g}: {halvings} halvings, depth {halvings}"


def test_each_sequence_has_as_many_steps_as_it_is_long():
    cell = TanhRNNCell(3, 4)
    sequences = [torch.randn(n, 3) for n in (1, 4, 7)]
    for i, seq in enumerate(sequences):
        graph = trace_graph(run_sequence(cell, seq), cell)
        assert len(graph.find("TanhBackward0")) == len(seq)
        assert len(graph.find("MvBackward0")) == 2 * len(seq)
        assert sorted(n.label for n in graph.nodes if n.kind == "leaf") == ["b", "w_h", "w_x"]
        assert _caption(sequence_view(cell, sequences, i)).endswith(f"{len(seq)} cell steps counted in its graph (cut)")


def test_long_sequence_is_drawn_bounded():
    html = sequence_view(TanhRNNCell(3, 4), [torch.randn(300, 3)], 0)
    assert "300 cell steps counted" in html
    assert f"{SEQUENCE_NODES} of " in html and "more nodes not drawn" in html


def test_a_long_sequence_rolled_up_counts_every_step():
    html = sequence_view(TanhRNNCell(3, 4), [torch.randn(300, 3)], 0, view="rolled")
    assert "300 cell steps counted in its graph (rolled)" in html and "× 297 steps" in html
    with pytest.raises(ValueError, match="view must be one of rolled, cut, unrolled"):
        length_view(TanhRNNCell(3, 4), 5, view="sideways")


def test_sequence_index_out_of_range():
    with pytest.raises(ValueError, match="index must be from 0 to 1"):
        sequence_view(TanhRNNCell(3, 4), [torch.randn(2, 3)] * 2, 2)


@pytest.mark.parametrize("length", [1, 6, 40])
def test_length_view_counts_every_step(length):
    cell = TanhRNNCell(3, 4)
    html = length_view(cell, length)
    assert _caption(html) == f"length {length}, {length} cell steps counted in its graph (cut)"
    assert html == length_view(cell, length)


def test_step_view_numbers_and_highlights():
    html = step_view(diamond, 1)
    assert _caption(html) == "step 1 of 5: AddBackward0 receives 1 and passes on (1, 1)"
    assert all(f"step {k}" in html for k in range(1, 6)) and LEGEND["highlight"][0] in html
    assert "adds it to the leaf&#x27;s .grad" in step_view(diamond, 5)
    with pytest.raises(ValueError, match="from 1 to 5"):
        step_view(diamond, 6)


Q = Question("2 + 2?", ("3", "4", "22"), ("One short.", "Integer addition.", "That joins strings."), 1)


def test_quiz_view_colours_right_wrong_and_unanswered():
    assert QUIZ_COLOURS[True] in quiz_view(Q, 1) and "Right. Integer addition." in quiz_view(Q, 1)
    assert QUIZ_COLOURS[False] in quiz_view(Q, 0) and "Not quite. One short." in quiz_view(Q, 0)
    assert quiz_view(Q, None) == f'<p style="color:{QUIZ_COLOURS[None]}">Pick an answer.</p>'


diamond_engine = lesson_function("07-autograd-from-scratch", "diamond_engine")
small_mlp = lesson_function("08-modules-and-the-graph", "small_mlp")
regularised_mlp = lesson_function("08-modules-and-the-graph", "regularised_mlp")


def test_scratch_step_view_fills_in_the_gradients_step_by_step():
    first, last = scratch_step_view(diamond_engine, 1), scratch_step_view(diamond_engine, 4)
    assert _caption(first) == "step 1 of 4: the + node passes its grad 1 on to its inputs"
    assert _caption(last).startswith("step 4 of 4: the sin node passes its grad 2.39")
    assert "grad 3.1" in last and "grad 3.1" not in first          # x's gradient arrives at the last step
    with pytest.raises(ValueError, match="from 1 to 4"):
        scratch_step_view(diamond_engine, 5)


def test_freeze_view_removes_the_frozen_branch():
    x = torch.randn(5, 3)
    assert _caption(freeze_view(small_mlp, x, freeze_0=False, freeze_2=False)).endswith("4 AccumulateGrad leaves")
    assert _caption(freeze_view(small_mlp, x, freeze_0=True, freeze_2=False)).startswith("trainable: 2.weight, 2.bias")
    assert "no graph at all" in freeze_view(small_mlp, x, freeze_0=True, freeze_2=True)


def test_mode_view_shows_dropout_and_batchnorm_by_mode():
    x = torch.randn(5, 3)
    train, evaluate = mode_view(regularised_mlp, x, True), mode_view(regularised_mlp, x, False)
    assert _caption(train) == "train(): 8 operations recorded; BatchNorm running statistics updated"
    assert _caption(evaluate) == "eval(): 7 operations recorded; BatchNorm running statistics unchanged"
