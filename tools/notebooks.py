"""The collection's notebooks, as the files say: every list of notebooks
(the index, the navigation, the tests, the load tools)
is derived from notebooks/ here, never written out by hand."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
INDEX = "00-index.ipynb"
# The cell tags the tools read, named here once: an exercise's answer slot and its check (make grade,
# the save hook, the teacher's copies, the stored notebooks' lesson code) and a cell that raises on
# purpose (nbval and JupyterLab's Run All read that one too). This module imports nothing heavy:
# the grader's runner, pid 1 of a sandbox, imports it without torch.
SLOT, CHECK, RAISES = "answer-slot", "answer-check", "raises-exception"
# A widget output's MIME type, and the notebook metadata's key for the widgets' state.
WIDGET_VIEW, WIDGET_STATE = "application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json"


def notebook_paths(folder=NOTEBOOKS):
    """Every notebook of the collection, in reading order (the index first)."""
    return sorted(folder.glob("[0-9][0-9]-*.ipynb"))

