"""A notebook's exercises bound to one learner's session: `ex.q1.check(...)`,
`ex.q1.hint()`, `ex.q1.solution()` and `ex.score()`; `exercises` makes one."""

import importlib
import pkgutil
import re
from collections.abc import Sequence
from typing import Any

from ..arguments import learner_facing, wrong
from .answers import NotAnswered
from .exercise import Exercise, Lesson
from .feedback import Feedback, Score, ScoreRow, Shown, Status

PACKAGE = __name__.rpartition(".")[0]         # helpers.exercises: nbNN.py live here


class SessionExercise:
    """One exercise in this session: check an answer; a hint or a solution
    when asked. The exercise itself stays private, so Tab completion and
    repr show no answer."""

    def __init__(self, exercise: Exercise, results: dict[int, Status], lesson: Lesson) -> None:
        self._exercise = exercise
        self._results = results
        self._lesson = lesson

    def __repr__(self) -> str:
        e = self._exercise
        return (f"Exercise {e.number} ({e.kind}): {e.title}. Answer in its cell, then ex.q{e.number}.check(...); "
                f"ex.q{e.number}.hint() and ex.q{e.number}.solution() when stuck.")

    def __dir__(self) -> list[str]:
        return ["check", "hint", "solution"]

    def check(self, answer: Any) -> Feedback:
        """Check an answer; the result counts towards `score()`."""
        e = self._exercise
        missing = [name for name in e.needs if name not in self._lesson]
        if missing:
            return Feedback("blank", f"this check uses {', '.join(missing)} from the notebook: run the cells "
                                     "above it first (Run > Run All Above Selected Cell).")
        try:
            right, text = e.verdict(answer, self._lesson)
        except NotAnswered:
            self._results.pop(e.number, None)
            return Feedback("blank", f"replace ____ with {e.slot}, run that cell, then this one. Stuck? "
                                     f"ex.q{e.number}.hint() gives a hint, ex.q{e.number}.solution() the answer.")
        except Exception as error:        # the learner's own code failed: say so, do not crash
            right, text = False, f"running your answer raised {type(error).__name__}: {str(error).splitlines()[0]}"
        self._results[e.number] = "right" if right else "wrong"
        return Feedback("right" if right else "wrong", text)

    def hint(self) -> Shown:
        return Shown(f"Hint for exercise {self._exercise.number}", self._exercise.hint)

    def solution(self) -> Shown:
        return Shown(f"A solution to exercise {self._exercise.number}", self._exercise.solution.strip(), code=True)


class ExerciseSet:
    """A notebook's exercises for one session: `q1`, `q2`, ... and `score()`."""

    def __init__(self, exercises: Sequence[Exercise], lesson: Lesson | None = None) -> None:
        numbers = [e.number for e in exercises]
        if numbers != list(range(1, len(exercises) + 1)):
            raise wrong(ValueError, f"exercises must be numbered 1, 2, ... in order; got {numbers}")
        self._results: dict[int, Status] = {}
        self._questions = tuple(SessionExercise(e, self._results, lesson or {}) for e in exercises)

    def __getattr__(self, name: str) -> SessionExercise:
        number = name.removeprefix("q")
        if name.startswith("q") and number.isdigit() and 1 <= int(number) <= len(self._questions):
            return self._questions[int(number) - 1]
        raise AttributeError(f"no exercise {name}: this notebook has q1 to q{len(self._questions)}")

    def __dir__(self) -> list[str]:
        return [f"q{n}" for n in range(1, len(self._questions) + 1)] + ["score"]

    def __repr__(self) -> str:
        return "\n".join(f"ex.q{n}: {q!r}" for n, q in enumerate(self._questions, start=1))

    def score(self) -> Score:
        """This session's latest status of each exercise, one row each."""
        return Score(tuple(ScoreRow(q._exercise.number, q._exercise.title, q._exercise.kind,
                                    self._results.get(q._exercise.number, "blank")) for q in self._questions))


def declared(notebook: str) -> tuple[Exercise, ...]:
    """The exercises of notebook `notebook` ('01', '02', ...), declared in
    helpers/exercises/nbNN.py."""
    package = importlib.import_module(PACKAGE)
    known = sorted(m.name[2:] for m in pkgutil.iter_modules(package.__path__) if re.fullmatch(r"nb\d\d", m.name))
    if not isinstance(notebook, str) or notebook not in known:
        raise wrong(ValueError, f"name the notebook by its number in quotes, one of {', '.join(known)}; "
                                f"got {notebook!r}")
    exercises: tuple[Exercise, ...] = importlib.import_module(f"{PACKAGE}.nb{notebook}").EXERCISES
    return exercises


@learner_facing
def exercises(notebook: str, lesson: Lesson | None = None) -> ExerciseSet:
    """Notebook `notebook`'s exercises for this session:
    `ex = exercises("01", globals())`; the checks read the lesson functions
    they need from `lesson`."""
    return ExerciseSet(declared(notebook), lesson)
