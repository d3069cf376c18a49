"""`make load SEQUENCE=1` (python -m classroom.load --sequence): one learner on
the class hub goes through every notebook in order, running each, and
closes each as JupyterLab does with kernelShutdown on (the session and its
kernel shut down), or with --keep-kernels leaves each open, as before that
setting. The learner's memory after each notebook shows whether it stays
flat."""

import shutil

from classroom.hub import Hub
from classroom.hub_learner import Learner
from classroom.load_measure import GB, gone, kernel_rss, memory
from tools.runtime.working_copy import collection

NAN = float("nan")


def sequence(keep, state):
    """Rows of (notebook, Run All s, learner RSS and PSS with it open, its
    kernel's RSS, learner RSS and PSS after it is closed (or kept), cells
    that raised), and what was left running after the hub stopped."""
    shutil.rmtree(state, ignore_errors=True)
    with Hub(state) as hub:
        learner = Learner(hub.url, "learner00", hub.password)
        learner.login()
        learner.start()
        learner.enter()
        rows = [("(server only)", NAN, NAN, NAN, NAN, *memory(hub, learner.name), "")]
        for path in collection():
            notebook = learner.open(path.name)
            seconds, raised = notebook.run_all()
            kernel_id = notebook.session["kernel"]["id"]
            opened = (*memory(hub, learner.name), kernel_rss(hub, learner.name, kernel_id))
            if keep:
                notebook.disconnect()
            else:
                notebook.close()
                gone(hub, learner.name, kernel_id)
            rows.append((path.name, seconds, *opened, *memory(hub, learner.name), "; ".join(raised)))
    shutil.rmtree(state, ignore_errors=True)
    return rows, hub.leftovers()


def sequence_table(rows, keep):
    after = "kept open" if keep else "closed"
    lines = [f"| notebook | Run All (s) | learner RSS, open (GB) | PSS, open | its kernel's RSS | "
             f"learner RSS, {after} | PSS, {after} | errors |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, seconds, *sizes, raised in rows:
        cells = [_shown(seconds, 1, ".1f"), *(_shown(size, GB, ".2f") for size in sizes)]
        lines.append(f"| {name} | {' | '.join(cells)} | {raised or '-'} |")
    return "\n".join(lines)


def _shown(value, scale, fmt):
    return "-" if value != value else f"{value / scale:{fmt}}"
