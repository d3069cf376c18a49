"""Load a function that a notebook defines, from the notebook itself, so
tests and benchmarks run the very code the learner reads (no copy of it
anywhere else)."""

import ast
from functools import cache
from pathlib import Path

import nbformat
import torch

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
    defines. Its imports and every function and class it defines are run
    (definitions only: no other cell), so one lesson definition can use
    another, as in the notebook."""
    tree = ast.parse(notebook_source(NOTEBOOKS / f"{notebook}.ipynb"))
    kept = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))]
    if not any(isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name for node in kept):
        raise LookupError(f"{notebook}.ipynb defines no function or class {name!r}")
    scope = {"torch": torch}
    exec(compile(ast.Module(body=kept, type_ignores=[]), f"{notebook}.ipynb", "exec"), scope)
    return scope[name]
