"""Helpers for the computational-graphs notebooks: walk and draw the live
autograd graph.

    from helpers import trace_graph, draw_graph

Modules, by role (CONTRIBUTING.md has the map):
  graph core   graph (walk -> Graph), saved_values, render (DOT, text,
               legend), svg (Graphviz), roll (repeated steps as one
               node), draw (draw_graph), arguments
  observing    engine (the order backward runs), saved_memory (bytes saved)
  lessons      models (lesson models several notebooks share), quiz
  scratch      scratch (notebook 07's engine, walked into a Graph)
  widgets      views (pure functions -> HTML), widgets (panel)
  set-up       environment (the index notebook's check)
"""

from .draw import draw_graph, side_by_side
from .environment import report
from .graph import trace_graph
from .render import legend_html
from .widgets import panel

__all__ = ["draw_graph", "legend_html", "panel", "report", "side_by_side", "trace_graph"]
