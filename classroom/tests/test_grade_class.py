"""Whole classes of generated learners' folders (trees, names with non-UTF-8 bytes, files of
every kind), the sandbox replaced by `stand_in`: the grader's walk, choice of copies, reading
and bookkeeping."""

import json
import os
import re
import shutil
import subprocess

import nbformat
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from classroom import grade, grade_sandbox
from tools.notebooks import CHECK, notebook_paths

STORED = {p.name: p for p in notebook_paths() if p.name[:2] in ("01", "06")}
NAMES = st.sampled_from(["backups", "my-notebooks", ".ipynb_checkpoints", ".", "..x", "new\nline", "ünïcødé",
                         "caf\udce9",                          # the byte 0xe9 alone: not UTF-8
                         "a b", "-rf", "=1+1", "|pipe|", "`tick`", "d"]) | st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1, max_size=8)
KINDS = st.sampled_from(["answered", "answered", "blank", "fifo", "link-file", "link-folder", "huge", "malformed",
                         "v3", "deep", "other-name"])


def stand_in(argv, stdin, limits=None, **_):
    """The runner's result with no kernel: each check right when the answer before it holds 42."""
    nb = nbformat.reads(stdin.decode(), as_version=4)
    notebook = re.search(r'exercises\("(\d\d)"', "".join(c.source for c in nb.cells)).group(1)
    verdicts, slot = {}, None
    for cell in nb.cells:
        if grade.SLOT in grade.tags(cell):
            slot = cell
        elif CHECK in grade.tags(cell) and slot is not None:
            number = len(verdicts) + 1
            status = "right" if "42" in slot.source else "wrong"
            verdicts[cell["id"]] = [{"notebook": notebook, "exercise": f"q{number}", "status": status,
                                     "message": f"stand-in {status}"}]
    return grade_sandbox.Outcome(0, json.dumps({"notebook": nb, "verdicts": verdicts, "raised": {},
                                                "over_limit": [], "stopped": ""}).encode(), "")


def _name(text):
    name = text.encode("utf-8", "surrogateescape")[:200]
    return name if name not in (b".", b"..", b"") else b"_" + name


def build(root, learner, entries):
    """A learner's folder from generated entries [(folder names, kind, answer, age)]."""
    home = root / os.fsdecode(learner)
    home.mkdir()
    for index, (parts, kind, answer, age) in enumerate(entries):
        where = home.joinpath(*[os.fsdecode(_name(p)) for p in parts])
        try:
            where.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            continue
        name = sorted(STORED)[index % len(STORED)] if kind != "other-name" else f"mine-{index}.ipynb"
        path = where / name
        if path.exists() or path.is_symlink():
            continue
        if kind in ("answered", "blank", "other-name"):
            nb = nbformat.read(STORED.get(name, STORED[sorted(STORED)[0]]), as_version=4)
            for cell in nb.cells:
                if grade.SLOT in grade.tags(cell) and kind == "answered":
                    cell.source = answer
            nbformat.write(nb, path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "link-file":
            path.symlink_to("../someone/" + name)
        elif kind == "link-folder":
            path.symlink_to("/", target_is_directory=True)
        elif kind == "huge":
            path.write_text("")
            os.truncate(path, 33 * 2 ** 20)
        elif kind == "malformed":
            path.write_text('{"cells": [' * 3)
        elif kind == "v3":
            path.write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": []}))
        elif kind == "deep":
            subprocess.run(["mkdir", "-p", "d/" * 40], cwd=where, check=True)      # past the walk's depth
        if os.path.lexists(path):       # every copy's age set, so which is newest never rests on the clock
            os.utime(path, (1_000_000 + age, 1_000_000 + age), follow_symlinks=False)


LEARNER = st.tuples(NAMES, st.lists(st.tuples(st.lists(NAMES, max_size=3), KINDS,
                                              st.sampled_from(["answer_1 = 42", "answer_1 = 7", "x = 42\nprint(x)"]),
                                              st.integers(0, 5)), max_size=5))


def rows_by_learner(folder, out):
    rows, _ = grade.grade(folder, out, grade.Settings(unisolated=True))
    found = {}
    for row in rows:
        found.setdefault(row.learner, []).append(row)
    return found


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(st.lists(LEARNER, min_size=1, max_size=4, unique_by=lambda learner: _name(learner[0])))
@example(learners=[("caf\udce9", [(["my-notebooks"], "answered", "answer_1 = 42", 0), ([], "fifo", "", 0)]),
                   ("bob", [(["backups"], "answered", "answer_1 = 7", 0)])])
def test_any_class_is_graded_to_the_end_each_learner_on_their_own(tmp_path_factory, monkeypatch, learners):
    monkeypatch.setattr(grade_sandbox, "run", stand_in)
    root = tmp_path_factory.mktemp("class")
    (root / "all").mkdir()
    for name, entries in learners:
        build(root / "all", _name(name), entries)
    together = rows_by_learner(root / "all", root / "out-all")
    shown = {grade.shown(os.fsdecode(_name(name))) for name, _ in learners}
    assert set(together) == shown, (set(together), shown)           # a row for every learner's folder
    summary = (root / "out-all" / "summary.md").read_text(encoding="utf-8")
    assert all(grade.md(name) in summary or grade.md(name, table=True) in summary for name in shown)
    for number, (name, entries) in enumerate(learners[:2]):
        alone = root / f"alone-{number}"
        alone.mkdir()
        build(alone, _name(name), entries)
        mine = rows_by_learner(alone, root / f"out-alone-{number}")
        learner = grade.shown(os.fsdecode(_name(name)))
        assert mine[learner] == together[learner]                   # no one else's files changed them
    statuses = {r.status for rows in together.values() for r in rows}
    assert statuses <= set(grade.STATUSES)
    shutil.rmtree(root, ignore_errors=True)
