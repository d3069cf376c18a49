"""Benchmark the live drawing against torchviz, side by side in one run.

    make bench            (or: .venv/bin/python -m tools.bench)
    .venv/bin/python -m tools.bench --before REV      (the drawing's figures, beside the helpers of REV)

Prints one markdown report: big RNN-style graphs (h = tanh(W @ h), one
shared 8x8 W, T steps), the redraw of the note's small graph, memory over
1,000 redraws, every exercise check's time (check_timing.py), and nbval's
wall time per notebook. Each time is the median
of several runs; the machine is shared, so compare the ratios.

With `--before REV`, only the drawing's tables (`DRAWING`) are printed,
each measured four times in processes of its own, one after the other: with
the helpers as they were at REV, with today's twice, then with REV's again;
of each version's two runs, each cell is the faster's, and a cell that
differs reads "then → now".
"""

import argparse
import gc
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import torch
import torchviz

from helpers import draw_graph, trace_graph
from helpers.lessons.nb01 import branch_view
from helpers.svg import _laid_out
from tools.bench.check_timing import rows as check_rows
from tools.bench.redraw_timing import in_page_rows
from tools.bench.walk_timing import in_a_big_stack, in_child, rnn, snapshot
from tools.notebooks import notebook_paths
from tools.testkit.lessons import lesson_function
from tools.testkit.real_models import REAL, _checkpointed_encoder, _plain_encoder
from tools.testkit.shapes import shape_rows

ROOT = Path(__file__).resolve().parents[2]
DOT_TIMEOUT = 30
dynamic_forward = lesson_function("01-dynamic-control-flow", "dynamic_forward")


def median_time(run, repeats):
    times = []
    for _ in range(repeats):
        _laid_out.cache_clear()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def torchviz_times(h, w, repeats):
    """(make_dot seconds, dot seconds) as text: a time, "> N s" or the error."""
    try:
        made = median_time(lambda: torchviz.make_dot(h, params={"W": w}), repeats)
    except RecursionError:
        return "RecursionError", "-"
    source = torchviz.make_dot(h, params={"W": w}).source
    try:
        ran = median_time(lambda: subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True,
                                                 timeout=DOT_TIMEOUT, check=True), repeats)
    except subprocess.TimeoutExpired:
        return f"{made:.3f} s", f"> {DOT_TIMEOUT} s"
    return f"{made:.3f} s", f"{ran:.3f} s"


def big_graphs():
    rows = ["| T | our walk | our time to SVG | graph nodes drawn | torchviz make_dot | torchviz dot |",
            "|---:|---:|---:|---:|---:|---:|"]
    for steps in (10, 100, 1_000, 10_000):
        w, h = rnn(steps)
        repeats = 5 if steps <= 1_000 else 3
        walk = median_time(lambda h=h: trace_graph(h), repeats)
        to_svg = median_time(lambda h=h, w=w: draw_graph(h, {"W": w}).svg(), repeats)
        graph = draw_graph(h, {"W": w}).graph
        drawn, total = len(graph.nodes), len(graph.nodes) + graph.omitted
        made, ran = torchviz_times(h, w, 1 if steps >= 100 else repeats)
        rows.append(f"| {steps:,} | {walk:.3f} s | {to_svg:.3f} s | {drawn:,} of {total:,} | {made} | {ran} |")
    return rows


def real_models():
    """Trace plus SVG of each real model (SVG cache cleared), side by side."""
    rows = ["| real model | graph nodes | trace + SVG |", "|---|---:|---:|"]
    for name, build in REAL.items():
        torch.manual_seed(0)
        root = build()
        seconds = median_time(lambda root=root: draw_graph(root).svg(), 3)
        rows.append(f"| {name} | {len(trace_graph(root, saved=False).nodes):,} | {seconds:.3f} s |")
    torch.manual_seed(0)
    plain, checkpointed = _plain_encoder(), _checkpointed_encoder()
    a = median_time(lambda: draw_graph(plain).svg(), 3)
    b = median_time(lambda: draw_graph(checkpointed).svg(), 3)
    rows.append(f"| 4-layer encoder, plain / checkpointed (non-reentrant) | - | {a:.3f} s / {b:.3f} s "
                f"(ratio {b / a:.2f}) |")
    return rows


def big_walks():
    """What the size of a graph costs: saved values read or not, the whole
    graph drawn, many roots; a drawing of 300 nodes at T = 1,000 and 100,000
    (only what is drawn is walked). Each time after the first is of a graph
    walked before (tools/bench/walk_timing.py times first walks apart)."""
    w, h = rnn(100_000)
    x = torch.randn(20_000, requires_grad=True)
    pieces = list((x * 2).unbind())
    short_w, short_h = rnn(1_000)
    short = median_time(lambda: draw_graph(short_h, {"W": short_w}), 7)
    long = median_time(lambda: draw_graph(h, {"W": w}), 7)
    rows = ["| h = tanh(W @ h), T = 100,000 (200,003 nodes) | time |", "|---|---:|",
            f"| trace_graph, saved values read | {median_time(lambda: trace_graph(h), 3):.2f} s |",
            f"| trace_graph(saved=False) | {median_time(lambda: trace_graph(h, saved=False), 3):.2f} s |",
            f"| draw_graph(roll=True), the whole graph rolled | "
            f"{median_time(lambda: draw_graph(h, {'W': w}, roll=True), 3):.2f} s |",
            f"| draw_graph(max_nodes=None), DOT and text of all of it (no layout) | "
            f"{median_time(lambda: draw_graph(h, {'W': w}, max_nodes=None), 3):.2f} s |",
            f"| draw_graph (300 nodes drawn) + SVG | {median_time(lambda: draw_graph(h, {'W': w}).svg(), 3):.2f} s |",
            f"| draw_graph (300 nodes drawn), T = 1,000 / T = 100,000 | {short * 1000:.1f} ms / "
            f"{long * 1000:.1f} ms (ratio {long / short:.2f}) |",
            f"| trace_graph of 20,000 unbind outputs as roots, max_nodes=300 | "
            f"{median_time(lambda: trace_graph(pieces, max_nodes=300), 3):.3f} s |"]
    return rows


def redraw():
    def ours():
        x = torch.tensor(3.0, requires_grad=True)
        return draw_graph(dynamic_forward(x, True), {"x": x}).svg()

    def theirs():
        x = torch.tensor(3.0, requires_grad=True)
        return torchviz.make_dot(dynamic_forward(x, True), params={"x": x}).pipe(format="svg")

    cold, tv = median_time(ours, 21), median_time(theirs, 21)
    ours()
    start = time.perf_counter()
    for _ in range(21):
        ours()
    warm = (time.perf_counter() - start) / 21
    return ["| redraw of dynamic_forward (walk + SVG) | ours | torchviz | ratio ours / torchviz |",
            "|---|---:|---:|---:|",
            f"| new layout (SVG cache cleared) | {cold * 1000:.1f} ms | {tv * 1000:.1f} ms | {cold / tv:.2f} |",
            f"| toggling back and forth (SVG cached) | {warm * 1000:.1f} ms | {tv * 1000:.1f} ms | {warm / tv:.2f} |"]


def memory():
    for flag in (True, False) * 50:
        branch_view(dynamic_forward, flag, 3.0)
    gc.collect()
    before = psutil.Process().memory_info().rss
    for i in range(1_000):
        if i % 100 == 0:
            _laid_out.cache_clear()
        branch_view(dynamic_forward, i % 2 == 0, 3.0 + (i % 7))
    gc.collect()
    grown = (psutil.Process().memory_info().rss - before) / 2**20
    return [f"Resident memory growth over 1,000 widget redraws (branch_view): {grown:.1f} MB"]


def nbval_times():
    rows = ["| notebook | nbval wall time |", "|---|---:|"]
    for target in [*notebook_paths(), ROOT / "notebooks"]:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", str(target)], cwd=ROOT,
                              capture_output=True, text=True, check=False)
        status = "" if done.returncode == 0 else " (FAILED)"
        name = "all notebooks, one run" if target.is_dir() else target.name
        rows.append(f"| {name} | {time.perf_counter() - start:.1f} s{status} |")
    return rows


# The tables of the drawing's speed, which --before measures beside a commit's helpers.
DRAWING = {part.__name__: part for part in (big_graphs, real_models, shape_rows, big_walks, redraw)}


def rows_in_child(helpers_from: Path, name: str) -> list[str]:
    """The rows of `DRAWING[name]`, measured in a new process importing `helpers` from `helpers_from`."""
    code = ("import torch; torch.manual_seed(0)\n"
            "from tools.bench.__main__ import DRAWING, in_a_big_stack\n"
            f"print('\\n'.join(in_a_big_stack(DRAWING[{name!r}])))")
    return in_child(helpers_from, code, name).splitlines()


def fastest(runs: list[list[str]]) -> list[str]:
    """Runs of one table as one: each cell from the run whose first number in
    it is smallest (on a shared machine, the run least slowed by the others)."""
    rows = []
    for lines in zip(*runs, strict=True):
        cells = zip(*(line.split("|") for line in lines), strict=False)
        rows.append("|".join(min(found, key=_first_number) for found in cells))
    return rows


def _first_number(cell: str) -> float:
    found = re.search(r"[0-9]+(?:\.[0-9]+)?", cell.replace(",", ""))
    return float(found.group()) if found else 0.0


def beside(then: list[str], now: list[str]) -> list[str]:
    """Two runs of one table as one: each cell that differs reads "then → now"."""
    rows = []
    for old, new in zip(then, now, strict=True):
        cells = zip(old.split("|"), new.split("|"), strict=False)
        rows.append("|".join(a if a == b else f" {a.strip()} → {b.strip()} " for a, b in cells))
    return rows


def compare(rev: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        then = snapshot(rev, Path(tmp))
        (then / "notebooks").symlink_to(ROOT / "notebooks")       # the lesson functions' stored notebooks
        print(f"# The drawing's figures: the helpers at {rev} → today's (torch {torch.__version__})\n")
        for name in DRAWING:          # each twice, in the order then, now, now, then; the faster of each cell kept
            first, second, third, fourth = (rows_in_child(path, name) for path in (then, ROOT, ROOT, then))
            print("\n".join(beside(fastest([first, fourth]), fastest([second, third]))) + "\n", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", help="a commit whose helpers to measure beside today's (the drawing only)")
    args = parser.parse_args()
    if args.before:
        compare(args.before)
        return
    torch.manual_seed(0)
    graphviz = subprocess.run(["dot", "-V"], capture_output=True, text=True).stderr.strip()
    print(f"# Benchmark (torch {torch.__version__}, torchviz 0.0.3, {graphviz})\n")
    for part in (big_graphs, real_models, shape_rows, big_walks, redraw, memory, check_rows, nbval_times):
        print("\n".join(in_a_big_stack(part)) + "\n", flush=True)
    print("\n".join(in_page_rows()) + "\n", flush=True)


if __name__ == "__main__":
    main()
