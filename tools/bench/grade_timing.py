"""The time `make grade` takes for a class: N submissions of notebook 06
(half every answer right, half every answer wrong), graded in sandboxes, then
the same without them (--unisolated), and with --before PATH the grader of
another copy of the collection (an older commit's files) on the same
submissions. Prints the wall time of each and per submission.

    python -m tools.bench.grade_timing [-n 20] [--before /path/to/old/collection]"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from helpers.exercises import declared
from tools.notebooks import SLOT

ROOT = Path(__file__).resolve().parents[2]
NAME = "06-practice-question.ipynb"
WRONG = ("answer_1 = False", "answer_2 = True", "answer_3 = 4", "answer_4 = 2", "answer_5 = 'a'",
         "def survives(x):\n    return x.sum()")


def make(folder, count):
    right = [e.solution.strip() for e in declared("06")]
    for learner in range(count):
        nb = nbformat.read(ROOT / "notebooks" / NAME, as_version=4)
        answers = iter(right if learner % 2 == 0 else WRONG)
        for cell in nb.cells:
            if SLOT in cell.metadata.get("tags", []):
                cell.source = next(answers)
        (folder / f"learner{learner:02d}").mkdir(parents=True)
        nbformat.write(nb, folder / f"learner{learner:02d}" / NAME)


def timed(label, collection, folder, out, extra, count):
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "classroom.grade", str(folder), "--out", str(out), *extra],
                          cwd=collection, env={**os.environ, "PYTHONPATH": str(collection)}, capture_output=True,
                          text=True)
    took = time.monotonic() - start
    print(f"| {label} | {count} | {took:.0f} | {took / count:.1f} | {done.returncode} |", flush=True)
    return took


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench.grade_timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=20)
    parser.add_argument("--before", type=Path, help="another copy of the collection whose grader to time too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submissions"
        make(folder, args.n)
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
        print("| grader | submissions | wall (s) | per submission (s) | exit |\n|---|---:|---:|---:|---:|")
        if args.before:
            timed(f"before the sandbox ({args.before})", args.before, folder, Path(tmp) / "before", [], args.n)
        timed("sandboxed (this checkout)", ROOT, folder, Path(tmp) / "sandboxed", [], args.n)
        timed("--unisolated (this checkout)", ROOT, folder, Path(tmp) / "unisolated", ["--unisolated"], args.n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
