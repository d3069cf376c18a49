"""The drawing path goes down its floors once: `draw_graph` (draw.py) traces
the graph (graph.py, roll.py, from_scratch.py, walk.py), writes its two forms
(dot.py, text_form.py) from the plan of what is shown (plan.py), and lays DOT out
with svg.py. Read with `ast` (every import, inside functions and
`TYPE_CHECKING` blocks too), a drawing module imports only modules on floors
below its own, never one above it nor a sibling on its own floor, also not
by way of another helpers module; and no helpers module is in an import
cycle. A copy of helpers with an upward import and a cycle proves both
checks fail. Run, a drawing goes down the floors once: `draw_graph` hands the
value to each floor below in turn (traced, planned, written as DOT and as
text), and it climbs back up to a module it left at most MOST_CLIMBS times.
"""

import ast
import sys
from graphlib import CycleError, TopologicalSorter
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


class Import:
    """One import statement of a module: the helpers modules it names, and where it is."""

    def __init__(self, path: Path, node: ast.Import | ast.ImportFrom, targets: set[str], source: str) -> None:
        self.path, self.line, self.targets = path, node.lineno, targets
        self.text = " ".join((ast.get_source_segment(source, node) or "").split())

    def __str__(self) -> str:
        return f"{self.path.relative_to(self.path.parents[1]).as_posix()}:{self.line}: `{self.text}`"


def modules(package: Path) -> dict[str, Path]:
    """Module name ("helpers.draw", "helpers.exercises") -> its file, for every module of `package`."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _resolved(name: str, known: dict[str, Path]) -> str | None:
    """The longest module of `known` that `name` is or lies in."""
    parts = name.split(".")
    return next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in known), None)


def _targets(node: ast.Import | ast.ImportFrom, module: str, path: Path, known: dict[str, Path]) -> set[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
        stem = ".".join(part for part in (base, node.module or "") if part)
        names = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem for alias in node.names]
    return {found for name in names if (found := _resolved(name, known)) is not None}


def imports(package: Path) -> dict[str, list[Import]]:
    """Module name -> its imports of other modules of `package`, anywhere in its file."""
    known = modules(package)
    found: dict[str, list[Import]] = {}
    for module, path in known.items():
        source = path.read_text(encoding="utf-8")
        found[module] = [Import(path, node, targets, source) for node in ast.walk(ast.parse(source))
                         if isinstance(node, (ast.Import, ast.ImportFrom))
                         and (targets := _targets(node, module, path, known) - {module})]
    return found


def floor_of(package: str) -> dict[str, tuple[int, str]]:
    return {f"{package}.{name}": (rank, floor) for rank, (floor, names) in enumerate(FLOORS) for name in names}


def _reached(start: str, found: dict[str, list[Import]], floors: dict[str, tuple[int, str]]):
    """(drawing module, the import of `start` that leads to it, the helpers modules between)
    for every drawing module `start` reaches directly or through modules on no floor."""
    for first in found.get(start, []):
        for target in first.targets:
            seen, queue = {target}, [(target, ())]
            while queue:
                module, between = queue.pop(0)
                if module in floors:
                    yield module, first, between
                    continue
                for later in found.get(module, []):
                    for nxt in later.targets - seen:
                        seen.add(nxt)
                        queue.append((nxt, (*between, module)))


def upward_imports(package: Path) -> list[str]:
    """One line per import that climbs: a drawing module importing a module on its own
    floor or one above it, directly or through helpers modules on no floor."""
    found, floors = imports(package), floor_of(package.name)
    wrong = []
    for module in sorted(floors):
        rank, floor = floors[module]
        for target, first, between in _reached(module, found, floors):
            if floors[target][0] <= rank:
                where = "above it" if floors[target][0] < rank else "beside it, its sibling"
                via = f" (through {', '.join(between)})" if between else ""
                wrong.append(f"{first} on floor '{floor}' imports {target}{via}, on floor "
                             f"'{floors[target][1]}' {where}")
    return wrong


def cycle(package: Path) -> str:
    """The imports that close a cycle among the modules of `package`, or ""."""
    found = imports(package)
    try:
        TopologicalSorter({m: {t for i in found[m] for t in i.targets} for m in found}).prepare()
    except CycleError as err:
        ring = err.args[1][::-1]          # graphlib lists each module before the one that imports it
        steps = [next(str(i) for i in found[a] if b in i.targets) for a, b in pairwise(ring)]
        return "import cycle " + " -> ".join(ring) + ":\n  " + "\n  ".join(steps)
    return ""


def test_every_floor_names_a_module():
    known = modules(ROOT / "helpers")
    assert not [m for m in floor_of("helpers") if m not in known], "a floor names a module helpers has not"


def test_no_drawing_module_imports_one_above_it():
    wrong = upward_imports(ROOT / "helpers")
    assert not wrong, "the drawing path climbs back:\n" + "\n".join(wrong)


def test_no_import_cycle_among_helpers_modules():
    found = cycle(ROOT / "helpers")
    assert not found, found


def test_the_checks_fail_on_an_upward_import_and_a_cycle(tmp_path):
    package = tmp_path / "helpers"
    package.mkdir()
    names = {name for _, floor in FLOORS for name in floor}
    for name in names:
        (package / f"{name}.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "support.py").write_text("from .dot import LEGEND\n")
    (package / "plan.py").write_text("def f():\n    from .text_form import to_text\n")
    (package / "graph.py").write_text("from . import support\n")
    (package / "dot.py").write_text("import helpers.text_form\n")
    wrong = upward_imports(package)
    assert any(line.startswith("helpers/plan.py:2: `from .text_form import to_text` on floor 'plan'")
               and "above it" in line for line in wrong), wrong
    assert any("helpers/graph.py:1: `from . import support`" in line and "(through helpers.support)" in line
               for line in wrong), wrong
    assert any("helpers/dot.py:1: `import helpers.text_form`" in line and "sibling" in line for line in wrong), wrong
    assert not cycle(package)
    (package / "text_form.py").write_text("from .support import LEGEND\n")
    (package / "support.py").write_text("from .other import LEGEND\n")
    (package / "other.py").write_text("def f():\n    from .text_form import to_text\n")
    found = cycle(package)
    assert "helpers/other.py:2: `from .text_form import to_text`" in found, found
    assert found.count(" -> ") == 3 and "`from .support import LEGEND`" in found, found


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
