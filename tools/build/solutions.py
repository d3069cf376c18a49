"""The teacher's copy: every lesson notebook with its answer slots filled
with the reference solutions, executed from a fresh kernel, and checked:
every check must say "Right" and the score must be full.

    python -m tools.build.solutions      (into build/solutions, ignored by git)

Exits 1 and lists what went wrong when any check is not right.
"""

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

from helpers.exercises import declared
from helpers.exercises.feedback import Score, ScoreRow
from tools.build.run_notebooks import execute, output_text
from tools.notebooks import CHECK, SLOT, notebook_paths

ROOT = Path(__file__).resolve().parents[2]


def tagged(nb, tag):
    return [cell for cell in nb.cells if tag in cell.metadata.get("tags", [])]


def filled(nb, exercises):
    """The notebook with each answer slot replaced by its solution: the
    N-th cell tagged answer-slot gets exercise N's."""
    slots = tagged(nb, SLOT)
    if len(slots) != len(exercises):
        raise ValueError(f"{len(slots)} cells tagged {SLOT} for {len(exercises)} exercises")
    for slot, exercise in zip(slots, exercises, strict=True):
        slot.source = exercise.solution.strip()
    return nb


def not_right(nb, name, exercises):
    """Every check or score in an executed teacher's copy that is not right
    (`exercises`: the notebook's declared ones, for the score's form)."""
    checks = tagged(nb, CHECK)
    found = [f"{name}: {cell.source}: {output_text(cell)[:200] or 'no output'}" for cell in checks
             if not output_text(cell).startswith("Right:")]
    score = [c for c in nb.cells if c.cell_type == "code"][-1:]          # the last code cell: ex.score()
    full = Score(tuple(ScoreRow(e.number, e.title, e.kind, "right", e.optional) for e in exercises)).headline()
    if len(checks) != len(exercises) or not score or not output_text(score[-1]).startswith(full):
        found.append(f"{name}: the score is not {len(checks)} of {len(checks)}")
    return found


def build(out):
    """Write and check the teacher's copies in `out`; return the problems."""
    out.mkdir(parents=True, exist_ok=True)

    def one(path):
        copy = out / path.name
        exercises = declared(path.name[:2])            # notebooks/01-... -> helpers/lessons/nb01.py
        nbformat.write(filled(nbformat.read(path, as_version=4), exercises), copy)
        nb = execute(copy)
        nbformat.write(nb, copy)
        return not_right(nb, path.name, exercises)

    # two kernels at a time: a notebook's run is mostly waiting on its kernel
    with ThreadPoolExecutor(max_workers=2) as pool:
        return [problem for found in pool.map(one, notebook_paths()[1:]) for problem in found]


def main():
    out = ROOT / "build" / "solutions"
    problems = build(out)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"teacher's copies in {out}: " + ("every check right" if not problems else f"{len(problems)} problems"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
