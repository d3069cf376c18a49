"""The learner's working copy, `my-notebooks/` (ignored by git): `make lab`
copies in each notebook it lacks and never overwrites one; `make refresh`
replaces them, moving a notebook the learner changed to a dated backup first.
Every copy is trusted, so its stored drawings show on first open."""

import hashlib
import json
import shutil
import time
from pathlib import Path

import nbformat
from nbformat.sign import NotebookNotary

from tools.notebooks import NOTEBOOKS, notebook_paths

ROOT = NOTEBOOKS.parent
COPY = ROOT / "my-notebooks"
RECORD = ".copied.json"       # {notebook name: fingerprint of what was copied}
BACKUPS = "backups"


def fingerprint(path):
    """A hash of the notebook's cells' types and sources (what the learner
    writes); None when the file is not a readable notebook."""
    try:
        cells = [[c.cell_type, c.source] for c in nbformat.read(path, as_version=4).cells]
    except (OSError, ValueError):
        return None
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()


def make(copy=COPY, notebooks=NOTEBOOKS, say=print):
    """Copy in and trust every notebook `copy` lacks, and say what was done.
    Returns the paths copied."""
    copy.mkdir(parents=True, exist_ok=True)
    record = _read_record(copy)
    added = [_copy(source, copy, record) for source in notebook_paths(notebooks) if not (copy / source.name).exists()]
    _finish(copy, record, added)
    where = f"{_shown(copy)}/"
    if len(added) == len(notebook_paths(notebooks)):
        say(f"Made your working copy of the notebooks in {where} (ignored by git; the stored ones in "
            "notebooks/ stay as they are). Save your answers there.")
    elif added:
        say(f"Added to your working copy {where}: {', '.join(p.name for p in added)}.")
    else:
        say(f"Your working copy: {where} (kept as it is; `make refresh` updates it, "
            "backing up notebooks you changed).")
    newer = updated(copy, notebooks)
    if newer:
        say(f"The collection has newer versions of {', '.join(newer)}: `make refresh` takes them "
            f"(a notebook you changed is kept in {where}{BACKUPS}/ first).")
    return added


def updated(copy=COPY, notebooks=NOTEBOOKS):
    """Names of the collection's notebooks that changed since they were copied."""
    record = _read_record(copy)
    return [source.name for source in notebook_paths(notebooks)
            if source.name in record and record[source.name] != fingerprint(source)]


def refresh(copy=COPY, notebooks=NOTEBOOKS, say=print, stamp=None):
    """Replace the collection's notebooks in `copy`, moving each one the
    learner changed to `copy`/backups/<date-time>/ first. Returns {name: backup}."""
    copy.mkdir(parents=True, exist_ok=True)
    record = _read_record(copy)
    folder = copy / BACKUPS / (stamp or time.strftime("%Y-%m-%d-%H%M%S"))
    moved = {}
    for source in notebook_paths(notebooks):
        target = copy / source.name
        if target.exists() and _changed(target, source, record):
            folder.mkdir(parents=True, exist_ok=True)
            moved[source.name] = Path(shutil.move(target, folder / source.name))
    copied = [_copy(source, copy, record) for source in notebook_paths(notebooks)]
    _finish(copy, record, copied)
    say(f"Refreshed {len(copied)} notebooks in {_shown(copy)}/ from notebooks/.")
    for name, backup in moved.items():
        say(f"  You had changed {name}: your version is kept as {_shown(backup)}")
    if not moved:
        say("  None had changes of yours, so no backup was needed.")
    return moved


def trust(paths):
    """Sign `paths` as `jupyter trust` does, in the user's Jupyter data folder."""
    notary = NotebookNotary()
    for path in paths:
        notary.sign(nbformat.read(path, as_version=4))


def _changed(target, source, record):
    """Whether the learner changed `target`: its cells are neither what was
    copied nor the collection's (an unreadable file counts as changed)."""
    cells = fingerprint(target)
    return cells is None or cells not in (record.get(source.name), fingerprint(source))


def _copy(source, copy, record):
    target = copy / source.name
    shutil.copyfile(source, target)
    record[source.name] = fingerprint(source)
    return target


def _finish(copy, record, copied):
    trust(copied)
    (copy / RECORD).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def _read_record(copy):
    try:
        return json.loads((copy / RECORD).read_text())
    except (OSError, ValueError):
        return {}


def _shown(path):
    return f"{path.relative_to(ROOT)}" if path.is_relative_to(ROOT) else str(path)
