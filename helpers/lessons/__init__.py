"""Each lesson's support: nbNN.py holds notebook NN's (the stored notebook
named NN-*) widgets' views, `WIDGETS` (declared with widget.py) and
`EXERCISES` (declared with helpers/exercises/exercise.py)."""

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
    """Notebook `number`'s lesson module (callers check `number` against numbers())."""
    return importlib.import_module(f"{__name__}.nb{number}")


def widgets(number: str | None = None) -> tuple[Widget, ...]:
    """The widgets of notebook `number` (all when None), in order, each knowing its notebook."""
    from ..exercises.lesson import NOTEBOOKS

    return tuple(replace(w, notebook=path.stem) for n in ([number] if number else numbers())
                 for path in sorted(NOTEBOOKS.glob(f"{n}-*.ipynb")) for w in getattr(module(n), "WIDGETS", ()))


def of(notebook: str) -> list[Widget]:
    """The widgets of one notebook (its file name without .ipynb), in order."""
    declared = widgets(notebook[:2]) if notebook[:2] in numbers() else ()
    return [w for w in declared if w.notebook == notebook]

