"""panel(): controls -> a view -> a redraw, without a browser: the text form
nbval compares, a view that raises shown inside the widget, and the text
alternative each drawing carries."""

import ast
import math
from functools import partial
from pathlib import Path

import ipywidgets as widgets
import nbformat
import pytest
import torch

from helpers import draw_graph, panel
from helpers.draw import ALT_LIMIT, Figure
from helpers.lessons.nb01 import branch_view, loop_view
from helpers.widgets import NO_DRAWING, PANEL_CLASS, RUN_TO_USE, STYLE, Panel
from tools.testkit.lessons import lesson_function

dynamic_forward = lesson_function("01-dynamic-control-flow", "dynamic_forward")
repeat_forward = lesson_function("01-dynamic-control-flow", "repeat_forward")


def _text(box):
    return box._repr_mimebundle_()["text/plain"]


def test_panel_redraws_on_every_change():
    box = widgets.Checkbox(value=True)
    slider = widgets.FloatSlider(value=3.0, min=-5, max=5)
    view = panel(partial(branch_view, dynamic_forward), use_extra_layer=box, x=slider)
    assert isinstance(view, Panel) and list(view.children[0].children) == [box, slider]
    assert view.shown.drawing.graph.find("AddBackward0")
    with torch.no_grad():                   # a view records its graph whatever the session's mode
        box.value = False
        assert not torch.is_grad_enabled()
    assert not view.shown.drawing.graph.find("AddBackward0") and view.shown.drawing.graph.find("MulBackward0")
    slider.value = -2.0
    assert view.shown.caption == "use_extra_layer=False: y = -4, x.grad = 2, 1 operation"
    assert view.children[1].value == STYLE + view.shown.html()


def test_the_text_form_holds_the_whole_caption_and_drawing():
    slider = widgets.IntSlider(value=3, min=0, max=12)
    view = panel(partial(loop_view, repeat_forward), n=slider)
    figure = loop_view(repeat_forward, 3)
    assert _text(view) == f"panel(n=3)\n{figure.caption}\n{figure.drawing.text}"
    assert len(_text(view)) > 110                           # ipywidgets' own text form stops there
    slider.value = 4
    assert _text(view).startswith("panel(n=4)\nn = 4: 8 operations, 9 autograd nodes, 18 boxes drawn\n")
    assert "application/vnd.jupyter.widget-view+json" in view._repr_mimebundle_()


def _breaks_below_zero(x, n):
    if n < 0:
        raise ValueError(f"n = {n}: a loop cannot run a negative number of times")
    return repeat_forward(x, n)


def test_a_view_that_raises_shows_the_error_in_place_of_the_drawing():
    slider = widgets.IntSlider(value=2, min=-3, max=5)
    view = panel(partial(loop_view, _breaks_below_zero), n=slider)
    assert "<svg" in view.children[1].value
    slider.value = -1
    text = _text(view)
    assert text.startswith(f"panel(n=-1)\n{NO_DRAWING} n=-1: the view raised an error.\n"
                           "ValueError: n = -1: a loop cannot run a negative number of times\n")
    assert "test_widgets.py" in text and "in _breaks_below_zero" in text and "raise ValueError" in text
    assert "/helpers/" not in text and "functools" not in text       # the learner's frames only
    shown = view.children[1].value
    assert "<svg" not in shown and "a loop cannot run a negative number of times" in shown
    assert "n=-1" in shown                                           # the values the error is for
    slider.value = 1
    assert view.shown.caption.startswith("n = 1:") and "<svg" in view.children[1].value


def test_a_view_that_raises_at_once_or_returns_html_or_no_figure_is_shown():
    def empty(n):
        raise RuntimeError

    assert _text(panel(empty, n=widgets.IntSlider(value=2))).splitlines()[1:3] == [
        f"{NO_DRAWING} n=2: the view raised an error.", "RuntimeError"]
    text = _text(panel(lambda n: n * 2, n=widgets.IntSlider(value=2)))
    assert "TypeError: a panel's view must return a Figure or HTML text; got int" in text
    slider = widgets.IntSlider(value=1)
    view = panel(lambda n: f"<b>n = {n}</b>", n=slider)              # HTML text, shown as it is
    slider.value = 2
    assert view.children[1].value == STYLE + "<b>n = 2</b>" and _text(view) == "panel(n=2)\n<b>n = 2</b>"


def test_panel_rejects_what_is_not_a_control():
    with pytest.raises(TypeError, match=r"n= must be an ipywidgets control"):
        panel(lambda n: str(n), n=3)
    with pytest.raises(TypeError, match="panel needs a view first"):
        panel("not a function", n=widgets.IntSlider())


def test_each_drawing_has_a_bounded_text_alternative():
    x = torch.tensor(1.0, requires_grad=True)
    small, big = draw_graph(x * 2, {"x": x}), draw_graph(repeat_forward(x, 40), {"x": x})
    assert small.alternative() == "autograd graph: " + "; ".join(small.text.splitlines())
    assert len(big.alternative()) < ALT_LIMIT + 100
    assert big.alternative().endswith("(print the drawing for all of them)")
    for html in (small.html(), Figure("a caption", small).html(), small._repr_mimebundle_()[0]["image/svg+xml"]):
        assert html.count('role="img"') == 1 and 'aria-label="autograd graph: 4 nodes, 3 edges' in html


def log_slider_defaults(source):
    """(value, base, min, step) of each FloatLogSlider(...) call in `source`."""
    for call in ast.walk(ast.parse(source)):
        if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "FloatLogSlider":
            given = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
            yield given["value"], given.get("base", 10), given.get("min", 0), given.get("step", 0.1)


def off_the_slider(source):
    """Defaults a log slider snaps to another value: it moves in `step`s of the exponent from `min` (37 shows 39.81)."""
    return [value for value, base, low, step in log_slider_defaults(source)
            if abs((math.log(value, base) - low) / step - round((math.log(value, base) - low) / step)) > 1e-6]


def test_each_log_slider_starts_on_a_value_it_reaches():
    notebooks = sorted(Path(__file__).resolve().parent.parent.glob("notebooks/*.ipynb"))
    cells = [c.source for nb in notebooks for c in nbformat.read(nb, as_version=4).cells if c.cell_type == "code"]
    assert any("FloatLogSlider" in source for source in cells)
    assert [off for source in cells if "FloatLogSlider" in source for off in off_the_slider(source)] == []


def test_a_view_runs_on_one_thread_and_the_count_comes_back():
    """A lesson's tensors are tiny: a second thread only adds its wake-up. The count is restored if the view raises."""
    seen = []

    def view(fail):
        seen.append(torch.get_num_threads())
        if fail:
            raise RuntimeError("a view that fails")
        return "<p>drawn</p>"

    threads = torch.get_num_threads()
    torch.set_num_threads(2)            # so that one thread is a change, on any machine
    try:
        box = widgets.Checkbox(value=False)
        shown = panel(view, fail=box)
        box.value = True
        assert seen == [1, 1] and NO_DRAWING in repr(shown)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def test_a_panel_carries_its_stylesheet_in_every_redraw():
    """The class and stylesheet must be in the stored state for a first open, before anything runs."""
    slider = widgets.IntSlider(value=1)
    view = panel(partial(loop_view, repeat_forward), n=slider)
    assert PANEL_CLASS in view._dom_classes
    slider.value = 2
    assert view.children[1].value.startswith(STYLE) and view.children[1].value.count("<style>") == 1
    assert RUN_TO_USE in STYLE and "lesson's own settings, not your last" in RUN_TO_USE
