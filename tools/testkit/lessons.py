"""Load a function that a notebook defines, from the notebook itself, so
tests and benchmarks run the very code the learner reads (no copy of it
anywhere else)."""

from functools import cache

from helpers.exercises import lesson


@cache
def lesson_function(notebook, name):
    """helpers.exercises.lesson.lesson_function, kept once per name."""
    return lesson.lesson_function(notebook, name)
