"""`make grade` on a small class, in the sandbox; a reach into the checking code: test_grade_hostile.py."""

import csv
import re

import nbformat
import pytest
from answers import WRONG
from answers.trying import TRYING

from classroom import grade, grade_sandbox
from helpers.exercises import declared
from tools.notebooks import CHECK, notebook_paths

STORED = next(p for p in notebook_paths() if p.name.startswith("06-"))
NO_SANDBOX = grade_sandbox.why_no_sandbox()


def edited_elsewhere(nb):
    """What the grader must not take: every check cell printing Right, and the set-up cell replaced."""
    for cell in nb.cells:
        if CHECK in grade.tags(cell):
            cell.source = "print('Right: of course')"
    next(c for c in nb.cells if c.cell_type == "code").source = "print('my own setup')"


def solution(number, _):
    return declared("06")[number - 1].solution.strip()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, submit):
    if NO_SANDBOX:
        pytest.skip(f"no sandbox here: {NO_SANDBOX}")
    folder, out = tmp_path_factory.mktemp("submissions"), tmp_path_factory.mktemp("grades")
    submit(folder, "ada/my-notebooks", solution)
    submit(folder, "bob", lambda n, _: WRONG[("06", n)][0][0], edited_elsewhere)
    submit(folder, "cy", lambda n, source: source)
    index = next(p for p in notebook_paths() if p.name.startswith("00-"))
    (folder / "cy" / index.name).write_bytes(index.read_bytes())       # no exercises: left out quietly
    submit(folder, "dan/my-notebooks", solution)
    newer = submit(folder, "dan/my-notebooks/backups/2026-01-01", lambda n, _: WRONG[("06", n)][0][0])
    newer.touch()
    submit(folder, "backups", solution)
    (folder / "stray.ipynb").write_text("{}")
    rows, text = grade.grade(folder, out)
    return {(r.learner, r.exercise): r for r in rows}, text, out, rows


@pytest.mark.parametrize("learner, status", [("ada", "right"), ("backups", "right"), ("dan", "right"),
                                             ("bob", "wrong"), ("cy", "blank")])
def test_each_learner_s_answers_get_their_verdict_whatever_else_the_notebook_says(graded, learner, status):
    mine = [graded[0][learner, n] for n in range(1, 7)]
    assert [r.status for r in mine] == [status] * 6, mine
    assert status != "right" or all(r.changed == "" for r in mine)
    assert "Right: of course" not in mine[0].detail


def test_copies_are_graded_once_and_listed(graded):
    _, text, _, rows = graded
    assert len([r for r in rows if r.learner == "dan"]) == 6
    assert re.search(r"- `dan`, 06-practice-question.ipynb: graded `my-notebooks/06-practice-question.ipynb`; "
                     r"not `my-notebooks/backups/2026-01-01/06-practice-question.ipynb`", text), text


def test_a_blank_notebook_is_listed_once_and_not_in_the_table(graded):
    text = graded[1]
    assert "| `cy` |" not in text and text.count("`cy`") == 1
    assert "- `cy`: 06-practice-question.ipynb" in text


def test_csv_columns_status_words_and_counts_that_match_the_table(graded):
    _, text, out, rows = graded
    with open(out / "grades.csv", newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == ["learner", "notebook", "exercise", "status", "changed_checking_code", "detail"]
    assert {r[3] for r in table[1:]} <= set(grade.STATUSES) and len(table) == len(rows) + 1
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| `"):
            learner = cells[0].strip("`")
            mine = [r.status for r in rows if r.learner == learner]
            assert [int(c) for c in cells[2:]] == [mine.count(s) for s in grade.STATUSES], line
    assert "stray.ipynb" in text and "\\(" not in text and "\\_" not in text       # no raw Markdown escapes


def test_errors_and_flags_set_the_exit_code(tmp_path, monkeypatch):
    rows = [grade.Row("a", STORED.name, 1, "right", "", "")]
    monkeypatch.setattr(grade, "grade", lambda *a, **k: (rows, ""))
    assert grade.main([str(tmp_path)]) == 0
    rows.append(grade.Row("a", STORED.name, 2, "error", "", "the check failed"))
    assert grade.main([str(tmp_path)]) == 1


def test_slots_matched_by_order_when_ids_differ():
    stored = nbformat.read(STORED, as_version=4)
    submitted = nbformat.read(STORED, as_version=4)
    for number, cell in enumerate([c for c in submitted.cells if grade.SLOT in grade.tags(c)], start=1):
        cell["id"] = f"mine-{number}"
        cell.source = f"answer_{number} = {number}"
    sources, note = grade.answers(stored, submitted)
    assert sources[0] == "answer_1 = 1" and "by order" in note


def test_verdict_words():
    assert grade.verdict({"status": "blank", "message": "m"}, "NameError: x") == (
        "wrong", "the answer cell raised NameError: x")
    assert grade.verdict({"status": "right", "message": "m"}, "") == ("right", "m")
    assert grade.verdict({"status": "interrupted", "message": "m"}, "")[0] == "error"


def test_an_honest_try_is_right_in_every_notebook(tmp_path):
    """tests/answers/trying.py's answer (the solution, `x` bound again, a print and a plot around it)."""
    if NO_SANDBOX:
        pytest.skip(f"no sandbox here: {NO_SANDBOX}")
    folder = tmp_path / "submissions"
    for stored in notebook_paths():
        if stored.name[:2] not in {notebook for notebook, _ in TRYING}:
            continue
        nb = nbformat.read(stored, as_version=4)
        slots = [c for c in nb.cells if grade.SLOT in grade.tags(c)]
        for number, cell in enumerate(slots, start=1):
            cell.source = TRYING[(stored.name[:2], number)][0]
        (folder / "tia" / "my-notebooks").mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / "tia" / "my-notebooks" / stored.name)
    rows, _ = grade.grade(folder, tmp_path / "out")
    assert len(rows) == len(TRYING)
    assert [r for r in rows if r.status != "right" or r.changed] == []
