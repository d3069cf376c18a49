"""Helpers for the computational-graphs notebooks: walk and draw the live
autograd graph.

    from helpers import trace_graph, draw_graph

Modules, by role (CONTRIBUTING.md has the map):
  drawing      its floors, top down: draw (draw_graph); dot (DOT, legend)
               and text_form (the text form); layout (what is drawn);
               graph (walk -> Graph), roll (repeated steps as one node),
               from_scratch (notebook 07's engine, walked into a Graph);
               walk; svg (Graphviz). Also saved_values, arguments
  observing    engine (the order backward runs), saved_memory (bytes saved)
  lessons      models (lesson models several notebooks share), model_cache
               (each built once), quiz
  widgets      views (pure functions -> HTML), widgets (panel)
  set-up       standalone (the set-up cell's second half), environment (the
               index notebook's check), errors (the short form of
               tracebacks the set-up cell turns on)
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Each name is imported from its module when first used, so `import helpers.project` or
# `helpers.standalone` (a notebook's set-up cell loads it) works before torch and ipywidgets are
# there, and can say what is missing.
_HOMES = {"draw_graph": "draw", "side_by_side": "draw", "report": "environment", "trace_graph": "graph",
          "legend_html": "dot", "panel": "widgets"}
__all__ = ["draw_graph", "legend_html", "panel", "report", "side_by_side", "trace_graph"]  # _HOMES's names

if TYPE_CHECKING:
    from .dot import legend_html
    from .draw import draw_graph, side_by_side
    from .environment import report
    from .graph import trace_graph
    from .widgets import panel


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'helpers' has no attribute {name!r}")
    value = getattr(import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
