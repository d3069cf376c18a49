"""Mutation testing of the exercise checks. Each write and fix exercise's
solution is changed in one small place at a time (tools/testkit/mutants.py). Each
mutant is run through the exercise's check, as a learner's answer, and
through its probe (helpers/exercises/behaviour.py), which records what it
does on the check's inputs. A mutant whose probe differs from the
solution's changes behaviour and must be rejected; one whose probe is the
same is equivalent, and must be accepted.

    python -m tools.testkit.mutation [NN-qN ...]      (default: every write and fix exercise)

prints, per exercise, the mutants made, those rejected, the equivalent ones,
and any that survived or that the check wrongly rejected; exits 1 if any.
"""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from helpers.exercises import Exercise, answer_from, declared, sandbox
from helpers.exercises.behaviour import PROBED, difference
from helpers.exercises.lesson import stored_definitions
from helpers.exercises.session import judged
from helpers.lessons import numbers
from tools.testkit.mutants import CAP, mutants

TIME_LIMIT = 2.0         # seconds a mutant's check may take (a mutated loop may never end)


@dataclass
class Score:
    """What the check made of one exercise's mutants."""

    name: str
    made: int = 0
    killed: int = 0
    by_probe: int = 0        # of the killed: rejected only by the comparison with the solution's probe
    equivalent: list[str] = field(default_factory=list)
    survived: list[str] = field(default_factory=list)      # changed behaviour, yet judged right
    rejected_equivalent: list[str] = field(default_factory=list)    # behaved the same, yet judged wrong
    checker_errors: list[str] = field(default_factory=list)

    @property
    def score(self) -> str:
        changing = self.made - len(self.equivalent)
        return f"{self.killed}/{changing}" if changing else "-"

    def line(self) -> str:
        return (f"{self.name}: {self.made} mutants, {self.score} behaviour-changing ones rejected "
                f"({self.by_probe} of them only by the probe comparison), "
                f"{len(self.equivalent)} equivalent, {len(self.survived)} survived, "
                f"{len(self.rejected_equivalent)} equivalent but rejected, {len(self.checker_errors)} checker errors")


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """The checks' time limit set to `seconds` in the block."""
    before, sandbox.TIME_LIMIT = sandbox.TIME_LIMIT, seconds
    try:
        yield
    finally:
        sandbox.TIME_LIMIT = before


def behaviour(exercise: Exercise, answer: Any, lesson: dict[str, Any]) -> Any:
    """The probe of `answer`, or what stopped it (an exception's type, a time-out)."""
    assert exercise.probe is not None
    try:
        return sandbox.in_sandbox(lambda: exercise.probe(answer, lesson))      # type: ignore[misc]
    except KeyboardInterrupt:
        raise
    except BaseException as error:      # a mutant may raise anything
        return ("raised", type(error).__name__)


def lesson_of(notebook: str, exercise: Exercise) -> dict[str, Any]:
    stored = stored_definitions(notebook)
    return {name: stored[name] for name in exercise.needs}


def score(notebook: str, exercise: Exercise, cap: int = CAP) -> Score:
    """Make the exercise's mutants and judge each, as described above."""
    lesson, result = lesson_of(notebook, exercise), Score(f"nb{notebook}-q{exercise.number}")
    asked = behaviour(exercise, exercise.reference(lesson), lesson)
    with time_limit(TIME_LIMIT):
        for label, source in mutants(exercise.solution, cap):
            try:
                answer = answer_from(source, exercise.answer_name, lesson, "<mutant>")
            except Exception:           # the mutant does not even define its function
                continue
            result.made += 1
            same = difference(behaviour(exercise, answer, lesson), asked) is None
            verdict = judged(exercise, answer, lesson)
            if verdict.status == "error":
                result.checker_errors.append(f"{label}: {verdict.text}")
            elif same and verdict.status == "right":
                result.equivalent.append(label)
            elif same:
                result.rejected_equivalent.append(f"{label}: {verdict.text}")
            elif verdict.status == "right":
                result.survived.append(label)
            else:
                result.killed += 1
                result.by_probe += PROBED in verdict.text
    return result


def checked() -> list[tuple[str, Exercise]]:
    """Every write and fix exercise of every lesson (helpers/lessons/nbNN.py),
    with its notebook's number."""
    return [(n, e) for n in numbers() for e in declared(n) if e.kind in ("write", "fix")]


def name(notebook: str, exercise: Exercise) -> str:
    return f"{notebook}-q{exercise.number}"


def main(args: list[str]) -> int:
    known = {name(n, e): (n, e) for n, e in checked()}
    unknown = [arg for arg in args if arg.removeprefix("nb") not in known]
    if unknown:
        print(f"no write or fix exercise {', '.join(unknown)}; they are: {', '.join(known)}", file=sys.stderr)
        return 2
    wanted = [known[arg.removeprefix("nb")] for arg in args] if args else list(known.values())
    bad = 0
    for notebook, exercise in wanted:
        found = score(notebook, exercise)
        print(found.line())
        for title, items in (("survived", found.survived), ("equivalent but rejected", found.rejected_equivalent),
                             ("checker error", found.checker_errors), ("equivalent", found.equivalent)):
            for item in items:
                print(f"    {title}: {item}")
        bad += len(found.survived) + len(found.rejected_equivalent) + len(found.checker_errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
