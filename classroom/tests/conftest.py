"""The classroom's tests (`make test-classroom`); they read tests/answers/ too."""

import sys
from pathlib import Path

import nbformat
import pytest

from classroom import grade
from tools.notebooks import notebook_paths

sys.path.append(str(Path(__file__).resolve().parents[2] / "tests"))

from figures import Figures, figure_lines  # noqa: E402


@pytest.fixture
def timings(request):
    return Figures(request.node)


@pytest.fixture(scope="session")
def submit():
    """Notebook 06 written at folder/where, each answer slot's source fill(number, stored source)."""
    stored = next(p for p in notebook_paths() if p.name.startswith("06-"))

    def write(folder, where, fill, edit=None):
        nb = nbformat.read(stored, as_version=4)
        for number, cell in enumerate([c for c in nb.cells if grade.SLOT in grade.tags(c)], start=1):
            cell.source = fill(number, cell.source)
        if edit:
            edit(nb)
        path = folder / where / stored.name
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        return path
    return write


def pytest_terminal_summary(terminalreporter, config):
    figure_lines(terminalreporter)


LONGEST = ("test_grade_hostile.py", "test_grade.py", "test_hub.py")


def pytest_collection_modifyitems(items):
    """The longest files first (the same order on every worker), so that under the
    Makefile's `--dist loadfile --no-loadscope-reorder` the two workers end together."""
    items.sort(key=lambda item: LONGEST.index(item.path.name) if item.path.name in LONGEST else len(LONGEST))
