"""The teacher's copy (make solutions): slots filled in order by their tag, and a check that is not right or a
short score reported. That every notebook so filled executes with every check right is
tests/test_teacher_copies.py's, in make test-integration."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from helpers.exercises import Exercise, declared
from tools.build.solutions import filled, not_right


def _executed(check_text, score_text, tags=("answer-check",)):
    def cell(source, text, tags=()):
        return new_code_cell(source, outputs=[new_output("execute_result", data={"text/plain": text})],
                             metadata={"tags": list(tags)})

    return new_notebook(cells=[cell("answer_1 = 41", "", ["answer-slot"]),
                               cell("ex.q1.check(answer_1)", check_text, tags), cell("ex.score()", score_text)])


FULL, EMPTY = "Your score this session: 1 of 1 right", "Your score this session: 0 of 1 right"
ONE = declared("01")[:1]


def test_a_wrong_check_or_a_short_score_is_reported():
    assert not_right(_executed("Right: yes", FULL), "x", ONE) == []
    assert "ex.q1.check(answer_1): Not quite" in not_right(_executed("Not quite: no", EMPTY), "x", ONE)[0]
    assert "score is not 1 of 1" in not_right(_executed("Right: yes", EMPTY), "x", ONE)[0]


def test_a_full_score_counts_the_core_path_apart():
    """With optional exercises, the full score counts core and optional apart: a core-only full score is not enough."""
    nb = _executed("Right: yes", "")
    nb.cells[1:1] = [nbformat.from_dict(nb.cells[0]), nbformat.from_dict(nb.cells[1])]
    two = [e for e in declared("01") if e.number in (1, 3)]
    assert [e.optional for e in two] == [False, True], "01's exercise 3 is no longer optional: pick another"
    complete = "Your score this session: 1 of 1 core exercises right; optional (not on the core path): 1 of 1 right"
    nb.cells[-1].outputs[0].data["text/plain"] = complete
    assert not_right(nb, "x", two) == []
    nb.cells[-1].outputs[0].data["text/plain"] = complete.replace("1 of 1 right", "0 of 1 tried")
    assert "score is not 2 of 2" in not_right(nb, "x", two)[0]


def test_checks_are_found_by_their_tag():
    """A check cell that lost its answer-check tag is not counted, so the score no longer matches the checks found."""
    assert "score is not 0 of 0" in not_right(_executed("Right: yes", FULL, tags=()), "x", ONE)[0]


def test_slots_are_filled_in_order_by_their_tag():
    nb = _executed("", "")
    assert filled(nb, [Exercise(1, "predict", "t", "a number", lambda a, lesson: (True, ""), hint="h",
                                solution="answer_1 = 7\n", answer_name="answer_1")]).cells[0].source == "answer_1 = 7"
    with pytest.raises(ValueError, match="1 cells tagged answer-slot for 0 exercises"):
        filled(nb, [])
