"""Load a function that a notebook defines, from the notebook itself, so
tests and benchmarks run the very code the learner reads (no copy of it
anywhere else)."""

from functools import cache

import nbformat

from helpers.exercises import lesson


def notebook_source(path, leave_out=()):
    """The code cells of a notebook as one Python text (an IPython magic or
    shell line made `pass`, so an `if` whose body it is still parses), less
    the cells whose ids are in `leave_out`."""
    nb = nbformat.read(path, as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and c.get("id") not in leave_out]
    lines = [line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
             for cell in cells for line in cell.splitlines()]
    return "\n".join(lines)


@cache
def lesson_function(notebook, name):
    """helpers.exercises.lesson.lesson_function, kept once per name."""
    return lesson.lesson_function(notebook, name)
