"""The collection's widgets, each declared once: its notebook, the cell tag
that finds its cell (`widget-<name>`, never the cell's source), its controls,
what the browser test changes and checks on the redrawn drawing, and the
changes `make bench` times. The browser tests (tests/test_browser.py), the
bench (tools/bench/redraw_timing.py) and the notebook tests
(tests/test_widget_registry.py) all read `WIDGETS`.

A widget cell is a code cell whose stored output is a widget view or that
calls `panel(`; `problems` lists any that is not registered."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import cycle, islice

TAG = "widget-"
CHANGES = 7               # changes the bench times per run


@dataclass(frozen=True)
class Change:
    """One thing a learner does to a control (named as in `panel(...)`):
    "press" a key on its slider, "click" it (a checkbox) or one of its
    options by label (a button, a radio choice), "pick" a dropdown option."""

    control: str
    action: str
    target: str = ""


def press(control: str, key: str = "ArrowRight") -> Change:
    return Change(control, "press", key)


def click(control: str, label: str = "") -> Change:
    return Change(control, "click", label)


def pick(control: str, option: str) -> Change:
    return Change(control, "pick", option)


@dataclass(frozen=True)
class Shown:
    """What a widget shows after a change, as read from the page: its caption,
    the texts of the drawing's nodes, and the error it shows (if its view raised)."""

    caption: str
    texts: tuple[str, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class Check:
    """A change the browser test makes, and what the redrawn widget must show:
    a caption containing `caption`, `counts` nodes with each label, and each
    of `shows` in some node's text (a rolled node, the cut note)."""

    change: Change
    caption: str
    counts: Mapping[str, int] = field(default_factory=dict)
    shows: tuple[str, ...] = ()

    def problems(self, shown: Shown) -> list[str]:
        if shown.error:
            return [f"the view raised instead of drawing: {shown.error}"]
        found = [] if self.caption in shown.caption else [f"caption {shown.caption!r} lacks {self.caption!r}"]
        found += [f"{shown.texts.count(label)} nodes {label}, expected {n}"
                  for label, n in self.counts.items() if shown.texts.count(label) != n]
        return found + [f"no node shows {words!r}" for words in self.shows
                        if not any(words in text for text in shown.texts)]


@dataclass(frozen=True)
class Widget:
    """A widget of the collection: `controls` maps each keyword of its
    `panel(...)` call, in order, to the ipywidgets class of the control;
    `checks` are made in order by the browser test; `bench` maps a timed
    run's name to its CHANGES changes, each to a state not drawn before
    where the control has that many (a checkbox has two: its later changes
    are redraws the SVG cache answers, its first is a new layout). A view
    that keeps its Figures (the compile view) revisits states instead, as a
    learner does: its first visits are the slow ones."""

    name: str
    notebook: str
    controls: Mapping[str, str]
    checks: tuple[Check, ...]
    bench: Mapping[str, tuple[Change, ...]]

    @property
    def tag(self) -> str:
        return TAG + self.name

    def position(self, control: str) -> int:
        """Where the control sits in the row of controls (0 first)."""
        return list(self.controls).index(control)


def in_turn(changes: list[Change]) -> tuple[Change, ...]:
    """CHANGES changes: `changes` in turn, wrapping."""
    return tuple(islice(cycle(changes), CHANGES))


def _views(control: str) -> tuple[Change, ...]:
    return in_turn([click(control, label) for label in ("cut", "unrolled", "rolled")])


def _sequences(*indices: int) -> list[Change]:
    lengths = (3, 5, 2, 8, 200)          # notebook 01's `lengths`
    return [pick("index", f"sequence {i} (length {lengths[i]})") for i in indices]


WIDGETS = (
    Widget("branch", "01-dynamic-control-flow", {"use_extra_layer": "Checkbox", "x": "FloatSlider"},
           (Check(click("use_extra_layer"), "use_extra_layer=False: y = 6, x.grad = 2, 1 operations",
                  {"AddBackward0": 0, "MulBackward0": 1}),),
           {"use_extra_layer checkbox": in_turn([click("use_extra_layer")]),
            "x slider": in_turn([press("x", "ArrowLeft")])}),
    Widget("loop", "01-dynamic-control-flow", {"n": "IntSlider"},
           (Check(press("n"), "n = 4: 8 operations, 9 autograd nodes, 18 boxes drawn", {"MulBackward0": 4}),),
           {"n slider": in_turn([press("n")])}),
    Widget("while", "01-dynamic-control-flow", {"value": "FloatLogSlider"},
           (Check(press("value", "End"), "x = 1000: 10 halvings, depth 10", {"DivBackward0": 10}),),
           {"x slider": in_turn([press("value")])}),
    Widget("sequence", "01-dynamic-control-flow", {"index": "Dropdown", "view": "ToggleButtons"},
           (Check(_sequences(4)[0], "sequence 4: length 200, 200 cell steps counted in its graph (rolled)",
                  shows=("× 197 steps",)),
            Check(click("view", "cut"), "length 200, 200 cell steps counted in its graph (cut)",
                  {"TanhBackward0": 10}, ("more nodes not drawn",))),
           {"dropdown": in_turn(_sequences(0, 2, 3, 4, 0, 2, 1)), "rolled / cut / unrolled": _views("view")}),
    Widget("step", "02-inspecting-the-graph", {"step": "IntSlider"},
           (Check(press("step"), "step 2 of 5: MulBackward0 receives 1"),),
           {"backward step slider": (press("step"),) * 4 + (press("step", "ArrowLeft"),) * 3}),
    Widget("length", "05-interview-relevance", {"length": "IntSlider", "view": "ToggleButtons"},
           (Check(press("length"), "length 4, 4 cell steps counted in its graph (rolled)", {"TanhBackward0": 4}),
            Check(press("length", "End"), "length 30, 30 cell steps counted in its graph (rolled)",
                  shows=("× 27 steps",))),
           {"length slider": in_turn([press("length")]), "rolled / cut / unrolled": _views("view")}),
    Widget("quiz", "06-practice-question", {"choice": "RadioButtons"},
           (Check(click("choice", "deleted the graph's nodes"), "Not quite. The nodes survive backward()"),
            Check(click("choice", "freed the tensors"), "Right. Backward frees the intermediate values")),
           {"quiz choices": in_turn([click("choice", words) for words in
                                     ("deleted the graph", "freed the tensors", "forbids computing",
                                      "refuses to overwrite")])}),
    Widget("scratch-step", "07-autograd-from-scratch", {"step": "IntSlider"},
           (Check(press("step"), "step 2 of 4: the * node passes its grad 1 on to its inputs"),),
           {"backward step slider": (press("step"),) * 3 + (press("step", "ArrowLeft"),) * 3 + (press("step"),)}),
    Widget("freeze", "08-modules-and-the-graph", {"freeze_0": "Checkbox", "freeze_2": "Checkbox"},
           (Check(click("freeze_0"), "trainable: 2.weight, 2.bias; 2 AccumulateGrad leaves"),),
           {"freeze layer 0 checkbox": in_turn([click("freeze_0")]),
            "freeze layer 2 checkbox": in_turn([click("freeze_2")])}),
    Widget("mode", "08-modules-and-the-graph", {"training": "Checkbox"},
           (Check(click("training"), "eval(): 7 operations recorded; BatchNorm running statistics unchanged"),),
           {"train() checkbox": in_turn([click("training")])}),
    # The compile view keeps a Figure per combination of controls: a combination's first visit
    # compiles, a later one is drawn from memory. Each bench run goes round its states and back,
    # as a learner toggling does, so its first changes compile and the rest revisit.
    Widget("compile", "09-torch-compile", {"use_extra_layer": "Checkbox", "earlier": "ToggleButtons"},
           (Check(click("use_extra_layer"), "failed, so dynamo compiled graph 2; 2 graphs compiled; graph 2 ran: mul",
                  {"mul": 1, "add": 0, "MulBackward0": 1, "AddBackward0": 0}),
            Check(click("earlier", "True, False"), "the guards of graph 2 (made for use_extra_layer=False) held: "
                  "no recompile; 2 graphs compiled", {"mul": 1, "MulBackward0": 1})),
           {"use_extra_layer checkbox": in_turn([click("use_extra_layer")]),
            "earlier calls": in_turn([click("earlier", label) for label in ("no call", "False", "True, False",
                                                                             "True")])}),
)


def of(notebook: str, widgets: tuple[Widget, ...] = WIDGETS) -> list[Widget]:
    """The widgets of one notebook (its file name without .ipynb), in order."""
    return [w for w in widgets if w.notebook == notebook]
