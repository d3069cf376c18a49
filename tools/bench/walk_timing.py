"""Time the whole walk of a deep graph, and the drawings that walk it whole.

    .venv/bin/python -m tools.bench.walk_timing                      (T = 50,000 and 100,000)
    .venv/bin/python -m tools.bench.walk_timing 100000               (one size)
    .venv/bin/python -m tools.bench.walk_timing --before HEAD~3      (beside the helpers of a commit)
    .venv/bin/python -m tools.bench.walk_timing 1000 100000 --only "first call"   (the first drawing's growth)

The graph is the bench's `h = tanh(W @ h)`, one shared 8x8 W, T steps
(2 T + 3 nodes). Per size it prints the median of 3 runs of: `trace_graph`
with saved values read and without; the first walk of a graph against a
second walk of the same graph (the first leaves each node holding its
inputs, `walk.hold_inputs`); `draw_graph` as it cuts by default, of a
graph walked before and as the first call of a new process (the median of
FIRST_RUNS processes, the versions taking turns; with two sizes or more, its ratio of the last size to the
first is printed too); and `draw_graph(max_nodes=None)`, the whole graph as
DOT and text (`dot` is not run: no layout of 200,000 nodes finishes). A first
walk is of a graph built for it, untimed; the time includes freeing what the
call returned.

Each figure is measured in a process of its own. With `--before REV`, the
helpers as they were at REV are measured too, in a process run just before
the one of today's helpers, case by case, so both see the same load on a
shared machine.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import torch

from helpers import draw_graph, trace_graph

ROOT = Path(__file__).resolve().parents[2]
REPEATS = 3
# A process's first call is timed in this many new processes per version, the versions taking
# turns (the median is printed).
FIRST_RUNS = 9
T = TypeVar("T")
# name -> (the call, on a graph h; how it is run: "new", on a new graph each run; "again", on a
# graph walked once before; "first", once, as the first call of a new process, on a new graph)
CASES: dict[str, tuple[Callable[[torch.Tensor], object], str]] = {
    "trace_graph(h), first walk": (lambda h: trace_graph(h), "new"),
    "trace_graph(h), second walk of the same graph": (lambda h: trace_graph(h), "again"),
    "trace_graph(h, saved=False), first walk": (lambda h: trace_graph(h, saved=False), "new"),
    "trace_graph(h, saved=False), second walk": (lambda h: trace_graph(h, saved=False), "again"),
    "draw_graph(h) (300 nodes drawn, no SVG)": (lambda h: draw_graph(h), "again"),
    "draw_graph(h), the first call in a new process (300 nodes drawn)": (lambda h: draw_graph(h), "first"),
    "draw_graph(h, max_nodes=None), first walk (no SVG)": (lambda h: draw_graph(h, max_nodes=None), "new"),
}


def rnn(steps: int) -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.randn(8, 8, requires_grad=True)
    h = torch.randn(8)
    for _ in range(steps):
        h = torch.tanh(w @ h)
    return w, h


def in_a_big_stack(part: Callable[[], T]) -> T:
    """Run `part` in a thread with a 512 MB stack. Freeing a graph tens of
    thousands of nodes deep, once it has been walked from plain Python,
    recurses in torch's C++ deleter and overflows the usual 8 MB stack
    (torchviz's walk does it; the helpers' walks leave graphs that free
    shallowly, `walk.hold_inputs`)."""
    result: list[T] = []
    threading.stack_size(512 * 2**20)
    worker = threading.Thread(target=lambda: result.append(part()))
    worker.start()
    worker.join()
    threading.stack_size(0)
    return result[0]


def measure(name: str, steps: int) -> float:
    """The median of REPEATS runs of case `name` on a graph of `steps` steps:
    a new graph for each run, or one graph walked once before; or the time
    of one run, the process's first call."""
    run, how = CASES[name]
    h = rnn(steps)[1]
    if how == "again":
        trace_graph(h, saved=False)
    times = []
    for i in range(1 if how == "first" else REPEATS):
        if how == "new" and i:
            h = rnn(steps)[1]
        start = time.perf_counter()
        run(h)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def in_child(helpers_from: Path, code: str, what: str) -> str:
    """What `code` prints, run in a new process that imports `helpers` from `helpers_from`."""
    code = (f"import sys; sys.path.insert(0, {str(helpers_from)!r}); sys.path.insert(1, {str(ROOT)!r})\n"
            "import helpers; assert helpers.__file__.startswith(sys.path[0]), helpers.__file__\n" + code)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def child(helpers_from: Path, name: str, steps: int) -> float:
    """`measure` in a new process, importing `helpers` from `helpers_from`."""
    code = ("from tools.bench.walk_timing import in_a_big_stack, measure\n"
            f"print(in_a_big_stack(lambda: measure({name!r}, {steps!r})))")
    return float(in_child(helpers_from, code, f"{name} at T = {steps}").split()[-1])


def figures(versions: list[Path], name: str, steps: int) -> list[float]:
    """Case `name` at T = `steps` for each version: one process's figure, or
    for a process's first call the median of FIRST_RUNS processes, the
    versions taking turns so that both see the same load."""
    times: list[list[float]] = [[] for _ in versions]
    for _ in range(FIRST_RUNS if CASES[name][1] == "first" else 1):
        for found, path in zip(times, versions, strict=True):
            found.append(child(path, name, steps))
    return [statistics.median(found) for found in times]


def snapshot(rev: str, into: Path) -> Path:
    """The helpers package as it was at `rev`, unpacked under `into`."""
    archive = subprocess.run(["git", "archive", rev, "helpers"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[50_000, 100_000])
    parser.add_argument("--before", help="a commit whose helpers to measure beside today's")
    parser.add_argument("--only", default="", help="only the cases whose name holds this text, such as 'first call'")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        versions = {"now": ROOT}
        if args.before:
            versions = {f"at {args.before}": snapshot(args.before, Path(tmp)), **versions}
        head = "| h = tanh(W @ h) | " + " | ".join(
            f"{v}, T = {t:,}" for t in args.sizes for v in versions) + " |"
        lines = [head, "|---|" + "---:|" * (len(args.sizes) * len(versions))]
        print(lines[0] + "\n" + lines[1], flush=True)
        for name in (name for name in CASES if args.only in name):
            found = [f for steps in args.sizes for f in figures(list(versions.values()), name, steps)]
            print(f"| {name} | " + " | ".join(f"{f:.3f} s" for f in found) + " |", flush=True)
            if CASES[name][1] == "first" and len(args.sizes) > 1:
                ratios = [last / first for first, last in zip(found[:len(versions)], found[-len(versions):],
                                                                strict=True)]
                cells = [f"{r:.2f}" for r in ratios] + [""] * (len(found) - len(ratios))
                print(f"| its ratio, T = {args.sizes[-1]:,} / T = {args.sizes[0]:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
