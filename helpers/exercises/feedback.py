"""What the learner sees: a check's feedback, a hint or solution shown on
demand, and the session's score. Jupyter shows each coloured; repr() is
the text."""

import reprlib
from dataclasses import dataclass
from html import escape
from typing import Any, Literal

Status = Literal["blank", "right", "wrong", "error"]
STATUS: dict[str, tuple[str, str]] = {
    "blank": ("Not answered yet", "#555555"), "right": ("Right", "#2e7d32"), "wrong": ("Not quite", "#c62828"),
    "error": ("The check failed", "#6a1b9a")}
TEXT_LIMIT = 1000           # characters of feedback at most
SHOWN = reprlib.Repr()          # how much of a learner's value feedback quotes
SHOWN.maxlevel, SHOWN.maxstring, SHOWN.maxlong, SHOWN.maxother = 3, 60, 40, 60
SHOWN.maxtuple = SHOWN.maxlist = SHOWN.maxset = SHOWN.maxfrozenset = SHOWN.maxdict = 8


def shown(value: Any) -> str:
    """A value the learner gave, as feedback quotes it: its repr, cut short
    (a float as %g: 5 for 5.0)."""
    if isinstance(value, float):
        return f"{value:g}"
    try:
        return SHOWN.repr(value)
    except Exception:       # the learner's object cannot show itself
        return f"a {type(value).__name__} that cannot be shown"


def bounded(text: str, limit: int = TEXT_LIMIT) -> str:
    """`text`, cut to `limit` characters."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Feedback:
    """What a check says: a status and a sentence (at most TEXT_LIMIT
    characters)."""

    status: Status
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", bounded(self.text))

    def __repr__(self) -> str:
        return f"{STATUS[self.status][0]}: {self.text}"

    def _repr_html_(self) -> str:
        label, colour = STATUS[self.status]
        return f'<div style="color:{colour}"><b>{label}:</b> {escape(self.text)}</div>'


@dataclass(frozen=True)
class Shown:
    """A hint (prose) or a solution (code), shown only when asked for."""

    title: str
    text: str
    code: bool = False

    def __repr__(self) -> str:
        return f"{self.title}:\n{self.text}"

    def _repr_html_(self) -> str:
        body = f"<pre>{escape(self.text)}</pre>" if self.code else f"<p>{escape(self.text)}</p>"
        return f"<div><b>{escape(self.title)}</b>{body}</div>"


@dataclass(frozen=True)
class ScoreRow:
    """One exercise's line of the score: what it is and its latest status."""

    number: int
    title: str
    kind: str
    status: Status


@dataclass(frozen=True)
class Score:
    """This session's latest status of each exercise."""

    rows: tuple[ScoreRow, ...]

    def __repr__(self) -> str:
        right = sum(row.status == "right" for row in self.rows)
        lines = [f"Your score this session: {right} of {len(self.rows)} right"]
        lines += [f"  {r.number}. {r.title} ({r.kind}): {STATUS[r.status][0].lower()}" for r in self.rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = escape(repr(self).splitlines()[0])
        rows = "".join(f'<tr><td>{r.number}</td><td style="text-align:left">{escape(r.title)}</td><td>{r.kind}</td>'
                       f'<td style="color:{STATUS[r.status][1]}">{STATUS[r.status][0].lower()}</td></tr>'
                       for r in self.rows)
        return f"<p><b>{head}</b></p><table>{rows}</table>"
