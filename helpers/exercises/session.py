"""A notebook's exercises bound to one learner's session (`exercises`); each verdict also goes to the
GRAPH_NOTEBOOKS_RESULTS file (`report`), which a grader reads. An IPython hook (`watch`) records which
cell last set each answer and whether it raised, so a check need not judge a stale value."""

import ast
import dis
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import CodeType, FunctionType
from typing import Any

from ..arguments import learner_facing, wrong
from ..errors import current_shell, spelled
from . import sandbox
from .exercise import Exercise, Lesson
from .feedback import Feedback, Score, ScoreRow, Shown, Status, error_line, shown
from .judges import NotAnswered, WrongForm
from .lesson import Resolved, rebound, resolve, stored_definitions
from .sandbox import TimedOut, hermetic, learners_frame, replaced

MISSING = object()          # a name the namespace does not hold
# A line that defines or assigns a name, in a cell that does not compile: `def mul(`, `answer_4 = `.
TARGET = re.compile(r"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)"
                    r"|^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
RESULTS = "GRAPH_NOTEBOOKS_RESULTS"     # the environment variable naming the file `report` appends to


@dataclass(frozen=True)
class Run:
    """The latest run of a cell that set, or meant to set, an answer's name."""

    cell: int | None
    error: str | None
    set: bool
    bare: str | None = None


class SessionExercise:
    """One exercise in this session; the exercise stays private, so Tab and repr show no answer."""

    def __init__(self, exercise: Exercise, owner: "ExerciseSet") -> None:
        self._exercise, self._owner = exercise, owner

    def __repr__(self) -> str:
        e = self._exercise
        return (f"Exercise {e.number} ({e.kind}): {e.title}. Answer in its cell, then ex.q{e.number}.check(...); "
                f"ex.q{e.number}.hint() and ex.q{e.number}.solution() when stuck.")

    def __dir__(self) -> list[str]:
        return ["check", "hint", "solution"]

    def check(self, answer: Any) -> Feedback:
        """Check an answer, unless its cell raised before setting it or the lesson names it needs are
        missing; record the verdict, and give the notebook's names back as they were."""
        e, owner, run = self._exercise, self._owner, self._run(answer)
        names = owner._names(e.needs)
        if run is not None and not run.set:
            feedback = Feedback("blank", not_set(e, run))
        elif names.missing:
            feedback = Feedback("blank", f"this check uses {', '.join(names.missing)} from the notebook: run the "
                                         "cells above it first (Run > Run All Above Selected Cell).")
        else:
            kept = dict(owner._lesson)
            try:
                feedback = judged(e, rebound(answer, names.values), names.values)
            except KeyboardInterrupt:
                owner._results[e.number] = "interrupted"
                report(owner._notebook, e.number, Feedback("interrupted", "the check was interrupted"))
                raise
            finally:
                _give_back(owner._lesson, kept)
            if feedback.status != "blank":
                feedback = Feedback(feedback.status, feedback.text, quoted(answer, run))
            if names.changed:
                changed = ", ".join(f"`{name}`" for name in names.changed)
                feedback = Feedback(feedback.status, f"{feedback.text} Note: you changed {changed}; this check "
                                                     "uses the notebook's version.", feedback.judged)
        if feedback.status == "blank":
            owner._results.pop(e.number, None)
        else:
            owner._results[e.number] = feedback.status
        report(owner._notebook, e.number, feedback)
        return feedback

    def _run(self, answer: Any) -> Run | None:
        """The latest run of the cell that sets the answer, when `answer` is the notebook's."""
        name, lesson = self._exercise.answer_name, self._owner._lesson
        return _RUNS.get((id(lesson), name)) if lesson.get(name, MISSING) is answer else None

    def hint(self) -> Shown:
        return Shown(f"Hint for exercise {self._exercise.number}", self._exercise.hint)

    def solution(self) -> Shown:
        return Shown(f"A solution to exercise {self._exercise.number}", self._exercise.solution.strip(), code=True)


def not_set(exercise: Exercise, run: Run) -> str:
    """What a check says when the answer's cell raised before setting it."""
    name, defines = exercise.answer_name, exercise.kind in ("write", "fix")
    verb, done = ("defines", "defined") if defines else ("sets", "set")
    where = f" (cell [{run.cell}])" if run.cell is not None else ""
    text = (f"the cell that {verb} {name}{where} raised {run.error}, so {name} was not {done}: fix that cell and "
            "run it again, then this one.")
    if run.bare is not None and (run.error or "").startswith("NameError") and not defines:
        right = spelled(run.bare)
        text += (f" Python spells it {right}: {name} = {right}." if right
                 else f" If you meant the text {run.bare!r}, it goes in quotes: {name} = {run.bare!r}.")
    return text


def quoted(answer: Any, run: Run | None) -> str:
    """The line naming what was judged: "You answered 'b'.", "Judged your mul from cell [7]."."""
    then = f"raised {run.error}" if run is not None and run.error else ""
    if isinstance(answer, (FunctionType, type)):
        cell = f" from cell [{run.cell}]" if run is not None and run.cell is not None else ""
        return f"Judged your {answer.__name__}{cell}" + (f" (which then {then})." if then else ".")
    where = f"cell [{run.cell}]" if run is not None and run.cell is not None else "its cell"
    return f"You answered {shown(answer)}" + (f" ({where} then {then})." if then else ".")


def judged(exercise: Exercise, answer: Any, lesson: Lesson) -> Feedback:
    """The check's feedback on `answer`, judged in the sandbox with torch's own functions only."""
    gone = replaced()
    if gone:
        return Feedback("error", replaced_text(gone))
    try:
        with hermetic(), sandbox.time_limit(sandbox.TIME_LIMIT):
            right, text = exercise.verdict(answer, lesson)
            gone = replaced()           # before hermetic gives torch's own functions back
    except NotAnswered:
        n = exercise.number
        return Feedback("blank", f"replace ____ with {exercise.slot}, run that cell, then this one. Stuck? "
                                 f"ex.q{n}.hint() gives a hint, ex.q{n}.solution() the answer.")
    except WrongForm as error:
        return Feedback("wrong", str(error))
    except KeyboardInterrupt:
        raise       # the learner's interrupt: check() records it
    except BaseException as error:     # an answer may raise anything, SystemExit included
        return _failed(error)
    if gone:
        return Feedback("wrong", replaced_text(gone, by_answer=True))
    return Feedback("right" if right else "wrong", text)


def replaced_text(names: list[str], by_answer: bool = False) -> str:
    """Feedback for torch functions replaced in the session, or by the answer as it ran."""
    named = ", ".join(f"`{name}`" for name in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    if by_answer:
        return (f"your answer replaced {named} while the check ran it (torch's own is back now), and a check judges "
                "only with torch's own functions: write it without replacing any of torch's.")
    return (f"{named} {'is' if len(names) == 1 else 'are'} not torch's own any more: code in this session replaced "
            f"{'it' if len(names) == 1 else 'them'}, and this check does not judge with a replaced torch. To get "
            "torch back, restart the kernel (Kernel › Restart Kernel), then run the cells above this one (Run › "
            "Run All Above Selected Cell), without the code that replaced it.")


def _failed(error: BaseException) -> Feedback:
    where = learners_frame(error)
    if where is None and isinstance(error, TimedOut):
        return Feedback("error", f"the check ran past its time limit of {sandbox.TIME_LIMIT:g} s in its own code, "
                                 "not in your answer's, which a busy or slow machine can cause: run it again.")
    if where is None:
        return Feedback("error", f"the check itself failed ({error_line(error)}). This is a bug in the exercise, "
                                 "not in your answer: please report it, with this message, to the collection's "
                                 "maintainers.")
    place = f"in {where[0]}, line {where[1]}"
    if isinstance(error, TimedOut):
        return Feedback("wrong", f"your function did not return within the time limit of {sandbox.TIME_LIMIT:g} s "
                                 f"(it was {place}): is there a loop that never ends?")
    return Feedback("wrong", f"running your answer raised {error_line(error)} {place}.")


def _give_back(namespace: Mapping[str, Any], kept: dict[str, Any]) -> None:
    if not isinstance(namespace, dict):
        return
    for name in [name for name in namespace if name not in kept]:
        del namespace[name]
    for name, value in kept.items():
        if namespace.get(name, MISSING) is not value:
            namespace[name] = value


def report(notebook: str, number: int, feedback: Feedback) -> None:
    """Append the verdict, as one line of JSON, to the file RESULTS names, if any."""
    path = os.environ.get(RESULTS)
    if not path:
        return
    status = "error" if feedback.status == "interrupted" else feedback.status     # grades.csv's words
    line = json.dumps({"notebook": notebook, "exercise": f"q{number}", "status": status, "message": feedback.text})
    try:
        with open(path, "a", encoding="utf-8") as results:
            results.write(line + "\n")
    except OSError as error:
        print(f"the check's verdict could not be written to {path} ({error_line(error)})", file=sys.stderr)


class ExerciseSet:
    """A notebook's exercises for one session (numbered 1, 2, ... in order): `q1`, `q2`, ... and `score()`."""

    def __init__(self, exercises: Sequence[Exercise], lesson: Lesson | None = None,
                 stored: Callable[[], Mapping[str, Any]] | None = None, notebook: str = "") -> None:
        self._results: dict[int, Status] = {}
        self._lesson, self._load, self._notebook = lesson or {}, stored, notebook
        self._stored: dict[str, Any] | None = None
        self._questions = tuple(SessionExercise(e, self) for e in exercises)

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
    """The exercises of notebook `notebook` ('01', ...), from helpers/lessons/nbNN.py."""
    from .. import lessons

    known = lessons.numbers()
    if not isinstance(notebook, str) or notebook not in known:
        raise wrong(ValueError, f"name the notebook by its number in quotes, one of {', '.join(known)}; "
                                f"got {notebook!r}")
    exercises: tuple[Exercise, ...] = lessons.module(notebook).EXERCISES
    return exercises


@learner_facing
def exercises(notebook: str, lesson: Lesson | None = None) -> ExerciseSet:
    """Notebook `notebook`'s exercises for this session: `ex = exercises("01", globals())`."""
    found = declared(notebook)
    watch((e.answer_name for e in found), lesson)
    return ExerciseSet(found, lesson, partial(stored_definitions, notebook), notebook)


_WATCHED: set[str] = set()
_BEFORE: dict[str, Any] = {}
_RUNS: dict[tuple[int, str], Run] = {}


def watch(names: Iterable[str], namespace: Mapping[str, Any] | None) -> None:
    """Record the cell runs that set `names`, when `namespace` is the IPython shell's own."""
    shell = current_shell()
    if shell is None or namespace is None or namespace is not getattr(shell, "user_ns", None):
        return
    _WATCHED.update(names)
    for event, hook in (("pre_run_cell", before_cell), ("post_run_cell", after_cell)):
        if hook not in shell.events.callbacks.get(event, []):
            shell.events.register(event, hook)


def before_cell(info: Any = None) -> None:
    """IPython's pre_run_cell: the watched names' values as the cell starts."""
    _BEFORE.clear()
    try:
        shell = current_shell()
        if shell is not None:
            _BEFORE.update((name, shell.user_ns.get(name, MISSING)) for name in _WATCHED)
    except Exception:       # never in the learner's way: without a record the answer is judged as given
        _BEFORE.clear()


def after_cell(result: Any = None) -> None:
    """IPython's post_run_cell: a Run for each watched name the cell set or meant to set."""
    before = dict(_BEFORE)
    _BEFORE.clear()
    try:
        shell = current_shell()
        if shell is None or result is None or not _WATCHED:
            return
        namespace = shell.user_ns
        info = getattr(result, "info", None)
        source = getattr(info, "transformed_cell", None) or getattr(info, "raw_cell", None) or ""
        error = getattr(result, "error_before_exec", None) or getattr(result, "error_in_exec", None)
        changed = {name for name in _WATCHED if name in before and namespace.get(name, MISSING) is not before[name]}
        mentioned = {name for name in _WATCHED if name in source}
        meant = assigned(source) & mentioned if mentioned - changed else set()
        count = getattr(result, "execution_count", None)
        for name in changed | meant:
            _RUNS[(id(namespace), name)] = Run(count if isinstance(count, int) else None,
                                               None if error is None else error_line(error),
                                               name in changed or error is None, _bare(source, name))
    except Exception:       # as in before_cell
        return


def assigned(source: str) -> set[str]:
    """The names a cell's code binds at its top level, in any form (`a, b =`, `+=`, `for a in`, `import as`);
    lines like `name = ...` if it does not compile."""
    try:
        code = compile(source, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError):
        return {a or b for a, b in TARGET.findall(source)}
    return _stored(code, top=True)


def _stored(code: CodeType, top: bool) -> set[str]:
    ops = ("STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL") if top else ("STORE_GLOBAL", "DELETE_GLOBAL")
    names = {str(i.argval) for i in dis.get_instructions(code) if i.opname in ops}
    for inner in code.co_consts:
        if isinstance(inner, CodeType):
            names |= _stored(inner, top=False)
    return names


def _bare(source: str, name: str) -> str | None:
    """'d' when the cell is `name = d`, a bare name, and nothing else."""
    try:
        [node] = ast.parse(source).body         # ValueError unless one statement
    except (SyntaxError, ValueError, OverflowError):
        return None
    match node:
        case ast.Assign(targets=[ast.Name(id=target)], value=ast.Name(id=bare)) if target == name:
            return bare
    return None
