"""Helpers for the computational-graphs notebooks: walk and draw the live
autograd graph.

    from helpers import trace_graph, draw_graph
"""

from .dot import INSTALL_HINT, DotUnavailable, find_dot
from .draw import Drawing, Row, draw_graph, side_by_side
from .environment import check_environment, report
from .graph import Edge, Graph, Node, trace_graph
from .render import LEGEND, legend_html, to_dot, to_text
from .saved import Saved
from .widgets import panel

__all__ = [
    "INSTALL_HINT",
    "LEGEND",
    "DotUnavailable",
    "Drawing",
    "Edge",
    "Graph",
    "Node",
    "Row",
    "Saved",
    "check_environment",
    "draw_graph",
    "find_dot",
    "legend_html",
    "panel",
    "report",
    "side_by_side",
    "to_dot",
    "to_text",
    "trace_graph",
]
