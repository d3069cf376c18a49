"""A notebook's exercises bound to one learner's session: `ex.q1.check(...)`,
`ex.q1.hint()`, `ex.q1.solution()` and `ex.score()`; `exercises` makes one."""

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import FunctionType
from typing import Any

from ..arguments import learner_facing, wrong
from . import apart, cells, sandbox
from .answers import NotAnswered, WrongForm
from .cells import MISSING, Run
from .exercise import Exercise, Lesson
from .feedback import STATUS, Feedback, Score, ScoreRow, Shown, Status, error_line, shown
from .lesson import Resolved, rebound, resolve, stored_definitions
from .sandbox import TimedOut, hermetic, in_sandbox, learners_frame

REPORT = ("This is a bug in the exercise, not in your answer: please report it, with this message, to the "
          "collection's maintainers.")


class SessionExercise:
    """One exercise in this session: check an answer; a hint or a solution
    when asked. The exercise itself stays private, so Tab completion and
    repr show no answer."""

    def __init__(self, exercise: Exercise, results: dict[int, Status],
                 names: Callable[[tuple[str, ...]], Resolved], lesson: Lesson | None = None,
                 notebook: str = "") -> None:
        self._exercise = exercise
        self._results = results
        self._names = names
        self._lesson: Lesson = {} if lesson is None else lesson
        self._notebook = notebook

    def __repr__(self) -> str:
        e = self._exercise
        return (f"Exercise {e.number} ({e.kind}): {e.title}. Answer in its cell, then ex.q{e.number}.check(...); "
                f"ex.q{e.number}.hint() and ex.q{e.number}.solution() when stuck.")

    def __dir__(self) -> list[str]:
        return ["check", "hint", "solution"]

    def check(self, answer: Any) -> Feedback:
        """Check an answer in a fresh session, under a time limit that holds
        (apart.py: in a child process where there is fork); the verdict,
        whatever it is, becomes this exercise's line of `score()`, and an
        interrupt (KeyboardInterrupt) makes it "interrupted" and goes on.
        An answer the notebook holds under the exercise's name although the
        cell that sets it last raised before setting it is not judged: the
        check says what the cell raised (cells.py)."""
        e = self._exercise
        run = self._run(answer)
        names = self._names(e.needs)
        if run is not None and not run.set:
            feedback = Feedback("blank", not_set(e, run))
        elif names.missing:
            feedback = Feedback("blank", f"this check uses {', '.join(names.missing)} from the notebook: run the "
                                         "cells above it first (Run > Run All Above Selected Cell).")
        else:
            try:
                feedback = self._apart(answer, run, names.values)
            except KeyboardInterrupt:
                self._results[e.number] = "interrupted"
                raise
        if feedback.status == "blank":
            self._results.pop(e.number, None)
        else:
            self._results[e.number] = feedback.status
        if names.changed and not (run is not None and not run.set):
            changed = ", ".join(f"`{name}`" for name in names.changed)
            feedback = Feedback(feedback.status, f"{feedback.text} Note: you changed {changed}; this check uses "
                                                 "the notebook's version.", feedback.judged)
        return feedback

    def _apart(self, answer: Any, run: Run | None, lesson: Lesson) -> Feedback:
        """The feedback on `answer`, everything that touches it (the judge,
        the quote of the answer, an error's message) computed where the time
        limit holds; what comes back is three strings."""
        e = self._exercise

        def result(found: Feedback) -> apart.Result:
            return found.status, found.text, quoted(answer, run) if found.status != "blank" else ""

        def work() -> apart.Result:
            return result(judged(e, rebound(answer, lesson), lesson))

        done = apart.run(work, lambda error: result(_failed(error)), self._notebook, e.number)
        if isinstance(done, apart.Stopped):
            safe = quoted(answer, run) if type(answer) is FunctionType else ""
            return Feedback("wrong" if done.why == "time" else "error", apart.stopped_text(done), safe)
        status, text, line = done
        if status not in STATUS or status == "interrupted":
            return Feedback("error", f"the check sent back no verdict it can give ({status!r}). {REPORT}")
        return Feedback(status, text, line)     # type: ignore[arg-type]

    def _run(self, answer: Any) -> Run | None:
        """The latest run of the cell that sets this exercise's answer, when
        `answer` is what the notebook holds under the answer's name."""
        name = self._exercise.answer_name
        return cells.latest(self._lesson, name) if self._lesson.get(name, MISSING) is answer else None

    def hint(self) -> Shown:
        return Shown(f"Hint for exercise {self._exercise.number}", self._exercise.hint)

    def solution(self) -> Shown:
        return Shown(f"A solution to exercise {self._exercise.number}", self._exercise.solution.strip(), code=True)


def not_set(exercise: Exercise, run: Run) -> str:
    """What the check says when the cell that sets the answer raised before
    setting it: that error, and to run the cell again."""
    name, defines = exercise.answer_name, exercise.kind in ("write", "fix")
    verb, done = ("defines", "defined") if defines else ("sets", "set")
    text = (f"the cell that {verb} {name}{run.where} raised {run.error}, so {name} was not {done}: fix that cell and "
            "run it again, then this one.")
    if run.bare is not None and (run.error or "").startswith("NameError") and not defines:
        text += f" If you meant the text {run.bare!r}, it goes in quotes: {name} = {run.bare!r}."
    return text


def quoted(answer: Any, run: Run | None) -> str:
    """The line that says which answer a check judged: "You answered 'b'."
    for a value, "Judged your mul from cell [7]." for a function or class
    (its cell named when the notebook's record has it), and the error when
    the cell raised after setting the answer."""
    then = f"raised {run.error}" if run is not None and run.error else ""
    if isinstance(answer, (FunctionType, type)):
        cell = f" from cell [{run.cell}]" if run is not None and run.cell is not None else ""
        return f"Judged your {answer.__name__}{cell}" + (f" (which then {then})." if then else ".")
    where = f"cell [{run.cell}]" if run is not None and run.cell is not None else "its cell"
    return f"You answered {shown(answer)}" + (f" ({where} then {then})." if then else ".")


def judged(exercise: Exercise, answer: Any, lesson: Lesson) -> Feedback:
    """What the check of `answer` says. An error or a time-out that passed
    through the learner's code is feedback on the answer; any other is the
    checker's own, and says so."""
    try:
        right, text = in_sandbox(partial(exercise.verdict, answer, lesson))
    except NotAnswered:
        n = exercise.number
        return Feedback("blank", f"replace ____ with {exercise.slot}, run that cell, then this one. Stuck? "
                                 f"ex.q{n}.hint() gives a hint, ex.q{n}.solution() the answer.")
    except WrongForm as error:
        return Feedback("wrong", str(error))
    except KeyboardInterrupt:
        raise       # the learner's interrupt, in the session: check() records it
    except BaseException as error:     # an answer may raise anything, SystemExit included
        return _failed(error)
    return Feedback("right" if right else "wrong", text)


def _failed(error: BaseException) -> Feedback:
    where = learners_frame(error)
    if where is None:
        what = f"it took longer than {sandbox.TIME_LIMIT:g} s" if isinstance(error, TimedOut) else _described(error)
        return Feedback("error", f"the check itself failed ({what}). {REPORT}")
    place = f"in {where[0]}, line {where[1]}"
    if isinstance(error, TimedOut):
        return Feedback("wrong", f"your function did not return within the time limit of {sandbox.TIME_LIMIT:g} s "
                                 f"(it was {place}): is there a loop that never ends?")
    return Feedback("wrong", f"running your answer raised {_described(error)} {place}.")


def _described(error: BaseException) -> str:
    """`TypeError: the message's first line`, or `AssertionError (no message)`."""
    return error_line(error)


class ExerciseSet:
    """A notebook's exercises for one session: `q1`, `q2`, ... and `score()`.
    `lesson` is the learner's globals; `stored` gives the lesson functions
    as the stored notebook defines them (checks use those)."""

    def __init__(self, exercises: Sequence[Exercise], lesson: Lesson | None = None,
                 stored: Callable[[], Mapping[str, Any]] | None = None, notebook: str = "") -> None:
        numbers = [e.number for e in exercises]
        if numbers != list(range(1, len(exercises) + 1)):
            raise wrong(ValueError, f"exercises must be numbered 1, 2, ... in order; got {numbers}")
        self._results: dict[int, Status] = {}
        self._lesson, self._load = lesson or {}, stored
        self._stored: dict[str, Any] | None = None
        self._questions = tuple(SessionExercise(e, self._results, self._names, self._lesson, notebook)
                                for e in exercises)

    def _names(self, needs: tuple[str, ...]) -> Resolved:
        if self._stored is None and needs:
            with hermetic():                  # reading the stored notebook leaves the session as it was
                self._stored = dict(self._load()) if self._load else {}
        return resolve(needs, self._lesson, self._stored or {})

    def __getattr__(self, name: str) -> SessionExercise:
        number = name.removeprefix("q")
        questions: tuple[SessionExercise, ...] = self.__dict__.get("_questions", ())
        if name.startswith("q") and number.isdigit() and 1 <= int(number) <= len(questions):
            return questions[int(number) - 1]
        raise AttributeError(f"no exercise {name}: this notebook has q1 to q{len(questions)}")

    def __dir__(self) -> list[str]:
        return [f"q{n}" for n in range(1, len(self._questions) + 1)] + ["score"]

    def __repr__(self) -> str:
        return "\n".join(f"ex.q{n}: {q!r}" for n, q in enumerate(self._questions, start=1))

    def score(self) -> Score:
        """This session's latest verdict on each exercise, one row each."""
        return Score(tuple(ScoreRow(q._exercise.number, q._exercise.title, q._exercise.kind,
                                    self._results.get(q._exercise.number, "blank"), q._exercise.optional)
                           for q in self._questions))


def declared(notebook: str) -> tuple[Exercise, ...]:
    """The exercises of notebook `notebook` ('01', '02', ...), declared in
    helpers/lessons/nbNN.py."""
    from .. import lessons

    known = lessons.numbers()
    if not isinstance(notebook, str) or notebook not in known:
        raise wrong(ValueError, f"name the notebook by its number in quotes, one of {', '.join(known)}; "
                                f"got {notebook!r}")
    exercises: tuple[Exercise, ...] = lessons.module(notebook).EXERCISES
    return exercises


@learner_facing
def exercises(notebook: str, lesson: Lesson | None = None) -> ExerciseSet:
    """Notebook `notebook`'s exercises for this session:
    `ex = exercises("01", globals())`. The checks take the lesson functions
    they need from the collection's stored notebook (from `lesson`, the
    notebook's globals, when it cannot be found). In IPython, with `lesson`
    the kernel's own globals, the runs of the cells that set the answers
    are recorded from now on (cells.py). When the kernel was ended by a
    check that did not stop (apart.py, without fork), it says so, once."""
    found = declared(notebook)
    cells.watch((e.answer_name for e in found), lesson)
    said = apart.notice(notebook)
    if said:
        print(said)
    return ExerciseSet(found, lesson, partial(stored_definitions, notebook), notebook)
