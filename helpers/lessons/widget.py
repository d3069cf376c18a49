"""How a lesson declares its widgets (`WIDGETS` in nbNN.py): each one's name
(its cell is tagged `widget-<name>`), its controls, and the changes the browser
test makes and checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TAG = "widget-"


@dataclass(frozen=True)
class Change:
    """A control (named as in `panel(...)`) and what a learner does to it: "press" a
    key, "click" it or its option labelled `target`, "pick" a dropdown option."""

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
    """What a widget shows after a change: caption, node texts, the view's error if any."""

    caption: str
    texts: tuple[str, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class Check:
    """A change, and what the redrawn widget must show: `caption` in its caption,
    `counts` nodes of each label, each of `shows` in some node's text."""

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
    """`controls` maps each keyword of its `panel(...)` call, in order, to its
    ipywidgets class."""

    name: str
    controls: Mapping[str, str]
    checks: tuple[Check, ...]
    notebook: str = ""          # filled in by helpers.lessons.widgets()

    @property
    def tag(self) -> str:
        return TAG + self.name

    def position(self, control: str) -> int:
        """The control's place in the row of controls (0 first)."""
        return list(self.controls).index(control)
