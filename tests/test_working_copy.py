"""The learner's working copy (tools/runtime/working_copy.py), on a small made-up collection: made once, trusted,
refreshed with a dated backup of each changed notebook (that the collection's links stay inside its folder, so the
copy's links work: tests/structure.py's LINK rule)."""

import subprocess
import sys

import nbformat
import pytest
from nbformat.sign import NotebookNotary

from tools.notebooks import notebook_paths
from tools.runtime import working_copy
from tools.runtime.working_copy import make, refresh, updated

STAMP = "2026-01-02-030405"


def notebook(source):
    """A notebook whose one code cell shows `source` as HTML, which JupyterLab shows only when trusted."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source, execution_count=1)
    cell.outputs = [nbformat.v4.new_output("execute_result", {"text/html": "<b>x</b>", "text/plain": "x"},
                                           execution_count=1)]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title\n[Contents](00-index.ipynb)"), cell]
    return nb


@pytest.fixture
def shelf(tmp_path, monkeypatch):
    """(a two-notebook collection, an empty place for the copy, the Jupyter data directory where trust is kept)."""
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    for name in ("00-index", "01-first"):
        nbformat.write(notebook(f"print({name!r})"), notebooks / f"{name}.ipynb")
    return notebooks, tmp_path / "my-notebooks", tmp_path / "data"


def trusted(path, data_dir):
    return NotebookNotary(data_dir=str(data_dir)).check_signature(nbformat.read(path, as_version=4))


def learner_edits(path, text="answer_1 = 42"):
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = text
    nbformat.write(nb, path)


def test_first_run_copies_and_trusts_every_notebook(shelf):
    notebooks, copy, data = shelf
    said = []
    added = make(copy, notebooks, said.append)
    assert [p.name for p in added] == ["00-index.ipynb", "01-first.ipynb"]
    assert all((copy / p.name).read_bytes() == p.read_bytes() for p in notebook_paths(notebooks))
    assert all(trusted(copy / p.name, data) for p in notebook_paths(notebooks))
    assert said[0].startswith(f"Made your working copy of the notebooks in {copy}/ (ignored by git")
    (data.parent / "someone-else").mkdir()       # trust lives in the learner's own data directory
    assert not trusted(copy / "01-first.ipynb", data.parent / "someone-else")


def test_make_never_overwrites_and_says_so(shelf):
    notebooks, copy, _ = shelf
    make(copy, notebooks, lambda line: None)
    learner_edits(copy / "01-first.ipynb")
    before = (copy / "01-first.ipynb").read_bytes()
    said = []
    assert make(copy, notebooks, said.append) == []
    assert (copy / "01-first.ipynb").read_bytes() == before
    assert said == [f"Your working copy: {copy}/ (kept as it is; `make refresh` updates it, "
                    "backing up notebooks you changed)."]


def test_make_adds_a_missing_notebook_and_names_newer_ones(shelf):
    notebooks, copy, _ = shelf
    make(copy, notebooks, lambda line: None)
    (copy / "00-index.ipynb").unlink()
    learner_edits(notebooks / "01-first.ipynb", "print('a better lesson')")
    said = []
    assert [p.name for p in make(copy, notebooks, said.append)] == ["00-index.ipynb"]
    assert said[0] == f"Added to your working copy {copy}/: 00-index.ipynb."
    assert "newer versions of 01-first.ipynb: `make refresh`" in said[1]
    assert updated(copy, notebooks) == ["01-first.ipynb"]


def test_refresh_keeps_a_dated_backup_of_a_changed_notebook(shelf):
    notebooks, copy, data = shelf
    make(copy, notebooks, lambda line: None)
    learner_edits(copy / "01-first.ipynb")
    (copy / "my-notes.txt").write_text("mine")
    learner_edits(notebooks / "00-index.ipynb", "print('a better index')")
    said = []
    moved = refresh(copy, notebooks, said.append, stamp=STAMP)
    backup = copy / "backups" / STAMP / "01-first.ipynb"
    assert moved == {"01-first.ipynb": backup}
    assert nbformat.read(backup, as_version=4).cells[1].source == "answer_1 = 42"
    assert all((copy / p.name).read_bytes() == p.read_bytes() for p in notebook_paths(notebooks))
    assert all(trusted(copy / p.name, data) for p in notebook_paths(notebooks))
    assert (copy / "my-notes.txt").read_text() == "mine"
    assert said == [f"Refreshed 2 notebooks in {copy}/ from notebooks/.",
                    f"  You had changed 01-first.ipynb: your version is kept as {backup}"]
    assert updated(copy, notebooks) == []


def test_refresh_without_changes_needs_no_backup(shelf):
    notebooks, copy, _ = shelf
    make(copy, notebooks, lambda line: None)
    said = []
    assert refresh(copy, notebooks, said.append, stamp=STAMP) == {}
    assert not (copy / "backups").exists()
    assert said[-1] == "  None had changes of yours, so no backup was needed."


def test_refresh_keeps_an_unreadable_notebook(shelf):
    """A notebook that is no longer valid JSON counts as changed."""
    notebooks, copy, _ = shelf
    make(copy, notebooks, lambda line: None)
    (copy / "01-first.ipynb").write_text("{ half saved")
    (copy / working_copy.RECORD).unlink()
    assert refresh(copy, notebooks, lambda line: None, stamp=STAMP) == {
        "01-first.ipynb": copy / "backups" / STAMP / "01-first.ipynb"}
    assert (copy / "backups" / STAMP / "01-first.ipynb").read_text() == "{ half saved"


def test_helpers_are_importable_from_the_copy(tmp_path):
    """`helpers` is installed (editable), not found through the notebooks' folder."""
    done = subprocess.run([sys.executable, "-c", "import importlib.util as u; print(u.find_spec('helpers').origin)"],
                          cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(working_copy.ROOT / "helpers" / "__init__.py")
