"""The times a learner reads (at the top of each notebook, in the index) are the ones tools/build/pacing.py
computes from the notebooks' contents; the core path leaves the optional parts out."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools.build import pacing
from tools.build.nav import NAV
from tools.notebooks import notebook_paths

PATHS = notebook_paths()


def _books():
    return {path.name: nbformat.read(path, as_version=4) for path in PATHS}


def test_the_core_path_takes_about_three_hours_and_skips_the_optional_notebooks():
    books = _books()
    paces = {name[:2]: pacing.pace(nb) for name, nb in books.items()}
    core = sum(p.core for p in paces.values())
    assert 150 <= core <= 210, core
    assert all(not paces[n].optional and paces[n].core > 0 for n in ("01", "02", "03", "04", "05", "06"))
    assert all(paces[n].optional and paces[n].core == 0 for n in ("07", "08"))


def _lesson(*cells):
    return new_notebook(cells=[new_markdown_cell("# A lesson"), new_markdown_cell(f"{NAV}\nlinks"), *cells])


def _seconds(nb):
    """The notebook's whole and core seconds, its run time left out."""
    p = pacing.pace(nb)
    run = sum(c.cell_type == "code" for c in nb.cells)         # a notebook not measured: 1 s a code cell
    return round(p.whole * 60 - run, 6), round(p.core * 60 - run, 6)


TITLE = 3 * 60 / pacing.WORDS_PER_MINUTE                        # "# A lesson"


def test_optional_sections_blocks_and_exercises_leave_the_core_path():
    cells = [new_markdown_cell("## 1. Core\n\none"), new_code_cell("x = 1"),
             new_markdown_cell("*Optional.* two"), new_code_cell("y = 2"),
             new_markdown_cell("back on the path"),
             new_markdown_cell("## 2. Optional: more\n\nthree"), new_code_cell("z = 3"),
             new_markdown_cell("## Exercises"),
             new_markdown_cell("### 1. Write: a function\n\nWrite it."), new_code_cell("def f():\n    return ____"),
             new_markdown_cell("### 2. Predict: a number\n\n*Optional, for a second pass.*\n\nHow many?"),
             new_code_cell("answer_2 = ____")]
    whole, core = _seconds(_lesson(*cells))
    word, code = 60 / pacing.WORDS_PER_MINUTE, pacing.CODE_LINE_SECONDS + pacing.CELL_SECONDS
    optional = (2 * word + code) + (5 * word + code) + pacing.EXERCISE_MINUTES["predict"] * 60
    assert whole - core == pytest.approx(optional)
    # "## 1. Core one", "back on the path", "## Exercises": 10 words
    assert core == pytest.approx(TITLE + 10 * word + code + pacing.EXERCISE_MINUTES["write"] * 60)
