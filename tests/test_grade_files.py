"""`make grade` reads every file as a learner's (tools/classroom/grade_files.py):
a corpus of hostile submissions (a FIFO, links to a classmate's file, to
/dev/zero and through a linked folder, a device, a huge file, JSON nested
thousands deep, cells whose source is a number, what nbformat only warns
about) each graded "not graded: unreadable: <why>" for that learner alone
while the rest of the class is graded; hostile sandbox results bounded
before they are decoded; learner-made text kept to one escaped line in
summary.md and out of formulas in grades.csv. A generated layer (hypothesis)
sends a few hundred malformed notebooks and hostile strings through the same code."""

import copy
import csv
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.classroom import grade, grade_files
from tools.classroom.grade_files import Unreadable, csv_cell, md, read_notebook

ROOT = Path(__file__).resolve().parent.parent
STORED = ROOT / "notebooks" / "06-practice-question.ipynb"
VALID = json.loads(STORED.read_text())


def deep(levels):
    return "[" * levels + "]" * levels


def can_make_a_device():
    """Root can make a device file; so can a user with passwordless sudo (a CI runner)."""
    return os.geteuid() == 0 or (shutil.which("sudo") is not None and subprocess.run(
        ["sudo", "-n", "true"], capture_output=True).returncode == 0)


def make_device(path):
    """/dev/zero's twin at `path`, by root or through sudo."""
    if os.geteuid() == 0:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    else:
        subprocess.run(["sudo", "-n", "mknod", "-m", "600", str(path), "c", "1", "5"], check=True)
        subprocess.run(["sudo", "-n", "chown", str(os.geteuid()), str(path)], check=True)   # the learner's own


def hostile(folder):
    """learner -> (how to make their submission, the reason expected in its row)."""
    def write(text):
        return lambda path: path.write_text(text)

    def cell_source(value):
        nb = copy.deepcopy(VALID)
        nb["cells"][0]["source"] = value
        return write(json.dumps(nb))

    classmate = folder / "zed" / STORED.name
    return {
        "fifo": (lambda path: os.mkfifo(path), "not a regular file (a FIFO)"),
        "to-classmate": (lambda path: path.symlink_to(classmate), "is a link"),
        "to-zero": (lambda path: path.symlink_to("/dev/zero"), "is a link"),
        "to-solutions": (lambda path: path.symlink_to(ROOT / "tests" / "answers"), "is a link"),
        "device": (make_device, "not a regular file"),
        "huge": (lambda path: (path.write_text(""), os.truncate(path, grade_files.MAX_BYTES + 1)), "larger than 32 MB"),
        "deep-array": (write(deep(100_000)), "nests deeper than 64"),
        "deep-in-cell": (write(json.dumps({**VALID, "metadata": json.loads(deep(200))})), "nests deeper"),
        "not-json": (write("{\"cells\": [" + "\x00\xff"), "is not JSON"),
        "not-an-object": (write("[1, 2, 3]"), "not a JSON object"),
        "source-a-number": (cell_source(42), "schema"),
        "source-a-dict": (cell_source({"a": 1}), "schema"),
        "no-cells": (write(json.dumps({k: v for k, v in VALID.items() if k != "cells"})), "schema"),
        "bad-output": (write(json.dumps({**VALID, "cells": [{**VALID["cells"][0], "cell_type": "code",
                                                             "outputs": [{"text": "no type"}],
                                                             "execution_count": None}]})), "schema"),
        "tags-a-string": (write(json.dumps({**VALID, "cells": [{**VALID["cells"][0],
                                                                "metadata": {"tags": "answer-slot"}}]})), "schema"),
    }


@pytest.fixture
def class_folder(tmp_path):
    folder = tmp_path / "submissions"
    (folder / "zed").mkdir(parents=True)
    (folder / "zed" / STORED.name).write_text(STORED.read_text())      # untouched: blank, not run
    for learner, (make, _) in hostile(folder).items():
        (folder / learner).mkdir()
        make(folder / learner / STORED.name)
    linked = folder / "linked-folder"
    linked.mkdir()
    (linked / "my-notebooks").symlink_to(folder / "zed", target_is_directory=True)
    return folder


@pytest.mark.skipif(not can_make_a_device(), reason="a device file needs root or passwordless sudo to make")
def test_every_hostile_file_is_not_graded_for_that_learner_alone(class_folder, tmp_path):
    rows, text = grade.grade(class_folder, tmp_path / "out", grade.Settings(unisolated=True))
    by_learner = {}
    for row in rows:
        by_learner.setdefault(row.learner, set()).add((row.status, row.detail))
    assert by_learner.pop("zed") == {("blank", "nothing answered: not run")}
    for learner, (_, reason) in hostile(class_folder).items():
        (status, detail), = by_learner.pop(learner)
        assert status == "not graded" and detail.startswith("unreadable: ") and reason in detail, (learner, detail)
    assert set(by_learner) <= {"linked-folder"}, by_learner         # nothing read through the linked folder ...
    assert all(status == "not graded" and "through a link" in detail for status, detail in by_learner.get(
        "linked-folder", set()))                                     # ... or, where the walk followed it, refused
    assert (tmp_path / "out" / "grades.csv").exists() and "fifo" in text


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=12),
       st.sampled_from(["cells", "metadata", "nbformat", "nbformat_minor", "source", "outputs", "id", "tags"]),
       st.integers(min_value=0, max_value=40))
def test_a_mangled_notebook_is_read_or_refused_never_crashes(tmp_path_factory, value, key, where):
    """A valid notebook with one field somewhere replaced by generated JSON."""
    nb = copy.deepcopy(VALID)
    cell = nb["cells"][where % len(nb["cells"])]
    if key in ("source", "outputs", "id"):
        cell[key] = value
    elif key == "tags":
        cell.setdefault("metadata", {})["tags"] = value
    else:
        nb[key] = value
    folder = tmp_path_factory.mktemp("mangled")
    path = folder / STORED.name
    path.write_text(json.dumps(nb))
    try:
        read = read_notebook(path, folder)
    except Unreadable as error:
        assert str(error) and "\n" not in str(error)
        return
    assert all(isinstance(c.source, str) for c in read.cells)
    grade.answers(nbformat.read(STORED, as_version=4), read)        # and matching its slots raises nothing


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_learner_text_is_one_escaped_line_and_never_a_formula(text):
    line = md(text)
    assert "\n" not in line and "\r" not in line and "\u2028" not in line
    i = 0
    while i < len(line):                 # a backslash escapes the character after it; nothing else is markup
        if line[i] == "\\":
            i += 2
            continue
        assert line[i] not in "|`*_[]<>#\\", (text, line)
        i += 1
    assert csv_cell(text)[:1] not in ("=", "+", "-", "@", "\t", "\r")


def test_the_report_is_data_a_learner_cannot_write_markup_into(tmp_path):
    framing = "ada\n| TEACHER: alice tampered with the grader |"
    made = [grade.Row(framing, STORED.name, 1, "error", "", "raised =HYPERLINK(\"http://x\")\n# Heading"),
            grade.Row("=cmd|' /C calc'!A0", STORED.name, 1, "right", "", "")]
    text = grade.summary(made, [])
    assert not any(line.startswith(("| TEACHER", "# Heading")) for line in text.splitlines())
    assert r"ada \| TEACHER: alice tampered with the grader \|" in text
    out = tmp_path / "grades.csv"
    with open(out, "w", newline="") as f:
        csv.writer(f).writerows([csv_cell(v) if isinstance(v, str) else v for v in r.__dict__.values()] for r in made)
    cells = [cell for row in csv.reader(out.open()) for cell in row]
    assert not any(cell[:1] in "=+-@" for cell in cells if cell)


@pytest.mark.parametrize("result, says", [
    (deep(50_000).encode(), "nests deeper"),
    (b"\xff" * 10, "not JSON"),
    (json.dumps({"notebook": {"cells": [{"id": "x", "outputs": [{"no": "type"}]}]}}).encode(), None),
])
def test_a_forged_sandbox_result_is_bounded_before_it_is_decoded(monkeypatch, result, says):
    nb = nbformat.read(STORED, as_version=4)
    nb.cells[0] = nbformat.v4.new_code_cell("x = 1", id="x")
    monkeypatch.setattr(grade.sandbox, "run", lambda *a, **k: grade.sandbox.Outcome(0, result, ""))
    executed = grade.execute(nb, grade.Settings(unisolated=True))
    if says:
        assert "no result came back from the sandbox (Unreadable" in executed.stopped
    else:
        assert executed.nb.cells[0].outputs == [] and "1 outputs that are not a notebook's were dropped" in \
            executed.stopped
