"""Exercises a learner does, checked in the notebook:

    from helpers.exercises import ____, exercises
    ex = exercises("01", globals())
    ex.q1.check(answer_1)             # ex.q1.hint(), ex.q1.solution(); ex.score()
"""

from .exercise import Exercise
from .feedback import Feedback
from .judges import ____, answer_from
from .session import ExerciseSet, declared, exercises

__all__ = ["Exercise", "ExerciseSet", "Feedback", "____", "answer_from", "declared", "exercises"]
