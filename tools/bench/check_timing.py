"""What an exercise check costs, as the learner's session runs it: every
declared exercise's solution checked through `ex.qN.check(...)`, each
several times, the median kept.

    .venv/bin/python -m tools.bench.check_timing [--resident MB] [NN ...]

`--resident` first grows the process to about that many MB of touched
memory, as a notebook's kernel holds (260-450 MB): what a check costs can
grow with the session's size. Prints one markdown table (per notebook: its checks, the median check, the
slowest, the sum of the medians) and the whole collection's sum, which is
what the checks add to nbval's run of every notebook. It prints figures;
nothing here asserts.
"""

import argparse
import statistics
import sys
import time

import psutil
import torch

from helpers import lessons
from helpers.exercises import declared, exercises
from tools.notebooks import notebook_paths
from tools.testkit.lessons import lesson_function

REPEATS = 5


def _lesson(notebook):
    stem = next(path.stem for path in notebook_paths() if path.name.startswith(notebook + "-"))
    return {need: lesson_function(stem, need) for e in declared(notebook) for need in e.needs}


def notebook_times(notebook, repeats=REPEATS):
    """The median seconds of each of the notebook's checks, by exercise number."""
    lesson = _lesson(notebook)
    ex = exercises(notebook, dict(lesson))
    times = {}
    for exercise in declared(notebook):
        answer = exercise.reference(lesson)
        check = getattr(ex, f"q{exercise.number}").check
        check(answer)                               # the first check loads the stored notebook
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            feedback = check(answer)
            runs.append(time.perf_counter() - start)
        if feedback.status != "right":
            print(f"note: nb{notebook} q{exercise.number}'s solution was judged {feedback.status}", file=sys.stderr)
        times[exercise.number] = statistics.median(runs)
    return times


def rows(notebooks=None):
    lines = [f"Exercise checks, the process resident at {psutil.Process().memory_info().rss / 2**20:.0f} MB:", "",
             "| notebook | checks | median check | slowest check | sum of medians |", "|---|---:|---:|---:|---:|"]
    total = 0.0
    for notebook in notebooks or lessons.numbers():
        times = notebook_times(notebook)
        total += sum(times.values())
        slowest = max(times, key=times.__getitem__)
        lines.append(f"| {notebook} | {len(times)} | {statistics.median(times.values()) * 1000:.1f} ms | "
                     f"{times[slowest] * 1000:.1f} ms (q{slowest}) | {sum(times.values()) * 1000:.0f} ms |")
    lines.append(f"| all | | | | {total * 1000:.0f} ms |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="notebook numbers (default: all)")
    parser.add_argument("--resident", type=float, default=0, help="MB of memory to hold first, as a kernel does")
    args = parser.parse_args()
    ballast = torch.ones(int(args.resident * 2**20 / 4))       # noqa: F841 (held, touched)
    print("\n".join(rows(args.notebooks)))


if __name__ == "__main__":
    main()
