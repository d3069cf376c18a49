"""`make grade` reads every file as a learner's (classroom/grade_files.py): hostile and
generated files and names, a sandbox's result, the summary and grades.csv."""

import contextlib
import copy
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from classroom import grade, grade_files
from classroom.grade_files import Unreadable, csv_cell, md, read_notebook

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "notebooks" / "06-practice-question.ipynb"
VALID = json.loads(STORED.read_text())


def deep(levels):
    return "[" * levels + "]" * levels


def can_make_a_device():
    """Root can make a device file and give a file away; so can a user with passwordless sudo (a CI runner)."""
    return os.geteuid() == 0 or (shutil.which("sudo") is not None and subprocess.run(
        ["sudo", "-n", "true"], capture_output=True).returncode == 0)


PRIVILEGED = can_make_a_device()
STRANGER = 54321                    # a uid that owns no learner's folder


def as_root(*command):
    subprocess.run(command if os.geteuid() == 0 else ["sudo", "-n", *command], check=True)


def make_device(path):              # /dev/zero's twin, the learner's own
    as_root("mknod", "-m", "600", str(path), "c", "1", "5")
    as_root("chown", str(os.geteuid()), str(path))


def give_away(path):                # a valid notebook STRANGER owns
    path.write_text(json.dumps(VALID))
    as_root("chown", str(STRANGER), str(path))


def hostile(folder, privileged=PRIVILEGED):
    """learner -> (how to make their submission, the reason expected in its row);
    the cases only root (or sudo) can make are left out when `privileged` is False."""
    def write(text):
        return lambda path: path.write_text(text)

    classmate, solutions = folder / "zed" / STORED.name, folder.parent / "solutions" / STORED.name
    def link_to_strangers(path):       # a hard link to a file another user owns (the teacher's solutions)
        give_away(solutions)
        os.link(solutions, path)

    root_only = {
        "device": (make_device, "not a regular file"),
        "hard-link": (link_to_strangers, f"belongs to uid {STRANGER}, not to uid"),
    }
    return {
        **(root_only if privileged else {}),
        "fifo": (lambda path: os.mkfifo(path), "not a regular file"),
        "to-classmate": (lambda path: path.symlink_to(classmate), "is a link"),
        "to-solutions": (lambda path: path.symlink_to(ROOT / "tests" / "answers"), "is a link"),
        "huge": (lambda path: (path.write_text(""), os.truncate(path, grade_files.MAX_BYTES + 1)), "larger than 32 MB"),
        "deep-array": (write(deep(100_000)), "recursion depth"),
        "not-json": (write("{\"cells\": [" + "\x00\xff"), "is not JSON"),
        "not-an-object": (write("[1, 2, 3]"), "schema"),
        "source-a-number": (write(json.dumps({**VALID, "cells": [{**VALID["cells"][0], "source": 42}]})), "schema"),
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
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / STORED.name).write_text(STORED.read_text())   # the teacher's, outside the class
    for learner, (make, _) in hostile(folder).items():
        (folder / learner).mkdir()
        make(folder / learner / STORED.name)
    linked = folder / "linked-folder"
    linked.mkdir()
    (linked / "my-notebooks").symlink_to(folder / "zed", target_is_directory=True)
    (folder / "a-folder" / STORED.name).mkdir(parents=True)           # a folder named as a notebook is none
    return folder


def test_every_hostile_file_is_not_graded_for_that_learner_alone(class_folder, tmp_path):
    rows, text = grade.grade(class_folder, tmp_path / "out", grade.Settings(unisolated=True))
    by_learner = {}
    for row in rows:
        by_learner.setdefault(row.learner, set()).add((row.status, row.detail))
    assert by_learner.pop("zed") == {("blank", "not answered")}
    for learner, (_, reason) in hostile(class_folder).items():
        (status, detail), = by_learner.pop(learner)
        assert status == "not graded" and detail.startswith("unreadable: ") and reason in detail, (learner, detail)
    assert by_learner == {learner: {("blank", "no notebook of the collection")}     # the link not followed
                          for learner in ("linked-folder", "a-folder")}
    fds = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(grade_files.Unreadable, match="not a regular file"):
            grade_files.read_notebook(class_folder / "a-folder" / STORED.name, class_folder / "a-folder")
    assert len(os.listdir("/proc/self/fd")) == fds, "a refused submission's descriptor was kept open"
    assert (tmp_path / "out" / "grades.csv").exists() and "fifo" in text


def test_a_folder_swapped_for_a_link_while_it_is_read_is_refused(tmp_path, monkeypatch):
    learner, classmate = tmp_path / "ada", tmp_path / "zed"
    (learner / "mine").mkdir(parents=True)
    classmate.mkdir()
    (learner / "mine" / STORED.name).write_text(json.dumps(VALID))
    secret = copy.deepcopy(VALID)
    secret["cells"][0]["source"] = "zed's answer"
    (classmate / STORED.name).write_text(json.dumps(secret))
    real_open, swapped = os.open, []

    def open_after_a_swap(path, *args, **kwargs):
        if not swapped:          # the first open of all: whatever was checked before it, the folder is a link now
            (learner / "mine").rename(learner / "was-mine")
            (learner / "mine").symlink_to(classmate, target_is_directory=True)
            swapped.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_after_a_swap)
    try:
        read = read_notebook(learner / "mine" / STORED.name, learner)
    except Unreadable as error:
        assert "reached through mine, a link" in str(error), error
    else:
        pytest.fail(f"read through the swapped folder: {read.cells[0].source[:40]!r}")


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
def test_learner_text_is_one_line_of_code_span_and_never_a_formula(text):
    line = md(text, table=True)
    assert "\n" not in line and "\r" not in line and "\u2028" not in line
    fence = re.match("`+", line).group()
    inner = line[len(fence):-len(fence)]
    assert line.endswith(fence) and fence not in inner.replace("\\|", "")     # one code span: never markup
    assert "|" not in inner.replace("\\|", "")                                # nor a table's column
    assert csv_cell(text)[:1] not in ("=", "+", "-", "@", "\t", "\r")


def test_the_report_is_data_a_learner_cannot_write_markup_into(tmp_path):
    framing = "ada\n| TEACHER: alice tampered with the grader |"
    made = [grade.Row(framing, STORED.name, 1, "error", "", "raised =HYPERLINK(\"http://x\")\n# Heading"),
            grade.Row("=cmd|' /C calc'!A0", STORED.name, 1, "right", "", "")]
    jobs = [grade.Job(r.learner, STORED, tmp_path / STORED.name, tmp_path) for r in made]
    text = grade.summary([grade.Ran([r]) for r in made], jobs, [], [])
    assert not any(line.startswith(("| TEACHER", "# Heading")) for line in text.splitlines())
    assert r"`ada \| TEACHER: alice tampered with the grader \|`" in text


@pytest.mark.parametrize("result, says", [
    (deep(50_000).encode(), "recursion depth"),
    (b"\xff" * 10, "not JSON"),
    (("[" + "0," * grade_files.MAX_ITEMS + "0]").encode(), "holds more than"),
    (b"[1, 2]", "not a JSON object"),
    (json.dumps({"verdicts": None, "stopped": 5}).encode(), None),
])
def test_a_sandbox_s_result_is_bounded_before_it_is_decoded(result, says):
    empty, why = grade._result(grade.grade_sandbox.Outcome(0, result, ""))[:2]
    assert empty == {"verdicts": {}, "raised": {}, "over_limit": []}
    assert (why.startswith("no result came back") and says in why) if says else why == "5", why


def test_of_two_cells_with_a_slots_id_the_first_is_graded(tmp_path):
    twice = copy.deepcopy(VALID)
    slot = next(c for c in twice["cells"] if "answer-slot" in c.get("metadata", {}).get("tags", []))
    twice["cells"].append({**copy.deepcopy(slot), "source": "answer_1 = 'the second'"})
    slot["source"] = "answer_1 = True"
    (tmp_path / STORED.name).write_text(json.dumps(twice))
    sources, _ = grade.answers(nbformat.read(STORED, as_version=4), read_notebook(tmp_path / STORED.name, tmp_path))
    assert sources[0] == "answer_1 = True"


def test_a_submission_whose_judging_raises_is_not_graded_alone(tmp_path, monkeypatch):
    folder, nb = tmp_path / "submissions", nbformat.read(STORED, as_version=4)
    next(c for c in nb.cells if grade.SLOT in grade.tags(c)).source = "answer_1 = True"
    for learner in ("alice", "mallory"):
        (folder / learner).mkdir(parents=True)
        nbformat.write(nb, folder / learner / STORED.name)
    monkeypatch.setattr(grade.grade_sandbox, "run", lambda *a, **k: grade.grade_sandbox.Outcome(0, b"{}", ""))
    judged = grade.judged

    def failing(job, *args):
        if job.learner == "mallory":
            raise TypeError("argument of type 'int' is not iterable")
        return judged(job, *args)

    monkeypatch.setattr(grade, "judged", failing)
    found, text = grade.grade(folder, tmp_path / "out", grade.Settings(unisolated=True))
    mine = [r for r in found if r.learner == "mallory"]
    assert len(mine) == len(grade.declared("06")) and all(
        r.status == "not graded" and r.detail.startswith("grading this notebook failed (TypeError") for r in mine)
    assert {r.learner for r in found} == {"alice", "mallory"} and "grading this notebook failed" in text


def test_a_verdict_counts_only_from_a_check_cell_that_ran_through():
    """Lines an answer wrote to the results file do not stand for a check whose cell raised."""
    job = SimpleNamespace(learner="m", stored=SimpleNamespace(name=STORED.name))
    forged = {"notebook": STORED.name[:2], "exercise": "q1", "status": "right", "message": "ok"}
    result = {"slots": ["s1"], "checks": ["c1"], "verdicts": {"c1": [forged]}, "over_limit": [],
              "raised": {"c1": "NameError: name 'answer_1' is not defined"}}
    row, = grade.judged(job, ["____"], ["answer_1 = 3"], result)
    assert (row.status, row.detail) == ("not graded", "the check gave no verdict (its cell raised NameError: name "
                                                      "'answer_1' is not defined)")
    result["raised"] = {}
    assert grade.judged(job, ["____"], ["answer_1 = 3"], result)[0].status == "right"


def test_a_name_that_looks_like_a_classmate_s_shows_its_invisible_characters():
    assert grade_files.one_line("honest\u200b") == "honest<U+200B>"
    assert grade_files.md("\u202etsenoh") == "`<U+202E>tsenoh`"


def test_a_learner_s_folder_of_any_depth_stops_no_one(tmp_path):
    folder = tmp_path / "submissions"
    (folder / "zed").mkdir(parents=True)
    (folder / "zed" / STORED.name).write_text(STORED.read_text())
    deep_folder = folder / "deep"
    deep_folder.mkdir()
    subprocess.run(["mkdir", "-p", "d/" * 1200], cwd=deep_folder, check=True)     # os.makedirs itself recurses
    rows, _ = grade.grade(folder, tmp_path / "out", grade.Settings(unisolated=True))
    assert {(r.learner, r.status) for r in rows} == {("zed", "blank"), ("deep", "blank")}
    assert "zed" in (tmp_path / "out" / "grades.csv").read_text()
    found, unsearched = grade_files.notebooks_in(deep_folder)
    subprocess.run(["rm", "-rf", str(deep_folder)], check=True)     # (shutil.rmtree, pytest's clean-up, recurses)
    assert found == [] and any("deeper than" in u for u in unsearched)


def test_without_a_copy_in_my_notebooks_the_newest_is_graded(tmp_path):
    """The copy in my-notebooks/ first; else the newest, a checkpoint last whatever its time."""
    learner = tmp_path / "ann"
    paths = [learner / "old" / STORED.name, learner / "new" / STORED.name,
             learner / ".ipynb_checkpoints" / STORED.name]
    for when, path in enumerate(paths, start=1):
        path.parent.mkdir(parents=True)
        path.write_text("{}")
        os.utime(path, (when * 1000, when * 1000))
    assert min(paths, key=lambda p: grade._rank(p, learner)) == paths[1]
    kept = learner / "my-notebooks" / STORED.name
    kept.parent.mkdir()
    kept.write_text("{}")
    os.utime(kept, (0, 0))
    assert min([*paths, kept], key=lambda p: grade._rank(p, learner)) == kept


@given(st.sampled_from(["--memory", "--cpus", "--time-limit", "--cell-limit"]),
       st.one_of(st.sampled_from(["0", "-5", "nan", "inf", "-inf", "", "three", "1e999"]),
                 st.floats(max_value=0).map(str)))
@settings(max_examples=60, deadline=None)
def test_a_limit_that_is_not_a_positive_number_is_refused_in_one_line(flag, given_value):
    said = io.StringIO()
    with pytest.raises(SystemExit) as stopped, contextlib.redirect_stderr(said):
        grade.main(["no-such-folder", flag, given_value])
    assert stopped.value.code == 2 and said.getvalue().splitlines()[-1].startswith(
        f"python -m classroom.grade: error: argument {flag}: "), said.getvalue()


def test_weaker_limits_are_counted_among_the_submissions_run_alone():
    job = grade.Job("ada", Path("01-x.ipynb"), Path("01-x.ipynb"), Path("."))
    ran = [grade.Ran([], ("memory: 3 GB of address space (prlimit)",)), grade.Ran([]), grade.Ran([], ())]
    text = grade.summary(ran, [job] * 3, [], [])
    assert "Limits weaker than a cgroup's, for 1 of the 2 submissions run:" in text, text


def test_a_folder_of_more_names_than_the_cap_is_left_while_it_is_listed(tmp_path, monkeypatch):
    monkeypatch.setattr(grade_files, "MAX_WALK_ENTRIES", 50)
    for i in range(200):
        (tmp_path / f"{i:03}.ipynb").touch()
    listed, real = [], os.scandir
    monkeypatch.setattr(grade_files.os, "scandir", lambda path: _Listing(real(path), listed))
    found, unsearched = grade_files.notebooks_in(tmp_path)
    assert len(found) == 50 and unsearched == [f"{tmp_path}: past 50 names, the rest"]
    assert len(listed) == 51, "the folder was read past the cap"


class _Listing:
    def __init__(self, listing, listed):
        self.listing, self.listed = listing, listed

    def __enter__(self):
        return (self.listed.append(e) or e for e in self.listing)

    def __exit__(self, *_):
        self.listing.close()
