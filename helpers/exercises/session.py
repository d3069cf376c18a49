"""A notebook's exercises bound to one learner's session: `ex.q1.check(...)`,
`ex.q1.hint()`, `ex.q1.solution()` and `ex.score()`; `exercises` makes one."""

import json
import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import FunctionType
from typing import Any

from ..arguments import learner_facing, wrong
from . import apart, cells, sandbox
from .answers import NotAnswered, WrongForm
from .behaviour import described, difference
from .cells import MISSING, Run
from .exercise import Exercise, Lesson
from .feedback import Feedback, Score, ScoreRow, Shown, Status, error_line, shown
from .lesson import Resolved, rebound, resolve, stored_definitions
from .observe import NotPlain, plain, unplain
from .sandbox import hermetic, in_sandbox, learners_frame
from .timeouts import TimedOut

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
        record(self._notebook, e.number, feedback)
        return feedback

    def _apart(self, answer: Any, run: Run | None, lesson: Lesson) -> Feedback:
        """The feedback on `answer`. Everything that runs the answer (its
        judge, its probe, the quote of it, an error's message) runs where the
        time limit holds (apart.py); what comes back is plain data
        (`observed`) and the quote, and the verdict is judged here, in the
        session, from that data alone (`verdict`), as the grader does: a
        child that forges its result only sends another answer."""
        e = self._exercise

        def work() -> apart.Result:
            return observed(e, rebound(answer, lesson), lesson), quoted(answer, run)

        def interrupted(error: KeyboardInterrupt) -> apart.Result:
            return said(_failed(error)), quoted(answer, run)

        done = apart.run(work, interrupted, self._notebook, e.number)
        if isinstance(done, apart.Stopped):
            safe = quoted(answer, run) if type(answer) is FunctionType else ""
            return Feedback("wrong" if done.why == "time" else "error", apart.stopped_text(done), safe)
        observation, line = done
        feedback = verdict(e, observation, lesson, partial(self._expected, lesson))
        return Feedback(feedback.status, feedback.text, line if feedback.status != "blank" else "")

    def _expected(self, lesson: Lesson) -> Any:
        """What the reference solution does on the check's inputs (its probe),
        computed apart as the answer's check is (so that nothing it runs,
        torch.compile's caches included, reaches the session), as plain data
        rebuilt; raises CheckFailed, with the feedback, when it cannot be had."""
        e = self._exercise

        def work() -> apart.Result:
            try:
                return {"reference": plain(in_sandbox(lambda: e.probe(e.reference(lesson), lesson)))}, ""  # type: ignore[misc]
            except Exception as error:      # the solution's own failure
                return said(_failed(error)), ""

        done = apart.run(work, lambda error: (said(_failed(error)), ""), self._notebook, e.number)
        if isinstance(done, apart.Stopped):
            raise CheckFailed(Feedback("error", f"the check itself failed (the reference solution's run ended: "
                                                f"{done.detail or 'past the time limit'}). {REPORT}"))
        data = done[0]
        if type(data) is dict and type(data.get("said")) is list and len(data["said"]) == 2:
            raise CheckFailed(Feedback("error", str(data["said"][1])))
        if type(data) is not dict or "reference" not in data:
            raise CheckFailed(Feedback("error", f"the check itself failed (the reference solution's run sent "
                                                f"{str(data)[:100]}). {REPORT}"))
        return unplain(data["reference"])

    def _run(self, answer: Any) -> Run | None:
        """The latest run of the cell that sets this exercise's answer, when
        `answer` is what the notebook holds under the answer's name."""
        name = self._exercise.answer_name
        return cells.latest(self._lesson, name) if self._lesson.get(name, MISSING) is answer else None

    def hint(self) -> Shown:
        return Shown(f"Hint for exercise {self._exercise.number}", self._exercise.hint)

    def solution(self) -> Shown:
        return Shown(f"A solution to exercise {self._exercise.number}", self._exercise.solution.strip(), code=True)


RESULTS = "GRAPH_NOTEBOOKS_RESULTS"      # a file every check appends its verdict to: make grade's channel


def record(notebook: str, number: int, feedback: Feedback) -> None:
    """When GRAPH_NOTEBOOKS_RESULTS names a file (make grade's run sets it:
    classroom/grade_run.py), append the check's verdict to it as one JSON line."""
    path = os.environ.get(RESULTS)
    if path:
        line = {"notebook": notebook, "exercise": f"q{number}", "status": feedback.status, "message": feedback.text}
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(line) + "\n")


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
        return Feedback("blank", blank_text(exercise))
    except WrongForm as error:
        return Feedback("wrong", str(error))
    except KeyboardInterrupt:
        raise       # the learner's interrupt, in the session: check() records it
    except BaseException as error:     # an answer may raise anything, SystemExit included
        return _failed(error)
    return Feedback("right" if right else "wrong", text)


def blank_text(exercise: Exercise) -> str:
    n = exercise.number
    return (f"replace ____ with {exercise.slot}, run that cell, then this one. Stuck? ex.q{n}.hint() gives a hint, "
            f"ex.q{n}.solution() the answer.")


def said(feedback: Feedback) -> dict[str, Any]:
    """A verdict the child gives itself, which can only be against the
    answer: "wrong" (it raised, it ran too long) or "error" (the check's
    own code failed where the answer ran)."""
    return {"said": [feedback.status, feedback.text]}


def observed(exercise: Exercise, answer: Any, lesson: Lesson) -> dict[str, Any]:
    """In the check's child: what the parent needs to judge `answer`, as
    plain data (observe.plain). A prediction or a letter as its value; code
    as what its judge said and, when that is right, what its probe measured,
    both run in one fresh session under one time limit (as `judged` runs
    them), or the verdict its error gives (`said`)."""
    if exercise.kind in ("predict", "choose"):
        return {"value": plain(answer)}

    def run() -> dict[str, Any]:
        right, text = exercise.judge(answer, lesson)        # type: ignore[operator]
        found: dict[str, Any] = {"judge": [bool(right), str(text)]}
        if right and exercise.probe is not None:
            found["probe"] = plain(exercise.probe(answer, lesson))
        return found

    try:
        return in_sandbox(run)
    except NotAnswered:
        return {"blank": True}
    except WrongForm as error:
        return said(Feedback("wrong", str(error)))
    except KeyboardInterrupt:
        raise
    except BaseException as error:     # an answer may raise anything, SystemExit included
        return said(_failed(error))


class CheckFailed(RuntimeError):
    """The checker's own part of a check could not be done: `feedback` says so."""

    def __init__(self, feedback: Feedback) -> None:
        super().__init__(feedback.text)
        self.feedback = feedback


def verdict(exercise: Exercise, observation: Any, lesson: Lesson, expected: Callable[[], Any]) -> Feedback:
    """The feedback from what the check's child observed (`observed`),
    judged in the session, with nothing of the answer's but plain data: a
    value by the exercise's own judge (`judged` on the value rebuilt from
    exact built-in types), code by its judge's words and its probe compared
    with `expected()`, what the reference solution does. Data the child
    cannot have made is the check's failure, never right."""
    try:
        if type(observation) is not dict:
            raise NotPlain(f"a {type(observation).__name__}")
        if "said" in observation:
            status, text = _pair(observation["said"], str)
            if status not in ("wrong", "error"):
                raise NotPlain(f"a verdict of {status!r}")
            return Feedback(status, text)
        if exercise.kind in ("predict", "choose"):
            return judged(exercise, unplain(observation.get("value")), lesson)
        if observation.get("blank") is True:
            return Feedback("blank", blank_text(exercise))
        right, text = _pair(observation.get("judge"), bool)
        if not right:
            return Feedback("wrong", text)
        mine = unplain(observation.get("probe"))
    except NotPlain as error:
        return Feedback("error", f"the check sent back no verdict it can give ({error}). {REPORT}")
    try:
        asked = expected()
    except CheckFailed as failed:
        return failed.feedback
    except NotPlain as error:
        return Feedback("error", f"the check itself failed (the reference solution's data: {error}). {REPORT}")
    found = difference(mine, asked)
    return Feedback("right", text) if found is None else Feedback("wrong", described(found))


def _pair(data: Any, first: type) -> tuple[Any, str]:
    if type(data) is not list or len(data) != 2 or type(data[0]) is not first or type(data[1]) is not str:
        raise NotPlain("not the pair the check sends")
    return data[0], data[1]


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
