"""`make grade` (classroom/grade.py) on made-up submissions of notebook 06, each
run from a fresh kernel in a sandbox of its own, two at a time: a learner with
every answer right, one with every answer wrong (and the rest of their
notebook edited, which the grader must ignore), one who answered nothing (blank,
and never run), and one whose first answer cell patches the exercises' check so
that everything says right: flagged, never right. The probe's checks of other
kinds of tampering run here without a kernel (classroom/grade_probe.py);
hostile submissions are in tests/test_grade_hostile.py."""

import builtins
import csv
import sys

import nbformat
import pytest
import torch
from answers import WRONG
from torch.utils._python_dispatch import TorchDispatchMode

import helpers.exercises.judges
from helpers.exercises import declared, exercises
from classroom import grade
from classroom.grade_probe import MIME, changes, defined_by, snapshot
from tools.runtime.working_copy import collection

STORED = next(p for p in collection() if p.name.startswith("06-"))
PATCH = ("import helpers.exercises.session as s\n"
         "s.SessionExercise.check = lambda self, answer: s.Feedback('right', 'fine')\n")


def slots(nb):
    return [c for c in nb.cells if grade.SLOT in grade.tags(c)]


def submit(folder, learner, fill, edit=None):
    nb = nbformat.read(STORED, as_version=4)
    for number, cell in enumerate(slots(nb), start=1):
        cell.source = fill(number, cell.source)
    if edit:
        edit(nb)
    (folder / learner).mkdir(parents=True)
    nbformat.write(nb, folder / learner / STORED.name)


def edited_elsewhere(nb):
    """What the grader must not take: every check cell printing Right, and a
    lesson cell replaced."""
    for cell in nb.cells:
        if grade.CHECK in grade.tags(cell):
            cell.source = "print('Right: of course')"
    next(c for c in nb.cells if c.cell_type == "code").source = "print('my own setup')"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder, out = tmp_path_factory.mktemp("submissions"), tmp_path_factory.mktemp("grades")
    solutions = declared("06")
    submit(folder, "ada", lambda n, _: solutions[n - 1].solution.strip())
    submit(folder, "bob", lambda n, _: WRONG[("06", n)][0][0] if n < 6 else "def survives(x):\n    return x +",
           edited_elsewhere)
    submit(folder, "cy", lambda n, source: source)
    index = next(p for p in collection() if p.name.startswith("00-"))
    (folder / "cy" / index.name).write_bytes(index.read_bytes())       # no exercises: left out quietly
    submit(folder, "eve", lambda n, _: (PATCH if n == 1 else "") + WRONG[("06", n)][0][0])
    (folder / "stray.ipynb").write_text("{}")
    rows, text = grade.grade(folder, out)
    return {(r.learner, r.exercise): r for r in rows}, text, out


def test_right_answers_are_right(graded):
    rows, _, _ = graded
    assert [(rows["ada", n].status, rows["ada", n].changed) for n in range(1, 7)] == [("right", "")] * 6


def test_wrong_answers_are_wrong_whatever_else_the_notebook_says(graded):
    rows, _, _ = graded
    assert [(rows["bob", n].status, rows["bob", n].changed) for n in range(1, 7)] == [("wrong", "")] * 6
    assert rows["bob", 6].detail.startswith("the answer cell raised SyntaxError")


def test_unanswered_slots_are_blank_and_not_run(graded):
    rows, text, out = graded
    assert {rows["cy", n].status for n in range(1, 7)} == {"blank"}
    assert "not run" in rows["cy", 1].detail and not (out / "notebooks" / "cy").exists()
    assert "00-index" not in text


def test_a_patched_check_is_flagged_and_not_believed(graded):
    rows, text, _ = graded
    assert "SessionExercise" in rows["eve", 1].changed and "imported s from helpers" in rows["eve", 1].changed
    assert {rows["eve", n].status for n in range(1, 7)} == {"flagged"}
    assert all(rows["eve", n].detail.startswith("judged wrong") for n in range(1, 7))
    assert all(rows["eve", n].changed.startswith("checked after exercise 1") for n in range(2, 7))
    assert "- eve, 06-practice-question.ipynb, exercise 1: " in text


def test_csv_and_summary(graded):
    _, text, out = graded
    with open(out / "grades.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 24 and set(table[0]) == {"learner", "notebook", "exercise", "status",
                                                  "changed_checking_code", "detail"}
    assert "| ada | 06-practice-question.ipynb | 6 | 0 | 0 | 0 | 0 | 0 |" in text
    assert "stray.ipynb" in text and (out / "notebooks" / "eve" / STORED.name).exists()


def test_errors_and_flags_are_counted_and_set_the_exit_code():
    made = [grade.Row("ada", STORED.name, 1, "right", "", ""), grade.Row("ada", STORED.name, 2, "error", "",
                                                                           "the check itself failed (KeyError)")]
    text = grade.summary(made, [])
    assert "| ada | 06-practice-question.ipynb | 1 | 0 | 0 | 0 | 1 | 0 |" in text
    assert "Error: 1" in text and "KeyError" in text and grade.needs_a_look(made)
    assert not grade.needs_a_look(made[:1])
    for status in ("flagged", "not graded"):
        assert grade.needs_a_look([grade.Row("ada", STORED.name, 1, status, "", "")])


def test_a_notebook_left_blank_is_listed_once_not_given_a_row():
    made = [grade.Row("ada", STORED.name, 1, "right", "", ""),
            *(grade.Row("ada", "07-other.ipynb", n, "blank", "", "") for n in (1, 2, 3)),
            *(grade.Row("bob", STORED.name, n, "blank", "", "") for n in (1, 2))]
    text = grade.summary(made, [])
    assert "| ada | 06-practice-question.ipynb | 1 |" in text
    assert "| ada | 07-other.ipynb" not in text and "| bob |" not in text
    assert "- ada: 07-other.ipynb" in text and f"- bob: {STORED.name}" in text


def test_slots_matched_by_order_when_ids_differ():
    stored = nbformat.read(STORED, as_version=4)
    submitted = nbformat.read(STORED, as_version=4)
    for number, cell in enumerate(slots(submitted), start=1):
        cell.id, cell.source = f"renamed-{number}", f"answer_{number} = {number}"
    sources, note = grade.answers(stored, submitted)
    assert sources[:2] == ["answer_1 = 1", "answer_2 = 2"] and "by order" in note
    del submitted.cells[submitted.cells.index(slots(submitted)[0])]
    sources, note = grade.answers(stored, submitted)
    assert sources == [None] * 6 and "missing" in note


# ----- the probe's checks, without a kernel -----

class KeptFunctionMode(torch.overrides.TorchFunctionMode):
    """A mode an answer enters and keeps: every torch call after it goes through it."""


class KeptDispatchMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


TAMPERING = {
    "rebound ex": lambda ns: ns.__setitem__("ex", object()),
    "deleted lesson": lambda ns: ns.pop("lesson"),
    "changed object ex: _results": lambda ns: ns["ex"]._results.__setitem__(1, "right"),
    "changed module helpers.exercises.judges: 'value'": lambda ns: setattr(helpers.exercises.judges, "value", len),
    "changed builtins: 'isinstance'": lambda ns: setattr(builtins, "isinstance", lambda *a: True),
    "changed class torch.Tensor: 'item'": lambda ns: setattr(torch.Tensor, "item", lambda self: 3),
    "changed machinery: tracing": lambda ns: sys.settrace(lambda *a: None),
    "changed machinery: torch function modes": lambda ns: ns.setdefault("mode", KeptFunctionMode()).__enter__(),
    "changed machinery: torch dispatch modes": lambda ns: ns.setdefault("mode", KeptDispatchMode()).__enter__(),
}


class Slotted:
    __slots__ = ("x",)


def test_the_probe_reads_what_changed_with_its_own_builtins(monkeypatch):
    """An answer that replaces builtins.isinstance (to say True of all) is
    flagged; the probe's own reading must not use the replaced one, or an
    instance a watched module holds (with no __dict__) stops it."""
    import helpers.exercises as watched

    monkeypatch.setattr(Slotted, "__module__", watched.__name__)
    monkeypatch.setattr(watched, "a_slotted_instance", Slotted(), raising=False)
    before, kept = snapshot({}), builtins.isinstance
    builtins.isinstance = lambda *_: True
    try:
        after = snapshot({})
    except Exception as error:            # noqa: BLE001 (reported once isinstance is back)
        after = error
    finally:
        builtins.isinstance = kept
    assert not isinstance(after, Exception), f"the probe failed on the replaced isinstance: {after!r}"
    flagged, _ = changes(before, after, allowed=set())
    assert any("isinstance" in f for f in flagged), flagged


@pytest.mark.parametrize("expected", TAMPERING)
def test_probe_flags_tampering(expected):
    saved = {"value": helpers.exercises.judges.value, "isinstance": builtins.isinstance,
             "item": torch.Tensor.__dict__.get("item"), "trace": sys.gettrace()}
    namespace = {"lesson": lambda x: x}
    namespace["ex"] = exercises("06", namespace)
    before = snapshot(namespace)
    try:
        TAMPERING[expected](namespace)
        flagged, _ = changes(before, snapshot(namespace), allowed={"answer_1"})
    finally:
        helpers.exercises.judges.value, builtins.isinstance = saved["value"], saved["isinstance"]
        if saved["item"] is None and "item" in torch.Tensor.__dict__:
            del torch.Tensor.item           # Tensor.item comes from its C base class
        sys.settrace(saved["trace"])
        if "mode" in namespace:
            namespace["mode"].__exit__(None, None, None)
    assert any(line.startswith(expected) for line in flagged), flagged


def test_probe_lets_an_answer_and_new_names_be():
    namespace = {"lesson": lambda x: x}
    before = snapshot(namespace)
    namespace |= {"answer_1": 41, "helper": 2}
    assert changes(before, snapshot(namespace), allowed={"answer_1"}) == ([], ["defined helper"])
    code = "import torch.nn as nn\ndef f(x):\n    return x\nanswer_2, y = 1, 2"
    assert defined_by(code) == {"nn", "f", "answer_2", "y"}


def _ran_with_a_silent_probe(sources):
    """`sources` as the grader's run of 06 gives them back from a sandbox
    where the probe in the kernel reported no change at all (its report
    erased by the answer) and every observation came back."""
    nb = grade.probed(nbformat.read(STORED, as_version=4), sources, "06")
    for cell in nb.cells:
        role, _, number = str(cell.get("id", "")).removeprefix("grade-").partition("-")
        if role in ("after", "observe"):
            payload = {"role": role, "exercise": int(number), "flagged": [], "noted": [], "observation": {"v": 1}}
            cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: payload})]
    ran = frozenset(c["id"] for c in nb.cells if c.cell_type == "code")
    return grade.Executed(nb, [], "", [], ran)


@pytest.mark.parametrize("rebinding, flagged", [("", False), ("draw_graph = None\n", True),
                                                ("del draw_graph\n", True), ("from math import pi as ex\n", True)])
def test_a_name_of_the_lesson_bound_again_is_flagged_whatever_the_probe_says(rebinding, flagged):
    stored = nbformat.read(STORED, as_version=4)
    slot_ids = [c["id"] for c in slots(stored)]
    sources = [rebinding + "answer_1 = 'b'"] + [None] * (len(slot_ids) - 1)
    rows = grade.rows("eve", STORED.name, _ran_with_a_silent_probe(sources), slot_ids, sources,
                      lambda notebook, exercise, observation: ("right", "judged"))
    assert rows[0].status == ("flagged" if flagged else "right"), rows[0]
    assert ("binds again or deletes names bound before it" in rows[0].changed) == flagged, rows[0]
    assert all(r.status == "right" for r in rows[1:]) or flagged, rows
