"""Mutation testing of the exercise checks (tools/testkit/mutants.py): for every
write and fix exercise, each mutant of its solution that behaves differently
on the check's inputs is rejected, each that behaves the same is accepted,
and no mutant makes the check itself fail. The score per exercise is
printed with the run's figures. A check too lenient to reject a mutant is
caught."""

import pytest

from helpers.exercises import Exercise
from helpers.exercises.exercise import write
from tools.testkit.mutants import checked, score

CHECKED = checked()
# Mutants a write or fix exercise's solution must give at least: fewer test
# too little of its check (a solution of one short line gives 2 or 3).
MIN_MUTANTS = 5


@pytest.mark.parametrize("notebook, exercise", CHECKED, ids=[f"nb{n}-q{e.number}" for n, e in CHECKED])
def test_every_behaviour_changing_mutant_is_rejected(notebook, exercise, timings):
    found = score(notebook, exercise)
    timings.append(f"mutants {found.line()}")
    assert found.made >= MIN_MUTANTS, (
        f"{found.name}'s solution gives {found.made} mutants; a write or fix exercise needs at least {MIN_MUTANTS}: "
        "give its solution more to change: a step of its own, a constant, a condition")
    assert found.survived == [], "mutants that change behaviour, judged right"
    assert found.rejected_equivalent == [], "mutants that behave as the solution does, judged wrong"
    assert found.checker_errors == [], "mutants that made the check itself fail"


def _lenient(original: Exercise) -> Exercise:
    """The exercise with a judge that accepts any function, and its probe
    taken out of the verdict (as the checks were before probes)."""
    lenient = write(original.number, original.title, lambda answer, lesson: (True, "fine"), original.solution,
                    probe=original.probe, hint=original.hint)
    object.__setattr__(lenient, "verdict", lambda answer, lesson: lenient.judge(answer, lesson))
    return lenient


def test_a_check_that_lets_mutants_through_is_caught():
    notebook, exercise = next((n, e) for n, e in CHECKED if (n, e.number) == ("01", 2))
    found = score(notebook, _lenient(exercise))
    assert found.made >= 5 and len(found.survived) == found.made - len(found.equivalent) > 0
