"""Exercises a learner does. Each has an answer slot in the notebook
(`answer_1 = ____`), and a check under it that says one of three things:
not answered yet; right, and why; or not quite, with a hint aimed at that
particular answer. `hint()` and `solution()` give more on demand.

    from helpers.exercises import ____, nb01
    ex = nb01.exercises(globals())
    ex.q1.check(answer_1)      # ex.q1.hint(), ex.q1.solution() when stuck
    ex.score()                 # which exercises this session got right

The checkers run torch: a prediction is compared with what torch does now,
on the notebook's own lesson functions (read from the notebook's globals,
so there is one source), and a function the learner writes is run and its
graph traced. The exercises of notebook NN live in `nbNN.py`.
"""

from dataclasses import dataclass
from html import escape

import torch

KINDS = ("predict", "write", "fix", "choose")
STATUS = {"blank": ("Not answered yet", "#555555"), "right": ("Right", "#2e7d32"),
          "wrong": ("Not quite", "#c62828")}


class Blank:
    """The placeholder `____` of an answer slot."""

    def __repr__(self):
        return "____"


____ = Blank()


class NotAnswered(Exception):
    """Raised by a checker that meets the placeholder."""


def filled(value):
    """`value`, unless it is or holds the placeholder (then NotAnswered)."""
    parts = value.values() if isinstance(value, dict) else value
    inside = isinstance(parts, (list, tuple, set, frozenset)) and any(isinstance(v, Blank) for v in parts)
    if isinstance(value, Blank) or inside:
        raise NotAnswered
    return value


def filled_function(answer):
    """A function the learner wrote, unless it still holds the placeholder
    (it names ____ in its code: then NotAnswered)."""
    code = getattr(answer, "__code__", None)
    if isinstance(answer, Blank) or (code is not None and "____" in code.co_names):
        raise NotAnswered
    if not callable(answer):
        raise TypeError(f"this answer must be a function (def ...); got a {type(answer).__name__}")
    return answer


@dataclass(frozen=True)
class Exercise:
    """One exercise. `judge(answer, lesson)` returns (right, text) and
    raises NotAnswered on the placeholder; `lesson` holds the notebook's
    names listed in `needs`. `solution` is the code that fills the slot
    (`answer_name` is the name it defines); `wrong` pairs answers (as code)
    with words the hint they get must contain (the tests use them)."""

    number: int
    kind: str
    title: str
    slot: str
    judge: object
    hint: str
    solution: str
    answer_name: str
    wrong: tuple = ()
    needs: tuple = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")

    def reference(self, lesson=None):
        """The answer the solution code defines (run with the lesson's names)."""
        return answer_from(self.solution, self.answer_name, lesson)


def answer_from(code, name, lesson=None):
    """Run answer code (a slot's content) with torch, ____ and the lesson's
    names in scope; return what it defines as `name`."""
    scope = {**(lesson or {}), "torch": torch, "____": ____}
    exec(compile(code, "<answer>", "exec"), scope)
    return scope[name]


@dataclass(frozen=True)
class Feedback:
    """What a check says. Jupyter shows it coloured; repr() is the text."""

    status: str
    text: str

    def __repr__(self):
        return f"{STATUS[self.status][0]}: {self.text}"

    def _repr_html_(self):
        label, colour = STATUS[self.status]
        return f'<div style="color:{colour}"><b>{label}:</b> {escape(self.text)}</div>'


@dataclass(frozen=True)
class Shown:
    """A hint (prose) or a solution (code), shown only when asked for."""

    title: str
    text: str
    code: bool = False

    def __repr__(self):
        return f"{self.title}:\n{self.text}"

    def _repr_html_(self):
        body = f"<pre>{escape(self.text)}</pre>" if self.code else f"<p>{escape(self.text)}</p>"
        return f"<div><b>{escape(self.title)}</b>{body}</div>"


class Question:
    """An exercise bound to one session: check, hint, solution."""

    def __init__(self, exercise, results, lesson):
        self.exercise = exercise
        self._results = results
        self._lesson = lesson

    def check(self, answer):
        """Check an answer; the result counts towards `score()`."""
        number = self.exercise.number
        missing = [name for name in self.exercise.needs if name not in self._lesson]
        if missing:
            return Feedback("blank", f"this check uses {', '.join(missing)} from the notebook: run the cells "
                                     "above it first (Run > Run All Above Selected Cell).")
        try:
            right, text = self.exercise.judge(answer, self._lesson)
        except NotAnswered:
            self._results.pop(number, None)
            return Feedback("blank", f"replace ____ with {self.exercise.slot}, run that cell, then this one. "
                                     f"Stuck? ex.q{number}.hint() gives a hint, ex.q{number}.solution() the answer.")
        except Exception as error:        # the learner's own code failed: say so, do not crash
            right, text = False, f"running your answer raised {type(error).__name__}: {str(error).splitlines()[0]}"
        self._results[number] = "right" if right else "wrong"
        return Feedback("right" if right else "wrong", text)

    def hint(self):
        return Shown(f"Hint for exercise {self.exercise.number}", self.exercise.hint)

    def solution(self):
        return Shown(f"A solution to exercise {self.exercise.number}", self.exercise.solution.strip(), code=True)


class ExerciseSet:
    """A notebook's exercises for one session: `q1`, `q2`, ... and `score()`."""

    def __init__(self, exercises, lesson=None):
        numbers = [e.number for e in exercises]
        if numbers != list(range(1, len(exercises) + 1)):
            raise ValueError(f"exercises must be numbered 1, 2, ... in order; got {numbers}")
        self._results = {}
        self.questions = [Question(e, self._results, lesson or {}) for e in exercises]
        for question in self.questions:
            setattr(self, f"q{question.exercise.number}", question)

    def score(self):
        """This session's results, one row per exercise."""
        return Score(tuple((q.exercise, self._results.get(q.exercise.number, "blank")) for q in self.questions))


@dataclass(frozen=True)
class Score:
    rows: tuple

    def __repr__(self):
        right = sum(status == "right" for _, status in self.rows)
        lines = [f"Your score this session: {right} of {len(self.rows)} right"]
        lines += [f"  {e.number}. {e.title} ({e.kind}): {STATUS[s][0].lower()}" for e, s in self.rows]
        return "\n".join(lines)

    def _repr_html_(self):
        head = escape(repr(self).splitlines()[0])
        rows = "".join(f'<tr><td>{e.number}</td><td style="text-align:left">{escape(e.title)}</td><td>{e.kind}</td>'
                       f'<td style="color:{STATUS[s][1]}">{STATUS[s][0].lower()}</td></tr>' for e, s in self.rows)
        return f"<p><b>{head}</b></p><table>{rows}</table>"

