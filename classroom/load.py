"""`make load N=20`: N simulated learners on a class of its own (classroom/hub.py run as
make hub runs it, on free loopback ports, in build/load/, and ended as make hub
FORGET=1 ends one). Each logs in (spread over RAMP seconds),
starts a server, runs all of notebook 01 and changes each widget CHANGES times
(classroom/hub_learner.py); the class's figures and each failure are printed.

--url: the learners (NAMES00 ...) go to a running class hub, with HUB_PASSWORD or,
as root, its kept password; their Unix users and folders are removed at the end,
also on Ctrl-C or SIGTERM, so `make grade` never lists them."""

import argparse
import contextlib
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import time
from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from classroom import cgroups, deploy, hub_users
from classroom.hub import BUILD, LEARNERS, READY_WITHIN, ROOT, answering, cgroup_name, take_ctrl_c
from classroom.hub_learner import Learner
from tools.loopback import free_port

NOTEBOOK = "01-dynamic-control-flow.ipynb"
DEADLINE = 1200            # seconds for the whole run
USERS = "hubload-"         # the Unix users of the class load starts (removed at the end)
NAMES = "loadtest-"        # the simulated learners' names, in a class of their own or a running one
RAMP = 4.0                 # seconds over which the learners log in, as when a class starts together
PAUSE = 0.5                # seconds between a learner's widget changes (a person's pace)
GB = 1e9
IDLE_SECONDS = 10          # how long the idle class's CPU is measured


def tree(hub, name):
    """A learner's server process and what it started, oldest first, found by the
    folder it serves (a learner's Unix user, or the teacher's in a class not isolated)."""
    serving = f"--ServerApp.root_dir={hub.learners / name / 'my-notebooks'}"
    for process in psutil.process_iter(["cmdline"]):
        if serving in (process.info["cmdline"] or []):
            with contextlib.suppress(psutil.NoSuchProcess):
                return [process, *process.children(recursive=True)]
    return []


def total(processes, measure):
    """`measure(process)` summed over those of `processes` still running."""
    found = 0.0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            found += measure(process)
    return found


def cpu_seconds(processes):
    return total(processes, lambda process: sum(process.cpu_times()[:4]))


def idle_cpu(hub, names):
    """Percent of one core the learners' servers and kernels use while nobody does anything."""
    processes = [p for name in names for p in tree(hub, name)]      # none for a learner whose server failed
    for p in processes:
        p.cpu_percent()
    time.sleep(IDLE_SECONDS)
    return total(processes, psutil.Process.cpu_percent)


Class = namedtuple("Class", "url password learners")     # a class hub's address, its password, its learners' folder


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
    """A learner's session; fills `result`, and `opened` with the notebook (closed by the caller)."""
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
        processes = tree(hub, name)         # the server and everything it started
        result.rss = total(processes, lambda p: p.memory_info().rss)
        result.pss = total(processes, lambda p: p.memory_full_info().pss)
    except Exception as error:        # a failed learner is reported, the class goes on
        result.failure = f"{type(error).__name__}: {error}"


def change_widgets(notebook, changes, kernel, result):
    """Each widget changed `changes` times at a person's pace; redraws and kernel CPU into `result`."""
    before, count = cpu_seconds(kernel), 0
    for _ in range(changes):
        for comm_id, state in notebook.controls().items():
            time.sleep(PAUSE)
            redraw, count = notebook.change(comm_id, state), count + 1
            if redraw:
                result.redraws.append(redraw)
    result.redraw_cpu = (cpu_seconds(kernel) - before) / max(count, 1)


def learners_on(hub, n, changes, results, opened):
    """The class at once; returns the idle class's CPU %."""
    pool = ThreadPoolExecutor(max_workers=n)
    try:          # an interrupted run waits for no learner (their users are removed by the caller)
        futures = [pool.submit(one_learner, hub, r.name, RAMP * i / n, changes, r, opened)
                   for i, r in enumerate(results)]
        late = wait(futures, timeout=DEADLINE)[1]
        for future, result in zip(futures, results, strict=True):
            if future in late:
                result.failure = result.failure or f"not done within {DEADLINE} s"
        return idle_cpu(hub, [r.name for r in results])
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def remove_learners(names, learners):
    """The Unix users of a running class's learners `names` (found by their homes)
    and their folders in `learners` (not a link's target: rmtree refuses a link), as root."""
    homes = {os.path.realpath(Path(learners) / name) for name in names}
    hub_users.remove_users(lambda entry: os.path.realpath(entry.pw_dir) in homes)
    for name in names:
        shutil.rmtree(Path(learners) / name, ignore_errors=True)


def own_class(state, limit):
    """make hub's own command on free loopback ports, its hub's folder and learners' in
    `state`, each learner at `limit` GB: (its process, the Class, its environment, its
    ports, whether learners are isolated)."""
    shutil.rmtree(state, ignore_errors=True)
    learners = state / "learners"
    learners.mkdir(parents=True)
    learners.chmod(0o711)         # whatever the umask: the isolation check below must find it reachable
    why = hub_users.why_not_isolated(hub_users.class_paths(learners))
    ports = [free_port() for _ in range(3)]
    env = {**os.environ, "HUB_DIR": str(state / "hub"), "HUB_LEARNERS": str(learners), "HUB_MEM_LIMIT": f"{limit}G",
           "HUB_PASSWORD": secrets.token_urlsafe(12), "HUB_API_PORT": str(ports[1]),
           "HUB_PROXY_API_PORT": str(ports[2]), "HUB_USER_PREFIX": USERS}
    with open(state / "make-hub.log", "w") as log:
        hub = subprocess.Popen([sys.executable, "-m", "classroom.hub", "--port", str(ports[0]),
                                *(["--unisolated"] if why else [])], cwd=ROOT, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    return hub, Class(f"http://127.0.0.1:{ports[0]}", env["HUB_PASSWORD"], learners), env, ports, \
        "yes" if why is None else f"no: {why}"


def leftovers(uids, ports, state):
    """What is left of a class ended as FORGET=1 ends one: its learners' processes, sockets on its ports, cgroups."""
    running = [pid for uid in uids for pid in hub_users.user_processes(uid)]
    listening = [c.laddr.port for c in psutil.net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN and c.laddr.port in ports]
    group = cgroup_name(state / "hub")
    return running + listening + [str(p) for p in (cgroups.CGROUPS / "memory" / group, cgroups.CGROUPS / group)
                                  if p.exists()]


def run_class(n, changes, url=None, state=ROOT / "build" / "load"):
    """Run the class on a hub of its own, or the running one at `url`;
    returns (results, idle CPU %, what was left running)."""
    results = [Result(f"{NAMES}{i:02d}") for i in range(n)]
    opened = []
    if url:
        password = os.environ.get("HUB_PASSWORD") or (BUILD / "state" / "class-password").read_text().strip()
        try:
            idle = learners_on(Class(url, password, LEARNERS), n, changes, results, opened)
        finally:
            for notebook in opened:
                with contextlib.suppress(Exception):
                    notebook.close()
                    notebook.learner.stop()
            if os.geteuid() == 0:
                remove_learners([r.name for r in results], LEARNERS)
                print(f"removed the simulated learners' Unix users and folders in {LEARNERS}", flush=True)
            else:
                print(f"not root: the simulated learners {NAMES}00 ... keep their Unix users and folders in "
                      f"{LEARNERS}; as root: make hub FORGET=1 after the class", file=sys.stderr, flush=True)
        return results, idle, []
    fits = int((psutil.virtual_memory().total / GB - deploy.RESERVED_GB) / n * 20) / 20     # GB, to 0.05 below
    limit = min(deploy.memory_limit_gb(), fits)         # n learners at once here, at most the hub's default
    hub, class_, env, ports, isolated = own_class(state, limit)
    print(f"each learner's memory limit: {limit} GB ({n} learners fit); learners isolated: {isolated}")
    try:
        answering(class_.url, hub, state / "make-hub.log", READY_WITHIN * 5)     # the proxy's first install too
        idle = learners_on(class_, n, changes, results, opened)
        for notebook in opened:
            notebook.disconnect()
    finally:
        uids = hub_users.class_uids(class_.learners)
        subprocess.run([sys.executable, "-m", "classroom.hub", "--remove-users"], cwd=ROOT, env=env,
                       capture_output=True, timeout=300)
        with contextlib.suppress(subprocess.TimeoutExpired):
            hub.wait(timeout=60)
    left = ([hub.pid] if hub.poll() is None else []) + leftovers(uids, ports, state)
    shutil.rmtree(state, ignore_errors=True)
    return results, idle, left


def redraw_cell(redraws):
    """'p50 / p95' in ms of the redraws' times, from the change sent to the new drawing received."""
    p = statistics.quantiles(redraws, n=100, method="inclusive") if len(redraws) > 1 else redraws * 99
    return f"{1000 * p[49]:.0f} / {1000 * p[94]:.0f}" if p else "-"


SUMMARY_HEAD = ("| learners | start median / max (s) | start CPU (s) | Run All median / max (s) | Run All CPU (s) "
                "| redraw p50 / p95 (ms) | CPU per redraw (ms) | RSS per learner (GB) | PSS per learner (GB) "
                "| idle class CPU | failed |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def summary_row(results, idle):
    done = [r for r in results if not r.failure]

    def spread(values, scale=1.0, fmt=".1f"):
        values = [v for v in values if v == v]
        return f"{statistics.median(values) / scale:{fmt}} / {max(values) / scale:{fmt}}" if values else "-"

    def median(values, scale=1.0, fmt=".1f"):
        values = [v for v in values if v == v]
        return f"{statistics.median(values) * scale:{fmt}}" if values else "-"

    cells = [len(results), spread(r.start for r in results), median(r.start_cpu for r in results),
             spread(r.run_all for r in results), median(r.run_cpu for r in results),
             redraw_cell([d for r in results for d in r.redraws]), median((r.redraw_cpu for r in results), 1000),
             spread((r.rss for r in done), GB, ".2f"), spread((r.pss for r in done), GB, ".2f"),
             f"{idle:.1f} % of a core", f"{len(results) - len(done)} of {len(results)}"]
    return "| " + " | ".join(map(str, cells)) + " |"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m classroom.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=20, help="learners (1 to 100)")
    parser.add_argument("--changes", type=int, default=3, help="changes of each widget per learner")
    parser.add_argument("--url", help="a running class hub's address (make hub), instead of one of its own")
    args = parser.parse_args(argv)
    if args.url and not (os.environ.get("HUB_PASSWORD") or os.access(BUILD / "state" / "class-password", os.R_OK)):
        parser.error("--url needs the hub's class password: set HUB_PASSWORD=..., or run as root on the hub's "
                     "machine (it is kept in build/hub/state/class-password)")
    if not 1 <= args.n <= 100 or not 0 <= args.changes <= 20:
        parser.error("-n must be 1 to 100 and --changes 0 to 20")
    print(f"{psutil.cpu_count()} cores, {psutil.virtual_memory().total / GB:.0f} GB, "
          f"load average {os.getloadavg()[0]:.1f}")
    take_ctrl_c()
    try:
        results, idle, left = run_class(args.n, args.changes, args.url)
    except KeyboardInterrupt:    # the learners were removed on the way out
        print("make load: interrupted; its learners and their servers are removed", file=sys.stderr, flush=True)
        os._exit(130)           # learners' threads still waiting on the hub are not waited for
    failures = [f"{r.name} failed: {r.failure}" for r in results if r.failure]
    print(SUMMARY_HEAD, summary_row(results, idle), *failures, sep="\n")
    print("left running or listening after the hub stopped:", left or "nothing")
    return 1 if left or any(r.failure for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
