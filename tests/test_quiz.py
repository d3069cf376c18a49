"""The practice question's checking logic, without a browser."""

import pytest

from helpers.quiz import Question, feedback, options

Q = Question("2 + 2?", ("3", "4", "22"), ("One short.", "Integer addition.", "That joins strings."), 1)


def test_right_and_wrong_choices():
    assert feedback(Q, 1) == (True, "Right. Integer addition.")
    assert feedback(Q, 0) == (False, "Not quite. One short.")
    assert feedback(Q, 2) == (False, "Not quite. That joins strings.")
    assert feedback(Q, None) == (False, "Pick an answer.")


def test_options_pair_labels_with_indices():
    assert options(Q) == [("3", 0), ("4", 1), ("22", 2)]


@pytest.mark.parametrize("choice", [3, -1, "1", True, 1.0])
def test_bad_choice(choice):
    with pytest.raises(ValueError, match="choice must be None or a choice's index, 0 to 2"):
        feedback(Q, choice)


@pytest.mark.parametrize("kwargs", [dict(why=("a", "b")), dict(answer=3), dict(choices=("x",), why=("a",))])
def test_bad_questions(kwargs):
    fields = dict(prompt="?", choices=("3", "4", "22"), why=("a", "b", "c"), answer=0) | kwargs
    with pytest.raises(ValueError, match="Question needs|answer must"):
        Question(**fields)
