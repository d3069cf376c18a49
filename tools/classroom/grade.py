"""`make grade SUBMISSIONS=dir`: grade learners' notebooks against the
collection's own checks.

    python -m tools.classroom.grade SUBMISSIONS [--out build/grades]

SUBMISSIONS holds one folder per learner, with their notebooks anywhere in
it under the collection's names (`ada/01-dynamic-control-flow.ipynb`; the
class hub's build/hub/learners/ is laid out that way). Of each submission
only its answer slots are taken (the cells tagged `answer-slot`, matched to
the stored notebook's by cell id, else by order): each is put into the
pristine notebook from notebooks/, which runs from a fresh kernel, two at a
time, with the grader's probe around every slot (tools/classroom/grade_probe.py): it
checks each answer with the exercise package's own check and lists what an
answer cell changed besides its answer.

Written: OUT/grades.csv (learner, notebook, exercise, status: right, wrong,
blank or not graded, what the answer cell changed in the checking code, a
detail), OUT/summary.md (also printed), and each executed notebook under
OUT/notebooks/. Exits 1 when an answer cell changed the checking code."""

import argparse
import asyncio
import csv
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import astuple, dataclass
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

from helpers.arguments import wrong
from helpers.exercises import declared
from tools.classroom.grade_probe import MIME
from tools.runtime.working_copy import collection

ROOT = Path(__file__).resolve().parents[2]
SLOT, CHECK = "answer-slot", "answer-check"
CELL_TIMEOUT = 120         # seconds for one cell (an answer that loops forever stops here)
NOTEBOOK_TIMEOUT = 900     # seconds for a whole notebook
KERNELS = 2                # notebooks run at a time


@dataclass(frozen=True)
class Row:
    learner: str
    notebook: str
    exercise: int
    status: str            # right, wrong, blank, not graded
    changed: str           # what the answer cell changed in the checking code ("" when nothing)
    detail: str


def tags(cell):
    return cell.metadata.get("tags", [])


def submissions(folder):
    """[(learner, stored notebook, submitted file)] and the files that are
    not a notebook with exercises of the collection."""
    stored = {p.name: p for p in collection() if p.name[:2] != "00"}
    found, skipped = [], []
    for path in sorted(folder.rglob("*.ipynb")):
        parts = path.relative_to(folder).parts
        if ".ipynb_checkpoints" in parts or "backups" in parts:
            continue
        if len(parts) > 1 and path.name in stored:
            found.append((parts[0], stored[path.name], path))
        else:
            skipped.append(path)
    return found, skipped


def answers(stored, submitted):
    """The submission's source for each of the stored notebook's slots
    (None where it has none), and a note on how they were matched."""
    slots = [c for c in stored.cells if SLOT in tags(c)]
    by_id = {c.get("id"): c for c in submitted.cells if c.get("id")}
    matched = [by_id[s["id"]].source if s.get("id") in by_id else None for s in slots]
    if None not in matched:
        return matched, ""
    tagged = [c.source for c in submitted.cells if SLOT in tags(c)]
    if len(tagged) == len(slots):
        return tagged, "answer slots matched by order (their cell ids differ from the stored ones)"
    return matched, "some answer slots are missing (counted blank)"


def _grader_cell(code, name):
    return nbformat.v4.new_code_cell(code, id=f"grade-{name}")


def probed(stored, sources, notebook):
    """The stored notebook with each slot's source replaced by the learner's
    (the stored, unanswered one where they have none) and the probe's calls
    around it; slot k keeps its stored cell id."""
    cells, number, pending = [], 0, None
    for cell in stored.cells:
        if SLOT in tags(cell):
            if number == 0:
                cells.append(_grader_cell(f'__grader__ = __import__("tools.classroom.grade_probe", fromlist=["Probe"])'
                                          f'.Probe("{notebook}", globals())', "probe"))
            if pending:
                cells.append(_grader_cell(f"__grader__.verdict({pending})", f"verdict-{pending}"))
            number += 1
            cell.source = sources[number - 1] if sources[number - 1] is not None else cell.source
            cells += [_grader_cell(f"__grader__.before({number})", f"before-{number}"), cell,
                      _grader_cell(f"__grader__.after({number})", f"after-{number}")]
            pending = number
            continue
        cells.append(cell)
        if CHECK in tags(cell) and pending:
            cells.append(_grader_cell(f"__grader__.verdict({pending})", f"verdict-{pending}"))
            pending = None
    if pending:
        cells.append(_grader_cell(f"__grader__.verdict({pending})", f"verdict-{pending}"))
    stored.cells = cells
    return stored


def run(nb, folder):
    """Execute `nb` from a fresh kernel of this environment, in `folder`;
    returns "" or why the run stopped before the end."""
    km = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(nb, km=km, timeout=CELL_TIMEOUT, allow_errors=True, record_timing=False,
                            resources={"metadata": {"path": str(folder)}})
    try:
        asyncio.run(asyncio.wait_for(client.async_execute(), NOTEBOOK_TIMEOUT))
        return ""
    except Exception as error:        # a cell over its time, a kernel that died: the rest is not graded
        return f"the run stopped: {type(error).__name__} {str(error)[:200]}".strip()
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)


def _payload(nb, cell_id):
    cell = next((c for c in nb.cells if c.get("id") == cell_id), None)
    found = [o["data"][MIME] for o in (cell.outputs if cell else []) if MIME in o.get("data", {})]
    return found[0] if found else None


def _error(nb, cell_id):
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    errors = [o for o in cell.outputs if o.output_type == "error"]
    return f"{errors[0].ename}: {errors[0].evalue}" if errors else ""


def rows(learner, name, nb, slot_ids, sources, stopped):
    """One Row per exercise of an executed probed notebook."""
    found, earlier = [], []
    for number, (slot_id, source) in enumerate(zip(slot_ids, sources, strict=True), start=1):
        after, verdict = _payload(nb, f"grade-after-{number}"), _payload(nb, f"grade-verdict-{number}")
        changed = "; ".join(after["flagged"]) if after else ""
        earlier += [number] if changed else []
        if not changed and earlier:       # checked after an earlier answer cell changed the checking code
            changed = f"checked after exercise {earlier[0]}'s answer cell changed the checking code"
        noted = "; ".join(after["noted"]) if after else ""
        status, detail = (verdict["status"], verdict["text"]) if verdict else ("not graded", stopped)
        if status == "undefined":
            raised = _error(nb, slot_id)
            status = "wrong" if raised or (source or "").strip() else "blank"
            detail = f"the answer cell raised {raised}" if raised else detail
        found.append(Row(learner, name, number, status, changed, "; ".join(filter(None, [detail, noted]))))
    return found


def grade_one(learner, stored_path, submitted_path, out):
    """Rows for one submitted notebook; its executed copy goes under `out`."""
    stored = nbformat.read(stored_path, as_version=4)
    slot_ids = [c["id"] for c in stored.cells if SLOT in tags(c)]
    if len(slot_ids) != len(declared(stored_path.name[:2])):
        raise wrong(ValueError, f"{stored_path.name} has {len(slot_ids)} answer slots for "
                                f"{len(declared(stored_path.name[:2]))} exercises: fix the notebook's tags")
    try:
        sources, note = answers(stored, nbformat.read(submitted_path, as_version=4))
    except (OSError, ValueError) as error:
        sources, note = [None] * len(slot_ids), f"unreadable notebook ({type(error).__name__}): counted blank"
    nb = probed(stored, sources, stored_path.name[:2])
    with tempfile.TemporaryDirectory() as folder:
        stopped = run(nb, Path(folder))
    copy = out / "notebooks" / learner / stored_path.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, copy)
    found = rows(learner, stored_path.name, nb, slot_ids, sources, stopped)
    return [Row(*astuple(r)[:5], "; ".join(filter(None, [r.detail, note]))) for r in found]


def summary(all_rows, skipped):
    """The teacher's summary, in Markdown."""
    lines = ["| learner | notebook | right | wrong | blank | not graded |", "|---|---|---:|---:|---:|---:|"]
    for key in sorted({(r.learner, r.notebook) for r in all_rows}):
        mine = [r.status for r in all_rows if (r.learner, r.notebook) == key]
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(str(mine.count(s)) for s in
                                                            ("right", "wrong", "blank", "not graded")) + " |")
    flagged = [r for r in all_rows if r.changed and not r.changed.startswith("checked after")]
    lines += ["", f"Answer cells that changed the checking code: {len(flagged) or 'none'} (the exercises "
              "checked after such a cell are marked in grades.csv too)"]
    lines += [f"- {r.learner}, {r.notebook}, exercise {r.exercise} ({r.status}): {r.changed}" for r in flagged]
    lines += [f"Skipped (not a notebook of the collection in a learner's folder): {p}" for p in skipped]
    return "\n".join(lines)


def grade(folder, out):
    """Grade every submission in `folder`; write OUT/grades.csv and
    OUT/summary.md; returns (rows, summary text)."""
    if not Path(folder).is_dir():
        raise wrong(ValueError, f"SUBMISSIONS must be a folder with one folder per learner; got {folder}")
    found, skipped = submissions(Path(folder))
    with ThreadPoolExecutor(max_workers=KERNELS) as pool:       # a run mostly waits on its kernel
        graded = list(pool.map(lambda job: grade_one(*job, out), found))
    all_rows = [row for rows_ in graded for row in rows_]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["learner", "notebook", "exercise", "status", "changed_checking_code", "detail"])
        writer.writerows(astuple(r) for r in all_rows)
    text = summary(all_rows, skipped)
    (out / "summary.md").write_text(text + "\n")
    return all_rows, text


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.classroom.grade", description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "grades")
    args = parser.parse_args(argv)
    all_rows, text = grade(args.submissions, args.out)
    print(text)
    print(f"\n{len(all_rows)} exercises graded: {args.out / 'grades.csv'}")
    return 1 if any(r.changed for r in all_rows) else 0


if __name__ == "__main__":
    sys.exit(main())
