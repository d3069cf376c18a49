"""`make load N=20`: a class of N simulated learners on the class hub
(tools/classroom/hub.py, on free loopback ports, a fresh state under build/hub/load/).
Each logs in (the logins spread over RAMP seconds, as a class does), starts
a server, opens notebook 01 with a kernel, runs all its cells over the
kernel's websocket and changes each of its widgets CHANGES times through the
ipywidgets comm protocol (tools/classroom/hub_learner.py). Printed: per learner the
start time, the Run All time, the redraw p50 / p95 split into the kernel's
part and the transport's, the memory of their server and kernel (RSS, and
PSS, which counts pages shared between processes once), failures; then the
class's summary and the CPU the idle class uses.

    python -m tools.classroom.load [-n 20] [--ramp 4] [--changes 3]
    python -m tools.classroom.load --sequence [--keep-kernels]

--sequence: one learner goes through every notebook, closing each as
JupyterLab does with kernelShutdown on (or keeping each kernel, as before
that setting), with the learner's memory after each.

Bounded: every step has a timeout, the whole run DEADLINE seconds; the hub
and everything it started are stopped at the end, failed or not."""

import argparse
import os
import shutil
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import psutil

from tools.classroom.hub import BUILD, Hub
from tools.classroom.hub_learner import Learner
from tools.classroom.load_measure import GB, cpu_seconds, idle_cpu, memory, tree
from tools.classroom.load_sequence import sequence, sequence_table

NOTEBOOK = "01-dynamic-control-flow.ipynb"
DEADLINE = 1200            # seconds for the whole run
PAUSE = 0.5                # seconds between a learner's widget changes (a person's pace)


@dataclass
class Result:
    name: str
    start: float = float("nan")
    run_all: float = float("nan")
    start_cpu: float = float("nan")     # CPU seconds of the server's start (its process and what it ran)
    run_cpu: float = float("nan")       # CPU seconds of the kernel's Run All
    redraw_cpu: float = float("nan")    # the kernel's CPU seconds per widget change
    redraws: list = field(default_factory=list)
    rss: float = float("nan")
    pss: float = float("nan")
    failure: str = ""


def one_learner(hub, name, delay, changes, result, opened):
    """A learner's session up to an idle notebook with its widgets changed;
    fills `result`, and `opened` with the notebook (closed by the caller)."""
    try:
        time.sleep(delay)
        learner = Learner(hub.url, name, hub.password)
        learner.login()
        result.start = learner.start()
        result.start_cpu = cpu_seconds(tree(hub, name)[:1])
        learner.enter()
        notebook = learner.open(NOTEBOOK)
        opened.append(notebook)
        kernel = tree(hub, name)[1:]
        before = cpu_seconds(kernel)
        result.run_all, raised = notebook.run_all()
        result.run_cpu = cpu_seconds(kernel) - before
        result.failure = "; ".join(raised)
        change_widgets(notebook, changes, kernel, result)
        result.rss, result.pss = memory(hub, name)
    except Exception as error:        # a failed learner is reported, the class goes on
        result.failure = f"{type(error).__name__}: {error}"


def change_widgets(notebook, changes, kernel, result):
    """Each widget changed `changes` times, at a person's pace; the redraws
    and the kernel's CPU per change go into `result`."""
    before, count = cpu_seconds(kernel), 0
    for _ in range(changes):
        for comm_id, state in notebook.controls().items():
            time.sleep(PAUSE)
            redraw, count = notebook.change(comm_id, state), count + 1
            if redraw:
                result.redraws.append(redraw)
    result.redraw_cpu = (cpu_seconds(kernel) - before) / max(count, 1)


def fresh(state):
    shutil.rmtree(state, ignore_errors=True)
    return state


def run_class(n, ramp, changes, state=BUILD / "load"):
    """Run the class; returns (results, idle CPU %, load average before)."""
    load_before = os.getloadavg()[0]
    results = [Result(f"learner{i:02d}") for i in range(n)]
    opened = []
    # the hub stops before the pool waits for its threads: a learner still waiting then fails at once
    with ThreadPoolExecutor(max_workers=n) as pool, Hub(fresh(state)) as hub:
        futures = [pool.submit(one_learner, hub, r.name, ramp * i / n, changes, r, opened)
                   for i, r in enumerate(results)]
        _, late = wait(futures, timeout=DEADLINE)
        for future, result in zip(futures, results, strict=True):
            if future in late:
                result.failure = result.failure or f"not done within {DEADLINE} s"
        idle = idle_cpu(hub, [r.name for r in results])
        for notebook in opened:
            notebook.ws.close()
    shutil.rmtree(state, ignore_errors=True)
    return results, idle, load_before, hub.leftovers()


def percentile(values, q):
    """The q-th percentile (0-100) of values, or nan when there are none."""
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def redraw_cells(redraws):
    """'p50 / p95' in ms of the totals, the kernel's parts, the transport's."""
    parts = ([r.total for r in redraws], [r.kernel for r in redraws], [r.total - r.kernel for r in redraws])
    return [f"{1000 * percentile(p, 50):.0f} / {1000 * percentile(p, 95):.0f}" for p in parts]


def learner_table(results):
    lines = ["| learner | start (s) | its CPU (s) | Run All (s) | its CPU (s) | redraws | redraw p50 / p95 (ms) "
             "| kernel | transport | RSS (GB) | PSS (GB) | failure |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        lines.append(f"| {r.name} | {r.start:.1f} | {r.start_cpu:.1f} | {r.run_all:.1f} | {r.run_cpu:.1f} | "
                     f"{len(r.redraws)} | "
                     + " | ".join(redraw_cells(r.redraws))
                     + f" | {r.rss / GB:.2f} | {r.pss / GB:.2f} | {r.failure or '-'} |")
    return "\n".join(lines)


SUMMARY_HEAD = ("| learners | start median / max (s) | start CPU (s) | Run All median / max (s) | Run All CPU (s) "
                "| redraw p50 / p95 (ms) | kernel | transport | CPU per redraw (ms) | RSS per learner (GB) "
                "| PSS per learner (GB) | idle class CPU | failed | load before |\n"
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def summary_row(results, idle, load_before):
    done = [r for r in results if not r.failure]
    starts = [r.start for r in results if r.start == r.start]
    runs = [r.run_all for r in results if r.run_all == r.run_all]
    rss = [r.rss for r in done if r.rss == r.rss]
    pss = [r.pss for r in done if r.pss == r.pss]

    def spread(values, scale=1.0, fmt=".1f"):
        return f"{statistics.median(values) / scale:{fmt}} / {max(values) / scale:{fmt}}" if values else "-"

    def median(values, scale=1.0, fmt=".1f"):
        values = [v for v in values if v == v]
        return f"{statistics.median(values) * scale:{fmt}}" if values else "-"

    return (f"| {len(results)} | {spread(starts)} | {median(r.start_cpu for r in results)} | {spread(runs)} | "
            f"{median(r.run_cpu for r in results)} | "
            + " | ".join(redraw_cells([d for r in results for d in r.redraws]))
            + f" | {median((r.redraw_cpu for r in results), 1000)} | {spread(rss, GB, '.2f')} | "
            f"{spread(pss, GB, '.2f')} | {idle:.1f} % of a core | {len(results) - len(done)} of {len(results)} | "
            f"{load_before:.1f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.classroom.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=20, help="learners (1 to 100)")
    parser.add_argument("--ramp", type=float, default=4.0, help="seconds over which the learners log in")
    parser.add_argument("--changes", type=int, default=3, help="changes of each widget per learner")
    parser.add_argument("--sequence", action="store_true", help="one learner through every notebook")
    parser.add_argument("--keep-kernels", action="store_true", help="with --sequence: never close a notebook")
    args = parser.parse_args(argv)
    if not 1 <= args.n <= 100 or not 0 <= args.changes <= 20:
        parser.error("-n must be 1 to 100 and --changes 0 to 20")
    print(f"{psutil.cpu_count()} cores, {psutil.virtual_memory().total / GB:.0f} GB, "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.sequence:
        rows, left = sequence(args.keep_kernels, BUILD / "load")
        print(sequence_table(rows, args.keep_kernels))
        failed = any(row[-1] for row in rows)
    else:
        results, idle, load_before, left = run_class(args.n, args.ramp, args.changes)
        print(learner_table(results), "", SUMMARY_HEAD, summary_row(results, idle, load_before), sep="\n")
        failed = any(r.failure for r in results)
    print("left running or listening after the hub stopped:", left or "nothing")
    return 1 if failed or left else 0


if __name__ == "__main__":
    sys.exit(main())
