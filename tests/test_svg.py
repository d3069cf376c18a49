"""Laying out with Graphviz: SVG, determinism across processes, no dot, a
graph too big to lay out, bad DOT."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from html import escape

import pytest
import torch

from helpers import draw_graph, svg, trace_graph
from helpers.svg import INSTALL_HINT, LAYOUT_LIMIT, DotUnavailable, dot_command, to_svg
from tools.testkit.shapes import rnn

DRAW_NOTE_EXAMPLE = textwrap.dedent("""
    import json, torch
    from helpers import draw_graph
    x = torch.tensor(2.0, requires_grad=True)
    z = (x ** 2) * 3
    d = draw_graph(z, {"x": x})
    print(json.dumps([d.source, str(d), d._repr_mimebundle_()[0]["text/plain"]]))
""")


def _path_without_dot():
    return os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if not os.path.exists(os.path.join(p, "dot")))


def test_same_source_and_text_in_two_processes():
    """Two fresh processes at once, with other hash seeds, the second with no `dot` on its PATH."""
    runs = [subprocess.Popen([sys.executable, "-c", DRAW_NOTE_EXAMPLE], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, **env})
            for env in ({"PYTHONHASHSEED": "1"}, {"PYTHONHASHSEED": "2", "PATH": _path_without_dot()})]
    outs = [run.communicate(timeout=300)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outs
    first, second = (json.loads(out.splitlines()[0]) for out in outs)
    assert first[:2] == second[:2] and "0x" not in outs[0]


def test_without_dot_in_process(note_example, monkeypatch):
    monkeypatch.setenv("PATH", _path_without_dot())
    d = draw_graph(note_example[2], notes={"n2": "a source not laid out before"})
    bundle, metadata = d._repr_mimebundle_()
    assert list(bundle) == ["text/plain"] and metadata == {}
    assert bundle["text/plain"] == INSTALL_HINT + "\n" + str(d)
    assert "\n" not in INSTALL_HINT
    with pytest.raises(DotUnavailable, match="apt-get install graphviz"):
        d.svg()
    assert "apt-get install graphviz" in d.html() and escape(str(d)) in d.html()


def test_a_refused_drawing_counts_the_graphs_nodes_not_the_boxes_dot_gets(monkeypatch):
    """A shared weight is drawn beside each use (1,103 nodes make 1,652 boxes): the limit counts boxes (dot's time),
    the message the nodes the learner's text form counts, and it says what to pass."""
    monkeypatch.setattr(svg, "_laid_out", lambda source: pytest.fail("dot should not run"))
    w, h = rnn(550)
    drawing = draw_graph(h, {"W": w}, max_nodes=None)
    assert (len(drawing.graph.nodes), svg.node_count(drawing.source)) == (1103, 1652) > (1103, LAYOUT_LIMIT)
    assert str(drawing).startswith("1,103 nodes,")
    with pytest.raises(DotUnavailable) as refused:
        drawing.svg()
    message = str(refused.value)
    assert message.startswith("1,103 nodes (1,652 boxes: a leaf or operation with many uses is drawn beside each)")
    assert "1603" not in message and "1652 nodes" not in message and "1,652 nodes" not in message
    assert "pass a smaller max_nodes" in message and "roll=True" in message
    assert drawing._repr_mimebundle_()[0]["text/plain"] == f"{message}\n{drawing}"


def test_the_refusal_says_what_applies_to_what_was_drawn(monkeypatch):
    """roll=True is offered only if not rolled already; a Graph drawn as given is cut by trace_graph, not draw_graph."""
    monkeypatch.setattr(svg, "LAYOUT_LIMIT", 5)
    w, h = rnn(10)
    rolled = str(pytest.raises(DotUnavailable, draw_graph(h, {"W": w}, roll=True).svg).value)
    assert "pass a smaller max_nodes" in rolled and "roll=True" not in rolled
    graph = str(pytest.raises(DotUnavailable, draw_graph(trace_graph(h, max_nodes=None)).svg).value)
    assert "trace_graph(y, max_nodes=300)" in graph and "pass a smaller max_nodes" not in graph
    monkeypatch.setattr(svg, "LAYOUT_LIMIT", 20)                # without constants, it counts what it shows
    drawing = draw_graph(h, {"W": w}, constants=False)
    shown = sum(node.kind != "const" for node in drawing.graph.nodes)
    assert shown < len(drawing.graph.nodes) and str(drawing).startswith(f"{shown} nodes,")
    with pytest.raises(DotUnavailable, match=f"^{shown} nodes \\("):
        drawing.svg()


@pytest.mark.system
def test_broken_dot_source_is_reported_and_the_next_one_draws():
    with pytest.raises(DotUnavailable, match=r"dot failed \(.*syntax error"):
        to_svg("digraph { a -> }")
    assert "after_failure" in to_svg("digraph { after_failure; }")


@pytest.mark.system
def test_dot_runs_with_the_svg_renderer_and_the_dot_layout_only():
    _, env = dot_command()
    assert env is not None, "the lean plugin set could not be made on this machine"
    libraries = sorted(os.listdir(env["GVBINDIR"]))
    assert any(name.startswith("libgvplugin_core") for name in libraries)
    assert any(name.startswith("libgvplugin_dot_layout") for name in libraries)
    assert not any("pango" in name for name in libraries)
    assert "lean_plugin_probe" in to_svg("digraph { lean_plugin_probe -> b; }")


@pytest.mark.system
def test_when_the_lean_plugin_set_cannot_be_made_dot_runs_as_installed(monkeypatch):
    def no_symlinks(dot):
        raise OSError("symbolic links are not allowed here")

    monkeypatch.setattr(svg, "_lean_plugins", no_symlinks)
    assert svg._plugin_directory.__wrapped__(shutil.which("dot")) is None
    monkeypatch.setattr(svg, "_plugin_directory", lambda dot: None)
    assert dot_command() == (shutil.which("dot"), None)
    assert "as_installed_probe" in to_svg("digraph { as_installed_probe -> b; }")


@pytest.mark.system
def test_a_drawing_keeps_its_size_in_jupyterlab(note_example):
    """JupyterLab scales an image/svg+xml output to the cell unless its metadata says "unconfined"."""
    data, metadata = draw_graph(note_example[2])._repr_mimebundle_()
    assert "image/svg+xml" in data and metadata == {"image/svg+xml": {"unconfined": True}}


def test_the_layout_limit_counts_nodes_not_labelled_edges(monkeypatch):
    """Edges from outputs k > 0 of a multi-output operation carry a label (804 nodes were once refused as 1603)."""
    x = torch.randn(6, requires_grad=True)
    drawing = draw_graph(list(x.unbind()))
    assert drawing.source.count('label=" out') == 5
    assert svg.node_count(drawing.source) == len(drawing.graph.nodes) == 8
    monkeypatch.setattr(svg, "LAYOUT_LIMIT", 8)
    monkeypatch.setattr(svg, "_laid_out", lambda source: "<svg/>")
    assert to_svg(drawing.source) == "<svg/>"
    monkeypatch.setattr(svg, "LAYOUT_LIMIT", 7)
    with pytest.raises(DotUnavailable, match="^8 nodes are more than dot lays out quickly"):
        to_svg(drawing.source)
