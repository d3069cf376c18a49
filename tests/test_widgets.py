"""panel(): controls -> pure function -> redraw, without a browser."""

from functools import partial

import ipywidgets as widgets
import pytest
from tools.lessons import lesson_function

from helpers import panel
from helpers.views import branch_view


def test_panel_redraws_on_every_change():
    box = widgets.Checkbox(value=True)
    slider = widgets.FloatSlider(value=3.0, min=-5, max=5)
    dynamic_forward = lesson_function("01-dynamic-control-flow", "dynamic_forward")
    view = panel(partial(branch_view, dynamic_forward), use_extra_layer=box, x=slider)
    html = view.children[1]
    assert "AddBackward0" in html.value
    box.value = False
    assert "AddBackward0" not in html.value
    slider.value = -2.0
    assert "use_extra_layer=False: y = -4, x.grad = 2" in html.value
    assert list(view.children[0].children) == [box, slider]


def test_panel_rejects_what_is_not_a_control():
    with pytest.raises(TypeError, match=r"n= must be an ipywidgets control"):
        panel(lambda n: str(n), n=3)
    with pytest.raises(TypeError, match="function that returns HTML"):
        panel("not a function", n=widgets.IntSlider())
