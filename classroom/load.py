"""`make load N=20`: a class of N simulated learners on the class hub
(classroom/hub.py, on free loopback ports, a fresh state under build/hub/load/).
Each logs in (the logins spread over RAMP seconds, as a class does), starts
a server, opens notebook 01 with a kernel, runs all its cells over the
kernel's websocket and changes each of its widgets CHANGES times through the
ipywidgets comm protocol (classroom/hub_learner.py). Printed: per learner the
start time, the Run All time, the redraw p50 / p95 split into the kernel's
part and the transport's, the memory of their server and kernel (RSS, and
PSS, which counts pages shared between processes once), failures; then the
class's summary and the CPU the idle class uses.

    python -m classroom.load [-n 20] [--ramp 4] [--changes 3]
    python -m classroom.load --url http://127.0.0.1:8000 [-n 20]   a running class hub
    python -m classroom.load --sequence [--keep-kernels]

--url: the learners go to a class hub already running (`make hub`), with the
class password of HUB_PASSWORD, or, run as root on the hub's machine, the one
it keeps (build/hub/state/class-password). No admin token is needed: memory
and CPU are read from the processes of each learner's Unix user (on the hub's
machine only), and each learner stops their own server at the end. Its
learners are named NAMES00, NAMES01 ... (no learner of a class is): at the
end, also when interrupted (Ctrl-C, SIGTERM), their Unix users and their
folders in the class's hub-learners/ are removed (as root on the hub's
machine), so `make grade` never lists them.
The hub load starts itself runs each learner at the memory limit that lets N
of them run at once (at most the hub's default), as Unix users hubload-NN
removed at the end.

--sequence: one learner goes through every notebook, closing each as
JupyterLab does with kernelShutdown on (or keeping each kernel, as before
that setting), with the learner's memory after each.

Bounded: every step has a timeout, the whole run DEADLINE seconds; the hub
and everything it started are stopped at the end, failed or not."""

import argparse
import contextlib
import os
import pwd
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from classroom import deploy, hub_users
from classroom.hub import BUILD, LEARNERS, Hub
from classroom.hub_learner import Learner
from classroom.load_measure import GB, cpu_seconds, idle_cpu, memory, tree
from classroom.load_sequence import sequence, sequence_table

NOTEBOOK = "01-dynamic-control-flow.ipynb"
DEADLINE = 1200            # seconds for the whole run
KEEP_LIMIT = "6G"          # --sequence --keep-kernels: every notebook's kernel at once (3.5 GB measured)
USERS = "hubload-"         # the Unix users of the hub load starts (removed at the end)
NAMES = "loadtest-"        # the simulated learners' names, in a class of their own or a running one


@dataclass
class RunningHub:
    """A class hub load did not start: its URL and class password (no token)."""

    url: str
    password: str
    prefix: str = hub_users.PREFIX
    token: None = None

    def leftovers(self):
        return []
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


def class_limit(n, machine_gb=None):
    """The memory limit (GB) that lets n learners run at once on this
    machine, at most the hub's default (deploy.memory_limit_gb)."""
    machine_gb = machine_gb or psutil.virtual_memory().total / GB
    fits = int((machine_gb - deploy.RESERVED_GB) / n * 20) / 20        # rounded down to 0.05 GB
    return min(deploy.memory_limit_gb(), fits)


def learners_on(hub, n, ramp, changes, results, opened):
    pool = ThreadPoolExecutor(max_workers=n)
    try:          # an interrupted run waits for no learner (their users are removed by the caller)
        futures = [pool.submit(one_learner, hub, r.name, ramp * i / n, changes, r, opened)
                   for i, r in enumerate(results)]
        _, late = wait(futures, timeout=DEADLINE)
        for future, result in zip(futures, results, strict=True):
            if future in late:
                result.failure = result.failure or f"not done within {DEADLINE} s"
        return idle_cpu(hub, [r.name for r in results])
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


class Interrupted(Exception):
    """SIGTERM to make load: handled as Ctrl-C is."""


def _interrupted(*_):
    raise Interrupted


def remove_learners(names, learners):
    """The Unix users of a running class's learners `names` and their
    folders in `learners` (the class's hub-learners/), as root; returns
    the names removed. Each user is found by its home, whatever prefix the
    class gives its users; what they still run is killed first."""
    homes = {os.path.realpath(Path(learners) / name): name for name in names}
    removed = []
    for entry in pwd.getpwall():
        name = homes.get(os.path.realpath(entry.pw_dir))
        if name and entry.pw_gecos == hub_users.LEARNER:
            hub_users.kill_user(entry.pw_uid)
            hub_users.stop_all(lambda uid=entry.pw_uid: hub_users.user_processes(uid))
            subprocess.run(["userdel", entry.pw_name], capture_output=True, timeout=60)
            removed.append(name)
    for name in names:
        home = Path(learners) / name
        if home.is_dir() and not home.is_symlink():
            shutil.rmtree(home, ignore_errors=True)
            if name not in removed:
                removed.append(name)
    return removed


class LoadAverage:
    """The machine's 1-minute load average sampled every `every` seconds
    while the class runs: `str()` is "before / mean / max" of the samples."""

    def __init__(self, every=2.0):
        self.before, self.samples, self.every = os.getloadavg()[0], [], every
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._done.wait(self.every):
            self.samples.append(os.getloadavg()[0])

    def stop(self):
        self._done.set()
        self._thread.join()
        return self

    def __str__(self):
        during = self.samples or [self.before]
        return f"{self.before:.1f} / {statistics.mean(during):.1f} / {max(during):.1f}"


def isolation(learners):
    """'yes' where the hub isolates its learners here (the check make hub
    runs), else 'no: why' (the hub then runs unisolated, as UNISOLATED=1)."""
    Path(learners).mkdir(parents=True, exist_ok=True)
    Path(learners).chmod(0o711)
    why = hub_users.why_not_isolated(hub_users.class_paths(learners))
    os.environ["HUB_ISOLATE"] = "0" if why else "1"
    return "yes" if why is None else f"no: {why}"


def run_class(n, ramp, changes, state=BUILD / "load", url=None):
    """Run the class (on a hub of its own, or the running one at `url`);
    returns (results, idle CPU %, the load average before, during and at
    its peak, what was left running)."""
    load = LoadAverage()
    results = [Result(f"{NAMES}{i:02d}") for i in range(n)]
    opened = []
    if url:
        password = os.environ.get("HUB_PASSWORD") or (BUILD / "state" / "class-password").read_text().strip()
        hub = RunningHub(url, password)
        try:
            idle = learners_on(hub, n, ramp, changes, results, opened)
        finally:
            for notebook in opened:
                with contextlib.suppress(Exception):
                    notebook.close()
                    notebook.learner.stop()
            names = [r.name for r in results]
            if os.geteuid() == 0:
                removed = remove_learners(names, LEARNERS)
                print(f"removed the simulated learners' Unix users and folders in {LEARNERS}: {len(removed)} of "
                      f"{len(names)}", flush=True)
            else:
                print(f"not root: the simulated learners {NAMES}00 ... keep their Unix users and folders in "
                      f"{LEARNERS}; as root: make hub FORGET=1 after the class", file=sys.stderr, flush=True)
        return results, idle, load.stop(), []
    limit = class_limit(n)
    os.environ.update(HUB_MEM_LIMIT=f"{limit}G", HUB_USER_PREFIX=USERS)
    isolated = isolation(fresh(state) / "learners")
    print(f"each learner's memory limit: {limit} GB ({n} learners fit); learners isolated: {isolated}")
    try:
        with Hub(state) as hub:
            hub.prefix = USERS
            idle = learners_on(hub, n, ramp, changes, results, opened)
            for notebook in opened:
                notebook.disconnect()
    finally:
        hub_users.remove_users(USERS)
    shutil.rmtree(state, ignore_errors=True)
    return results, idle, load.stop(), hub.leftovers()


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
                "| PSS per learner (GB) | idle class CPU | failed | load average before / during / max |\n"
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def summary_row(results, idle, load):
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
            f"{load} |")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m classroom.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=20, help="learners (1 to 100)")
    parser.add_argument("--ramp", type=float, default=4.0, help="seconds over which the learners log in")
    parser.add_argument("--changes", type=int, default=3, help="changes of each widget per learner")
    parser.add_argument("--sequence", action="store_true", help="one learner through every notebook")
    parser.add_argument("--keep-kernels", action="store_true", help="with --sequence: never close a notebook")
    parser.add_argument("--url", help="a running class hub's address (make hub), instead of one of its own")
    args = parser.parse_args(argv)
    if args.url and not (os.environ.get("HUB_PASSWORD") or os.access(BUILD / "state" / "class-password", os.R_OK)):
        parser.error("--url needs the hub's class password: set HUB_PASSWORD=..., or run as root on the hub's "
                     "machine (it is kept in build/hub/state/class-password)")
    if not 1 <= args.n <= 100 or not 0 <= args.changes <= 20:
        parser.error("-n must be 1 to 100 and --changes 0 to 20")
    print(f"{psutil.cpu_count()} cores, {psutil.virtual_memory().total / GB:.0f} GB, "
          f"load average {os.getloadavg()[0]:.1f}")
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        return run(args)
    except (KeyboardInterrupt, Interrupted):    # the learners were removed on the way out
        print("make load: interrupted; its learners and their servers are removed", file=sys.stderr, flush=True)
        os._exit(130)           # learners' threads still waiting on the hub are not waited for


def run(args):
    if args.sequence:
        # every kernel kept: 0.15 GB and 0.45 GB a notebook, past the default limit (KEEP_LIMIT)
        os.environ.update(HUB_USER_PREFIX=USERS, **({"HUB_MEM_LIMIT": KEEP_LIMIT} if args.keep_kernels else {}))
        try:
            rows, left = sequence(args.keep_kernels, BUILD / "load")
        finally:
            hub_users.remove_users(USERS)
        print(sequence_table(rows, args.keep_kernels))
        failed = any(row[-1] for row in rows)
    else:
        results, idle, load, left = run_class(args.n, args.ramp, args.changes, url=args.url)
        print(learner_table(results), "", SUMMARY_HEAD, summary_row(results, idle, load), sep="\n")
        failed = any(r.failure for r in results)
    print("left running or listening after the hub stopped:", left or "nothing")
    return 1 if failed or left else 0


if __name__ == "__main__":
    sys.exit(main())
