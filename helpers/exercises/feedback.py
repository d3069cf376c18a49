"""What the learner sees: feedback, hints, solutions and the score; repr() is the text."""

import reprlib
from dataclasses import dataclass
from html import escape
from typing import Any, Literal

Status = Literal["blank", "right", "wrong", "error", "interrupted"]
STATUS: dict[str, tuple[str, str]] = {
    "blank": ("Not answered yet", "#555555"), "right": ("Right", "#2e7d32"), "wrong": ("Not quite", "#c62828"),
    "error": ("The check failed", "#6a1b9a"), "interrupted": ("Interrupted", "#8d4a00")}
TEXT_LIMIT = 1000           # characters of feedback at most
QUOTE_LIMIT = 120           # characters of the line that quotes the answer judged
SHOWN = reprlib.Repr()          # how much of a learner's value feedback quotes
SHOWN.maxlevel, SHOWN.maxstring, SHOWN.maxlong, SHOWN.maxother = 3, 60, 40, 60
SHOWN.maxtuple = SHOWN.maxlist = SHOWN.maxset = SHOWN.maxfrozenset = SHOWN.maxdict = 8


def shown(value: Any) -> str:
    """A value the learner gave, as feedback quotes it: its repr, cut short."""
    if isinstance(value, float):
        return f"{value:g}"
    try:
        return SHOWN.repr(value)
    except Exception:       # the learner's object cannot show itself
        return f"a {type(value).__name__} that cannot be shown"


def bounded(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_line(error: BaseException) -> str:
    """`TypeError: the message's first line` (a syntax error with its line)."""
    if isinstance(error, SyntaxError) and error.msg:
        line = f" (line {error.lineno})" if error.lineno else ""
        return f"{type(error).__name__}: {bounded(error.msg, 200)}{line}"
    try:
        lines = str(error).strip().splitlines()
    except Exception:
        lines = []
    return f"{type(error).__name__}: {bounded(lines[0], 300)}" if lines else f"{type(error).__name__} (no message)"


@dataclass(frozen=True)
class Feedback:
    """A check's status and sentence, and `judged`, the line quoting the answer judged."""

    status: Status
    text: str
    judged: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", bounded(self.text))
        object.__setattr__(self, "judged", bounded(" ".join(self.judged.split()), QUOTE_LIMIT))  # one line

    def __repr__(self) -> str:
        return f"{STATUS[self.status][0]}: {self.text}" + (f"\n{self.judged}" if self.judged else "")

    def _repr_html_(self) -> str:
        label, colour = STATUS[self.status]
        judged = f'<br><span style="color:{STATUS["blank"][1]}">{escape(self.judged)}</span>' if self.judged else ""
        return f'<div style="color:{colour}"><b>{label}:</b> {escape(self.text)}{judged}</div>'


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

    number: int
    title: str
    kind: str
    status: Status
    optional: bool = False

    @property
    def what(self) -> str:
        return f"{self.kind}, optional" if self.optional else self.kind


@dataclass(frozen=True)
class Score:
    """This session's latest status of each exercise; optional ones counted apart from the core path's."""

    rows: tuple[ScoreRow, ...]

    def headline(self) -> str:
        core = [r for r in self.rows if not r.optional]
        optional = [r for r in self.rows if r.optional]
        if not core or not optional:
            return f"Your score this session: {_right(self.rows)} of {len(self.rows)} right"
        tried = any(r.status != "blank" for r in optional)
        extra = f"{_right(optional)} of {len(optional)} right" if tried else f"0 of {len(optional)} tried"
        return (f"Your score this session: {_right(core)} of {len(core)} core exercises right; "
                f"optional (not on the core path): {extra}")

    def __repr__(self) -> str:
        return "\n".join([self.headline()] + [f"  {r.number}. {r.title} ({r.what}): {STATUS[r.status][0].lower()}"
                                              for r in self.rows])

    def _repr_html_(self) -> str:
        rows = "".join(f'<tr><td>{r.number}</td><td style="text-align:left">{escape(r.title)}</td><td>{r.what}</td>'
                       f'<td style="color:{STATUS[r.status][1]}">{STATUS[r.status][0].lower()}</td></tr>'
                       for r in self.rows)
        return f"<p><b>{escape(self.headline())}</b></p><table>{rows}</table>"


def _right(rows: list[ScoreRow] | tuple[ScoreRow, ...]) -> int:
    return sum(row.status == "right" for row in rows)
