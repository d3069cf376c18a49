"""Helpers for the computational-graphs notebooks: walk and draw the live
autograd graph (`from helpers import trace_graph, draw_graph`). CONTRIBUTING.md
maps the modules by role."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Imported when first used: `helpers.standalone` must run without torch and ipywidgets.
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
