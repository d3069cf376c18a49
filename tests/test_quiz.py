"""Multiple-choice questions, as the quiz widget checks and shows them, without a browser."""


from helpers.quiz import UNANSWERED, MultipleChoice, Option, feedback, options
from helpers.views import QUIZ_COLOURS, quiz_view

Q = MultipleChoice("2 + 2?", (Option("3", "One short."), Option("4", "Integer addition."),
                              Option("22", "That joins strings.")), right="b")


def test_the_quiz_view_says_right_wrong_and_unanswered():
    right, wrong, none = quiz_view(Q, "b"), quiz_view(Q, "a"), quiz_view(Q, None)
    assert (right.caption, right.colour) == ("Right. Integer addition.", QUIZ_COLOURS[True])
    assert (wrong.caption, wrong.colour) == ("Not quite. One short.", QUIZ_COLOURS[False])
    assert (none.caption, none.colour) == (UNANSWERED, QUIZ_COLOURS[None])
    assert right.drawing is None and str(right) == "Right. Integer addition."
    assert feedback(Q, "c") == (False, "Not quite. That joins strings.")
    assert UNANSWERED.startswith("Pick an answer") and "before this kernel started is not restored" in UNANSWERED


def test_options_pair_texts_with_letters():
    assert options(Q) == [("3", "a"), ("4", "b"), ("22", "c")]


def test_repr_shows_the_question_not_the_answer():
    assert "One short" not in repr(Q) and "'b'" not in repr(Q) and "2 + 2?" in repr(Q)
