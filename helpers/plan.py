"""What a drawing of a `Graph` shows, decided once (`plan_of`) for its two
forms, which only format the `Plan`: DOT (`dot.py`) and text (`text_form.py`).

A node wired to every step of a long loop (a shared weight, an unbind, a
stack) makes edges spanning the whole drawing, and `dot` then takes seconds to
minutes: such a node is drawn beside each use or input instead (a double
border says so; the text form keeps it once). `dot`'s own settings bound the
rest (`_settings`), dropping x-coordinate rounds when edges cross many ranks.
Floor: plan, under `draw.py` and the two forms, over the graph floor."""

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeAlias

from .graph import Edge, Graph, Node, inputs_first
from .roll import NO_REPEATS, NO_REPEATS_TEXT
from .saved_values import Saved

# The mark on a node whose inputs were cut, in both forms.
CUT_MARK = "[inputs not drawn]"
# A leaf's second line (PyTorch makes its AccumulateGrad node at the leaf's first use).
LEAF_LINES = {"torch": "AccumulateGrad", "unused": "no autograd node yet", "scratch": "leaf Value",
              "input": "graph input"}
BOUNDED_LAYOUT = 100
BOUNDED = '  graph [nslimit=2, nslimit1=2, mclimit=0.3];'
QUICK_LAYOUT = 200
QUICK = '  graph [splines=line, nslimit=2, nslimit1=2, mclimit=0.3];'
# Above this many ranks crossed by edges (the virtual nodes of dot's layout), no x-coordinate rounds.
CROSSED_LIMIT = 4_000
FASTEST = '  graph [splines=line, nslimit=0, nslimit1=2, mclimit=0.1];'
# A leaf used more often than this is drawn once beside each use.
SHARED_LIMIT = 4
# Any other node with more uses, or more inputs, is drawn once beside each.
FAN_LIMIT = 8
NEAR = ("leaf", "const")


@dataclass(frozen=True, slots=True)
class Face:
    """What a node shows: kind, label, detail, a leaf's second line, the saved
    values listed, and whether one was freed (a dashed box)."""

    kind: str
    label: str
    detail: str
    leaf: str
    saved: tuple[Saved, ...]
    freed: bool


@dataclass(frozen=True, slots=True)
class Marks:
    """A node's marks: highlighted, its note (None: none asked), inputs cut,
    the line of a node drawn beside each use or input."""

    lit: bool = False
    note: str | None = None
    cut: bool = False
    fan: str = ""


UNMARKED = Marks()


@dataclass(frozen=True, slots=True)
class Copies:
    """A node drawn beside each use or input: its copies' DOT names, their
    face (an operation's copy lists no saved values) and marks (never cut), and
    whether the node is drawn itself too (a shared leaf is not)."""

    names: tuple[str, ...]
    face: Face
    marks: Marks
    itself: bool


@dataclass(frozen=True)
class Notice:
    """A sentence the drawing says apart from its nodes: `text` in the text
    form, `note` (short lines) in the DOT note box `name`."""

    name: str
    text: str
    note: str


# A wire: (DOT source, DOT destination, the edge, whether it joins two operations).
Wire: TypeAlias = tuple[str, str, Edge, bool]


@dataclass(frozen=True)
class Plan:
    """What is shown: the nodes in walk order with their faces, marks and
    copies, the wires, the counts, the notices, dot's settings."""

    nodes: Sequence[Node]
    faces: Sequence[Face]
    marks: Mapping[str, Marks]
    copies: Mapping[str, Copies]
    wires: Sequence[Wire]
    counts: str
    notices: Sequence[Notice]
    settings: Sequence[str]


@dataclass
class _Fan:
    """While wires are made: a node's uses and inputs from drawn operations
    (0: not fanned that way), and its copies' DOT names."""

    uses: int = 0
    inputs: int = 0
    use_copies: list[str] = field(default_factory=list)
    input_copies: list[str] = field(default_factory=list)


def plan_of(graph: Graph, constants: bool = True, highlight: Collection[str] = frozenset(),
            notes: Mapping[str, str] | None = None, scratch: bool = False) -> Plan:
    """The plan of a drawing of `graph`; `scratch`: the graph is of notebook
    07's engine (its leaves have no AccumulateGrad node)."""
    nodes = [n for n in graph.nodes if constants or n.kind != "const"]
    kinds = {n.id: n.kind for n in nodes}
    edges = [e for e in graph.edges if e.src in kinds and e.dst in kinds]
    wires, fans = _wires(edges, kinds)
    faces = _faces(nodes, graph, scratch)
    cut = set(graph.cut)          # a set: one membership test per node (40k cut nodes: 18 s -> 0.1 s)
    notes, marked = notes or {}, {*highlight, *(notes or {}), *cut}
    marks = {n.id: Marks(n.id in highlight, notes.get(n.id), n.id in cut) for n in nodes if n.id in marked}
    copies = _copies(graph, fans, marks, nodes, faces)
    counts = f"{counted(len(nodes), 'node')}, {counted(len(edges), 'edge')}"
    return Plan(nodes, faces, marks, copies, wires, counts, _notices(graph), _settings(len(nodes), wires))


def shown_saved(node: Node) -> list[Saved]:
    """The saved values a drawing lists: not the sizes and strides kept for
    shape bookkeeping (names with "_sym_")."""
    return [s for s in node.saved if "_sym_" not in s.name]


def _faces(nodes: Sequence[Node], graph: Graph, scratch: bool) -> list[Face]:
    inputs, used = set(graph.inputs), LEAF_LINES["scratch" if scratch else "torch"]
    unused = used if scratch else LEAF_LINES["unused"]
    leaf = {n.id: LEAF_LINES["input"] if n.id in inputs else used if n.uses else unused
            for n in nodes if n.kind == "leaf"}
    return [Face(n.kind, n.label, n.detail, leaf.get(n.id, ""), tuple(shown_saved(n)), any(s.freed for s in n.saved))
            for n in nodes]


def _wires(edges: Sequence[Edge], kinds: Mapping[str, str]) -> tuple[list[Wire], dict[str, _Fan]]:
    """(the wires, the fanned nodes). A leaf with more than SHARED_LIMIT uses,
    or another node with more than FAN_LIMIT, is drawn beside each use (a leaf's
    every use, an operation's from the second: `id_1`, `id_2`...); a node with
    more than FAN_LIMIT inputs from operations beside each input from the second
    (`id_in2`, ...)."""
    uses = Counter(e.src for e in edges)
    inputs = Counter(e.dst for e in edges if kinds[e.src] not in NEAR)
    fans = {n: _Fan(uses=k) for n, k in uses.items() if k > (SHARED_LIMIT if kinds[n] == "leaf" else FAN_LIMIT)}
    for n, k in inputs.items():
        if k > FAN_LIMIT:
            fans.setdefault(n, _Fan()).inputs = k
    drawn_uses: Counter[str] = Counter()
    drawn_inputs: Counter[str] = Counter()
    ops = {n for n, kind in kinds.items() if kind in ("op", "group")}
    wires: list[Wire] = []
    for e in edges:
        src, dst = e.src, e.dst
        if src in fans and fans[src].uses:
            drawn_uses[src] += 1
            if drawn_uses[src] > 1 or kinds[src] == "leaf":
                src = f"{src}_{drawn_uses[src]}"
                fans[e.src].use_copies.append(src)
        if dst in fans and fans[dst].inputs and kinds[e.src] not in NEAR:
            drawn_inputs[dst] += 1
            if drawn_inputs[dst] > 1:
                dst = f"{dst}_in{drawn_inputs[dst]}"
                fans[e.dst].input_copies.append(dst)
        wires.append((src, dst, e, e.src in ops and e.dst in ops))
    return wires, fans


def _copies(graph: Graph, fans: Mapping[str, _Fan], marks: dict[str, Marks], nodes: Sequence[Node],
            faces: Sequence[Face]) -> dict[str, Copies]:
    """The copies of each fanned node; its marks (in `marks`) get its fan line."""
    copies = {}
    for node, face in zip(nodes, faces, strict=True):
        fan = fans.get(node.id)
        if fan is None:
            continue
        mark = marks[node.id] = replace(marks.get(node.id, UNMARKED), fan=_fan_line(node, fan, graph))
        if node.kind != "leaf":                 # a copy lists no saved values
            face = replace(face, saved=(), freed=False)
        copies[node.id] = Copies((*fan.use_copies, *fan.input_copies), face, replace(mark, cut=False),
                                 node.kind != "leaf" or not fan.uses)
    return copies


def _fan_line(node: Node, fan: _Fan, graph: Graph) -> str:
    """"shared: N uses" (", K drawn"; "at least" when the walk stopped
    counting), "one node: N inputs", or both."""
    lines = []
    if fan.uses and node.kind == "leaf":
        least = "" if graph.counted else "at least "
        lines.append(f"shared: {least}{node.uses:,} uses" + (f", {fan.uses} drawn" if fan.uses < node.uses else ""))
    elif fan.uses:
        lines.append(f"shared: {fan.uses:,} uses" + (" drawn" if graph.omitted else ""))
    if fan.inputs:
        lines.append(f"one node: {fan.inputs:,} inputs")
    return "; ".join(lines)


def counted(number: int, noun: str, plural: str = "") -> str:
    """`number` and `noun`, agreeing: "1 operation", "0 operations"
    (`plural` where adding an s is wrong)."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


# The cut notice's advice on a graph whose kept part repeats.
ROLL_INSTEAD = "draw_graph(y, roll=True) folds its repeated steps; or raise max_nodes"


def _notices(graph: Graph) -> list[Notice]:
    """What the drawing says of what it leaves out: the cut (naming roll=True
    when the kept part repeats), rolled groups cut away, that nothing repeats. In
    a note box, on short lines."""
    found = []
    if graph.omitted:
        shown = f"{len(graph.nodes)} shown" if not graph.counted else \
            f"{len(graph.nodes):,} of {len(graph.nodes) + graph.omitted:,} shown"
        more = ROLL_INSTEAD if graph.repeats else "raise max_nodes to see more"
        text = (f"... {'' if graph.counted else 'at least '}{counted(graph.omitted, 'more node')} not drawn: "
                f"{shown}, nearest the output first ({more})")
        found.append(Notice("cut", text, text.replace(": ", ":\n", 1).replace(", nearest", ",\nnearest", 1)
                            .replace(" (draw_graph", "\n(draw_graph", 1)))
    if graph.rolled_out:
        text = (f"roll=True: the cut left out {counted(len(graph.rolled_out), 'rolled group')} "
                f"({counted(sum(r.steps for r in graph.rolled_out), 'step')} folded): raise max_nodes to draw them")
        found.append(Notice("rolled_out", text, text.replace(": ", ":\n", 1)))
    if NO_REPEATS in graph.rolled:
        text = NO_REPEATS_TEXT + ": the whole graph is drawn" + (", cut to max_nodes" if graph.omitted else "")
        found.append(Notice("no_repeats", text, NO_REPEATS_TEXT.replace(": ", ":\n", 1).replace(", so", ",\nso", 1)))
    return found


def _settings(nodes: int, wires: Sequence[Wire]) -> list[str]:
    if nodes > BOUNDED_LAYOUT and crossed_ranks([(src, dst) for src, dst, _, _ in wires]) > CROSSED_LIMIT:
        return [FASTEST]
    return [QUICK] if nodes > QUICK_LAYOUT else [BOUNDED] if nodes > BOUNDED_LAYOUT else []


def crossed_ranks(ends: Sequence[tuple[str, str]]) -> int:
    """About how many virtual nodes dot's layout makes: every edge crosses
    the ranks between its ends (ranks counted from the outputs)."""
    consumers: dict[str, list[str]] = {}
    for src, dst in ends:
        consumers.setdefault(src, []).append(dst)
        consumers.setdefault(dst, [])
    order = inputs_first(consumers)
    height: dict[str, int] = {}
    for node in reversed(order):            # consumers first
        uses = consumers[node]
        height[node] = 1 + max(map(height.__getitem__, uses)) if uses else 0
    return sum(height[src] - height[dst] - 1 for src, dst in ends)
