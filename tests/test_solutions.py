"""The teacher's copy: every notebook with its slots filled by the reference
solutions must execute with every check right; the verdict can fail."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output
from tools.solutions import build, not_right


@pytest.fixture(scope="module")
def teacher_copies(tmp_path_factory):
    out = tmp_path_factory.mktemp("solutions")
    return out, build(out)


def test_every_check_is_right_with_the_reference_solutions(teacher_copies):
    out, problems = teacher_copies
    assert problems == []
    assert len(list(out.glob("*.ipynb"))) == 8


def test_the_teacher_copies_hold_the_solutions_and_the_stored_notebooks_do_not(teacher_copies):
    out, _ = teacher_copies
    copy = nbformat.read(out / "01-dynamic-control-flow.ipynb", as_version=4)
    slots = [c.source for c in copy.cells if "answer-slot" in c.metadata.get("tags", [])]
    assert slots[0] == "answer_1 = 41" and all("____" not in s for s in slots)


def _executed(check_text, score_text):
    def cell(source, text):
        return new_code_cell(source, outputs=[new_output("execute_result", data={"text/plain": text})])

    return new_notebook(cells=[cell("ex.q1.check(answer_1)", check_text), cell("ex.score()", score_text)])


FULL, EMPTY = "Your score this session: 1 of 1 right", "Your score this session: 0 of 1 right"


def test_a_wrong_check_or_a_short_score_is_reported():
    assert not_right(_executed("Right: yes", FULL), "x") == []
    assert "ex.q1.check(answer_1): Not quite" in not_right(_executed("Not quite: no", EMPTY), "x")[0]
    assert "score is not 1 of 1" in not_right(_executed("Right: yes", EMPTY), "x")[0]
