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
    """The function `name` defined in `notebooks/<notebook>.ipynb`, compiled
    on its own with `torch` in scope."""
    tree = ast.parse(notebook_source(NOTEBOOKS / f"{notebook}.ipynb"))
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    if not found:
        raise LookupError(f"{notebook}.ipynb defines no function {name!r}")
    scope = {"torch": torch}
    exec(compile(ast.Module(body=found[-1:], type_ignores=[]), f"{notebook}.ipynb", "exec"), scope)
    return scope[name]
