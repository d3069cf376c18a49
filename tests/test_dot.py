"""DOT and text forms: what a drawing says (through the text form and the
named constants of dot.py, plan.py and text_form.py), and whole DOT sources against golden files
(rewritten with `pytest --regen-golden`)."""


import pytest
import torch

from helpers import draw_graph
from helpers.dot import LEGEND
from helpers.plan import BOUNDED, FAN_LIMIT, FASTEST, QUICK, SHARED_LIMIT
from helpers.text_form import HIGHLIGHT_MARK
from tools.testkit.shapes import SHAPES, rnn, widest_fan


def _dot_line(drawing, node_id):
    return next(line for line in drawing.source.splitlines() if line.startswith(f"  {node_id} ["))


def test_note_example_text(note_example):
    x, _, z = note_example
    d = draw_graph(z, {"x": x, "z": z})
    assert str(d) == repr(d) == "\n".join([
        "5 nodes, 4 edges (an arrow goes from an input to the node that used it)",
        "n0 output: z, scalar",
        "n1 op: MulBackward0 | other: scalar tensor",
        "n2 op: PowBackward0 | exponent: 2 | self: scalar tensor",
        "n3 const: None",
        "n4 leaf: x, scalar",
        "n1 -> n0 [input 0]",
        "n2 -> n1 [input 0]",
        "n3 -> n1 [input 1]",
        "n4 -> n2 [input 0]",
    ])


def test_each_kind_gets_its_legend_colour(note_example):
    d = draw_graph(note_example[2])
    for node in d.graph.nodes:
        assert f'fillcolor="{LEGEND[node.kind][0]}"' in _dot_line(d, node.id)


def test_note_example_dot_before_and_after_backward(note_example, golden):
    x, _, z = note_example
    golden("note-example.dot", draw_graph(z, {"x": x, "z": z}).source)
    z.backward()
    golden("note-example-freed.dot", draw_graph(z, {"x": x, "z": z}).source)


def test_highlight_by_label_and_id(note_example, golden):
    _, _, z = note_example
    d = draw_graph(z, highlight="PowBackward0")
    marked = [line for line in str(d).splitlines() if HIGHLIGHT_MARK in line]
    assert marked == [f"n2 op: PowBackward0 | exponent: 2 | self: scalar tensor {HIGHLIGHT_MARK}"]
    golden("highlight.dot", d.source)
    by_id = draw_graph(z, highlight=["n4"])
    assert [line.split()[0] for line in str(by_id).splitlines() if HIGHLIGHT_MARK in line] == ["n4"]


@pytest.mark.parametrize("highlight, error, words", [
    ("AddBackwrd0", ValueError, "'AddBackwrd0' names no node"),
    (["n1", "n99"], ValueError, "'n99' names no node"),
    (3, TypeError, "highlight takes a node label"),
])
def test_a_highlight_that_names_nothing_is_an_error(note_example, highlight, error, words):
    with pytest.raises(error) as caught:
        draw_graph(note_example[2], highlight=highlight)
    assert words in str(caught.value)
    if error is ValueError:
        assert "n0 to n4" in str(caught.value) and "MulBackward0, PowBackward0" in str(caught.value)


def test_constants_can_be_hidden(note_example):
    d = draw_graph(note_example[2], constants=False)
    assert "None" not in d.source and "const" not in str(d)
    assert str(d).startswith("4 nodes, 3 edges")


def test_shared_leaf_is_drawn_beside_each_use(golden):
    w, h = rnn(SHARED_LIMIT + 2)
    d = draw_graph(h, {"W": w})
    assert sum(line.endswith("W, shape (8, 8)") for line in str(d).splitlines()) == 1
    golden("shared-leaf.dot", d.source)


def _sum_over_unbind(pieces):
    x = torch.randn(pieces, 3, requires_grad=True)
    return sum(piece.sin().sum() for piece in (x * 2).unbind())


def test_an_operation_feeding_every_step_is_drawn_beside_each_use(golden):
    """The unbind that hands every step its piece is drawn beside each use:
    no DOT node has more than FAN_LIMIT edges; the text form keeps one node."""
    torch.manual_seed(0)
    for max_nodes in (300, 199):
        d = draw_graph(SHAPES["rnn over embedding"](), max_nodes=max_nodes)
        assert widest_fan(d.source) <= FAN_LIMIT, max_nodes
        (unbind,) = d.graph.find("UnbindBackward0")
        uses = sum(e.src == unbind.id for e in d.graph.edges)
        copies = [line for line in d.source.splitlines()
                  if line.startswith((f"  {unbind.id} [", f"  {unbind.id}_")) and "[label=<" in line]
        assert len(copies) == uses > FAN_LIMIT
        assert all(f"shared: {uses} uses drawn" in line and "peripheries=2" in line for line in copies)
        assert sum(f" -> {unbind.id} [" in line for line in str(d).splitlines()) == 1     # its input, once
        assert sum(line.startswith(f"{unbind.id} -> ") for line in str(d).splitlines()) == uses
    whole = draw_graph(_sum_over_unbind(FAN_LIMIT + 1), constants=False)
    assert "shared: 9 uses<" in whole.source and widest_fan(whole.source) <= FAN_LIMIT
    golden("shared-operation.dot", whole.source)


def test_an_operation_gathering_every_step_is_drawn_beside_each_input():
    """The stack of every step's output in nn.RNN: drawn once per input,
    its uses and saved values on the first."""
    torch.manual_seed(0)
    d = draw_graph(SHAPES["rnn layer"](), max_nodes=199)
    assert widest_fan(d.source) <= FAN_LIMIT
    stack = d.graph.find("StackBackward0")[0]
    inputs = sum(e.dst == stack.id for e in d.graph.edges)
    assert inputs > FAN_LIMIT and f"one node: {inputs} inputs" in _dot_line(d, stack.id)
    assert sum(line.startswith(f"  {stack.id}_in") for line in d.source.splitlines()) == inputs - 1
    assert sum(line.startswith(f"  {stack.id} -> ") for line in d.source.splitlines()) == 1
    assert sum(f" -> {stack.id} [" in line for line in str(d).splitlines()) == inputs


def test_few_uses_keep_one_node():
    w, h = rnn(SHARED_LIMIT)
    d = draw_graph(h, {"W": w})
    assert f"  {d.graph.find('W')[0].id} [" in d.source and "shared:" not in d.source
    d = draw_graph(_sum_over_unbind(FAN_LIMIT))
    assert "shared:" not in d.source and "one node:" not in d.source


def test_dot_gets_less_to_do_as_drawings_grow():
    """Bigger drawings get fewer of dot's rounds; edges crossing thousands
    of ranks get no x-coordinate rounds."""
    torch.manual_seed(0)
    settings = {size: draw_graph(SHAPES["deep chain"](), max_nodes=size).source for size in (50, 150, 250)}
    assert [(BOUNDED in s, QUICK in s) for s in settings.values()] == [(False, False), (True, False), (False, True)]
    dense = draw_graph(SHAPES["dense skips"](), max_nodes=199).source
    assert FASTEST in dense and BOUNDED not in dense


def test_cut_graph_says_what_it_left_out(golden):
    """The text form's notice and cut marks: test_graph.py's test_a_graph_walked_in_part_says_at_least_how_many_more
    and test_the_text_form_of_a_big_graph_keeps_its_marks_within_the_line_limit."""
    golden("cut.dot", draw_graph(rnn(50)[1], max_nodes=10).source)


def test_notes_are_drawn_and_written(note_example):
    d = draw_graph(note_example[2], notes={"n1": "step 1"})
    assert "n1 op: MulBackward0 | other: scalar tensor # step 1" in str(d)
    assert "step 1" in _dot_line(d, "n1")


@pytest.mark.parametrize("notes, error, words", [
    (["n1"], TypeError, "notes must be a dict"),
    ({"MulBackward0": "x"}, ValueError, "node ids like 'n1'"),
    ({"n9": "not drawn"}, ValueError, "'n9', which is not a node of this drawing"),
])
def test_bad_notes(note_example, notes, error, words):
    with pytest.raises(error) as caught:
        draw_graph(note_example[2], notes=notes)
    assert words in str(caught.value)
