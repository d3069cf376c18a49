"""The legibility budget, from the HTML a drawing is shown in: at its smallest (its box's min-width) operation
names are at least 11 CSS px and no text is under 8 px; the sequence views' layouts, measured on dot's SVG."""

import re

import pytest
import torch

from helpers import draw_graph
from helpers.draw import SMALLEST, fitted, natural_width, opens_at_right
from helpers.lessons.nb05 import length_view
from helpers.models import TanhRNNCell

OP_PX, TEXT_PX = 11, 8


def smallest_sizes(html):
    """(smallest operation-name size, smallest text size) in CSS px with the SVG at its CSS min-width."""
    min_width = float(re.search(r"min-width:([0-9.]+)px", html).group(1))
    view_width = float(re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+)', html).group(1))
    scale = min_width / view_width
    sizes = [float(s) for s in re.findall(r'font-size="([0-9.]+)"', html)]
    ops = [float(s) for s in re.findall(r'font-size="([0-9.]+)"[^>]*>\w+Backward\d', html)]
    return min(ops, default=OP_PX / scale) * scale, min(sizes) * scale


@pytest.fixture(scope="module")
def cell():
    torch.manual_seed(0)
    return TanhRNNCell(3, 4)


def test_a_drawing_shrinks_only_to_the_budget_then_scrolls(note_example):
    html = draw_graph(note_example[2], {"x": note_example[0]}).html()
    assert "overflow-x:auto;overflow-y:hidden" in html       # sideways only: the wheel scrolls the page
    op, text = smallest_sizes(html)
    assert op >= OP_PX - 0.5 and text >= TEXT_PX - 0.5


def test_fitted_keeps_natural_size_as_the_most():
    svg = '<svg width="300pt" height="10pt" viewBox="0.00 0.00 300.00 10.00"></svg>'
    assert f"min-width:{300 * 4 / 3 * SMALLEST:.0f}px;max-width:400px" in fitted(svg)
    assert natural_width(svg) == 300.0


def test_a_cut_is_no_wider_than_before_the_chain_weights(cell):
    figure = length_view(cell, 200, "cut")
    assert natural_width(figure.drawing.svg()) < 1400


def test_unrolled_too_big_to_lay_out_says_so_without_the_text_form(cell):
    figure = length_view(cell, 200, "unrolled")
    assert figure.drawing is None
    assert "too many to lay out here" in figure.caption and "cut view" in figure.caption
    assert len(str(figure).splitlines()) == 1


def _mirrored(svg):
    """The same drawing flipped left to right: every text's x mirrored."""
    width = float(re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+)', svg).group(1))
    return re.sub(r'(<text[^>]*? x=")([-0-9.]+)"', lambda m: f'{m.group(1)}{width - float(m.group(2)):.2f}"', svg)


def test_a_box_opens_where_the_drawing_starts(cell):
    """A long unrolled loop has its chain on the right, its leaves to the left: the box opens on the first steps, not on
    empty space."""
    svg = length_view(cell, 30, "unrolled").drawing.svg()
    assert opens_at_right(svg) and "direction:rtl" in fitted(svg)
    assert not opens_at_right(_mirrored(svg)) and "direction:rtl" not in fitted(_mirrored(svg))
    assert "direction:ltr" in fitted(svg)          # the drawing itself stays left to right
