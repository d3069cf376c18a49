"""The teacher's copy (make solutions): every notebook with its slots filled by the reference solutions executes
with every check right (tests/test_solutions.py shows the verdict failing)."""

import nbformat
import pytest

from helpers.exercises import declared
from tools.build.solutions import build
from tools.notebooks import notebook_paths


@pytest.fixture(scope="module")
def teacher_copies(tmp_path_factory):
    out = tmp_path_factory.mktemp("solutions")
    return out, build(out)


def test_every_check_is_right_with_the_reference_solutions(teacher_copies):
    out, problems = teacher_copies
    assert problems == []
    assert len(list(out.glob("*.ipynb"))) == len(notebook_paths()) - 1  # every notebook but the index


def test_the_teacher_copies_hold_the_solutions_and_the_stored_notebooks_do_not(teacher_copies):
    out, _ = teacher_copies
    copy = nbformat.read(out / "01-dynamic-control-flow.ipynb", as_version=4)
    slots = [c.source for c in copy.cells if "answer-slot" in c.metadata.get("tags", [])]
    assert slots[0] == declared("01")[0].solution.strip() and all("____" not in s for s in slots)
