"""Load a function that a notebook defines, from the notebook itself, so
tests and benchmarks run the very code the learner reads (no copy of it
anywhere else)."""

from functools import cache
from pathlib import Path

import nbformat

from helpers.exercises.lesson import stored_definitions

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def notebook_source(path):
    """The code cells of a notebook as one Python text (IPython magics dropped)."""
    nb = nbformat.read(path, as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    lines = [line for cell in cells for line in cell.splitlines() if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


@cache
def lesson_function(notebook, name):
    """The function or class `name` that `notebooks/<notebook>.ipynb`
    defines, loaded as the exercise checks load it
    (`helpers.exercises.lesson.stored_definitions`: the notebook's imports
    and definitions run, no other cell), so one lesson definition can use
    another, as in the notebook."""
    found = stored_definitions(notebook.split("-")[0], NOTEBOOKS)
    if name not in found:
        raise LookupError(f"{notebook}.ipynb defines no function or class {name!r}")
    return found[name]
