"""Each lesson's support, one module per notebook: helpers/lessons/nbNN.py
holds notebook NN's widgets' views, its widgets (`WIDGETS`, declared with
helpers/lessons/widget.py) and its exercises (`EXERCISES`, declared with
helpers/exercises/exercise.py). The machinery they share stays in helpers/.

Which lessons exist is read from the files: a module nbNN.py here is
notebook NN's, and the notebook it belongs to is the stored notebook whose
name starts with NN- (notebooks/ in the repository)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .widget import Widget


def numbers() -> list[str]:
    """The lessons' numbers ('01', '02', ...), one per module nbNN.py here."""
    return sorted(m.name[2:] for m in pkgutil.iter_modules(__path__) if re.fullmatch(r"nb\d\d", m.name))


def module(number: str) -> ModuleType:
    """Notebook `number`'s lesson module."""
    if number not in numbers():
        raise ValueError(f"no lesson module helpers/lessons/nb{number}.py; the lessons are {', '.join(numbers())}")
    return importlib.import_module(f"{__name__}.nb{number}")


def notebook_name(number: str) -> str:
    """The name (without .ipynb) of stored notebook `number`: '01-dynamic-control-flow'."""
    from ..exercises.lesson import NOTEBOOKS

    found = sorted(NOTEBOOKS.glob(f"{number}-*.ipynb"))
    if len(found) != 1:
        raise LookupError(f"helpers/lessons/nb{number}.py needs one notebook {number}-*.ipynb in {NOTEBOOKS}; "
                          f"found {len(found)}")
    return found[0].stem


def widgets(number: str | None = None) -> tuple[Widget, ...]:
    """The widgets of notebook `number` (all of them when None), in order,
    each knowing its notebook."""
    chosen = numbers() if number is None else [number]
    return tuple(replace(w, notebook=notebook_name(n)) for n in chosen for w in module(n).WIDGETS)


def of(notebook: str, declared: tuple[Widget, ...] | None = None) -> list[Widget]:
    """The widgets of one notebook (its file name without .ipynb), in order:
    of `declared` when given (a test's own), else the lessons' own."""
    if declared is None:
        number = notebook[:2]
        declared = widgets(number) if number in numbers() else ()
    return [w for w in declared if w.notebook == notebook]
