"""`make new` (tools/build/new.py): a refused name says why; what it writes passes the structure checks, its
widget and exercise declared as the notebook uses them. That a new notebook passes all of `make test` is
shown on a clean clone, once per change to new.py (make new, then make check NB=NN)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from structure import _common, _exercises

from helpers.exercises import ExerciseSet, answer_from
from tools.build import new
from tools.build.nav import rewritten
from tools.notebooks import NOTEBOOKS, ROOT


@pytest.mark.parametrize("name, words", [
    ("10", "not a notebook name"), ("10-Hooks", "not a notebook name"), ("10_hooks", "not a notebook name"),
    ("1-hooks", "not a notebook name"), ("00-start", "00 is the index"),
    ("01-another-loop", "notebook 01 exists already (01-dynamic-control-flow.ipynb)"),
])
def test_a_name_it_refuses_says_why(name, words):
    assert words in new.problem(name)
    assert new.main([name]) == 2


@pytest.fixture
def made(tmp_path):
    for folder in ("notebooks", "helpers/lessons", "tests/answers"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "notebooks" / "00-index.ipynb").write_text((NOTEBOOKS / "00-index.ipynb").read_text())
    return new.make("99-hooks-and-the-graph", root=tmp_path)


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def test_the_three_files_are_written_and_not_twice(made, tmp_path):
    assert [p.relative_to(tmp_path).as_posix() for p in made] == [
        "notebooks/99-hooks-and-the-graph.ipynb", "helpers/lessons/nb99.py", "tests/answers/nb99_answers.py"]
    with pytest.raises(ValueError, match="notebook 99 exists already"):
        new.make("99-other", root=tmp_path)


def test_what_it_writes_is_lint_clean(made):
    # the repository's settings, helpers and tools first-party as they are in the repository
    ruff = [str(Path(sys.executable).with_name("ruff")), "check", "--no-cache", "--config",
            "lint.isort.known-first-party = ['helpers', 'tools']", "--config"]
    for config, paths in ((ROOT / "pyproject.toml", made[1:]), (ROOT / "notebooks" / "ruff.toml", made[:1])):
        done = subprocess.run([*ruff, str(config), *map(str, paths)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout


def test_the_skeleton_passes_the_structure_checks(made):
    books = {p.name: nbformat.read(p, as_version=4) for p in sorted(made[0].parent.glob("*.ipynb"))}
    nb = nbformat.reads(dict(rewritten(books))[made[0].name], as_version=4)     # as make nav leaves it
    assert nb.metadata["collection"]["optional"] is True and nb.metadata["collection"]["tour"]
    # all but what executing it gives (make new executes it next)
    unexecuted = ("executed once", "Not answered yet", "session's score")
    assert [p for p in _common(nb, ROOT / "notebooks") + _exercises(nb) if not any(w in p for w in unexecuted)] == []


def test_the_lesson_module_declares_what_the_notebook_uses(made):
    nb = nbformat.read(made[0], as_version=4)
    lesson = _module(made[1], "helpers.lessons.nb99")
    (widget,) = lesson.WIDGETS
    tags = [t for c in nb.cells for t in c.metadata.get("tags", []) if t.startswith("widget-")]
    assert tags == [widget.tag]
    scope: dict = {}
    exec("".join(c.source for c in nb.cells if "def repeat" in c.source).split("\n\n\nx =")[0], scope)
    figure = lesson.repeat_view(scope["repeat"], 4)
    assert widget.checks[0].caption in figure.caption
    session = ExerciseSet(lesson.EXERCISES, {"repeat": scope["repeat"]}, lambda: {"repeat": scope["repeat"]})
    assert session.q1.check(answer_from(lesson.EXERCISES[0].solution, "answer_1", {})).status == "right"
    for code, words in _module(made[2], "answers_nb99").WRONG[1]:
        feedback = session.q1.check(answer_from(code, "answer_1", {}))
        assert feedback.status == "wrong" and words in feedback.text, (code, feedback)


def test_the_title_and_the_notebook_it_follows_are_written(tmp_path):
    for folder in ("notebooks", "helpers/lessons", "tests/answers"):
        (tmp_path / folder).mkdir(parents=True)
    for name in ("00-index.ipynb", "05-interview-relevance.ipynb"):
        (tmp_path / "notebooks" / name).write_text((NOTEBOOKS / name).read_text())
    with pytest.raises(ValueError, match="READ_AFTER=04-gone: no notebooks/04-gone.ipynb"):
        new.make("98-hooks", root=tmp_path, read_after="04-gone")
    path = new.make("98-hooks", "Hooks and the graph", root=tmp_path, read_after="05-interview-relevance")[0]
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].source.startswith("# Hooks and the graph\n")
    assert nb.metadata["collection"]["read_after"] == "05-interview-relevance"


def test_make_passes_title_and_read_after():
    done = subprocess.run(["make", "-n", "new", "NB=98-hooks", "TITLE=Hooks and the graph",
                           "READ_AFTER=05-interview-relevance"], cwd=ROOT, capture_output=True, text=True)
    assert '--title "Hooks and the graph" --read-after "05-interview-relevance"' in done.stdout, done.stdout
