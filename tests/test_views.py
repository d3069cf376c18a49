"""The pure views the widgets call, run on the lesson functions loaded from the notebooks themselves.
Each view returns a Figure; the tests read its caption and graph, never its HTML."""

import gc
import re
import weakref
from unittest.mock import Mock

import pytest
import torch

import helpers.svg
from helpers.draw import Figure, natural_width
from helpers.lessons.nb01 import branch_view, loop_view, sequence_view, while_view
from helpers.lessons.nb02 import step_view
from helpers.lessons.nb05 import length_view
from helpers.lessons.nb07 import scratch_step_view
from helpers.lessons.nb08 import freeze_view, mode_view
from helpers.model_cache import as_built
from helpers.models import TanhRNNCell
from helpers.plan import CUT_MARK
from helpers.text_form import HIGHLIGHT_MARK
from helpers.views import MIN_FOLDED, SEQUENCE_NODES, counted
from tools.testkit.lessons import lesson_function

dynamic_forward = lesson_function("01-dynamic-control-flow", "dynamic_forward")
repeat_forward = lesson_function("01-dynamic-control-flow", "repeat_forward")
halve_until_small = lesson_function("01-dynamic-control-flow", "halve_until_small")
diamond = lesson_function("02-inspecting-the-graph", "diamond")


def _count(figure, label):
    """How many drawn nodes carry `label`."""
    return len(figure.drawing.graph.find(label))


def _marked(figure, mark):
    """The labels of the nodes whose line in the text form carries `mark`."""
    lines = figure.drawing.text.splitlines()[1:]
    return sorted(line.split(": ", 1)[1].split(" ")[0].rstrip(",") for line in lines if mark in line)


def _notes(figure):
    """Node id -> its note, from the text form ("n3 op: MulBackward0 # step 2")."""
    lines = figure.drawing.text.splitlines()[1:]
    return {line.split(" ")[0]: line.split(" # ", 1)[1] for line in lines if " # " in line}


def test_branch_view_draws_the_branch_taken():
    on, off = branch_view(dynamic_forward, True, 3.0), branch_view(dynamic_forward, False, 3.0)
    assert isinstance(on, Figure) and on.drawing is not None
    assert on.caption == "use_extra_layer=True: y = 7, x.grad = 2, 2 operations"
    assert off.caption == "use_extra_layer=False: y = 6, x.grad = 2, 1 operation"
    assert (_count(on, "AddBackward0"), _count(off, "AddBackward0")) == (1, 0)
    assert _marked(on, HIGHLIGHT_MARK) == ["AddBackward0"] and _marked(off, HIGHLIGHT_MARK) == []


def test_branch_view_highlights_whatever_only_one_branch_records():
    def two_extra(x, flag):
        return (x.exp() * 2).sin() if flag else x * 2

    assert _marked(branch_view(two_extra, True, 1.0), HIGHLIGHT_MARK) == ["ExpBackward0", "SinBackward0"]


@pytest.mark.parametrize("n", [0, 1, 5, 12])
def test_loop_counts_autograd_nodes_apart_from_drawn_boxes(n):
    figure = loop_view(repeat_forward, n)
    boxes = 1 if n == 0 else 2 + 4 * n
    autograd = 0 if n == 0 else 2 * n + 1
    assert len(figure.drawing.graph.nodes) == boxes and _count(figure, "MulBackward0") == n
    assert figure.caption == (f"n = {n}: {2 * n} operations, {autograd} autograd node{'s' * (autograd != 1)}, "
                              f"{boxes} box{'es' * (boxes != 1)} drawn")
    assert [counted(k, "operation") for k in (0, 1, 1200)] == ["0 operations", "1 operation", "1,200 operations"]


@pytest.mark.parametrize("value, halvings", [(0.5, 0), (1.0, 0), (2.0, 1), (3.0, 2), (37.0, 6), (1000.0, 10)])
def test_while_depth_follows_the_value(value, halvings):
    figure = while_view(halve_until_small, value)
    assert figure.drawing.graph.depth() == halvings and _count(figure, "DivBackward0") == halvings
    assert figure.caption == f"x = {value:g}: {counted(halvings, 'halving')}, depth {halvings}"


def test_each_sequence_has_as_many_steps_as_it_is_long():
    """A sequence_view of 01 or a length_view of 05 (the same sequence for the same length)."""
    cell = TanhRNNCell(3, 4)
    sequences = [torch.randn(n, 3) for n in (1, 4, 7, 40)]
    for i, seq in enumerate(sequences):
        figure, steps = sequence_view(cell, sequences, i), counted(len(seq), "cell step")
        assert figure.caption == f"sequence {i}: length {len(seq)}, {steps} counted in its graph (cut)"
        assert _count(figure, "TanhBackward0") == min(len(seq), SEQUENCE_NODES // 6)
        by_length = length_view(cell, len(seq))
        assert str(by_length) == str(length_view(cell, len(seq))) and by_length.caption in figure.caption


def test_long_sequence_is_drawn_bounded_or_rolled_up():
    cut = sequence_view(TanhRNNCell(3, 4), [torch.randn(300, 3)], 0)
    graph = cut.drawing.graph
    assert cut.caption.endswith("300 cell steps counted in its graph (cut)")
    assert len(graph.nodes) == SEQUENCE_NODES and graph.omitted > 0 and _marked(cut, CUT_MARK)
    assert _count(cut, "TanhBackward0") == SEQUENCE_NODES // 6      # the last ten steps, six nodes a step
    rolled = sequence_view(TanhRNNCell(3, 4), [torch.randn(300, 3)], 0, view="rolled")
    assert rolled.caption.endswith("300 cell steps counted in its graph (rolled)")
    assert [n.label for n in rolled.drawing.graph.nodes if n.kind == "group"] == ["× 298 steps"]
    with pytest.raises(ValueError, match="view must be one of rolled, cut, unrolled"):
        length_view(TanhRNNCell(3, 4), 5, view="sideways")
    with pytest.raises(ValueError, match="index must be from 0 to 1"):
        sequence_view(TanhRNNCell(3, 4), [torch.randn(2, 3)] * 2, 2)


def test_step_view_numbers_and_highlights():
    figure = step_view(diamond, 1)
    assert figure.caption == "step 1 of 5: AddBackward0 receives 1 and passes on (1, 1)"
    assert sorted(_notes(figure).values()) == [f"step {k}" for k in range(1, 6)]
    assert _marked(figure, HIGHLIGHT_MARK) == ["AddBackward0"]
    assert step_view(diamond, 5).caption.endswith("adds it to the leaf's .grad")
    with pytest.raises(ValueError, match="from 1 to 5"):
        step_view(diamond, 6)


diamond_engine = lesson_function("07-autograd-from-scratch", "diamond_engine")
small_mlp = lesson_function("08-modules-and-the-graph", "small_mlp")
regularised_mlp = lesson_function("08-modules-and-the-graph", "regularised_mlp")


def test_scratch_step_view_fills_in_the_gradients_step_by_step():
    first, last = scratch_step_view(diamond_engine, 1), scratch_step_view(diamond_engine, 4)
    assert first.caption == "step 1 of 4: the + node passes its grad 1 on to its inputs"
    assert last.caption.startswith("step 4 of 4: the sin node passes its grad 2.39")
    assert _marked(first, HIGHLIGHT_MARK) == ["+"] and _marked(last, HIGHLIGHT_MARK) == ["sin"]
    # x's gradient arrives at the last step
    assert "grad 3.1" in _notes(last).values() and "grad 3.1" not in _notes(first).values()
    with pytest.raises(ValueError, match="from 1 to 4"):
        scratch_step_view(diamond_engine, 5)


def test_freeze_view_removes_the_frozen_branch():
    x = torch.randn(5, 3)
    both = freeze_view(small_mlp, x, freeze_0=False, freeze_2=False)
    first = freeze_view(small_mlp, x, freeze_0=True, freeze_2=False)
    nothing = freeze_view(small_mlp, x, freeze_0=True, freeze_2=True)
    assert both.caption.endswith("; 4 AccumulateGrad leaves") and both.drawing.graph.count("leaf") == 4
    assert first.caption == "trainable: 2.weight, 2.bias; 2 AccumulateGrad leaves"
    assert sorted(n.label for n in first.drawing.graph.nodes if n.kind == "leaf") == ["2.bias", "2.weight"]
    assert nothing.drawing is None and nothing.caption.endswith("no graph at all, nothing to train")


def test_mode_view_shows_dropout_and_batchnorm_by_mode():
    x = torch.randn(5, 3)
    train, evaluate = mode_view(regularised_mlp, x, True), mode_view(regularised_mlp, x, False)
    assert train.caption == "train(): 8 operations recorded; BatchNorm running statistics updated"
    assert evaluate.caption == "eval(): 7 operations recorded; BatchNorm running statistics unchanged"
    assert train.drawing.graph.count("op") == 8 and evaluate.drawing.graph.count("op") == 7


def _size(figure):
    """The drawing's (width, height) in pt, read from its SVG."""
    svg = figure.drawing.svg()
    return natural_width(svg), float(re.search(r'<svg[^>]*?\sheight="([0-9.]+)pt"', svg).group(1))


def test_rolled_only_where_it_shortens_the_drawing():
    cell = TanhRNNCell(3, 4)
    # a sequence of T steps folds T - 2 of them: the first and the last stay drawn
    short, unrolled = length_view(cell, MIN_FOLDED + 1, "rolled"), length_view(cell, MIN_FOLDED + 1, "unrolled")
    assert len(short.drawing.graph.nodes) == len(unrolled.drawing.graph.nodes) and not short.drawing.graph.rolled
    assert short.caption.endswith(f"(rolled): drawn unrolled, as rolling would fold {MIN_FOLDED - 1} steps "
                                  f"(the view rolls only when it folds {MIN_FOLDED} steps or more)")
    folded, unrolled = length_view(cell, MIN_FOLDED + 2, "rolled"), length_view(cell, MIN_FOLDED + 2, "unrolled")
    assert [g.steps for g in folded.drawing.graph.rolled] == [MIN_FOLDED]
    assert _size(folded)[1] < _size(unrolled)[1] / 2


@pytest.mark.parametrize("length", [10, 12, 21, 30])
def test_the_cut_is_never_wider_than_the_whole_graph(length):
    cell = TanhRNNCell(3, 4)
    cut, unrolled = length_view(cell, length, "cut"), length_view(cell, length, "unrolled")
    assert _size(cut)[0] <= _size(unrolled)[0]
    assert len(cut.drawing.graph.nodes) <= len(unrolled.drawing.graph.nodes)


@pytest.mark.parametrize("view, settings", [
    (freeze_view, [{"freeze_0": True, "freeze_2": False}, {"freeze_0": False, "freeze_2": True}, {},
                   {"freeze_0": True, "freeze_2": True}, {"freeze_0": False, "freeze_2": False}]),
    (mode_view, [{"training": True}, {"training": False}, {"training": True}, {"training": True},
                 {"training": False}]),
])
def test_a_model_view_builds_its_model_once_and_shows_it_as_built(view, settings):
    """A build seeds and initialises every layer, so it runs once; each change undoes the flags, statistics and mode."""
    build = small_mlp if view is freeze_view else regularised_mlp
    counted = Mock(wraps=build)
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    for values in settings:
        fresh = str(view(lambda: build(), x, **values))     # a new function each time: a fresh build
        assert str(view(counted, x, **values)) == fresh, values
    assert counted.call_count == 1


def test_a_model_given_back_as_built_has_its_flags_buffers_and_mode_undone():
    model = as_built(regularised_mlp)
    with torch.no_grad():
        for buffer in model.buffers():
            buffer.add_(1)
    model.eval()
    next(model.parameters()).requires_grad_(False)
    again, fresh = as_built(regularised_mlp), regularised_mlp()
    assert [p.requires_grad for p in again.parameters()] == [p.requires_grad for p in fresh.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(again.buffers(), fresh.buffers(), strict=True))
    assert [m.training for m in again.modules()] == [m.training for m in fresh.modules()]


def test_an_edited_build_function_is_built_anew():
    """Running the edited cell again makes a new function object."""
    x = torch.randn(5, 3)
    before = freeze_view(small_mlp, x, freeze_0=False, freeze_2=False)

    def small_mlp_edited():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))

    after = freeze_view(small_mlp_edited, x, freeze_0=False, freeze_2=False)
    assert after.drawing.graph.find("TanhBackward0") and not before.drawing.graph.find("TanhBackward0")


def test_a_built_model_goes_with_its_function():
    def build():
        return torch.nn.Linear(2, 2)

    model = weakref.ref(as_built(build))
    assert model() is not None
    del build
    gc.collect()
    assert model() is None


def test_without_dot_a_sequence_view_says_how_to_install_it_not_that_it_is_too_big(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    helpers.svg._laid_out.cache_clear()         # drawings laid out earlier in this process
    for view in ("rolled", "cut", "unrolled"):
        figure = length_view(TanhRNNCell(3, 4), 5, view)
        assert "too many" not in figure.caption and "dot program was not found" in figure.html()
