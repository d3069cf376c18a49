"""Every exercise's checker accepts its reference solution, gives each
listed wrong answer the hint aimed at it, and says "not answered yet" to
the placeholder without giving the answer away."""

import importlib
import pkgutil

import pytest
from tools.lessons import lesson_function

import helpers.exercises as package
from helpers.exercises import Feedback, Question, ____, answer_from

NOTEBOOK_OF = {"nb01": "01-dynamic-control-flow", "nb02": "02-inspecting-the-graph", "nb03": "03-retain-graph",
               "nb04": "04-common-mistakes", "nb05": "05-interview-relevance", "nb06": "06-practice-question",
               "nb07": "07-autograd-from-scratch", "nb08": "08-modules-and-the-graph"}
MODULES = {name: importlib.import_module(f"helpers.exercises.{name}")
           for _, name, _ in pkgutil.iter_modules(package.__path__) if name.startswith("nb")}
ALL = [(name, e) for name, module in sorted(MODULES.items()) for e in module.EXERCISES]
IDS = [f"{name}-q{e.number}" for name, e in ALL]


def _lesson(name, exercise):
    return {need: lesson_function(NOTEBOOK_OF[name], need) for need in exercise.needs}


def _question(name, exercise):
    return Question(exercise, {}, _lesson(name, exercise))


def test_every_lesson_notebook_has_four_exercises_of_several_kinds_with_code_to_write():
    assert sorted(MODULES) == sorted(NOTEBOOK_OF)
    for module in MODULES.values():
        kinds = [e.kind for e in module.EXERCISES]
        assert len(kinds) >= 4 and len(set(kinds)) >= 2 and {"write", "fix"} & set(kinds), module.__name__


@pytest.mark.parametrize("name, exercise", ALL, ids=IDS)
def test_the_reference_solution_is_right(name, exercise):
    feedback = _question(name, exercise).check(exercise.reference(_lesson(name, exercise)))
    assert feedback.status == "right", feedback


@pytest.mark.parametrize("name, exercise", ALL, ids=IDS)
def test_wrong_answers_get_the_hint_aimed_at_them(name, exercise):
    assert len(exercise.wrong) >= 2
    for code, words in exercise.wrong:
        feedback = _question(name, exercise).check(answer_from(code, exercise.answer_name, _lesson(name, exercise)))
        assert feedback.status != "right" and words in feedback.text, (code, feedback)


@pytest.mark.parametrize("name, exercise", ALL, ids=IDS)
def test_the_placeholder_is_not_answered_and_gives_nothing_away(name, exercise):
    question = _question(name, exercise)
    feedback = question.check(____)
    assert feedback.status == "blank" and f"ex.q{exercise.number}.hint()" in feedback.text
    assert exercise.solution.strip() not in repr(feedback)
    assert exercise.solution.strip() in repr(question.solution())


def test_a_check_with_the_lesson_missing_says_what_to_run():
    module = MODULES["nb01"]
    question = Question(module.EXERCISES[0], {}, {})
    assert question.check(41).status == "blank" and "repeat_forward" in question.check(41).text


def test_the_score_counts_this_sessions_latest_answers():
    ex = MODULES["nb01"].exercises({"repeat_forward": lesson_function(NOTEBOOK_OF["nb01"], "repeat_forward")})
    assert repr(ex.score()).startswith("Your score this session: 0 of 4 right")
    ex.q1.check(40)
    assert "1. autograd nodes of twenty rounds (predict): not quite" in repr(ex.score())
    ex.q1.check(41)
    assert repr(ex.score()).startswith("Your score this session: 1 of 4 right")
    ex.q1.check(____)
    assert repr(ex.score()).startswith("Your score this session: 0 of 4 right")


def test_feedback_shows_coloured_and_as_text():
    feedback = Feedback("wrong", "a hint")
    assert repr(feedback) == "Not quite: a hint" and "a hint" in feedback._repr_html_()
