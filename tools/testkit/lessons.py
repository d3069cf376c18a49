"""A function that a notebook defines, loaded from the notebook itself, so
tests and benchmarks run the very code the learner reads; kept once per name
(loaded anew each time, the tests that use it take about twice as long)."""

from functools import cache

from helpers.exercises.lesson import lesson_function

lesson_function = cache(lesson_function)
