"""DOT and text forms: legend colours, freed buffers, shared leaves, cuts."""

import pytest
import torch

from helpers import LEGEND, draw_graph, legend_html, trace_graph
from helpers.render import SHARED_LIMIT


def _rnn(steps, size=4):
    w = torch.randn(size, size, requires_grad=True)
    h = torch.randn(size)
    for _ in range(steps):
        h = torch.tanh(w @ h)
    return w, h


def test_note_example_dot_and_text(note_example):
    x, _, z = note_example
    d = draw_graph(z, {"x": x, "z": z})
    assert str(d) == repr(d) == "\n".join([
        "5 nodes, 4 edges (an arrow goes from an input to the node that used it)",
        "n0 output: z (scalar)",
        "n1 op: MulBackward0 | other: tensor scalar",
        "n2 op: PowBackward0 | exponent: 2 | self: tensor scalar",
        "n3 const: None",
        "n4 leaf: x (scalar)",
        "n1 -> n0 [input 0]",
        "n2 -> n1 [input 0]",
        "n3 -> n1 [input 1]",
        "n4 -> n2 [input 0]",
    ])
    assert d.source.count(" -> ") == 4
    for kind in ("output", "op", "leaf", "const"):
        assert f'fillcolor="{LEGEND[kind][0]}"' in d.source
    assert "<B>PowBackward0</B>" in d.source


def test_freed_buffers_are_drawn_not_raised(note_example):
    _, _, z = note_example
    z.backward()
    d = draw_graph(z)
    assert "| self: freed" in str(d) and "| other: freed" in str(d)
    assert "<I>self: freed</I>" in d.source
    pow_line = next(line for line in d.source.splitlines() if "PowBackward0" in line)
    assert 'style="dashed,rounded,filled"' in pow_line


def test_highlight_by_label_and_id(note_example):
    _, _, z = note_example
    d = draw_graph(z, highlight="PowBackward0")
    lit = [line for line in d.source.splitlines() if LEGEND["highlight"][0] in line]
    assert len(lit) == 1 and "PowBackward0" in lit[0] and "penwidth=2" in lit[0]
    assert LEGEND["highlight"][0] in draw_graph(z, highlight=["n4"]).source.split("n4 [")[1]


def test_constants_can_be_hidden(note_example):
    d = draw_graph(note_example[2], constants=False)
    assert "None" not in d.source and "const" not in str(d)
    assert str(d).startswith("4 nodes, 3 edges")


def test_saved_values_can_be_hidden(note_example):
    d = draw_graph(note_example[2], saved=False)
    assert "exponent" not in d.source


def test_shared_leaf_is_drawn_beside_each_use():
    w, h = _rnn(SHARED_LIMIT + 2)
    d = draw_graph(h, {"W": w})
    uses = SHARED_LIMIT + 2
    w_id = d.graph.find("W")[0].id
    assert all(f"  {w_id}_{i} [label=" in d.source for i in range(1, uses + 1))
    assert f"  {w_id} [" not in d.source
    assert d.source.count("shared: 6 uses") == uses
    assert d.source.count("peripheries=2") == uses
    assert sum(line.endswith("W (4x4)") for line in str(d).splitlines()) == 1


def test_few_uses_keep_one_node():
    w, h = _rnn(SHARED_LIMIT)
    assert "peripheries" not in draw_graph(h, {"W": w}).source


def test_cut_graph_says_what_it_left_out():
    _, h = _rnn(50)
    full = trace_graph(h)
    d = draw_graph(h, max_nodes=10)
    left_out = len(full.nodes) - 10
    notice = f"... {left_out} more nodes not drawn: 10 of {len(full.nodes)} shown"
    assert str(d).splitlines()[-1].startswith(notice)
    assert notice in d.source
    assert f"cut -> {d.graph.cut[0]}" in d.source


def test_legend_table_lists_every_kind():
    html = legend_html()
    assert all(f">{kind}</td>" in html and fill in html for kind, (fill, _) in LEGEND.items())


def test_notes_are_drawn_and_written(note_example):
    d = draw_graph(note_example[2], notes={"n1": "step 1", "n9": "not drawn"})
    assert "n1 op: MulBackward0 | other: tensor scalar # step 1" in str(d)
    assert "<B>step 1</B>" in d.source and "not drawn" not in d.source


@pytest.mark.parametrize("notes, error", [(["n1"], TypeError), ({"MulBackward0": "x"}, ValueError),
                                          ({"n1": 3}, ValueError)])
def test_bad_notes(note_example, notes, error):
    with pytest.raises(error, match="notes"):
        draw_graph(note_example[2], notes=notes)


def test_cut_of_a_big_graph_loses_nothing_silently():
    _, h = _rnn(1_000)
    full = trace_graph(h)
    d = draw_graph(h)
    kept = {n.id for n in d.graph.nodes}
    assert len(kept) == 300 and len(kept) + d.graph.omitted == len(full.nodes)
    lost_inputs = {e.dst for e in full.edges if e.dst in kept and e.src not in kept}
    assert set(d.graph.cut) == lost_inputs
    assert all(f"cut -> {node_id} " in d.source for node_id in lost_inputs)
    assert set(d.graph.edges) == {e for e in full.edges if e.src in kept and e.dst in kept}
