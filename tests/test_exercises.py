"""Every exercise's check: the solution and tests/answers/'s right answers are right, each wrong answer gets the
hint aimed at it, the placeholder gives nothing away, and the question shows what the declaration says."""

import re
from html import escape

import nbformat
import pytest
from answers import RIGHT, RIGHT_SAYING, WRONG
from structure import exercise_rule, optional

from helpers import lessons
from helpers.exercises import ExerciseSet, ____, answer_from, declared, exercises
from helpers.quiz import MultipleChoice
from tools.build.pacing import exercise_kind, marked_optional
from tools.build.solutions import SLOT, tagged
from tools.notebooks import notebook_paths
from tools.testkit.lessons import lesson_function

NOTEBOOKS = {path.name[:2]: path for path in notebook_paths()[1:]}
ALL = [(notebook, e) for notebook in sorted(NOTEBOOKS) for e in declared(notebook)]
IDS = [f"nb{notebook}-q{e.number}" for notebook, e in ALL]


def _lesson(notebook, exercise):
    return {need: lesson_function(NOTEBOOKS[notebook].stem, need) for need in exercise.needs}


def _session(notebook, exercise):
    """A session of the notebook's exercises, with the lesson functions it needs."""
    return getattr(ExerciseSet(declared(notebook), _lesson(notebook, exercise)), f"q{exercise.number}")


def test_every_lesson_has_its_exercises():
    found = {notebook: exercise_rule(optional(nbformat.read(path, as_version=4)), [e.kind for e in declared(notebook)])
             for notebook, path in NOTEBOOKS.items()}
    assert not any(found.values()), "; ".join(f"helpers/lessons/nb{n}.py: {why}" for n, why in found.items() if why)
    # and the rule fails: too few exercises, one kind only, no code to write or fix
    assert all(exercise_rule(False, kinds) for kinds in (["predict", "write"], ["write"] * 4,
                                                         ["predict", "choose"] * 2))


@pytest.mark.parametrize("notebook, exercise", ALL, ids=IDS)
def test_the_reference_solution_is_right(notebook, exercise):
    feedback = _session(notebook, exercise).check(exercise.reference(_lesson(notebook, exercise)))
    assert feedback.status == "right", feedback


@pytest.mark.parametrize("notebook, exercise", ALL, ids=IDS)
def test_wrong_answers_get_the_hint_aimed_at_them(notebook, exercise):
    wrong = WRONG.get((notebook, exercise.number), [])
    assert len(wrong) >= 2, (f"notebook {notebook}'s exercise {exercise.number} has {len(wrong)} wrong answer; each "
                             f"exercise needs at least 2 in tests/answers/nb{notebook}_answers.py, each with words its "
                             "feedback must hold")
    for code, words in wrong:
        answer = answer_from(code, exercise.answer_name, _lesson(notebook, exercise))
        feedback = _session(notebook, exercise).check(answer)
        assert feedback.status != "right" and words in feedback.text, (code, feedback)


@pytest.mark.parametrize("key", sorted(RIGHT), ids=[f"nb{n}-q{q}" for n, q in sorted(RIGHT)])
def test_right_answers_written_otherwise_are_right(key):
    notebook, number = key
    exercise = declared(notebook)[number - 1]
    for code in RIGHT[key]:
        feedback = _session(notebook, exercise).check(answer_from(code, exercise.answer_name,
                                                                  _lesson(notebook, exercise)))
        assert feedback.status == "right", (code, feedback)


def test_right_answers_get_the_words_aimed_at_how_they_are_written():
    """08 q4 with retain_graph=True left in: right, and told it can go; the solution is not told so."""
    for (notebook, number), answers in RIGHT_SAYING.items():
        exercise = declared(notebook)[number - 1]
        for code, words in answers:
            feedback = _session(notebook, exercise).check(answer_from(code, exercise.answer_name))
            assert feedback.status == "right" and words in feedback.text, (code, feedback)
        feedback = _session(notebook, exercise).check(exercise.reference())
        assert all(words not in feedback.text for _, words in answers), feedback


@pytest.mark.parametrize("notebook, exercise", ALL, ids=IDS)
def test_the_placeholder_is_not_answered_and_gives_nothing_away(notebook, exercise):
    question = _session(notebook, exercise)
    feedback = question.check(____)
    assert feedback.status == "blank" and f"ex.q{exercise.number}.hint()" in feedback.text
    assert exercise.solution.strip() not in repr(feedback)
    assert exercise.solution.strip() in repr(question.solution())


def _markdown_of(notebook, number):
    """The markdown cell that asks exercise `number` of a notebook."""
    nb = nbformat.read(NOTEBOOKS[notebook], as_version=4)
    return next(c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith(f"### {number}. "))


@pytest.mark.parametrize("notebook, exercise", ALL, ids=IDS)
def test_the_notebook_asks_what_the_declaration_says(notebook, exercise):
    """Heading `### N. Kind: title` (code marks aside); a choose exercise's prompt and options
    (a), (b), ... are its MultipleChoice's, word for word."""
    text = _markdown_of(notebook, exercise.number)
    heading = text.splitlines()[0].replace("`", "")
    assert heading == f"### {exercise.number}. {exercise.kind.capitalize()}: {exercise.title}"
    if isinstance(exercise.judge, MultipleChoice):
        shown = re.findall(r"^- \(([a-z])\) ((?:.*\n?)(?:  .*\n?)*)", text, re.M)
        assert [(k, " ".join(t.split())) for k, t in shown] == [
            (letter, o.text) for letter, o in zip(exercise.judge.letters, exercise.judge.options, strict=True)]
        assert exercise.judge.prompt in " ".join(text.split())


def test_a_check_with_the_lesson_missing_says_what_to_run():
    question = ExerciseSet(declared("01"), {}).q3
    assert question.check(8).status == "blank" and "halve_until_small" in question.check(8).text


def test_the_score_counts_this_sessions_latest_answers():
    ex = exercises("01", {"halve_until_small": lesson_function(NOTEBOOKS["01"].stem, "halve_until_small")})
    assert repr(ex.score()).startswith("Your score this session: 0 of 2 core exercises right")
    ex.q1.check(38)
    assert repr(ex.score()).startswith("Your score this session: 1 of 2 core exercises right")
    ex.q1.check(37)
    assert "1. nodes of another loop (predict): not quite" in repr(ex.score())
    ex.q1.check(____)
    assert repr(ex.score()).startswith("Your score this session: 0 of 2 core exercises right")
    assert "1. nodes of another loop (predict): not answered yet" in repr(ex.score())


def test_the_score_counts_the_core_path_apart_from_the_optional_exercises():
    ex = exercises("01", {"halve_until_small": lesson_function(NOTEBOOKS["01"].stem, "halve_until_small")})
    optional = "optional (not on the core path)"
    assert repr(ex.score()).splitlines()[0] == \
        f"Your score this session: 0 of 2 core exercises right; {optional}: 0 of 2 tried"
    ex.q1.check(38)
    ex.q2.check(answer_from(declared("01")[1].solution, "sign_forward"))
    lines = repr(ex.score()).splitlines()
    assert lines[0] == f"Your score this session: 2 of 2 core exercises right; {optional}: 0 of 2 tried"
    assert lines[1:] == ["  1. nodes of another loop (predict): right",
                         "  2. a graph that follows a sign (write): right",
                         "  3. halvings of 200 (predict, optional): not answered yet",
                         "  4. where the comparison went (choose, optional): not answered yet"]
    ex.q3.check(7)
    assert repr(ex.score()).splitlines()[0].endswith(f"{optional}: 0 of 2 right")
    ex.q3.check(8)
    assert repr(ex.score()).splitlines()[0].endswith(f"{optional}: 1 of 2 right")
    html = ex.score()._repr_html_()
    assert escape(repr(ex.score()).splitlines()[0]) in html and "<td>predict, optional</td>" in html


def test_a_notebook_without_optional_exercises_has_one_count():
    """Notebook 07 is optional as a whole: none of its exercises is marked, and its score is one count."""
    assert not any(e.optional for e in declared("07"))
    assert repr(exercises("07").score()).splitlines()[0] == "Your score this session: 0 of 5 right"


def _marked_optional(nb):
    """Whether each question is marked off the core path, by tools/build/pacing.py's rules."""
    section, found = False, []
    for c in nb.cells:
        if c.cell_type == "markdown":
            if c.source.startswith("## "):
                section = "Optional" in c.source.splitlines()[0]
            if exercise_kind(c.source):
                found.append(section or marked_optional(c.source))
    return found


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS))
def test_an_exercise_is_declared_optional_where_its_notebook_marks_it(notebook):
    marked = _marked_optional(nbformat.read(NOTEBOOKS[notebook], as_version=4))
    said = [e.optional for e in declared(notebook)]
    assert len(marked) == len(said)
    differ = [n for n, (m, s) in enumerate(zip(marked, said, strict=True), start=1) if m != s]
    assert not differ, "; ".join(
        f"helpers/lessons/nb{notebook}.py: exercise {n} is " + (
            "marked optional in its question (*Optional, for a second pass.*): declare it with optional=True"
            if marked[n - 1] else "not marked optional in its question: drop its optional=True") for n in differ)


@pytest.mark.parametrize("notebook", ["1", "nb01", 1, "99", "01-dynamic-control-flow"])
def test_a_notebook_is_named_by_its_number(notebook):
    with pytest.raises(ValueError, match="name the notebook by its number in quotes, one of 01, 02"):
        exercises(notebook)


SHOWN = [(notebook, number, code) for notebook in NOTEBOOKS
         for number, code in getattr(lessons.module(notebook), "SHOWN", {}).items()]


def _shows(markdown, code):
    """Whether a ```python block of `markdown` holds `code` as written."""
    return any(code.strip() in block for block in re.findall(r"```python\n(.*?)```", markdown, re.S))


def test_a_question_showing_other_code_is_caught():
    from helpers.lessons.nb01 import LOOP

    assert _shows(_markdown_of("01", 1), LOOP)
    assert not _shows(_markdown_of("01", 1).replace("range(n)", "range(n + 1)"), LOOP)


@pytest.mark.parametrize("notebook, number, code", SHOWN, ids=[f"nb{n}-q{q}" for n, q, _ in SHOWN])
def test_code_a_question_shows_is_the_code_its_check_runs(notebook, number, code):
    assert _shows(_markdown_of(notebook, number), code), (
        f"exercise {number} of notebook {notebook} must show, in a ```python block, the code SHOWN[{number}] in "
        f"helpers/lessons/nb{notebook}.py declares (its check runs that code)")


def test_the_index_states_the_answer_forms_the_checks_accept():
    from helpers.exercises.judges import FORMS

    index = nbformat.read(notebook_paths()[0], as_version=4)
    assert any(FORMS in cell.source for cell in index.cells if cell.cell_type == "markdown")


def _stored_slot(notebook, number):
    return tagged(nbformat.read(NOTEBOOKS[notebook], as_version=4), SLOT)[number - 1].source


def _status_of_slot(notebook, exercise, source):
    answer = answer_from(source, exercise.answer_name, _lesson(notebook, exercise))
    return _session(notebook, exercise).check(answer).status


@pytest.mark.parametrize("notebook, exercise", ALL, ids=IDS)
def test_a_slot_run_as_it_stands_is_not_answered(notebook, exercise):
    """A slot, skeleton or not, run without a change, gets "Not answered yet"."""
    assert _status_of_slot(notebook, exercise, _stored_slot(notebook, exercise.number)) == "blank"


def test_a_skeleton_that_hides_its_placeholder_is_caught():
    """A placeholder assigned to (`____ = ...`) is a local name, which the blank check cannot see."""
    exercise = declared("08")[2]
    hidden = _stored_slot("08", 3).replace("    ____   #", "    ____ = None   #", 1)
    hidden = hidden.replace("    ____   #", "    pass   #", 1)
    assert "____ = None" in hidden and _status_of_slot("08", exercise, hidden) == "wrong"
