"""`make bench` (or .venv/bin/python -m tools.bench [PART ...]): one markdown
report of our drawing against torchviz, the shape corpus's layouts, a
200,003-node graph, memory over 1,000 redraws and every exercise check's time.
Each time is a median; the machine is shared, so compare ratios. Nothing asserts.
(Each widget's redraw, timed in the page, and each notebook's run are printed by
the browser tests and pytest's --durations.)
"""

import gc
import resource
import statistics
import subprocess
import sys
import threading
import time
import timeit
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import psutil
import torch
import torchviz

from helpers import draw_graph, lessons, trace_graph
from helpers.exercises import declared, exercises
from helpers.exercises.lesson import stored_definitions
from helpers.lessons.nb01 import branch_view
from helpers.svg import DotUnavailable, _laid_out
from tools.testkit.lessons import lesson_function
from tools.testkit.shapes import LOOPS, MAX_NODES, SHAPES, rnn

DOT_TIMEOUT = 30
dynamic_forward = lesson_function("01-dynamic-control-flow", "dynamic_forward")


def in_a_big_stack(part):
    """`part()` in a thread with a 512 MB stack: freeing a graph tens of
    thousands of nodes deep once torchviz walked it recurses in torch's C++
    deleter, past the usual 8 MB."""
    threading.stack_size(512 * 2**20)
    with ThreadPoolExecutor(1) as pool:
        rows = pool.submit(part).result()
    threading.stack_size(0)
    return rows


def timed(run, repeats):
    """(result, median seconds, median CPU seconds of child processes: dot's
    own work, which a loaded machine does not inflate), the layout cache
    cleared before each run."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        _laid_out.cache_clear()
        before, start = sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2]), time.perf_counter()   # user + system
        result = run()
        walls.append(time.perf_counter() - start)
        cpus.append(sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2]) - before)
    return result, statistics.median(walls), statistics.median(cpus)


def median_time(run, repeats):
    return timed(run, repeats)[1]


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


def shape_rows():
    """Every shape of the corpus at each max_nodes, the loops rolled too: the
    nodes drawn, the build, the layout and dot's CPU time; the slowest layout."""
    rows = ["| shape | max_nodes | view | nodes drawn | build | layout | dot's CPU |",
            "|---|---:|---|---:|---:|---:|---:|"]
    worst = (0.0, "")
    for name in SHAPES:
        for max_nodes in MAX_NODES:
            for roll in (False, True) if name in LOOPS else (False,):
                torch.manual_seed(0)
                root = SHAPES[name]()
                drawing, build, _ = timed(partial(draw_graph, root, max_nodes=max_nodes, roll=roll), 3)
                view = "rolled" if roll else "cut"
                try:
                    _, layout, cpu = timed(drawing.svg, 3)
                    laid = f"{layout:.3f} s | {cpu:.3f} s"
                except DotUnavailable:
                    layout, laid = float("inf"), "refused by dot | -"
                rows.append(f"| {name} | {max_nodes} | {view} | {len(drawing.graph.nodes)} | {build:.3f} s | {laid} |")
                worst = max(worst, (layout, f"{name}, max_nodes={max_nodes}, {view}"))
    rows.append(f"\nSlowest layout: {worst[0]:.3f} s ({worst[1]}); the target is under 1 s. dot's CPU time is what a "
                "quiet machine's layout takes; the layout column grows with the machine's load.")
    return rows


def big_walks():
    """What the size of a graph costs (each time after the first is of a graph walked before)."""
    w, h = rnn(100_000)
    pieces = list((torch.randn(20_000, requires_grad=True) * 2).unbind())
    short_w, short_h = rnn(1_000)
    short = median_time(lambda: draw_graph(short_h, {"W": short_w}), 7)
    long = median_time(lambda: draw_graph(h, {"W": w}), 7)
    runs = {"trace_graph, saved values read": lambda: trace_graph(h),
            "trace_graph(saved=False)": lambda: trace_graph(h, saved=False),
            "draw_graph(roll=True), the whole graph rolled": lambda: draw_graph(h, {"W": w}, roll=True),
            "draw_graph(max_nodes=None), DOT and text of all of it (no layout)":
                lambda: draw_graph(h, {"W": w}, max_nodes=None),
            "draw_graph (300 nodes drawn) + SVG": lambda: draw_graph(h, {"W": w}).svg(),
            "trace_graph of 20,000 unbind outputs as roots, max_nodes=300":
                lambda: trace_graph(pieces, max_nodes=300)}
    return ["| h = tanh(W @ h), T = 100,000 (200,003 nodes) | time |", "|---|---:|",
            *(f"| {name} | {median_time(run, 3):.3f} s |" for name, run in runs.items()),
            f"| draw_graph (300 nodes drawn), T = 1,000 / T = 100,000 | {short * 1000:.1f} ms / "
            f"{long * 1000:.1f} ms (ratio {long / short:.2f}) |"]


def redraw():
    def ours():
        x = torch.tensor(3.0, requires_grad=True)
        return draw_graph(dynamic_forward(x, True), {"x": x}).svg()

    def theirs():
        x = torch.tensor(3.0, requires_grad=True)
        return torchviz.make_dot(dynamic_forward(x, True), params={"x": x}).pipe(format="svg")

    cold, tv = median_time(ours, 21), median_time(theirs, 21)
    ours()                                              # the SVG cached (gc.enable(): timeit turns the GC off)
    warm = timeit.timeit(ours, "gc.enable()", number=21, globals={"gc": gc}) / 21
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


def checks():
    """Per notebook: its checks, each given its solution, the median, the slowest, the sum (what the checks add to
    nbval's run)."""
    rows = ["| notebook | checks | median check | slowest check | sum of medians |", "|---|---:|---:|---:|---:|"]
    total = 0.0
    for notebook in lessons.numbers():
        lesson = stored_definitions(notebook)
        ex, times = exercises(notebook, dict(lesson)), {}
        for exercise in declared(notebook):
            answer, check = exercise.reference(lesson), getattr(ex, f"q{exercise.number}").check
            check(answer)                       # the first check also loads the stored notebook
            times[exercise.number] = median_time(lambda check=check, answer=answer: check(answer), 5)
        total += sum(times.values())
        slowest = max(times, key=times.__getitem__)
        rows.append(f"| {notebook} | {len(times)} | {statistics.median(times.values()) * 1000:.1f} ms | "
                    f"{times[slowest] * 1000:.1f} ms (q{slowest}) | {sum(times.values()) * 1000:.0f} ms |")
    return [*rows, f"| all | | | | {total * 1000:.0f} ms |"]


PARTS = (big_graphs, shape_rows, big_walks, redraw, memory, checks)


def main(names):
    """Every part, or those named: python -m tools.bench redraw checks."""
    torch.manual_seed(0)
    graphviz = subprocess.run(["dot", "-V"], capture_output=True, text=True).stderr.strip()
    print(f"# Benchmark (torch {torch.__version__}, torchviz 0.0.3, {graphviz})\n")
    for part in PARTS:
        if not names or part.__name__ in names:
            print("\n".join(in_a_big_stack(part)) + "\n", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
