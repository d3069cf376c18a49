"""What runs inside a submission's sandbox (tools/classroom/grade_sandbox.py): execute
one probed notebook from a fresh kernel, cell by cell, each within its time
limit, and hand the executed notebook back.

    python -m tools.classroom.grade_run --cell-limit 60 < probed.ipynb > result.json

The notebook comes on stdin; the result, {"notebook": ..., "over_limit":
[cell ids], "ran": [cell ids], "stopped": "..."}, goes to stdout, which
nothing else writes (this process's own prints and the kernel's go to
stderr). A cell past its limit is interrupted and gets an error output
saying so; a kernel that does not stop after the interrupt, or dies, ends
the run there. `ran` lists the cells whose execution this process saw end.

This process is the sandbox's pid 1 and makes itself not dumpable before
the kernel starts: the kernel, the learner's code, runs as the same uid
but can neither open this process's descriptors (/proc/1/fd: the result
channel), nor read or write its memory, nor trace it, nor signal it (a pid
namespace's first process gets only the signals it handles, and it handles
none but SIGINT, which it ignores). What the kernel controls is what it
sends over its own channels: the outputs, which the grader takes as data
and nothing more."""

import argparse
import asyncio
import ctypes
import json
import os
import signal
import sys

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

GRACE = 10.0        # seconds a kernel has to stop after an interrupt
PR_SET_DUMPABLE = 4


def out_of_reach():
    """Make this process not dumpable (its /proc files root's, no ptrace by
    its own uid) and deaf to SIGINT; False where the kernel refuses."""
    signal.signal(signal.SIGINT, lambda number, frame: None)     # a handler, not SIG_IGN: the kernel gets the default
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _over(cell, limit):
    cell.setdefault("outputs", []).append(nbformat.v4.new_output(
        "error", ename="TimeLimit", evalue=f"the cell ran past its time limit of {limit:g} s and was interrupted",
        traceback=[]))


async def execute(nb, cell_limit):
    """Run every cell; returns (ids of cells over the limit, ids of the cells seen to end, why the run
    stopped or "")."""
    km = AsyncKernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(nb, km=km, timeout=None, allow_errors=True, record_timing=False,
                            resources={"metadata": {"path": os.getcwd()}})
    over, ran, stopped = [], [], ""
    client.reset_execution_trackers()
    async with client.async_setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            # not asyncio.wait_for: nbclient takes its cancellation for a dead kernel
            task = asyncio.ensure_future(client.async_execute_cell(cell, index, execution_count=index + 1))
            done, _ = await asyncio.wait({task}, timeout=cell_limit)
            if not done:
                over.append(cell.get("id"))
                await km.interrupt_kernel()
                done, _ = await asyncio.wait({task}, timeout=GRACE)      # the interrupted cell's reply
                _over(cell, cell_limit)
                if not done:
                    task.cancel()
                    stopped = (f"the kernel did not stop within {GRACE:g} s of interrupting cell {cell.get('id')}, "
                               "which ran past its time limit: the rest was not run")
                    break
            if task.exception() is not None:      # the kernel died: the rest is not run
                error = task.exception()
                stopped = f"the kernel stopped at cell {cell.get('id')}: {type(error).__name__} {str(error)[:200]}"
                break
            ran.append(cell.get("id"))
        client.set_widgets_metadata()
    return over, ran, stopped


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.classroom.grade_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell-limit", type=float, default=60.0)
    args = parser.parse_args(argv)
    hidden = out_of_reach()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                            # everything else printed goes to stderr
    sys.stdout = sys.stderr
    nb = nbformat.reads(sys.stdin.read(), as_version=4)
    over, ran, stopped = [], [], ""
    if not hidden:
        stopped = "the runner could not make itself not dumpable: nothing was run"
    else:
        try:
            over, ran, stopped = asyncio.run(execute(nb, args.cell_limit))
        except Exception as error:
            stopped = f"the run failed: {type(error).__name__} {str(error)[:300]}"
    out.write(json.dumps({"notebook": nb, "over_limit": over, "ran": ran, "stopped": stopped}))
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
