"""What the learner sees: a check's feedback, a hint or solution shown on
demand, and the session's score. Jupyter shows each coloured; repr() is
the text."""

from dataclasses import dataclass
from html import escape
from typing import Literal

Status = Literal["blank", "right", "wrong"]
STATUS: dict[str, tuple[str, str]] = {
    "blank": ("Not answered yet", "#555555"), "right": ("Right", "#2e7d32"), "wrong": ("Not quite", "#c62828")}


@dataclass(frozen=True)
class Feedback:
    """What a check says: a status and a sentence."""

    status: Status
    text: str

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
