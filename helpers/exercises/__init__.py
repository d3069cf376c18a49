"""Exercises a learner does. Each has an answer slot in the notebook
(`answer_1 = ____`), and a check under it that says one of three things:
not answered yet; right, and why; or not quite, with a hint aimed at that
particular answer, and quotes the answer it judged ("You answered 'b'.").
When the answer's cell raised before setting it, the check says so instead
of judging the value left from before (cells.py). `hint()` and
`solution()` give more on demand.

    from helpers.exercises import ____, exercises
    ex = exercises("01", globals())   # notebook 01's exercises, this session
    ex.q1.check(answer_1)             # ex.q1.hint(), ex.q1.solution() when stuck
    ex.score()                        # which this session got right, the core path's apart

The checks run torch: a prediction is compared with what torch does now,
on the notebook's own lesson functions, and a function the learner writes
is run and its graph traced. Notebook NN's exercises are declared, as
data, in `nbNN.py`; a choose exercise is a `helpers.quiz.MultipleChoice`.
"""

from .answers import Blank, NotAnswered, ____, answer_from, filled, filled_function
from .exercise import KINDS, Exercise, Judge, Kind, Lesson, Verdict
from .feedback import Feedback, Score, ScoreRow, Shown
from .session import ExerciseSet, SessionExercise, declared, exercises

__all__ = ["KINDS", "Blank", "Exercise", "ExerciseSet", "Feedback", "Judge", "Kind", "Lesson", "NotAnswered", "Score",
           "ScoreRow", "SessionExercise", "Shown", "Verdict", "____", "answer_from", "declared", "exercises", "filled",
           "filled_function"]
