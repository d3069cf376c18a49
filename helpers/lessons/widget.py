"""How a lesson declares its widgets (`WIDGETS` in helpers/lessons/nbNN.py):
each widget's name (its cell carries the tag `widget-<name>`; a test never
finds a cell by its source), its controls, what the browser test changes
and checks on the redrawn drawing, and the changes `make bench` times. The
browser tests (tests/test_browser.py), the bench
(tools/bench/redraw_timing.py) and the notebook tests
(tests/test_widget_registry.py) read them all through
`helpers.lessons.widgets()`."""

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
    controls: Mapping[str, str]
    checks: tuple[Check, ...]
    bench: Mapping[str, tuple[Change, ...]]
    notebook: str = ""          # filled in from the lesson module that declares it

    @property
    def tag(self) -> str:
        return TAG + self.name

    def position(self, control: str) -> int:
        """Where the control sits in the row of controls (0 first)."""
        return list(self.controls).index(control)


def in_turn(changes: list[Change]) -> tuple[Change, ...]:
    """CHANGES changes: `changes` in turn, wrapping."""
    return tuple(islice(cycle(changes), CHANGES))


def views_in_turn(control: str) -> tuple[Change, ...]:
    """CHANGES clicks of a rolled / cut / unrolled control, going round."""
    return in_turn([click(control, label) for label in ("cut", "unrolled", "rolled")])
