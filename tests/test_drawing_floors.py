"""The drawing path goes down its floors once: `draw_graph` (draw.py) traces
the graph (graph.py, roll.py, from_scratch.py, walk.py), writes its two forms
(dot.py, text_form.py) from the plan of what is shown (plan.py), and lays DOT out
with svg.py. That no module imports one above it is import-linter's layers
contract (pyproject.toml, FLOORS below in the same order). Run, a drawing goes
down the floors once: `draw_graph` hands the value to each floor below in turn
(traced, planned, written as DOT and as text), and it climbs back up to a
module it left at most MOST_CLIMBS times.
"""

import sys

# The floors, top down. A module may import any floor below its own; modules on one floor
# are siblings and import none of each other (the text form is dot's sibling: both format
# plan's output). The graph floor is three deep: roll and from_scratch make Graphs with
# graph.py, whose walk is walk.py.
FLOORS = (
    ("draw", ("draw",)),
    ("dot and the text form", ("dot", "text_form")),
    ("plan", ("plan",)),
    ("graph: rolled and from-scratch graphs", ("roll", "from_scratch")),
    ("graph", ("graph",)),
    ("graph: the walk", ("walk",)),
    ("svg", ("svg",)),
)

# How many times a drawing's value may come back up to a module it left and go down again.
MOST_CLIMBS = 3


def descents(run) -> dict[str, list[str]]:
    """Module -> the functions of lower floors it calls while `run()` runs
    (each once, in order; the graph floor's modules count as one floor, and
    a call through a module on no floor, such as `learner_facing`'s wrapper,
    as made by the drawing module behind it). A function without parameters
    hands no value down (`walk.collector_paused`) and is not counted."""
    rank = {module: number for number, (floor, names) in enumerate(FLOORS)
            for module in (f"helpers.{name}" for name in names)}
    rank |= {module: rank["helpers.graph"] for module in rank if FLOORS[rank[module]][0].startswith("graph")}
    found: dict[str, dict[str, None]] = {}

    def profile(frame, event, _):
        callee, code = frame.f_globals.get("__name__"), frame.f_code
        if event != "call" or callee not in rank or not code.co_argcount + code.co_kwonlyargcount:
            return
        caller = frame.f_back
        while caller is not None and caller.f_globals.get("__name__") not in rank:
            caller = caller.f_back
        module = caller.f_globals["__name__"] if caller is not None else None
        if module is not None and rank[callee] > rank[module]:
            found.setdefault(module, {})[f"{callee}.{code.co_qualname}"] = None

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return {module: list(called) for module, called in found.items()}


def climbs(called: dict[str, list[str]]) -> int:
    """How many times the value came back up to a module it left and went
    down again: every function of a lower floor a module calls, but its first."""
    return sum(len(functions) - 1 for functions in called.values())


def test_a_drawing_goes_down_its_floors_once():
    """Traced, planned, then formatted: draw_graph calls each floor below it
    once, and the forms only format the plan (they call nothing below)."""
    import torch

    from helpers import draw_graph, trace_graph
    from helpers.graph import Node

    w, h = torch.randn(4, 4, requires_grad=True), torch.randn(4)
    for _ in range(80):
        h = torch.tanh(w @ h)
    options = {"max_nodes": 150, "highlight": "TanhBackward0", "notes": {"n1": "last step"}}
    for run in (lambda: draw_graph(h, {"W": w}, **options), lambda: draw_graph(h, roll=True, max_nodes=20),
                lambda: draw_graph(trace_graph(h, max_nodes=30), constants=False)):
        called = descents(run)
        assert climbs(called) <= MOST_CLIMBS, called
        assert set(called) <= {"helpers.draw", "helpers.plan"}, called
    assert climbs({"helpers.dot": ["helpers.plan.visible", "helpers.plan.shown_saved"]}) == 1
    assert climbs(descents(lambda: Node("n0", "op", "x"))) == 0
