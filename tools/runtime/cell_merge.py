"""A stale tab's save merged, cell by cell (matched by id), with the file
another tab saved, against what the page last had in step with the file
(docs/maintaining.md, "A save from a stale tab never loses a cell")."""

import hashlib
import re
import uuid


def text(cell):
    """A cell's source as one string (a notebook's JSON may hold it as a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def fingerprint(cell):
    """A cell's kind and text, hashed: what counts as a change of a cell."""
    return hashlib.sha1(f"{cell.get('cell_type')}\0{text(cell)}".encode()).hexdigest()


def snapshot(nb):
    """What `merge` needs of a version: each cell's id and fingerprint, or
    None when a cell has no id (nothing to match cells by)."""
    cells = nb.get("cells", [])
    if any(not cell.get("id") for cell in cells):
        return None
    return {cell["id"]: fingerprint(cell) for cell in cells}


def merge(sent, disk, base):
    """Change `sent` (a notebook's JSON) in place into the merge of its cells
    with `disk`'s, both descended from `base` (a `snapshot`). Returns what was
    taken from the file: a list of (what, cell id)."""
    on_disk = {cell.get("id"): cell for cell in disk.get("cells", [])}
    sent_ids = {cell.get("id") for cell in sent.get("cells", [])}
    cells, taken = [], []
    for cell in sent.get("cells", []):
        cell_id, mine = cell.get("id"), fingerprint(cell)
        theirs = on_disk.get(cell_id)
        if theirs is None:
            if base.get(cell_id) != mine:       # added here, or changed here while deleted there
                cells.append(cell)
            else:
                taken.append(("deleted", cell_id))
        elif fingerprint(theirs) == mine or fingerprint(theirs) == base.get(cell_id):
            cells.append(cell)
        elif base.get(cell_id) == mine:
            cells.append(theirs)
            taken.append(("changed", cell_id))
        else:
            cells += [cell, _other_version(theirs)]
            taken.append(("both changed", cell_id))
    copies = {c["id"] for c in cells if c.get("id") not in sent_ids}
    _insert_added(cells, disk.get("cells", []), sent_ids | copies, base, taken)
    sent["cells"] = cells
    return taken


def _insert_added(cells, disk_cells, placed, base, taken):
    """Put each cell of the file that the page lacks, and did not delete,
    right after the file's cell before it (and after the copy of that cell's
    other text, when there is one), at the top when none is kept. `placed`:
    the ids of the cells sent and of those copies."""
    copies = placed - {c.get("id") for c in disk_cells}
    for i, cell in enumerate(disk_cells):
        cell_id = cell.get("id")
        if cell_id in placed or base.get(cell_id) == fingerprint(cell):
            continue
        before = next((c.get("id") for c in reversed(disk_cells[:i]) if c.get("id") in
                       {kept.get("id") for kept in cells}), None)
        at = next((j + 1 for j, kept in enumerate(cells) if kept.get("id") == before), 0)
        while before is not None and at < len(cells) and cells[at].get("id") in copies:
            at += 1
        cells.insert(at, cell)
        taken.append(("added", cell_id))


def _other_version(cell):
    """A markdown cell holding `cell`'s text as the other tab saved it."""
    source = text(cell)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", source)), default=0))
    kind = "python" if cell.get("cell_type") == "code" else ""
    return {"cell_type": "markdown", "id": uuid.uuid4().hex[:8], "metadata": {},
            "source": ("**Saved from another tab.** The cell above read as follows there, "
                       "when this tab saved over it:\n\n"
                       f"{fence}{kind}\n{source}\n{fence}")}
