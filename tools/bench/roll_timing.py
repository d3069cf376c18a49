"""How long `roll=True` takes on the bench's long RNN graph (h = tanh(W @ h),
one shared 8x8 W, T steps; 2T + 3 nodes), split into its parts:

  trace_graph(saved=False)   the whole walk that roll=True starts with
  roll(graph)                rolling the walked Graph alone (helpers/roll.py)
  draw_graph(roll=True)      both, then the DOT and text forms of the result

    .venv/bin/python -m tools.bench.roll_timing [T ...] [--against REV]

T defaults to 50000 100000. With --against REV (a git revision, such as
HEAD~3), helpers/roll.py as it was at REV is loaded beside today's and its
roll(graph) timed on the same graph in the same run, for a before/after.
Each figure is the median of 3 runs. The machine may be shared: compare
figures from one run of this script, side by side."""

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from helpers import draw_graph, trace_graph
from helpers.graph import Graph
from helpers.roll import roll
from tools.bench.__main__ import in_a_big_stack, rnn

ROOT = Path(__file__).resolve().parents[2]
REPEATS = 3


def median_time(run: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def roll_at(revision: str) -> Callable[[Graph], Graph]:
    """helpers/roll.py's `roll` as it was at a git revision, loaded as a
    module of the helpers package (its relative imports are today's)."""
    source = subprocess.run(["git", "show", f"{revision}:helpers/roll.py"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "roll_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("helpers.roll_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rolled: Callable[[Graph], Graph] = module.roll
    return rolled


def row(steps: int, before: Callable[[Graph], Graph] | None) -> str:
    torch.manual_seed(0)
    w, h = rnn(steps)
    graph = trace_graph(h, {"W": w}, saved=False)
    walk = median_time(lambda: trace_graph(h, {"W": w}, saved=False))
    then = f"{median_time(lambda: before(graph)):.2f} s | " if before is not None else ""
    now = median_time(lambda: roll(graph))
    drawn = median_time(lambda: draw_graph(h, {"W": w}, roll=True))
    return f"| {steps:,} | {len(graph.nodes):,} | {walk:.2f} s | {then}{now:.2f} s | {drawn:.2f} s |"


def rows(steps_list: list[int], revision: str | None) -> list[str]:
    before = roll_at(revision) if revision else None
    then = f"roll(graph) at {revision} | " if revision else ""
    lines = [f"| T | nodes | trace_graph(saved=False) | {then}roll(graph) | draw_graph(roll=True) |",
             "|---:|---:|---:|" + "---:|" * (3 if revision else 2)]
    return lines + [row(steps, before) for steps in steps_list]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", nargs="*", type=int, default=[50_000, 100_000])
    parser.add_argument("--against", help="a git revision whose helpers/roll.py is timed beside today's")
    args = parser.parse_args()
    print("\n".join(in_a_big_stack(lambda: rows(args.steps, args.against))))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
