"""What runs inside a submission's sandbox (tools/classroom/sandbox.py): execute
one probed notebook from a fresh kernel, cell by cell, each within its time
limit, and hand the executed notebook back.

    python -m tools.classroom.grade_run --cell-limit 60 < probed.ipynb > result.json

The notebook comes on stdin; the result, {"notebook": ..., "over_limit":
[cell ids], "stopped": "..."}, goes to stdout, which nothing else writes
(this process's own prints and the kernel's go to stderr). A cell past its
limit is interrupted and gets an error output saying so; a kernel that
does not stop after the interrupt, or dies, ends the run there. This is
the code under the learner's reach: the grader trusts nothing of its
result but as data, and its own watchdog bounds the whole sandbox."""

import argparse
import asyncio
import json
import os
import sys

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

GRACE = 10.0        # seconds a kernel has to stop after an interrupt


def _over(cell, limit):
    cell.setdefault("outputs", []).append(nbformat.v4.new_output(
        "error", ename="TimeLimit", evalue=f"the cell ran past its time limit of {limit:g} s and was interrupted",
        traceback=[]))


async def execute(nb, cell_limit):
    """Run every cell; returns (ids of cells over the limit, why the run stopped or "")."""
    km = AsyncKernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(nb, km=km, timeout=None, allow_errors=True, record_timing=False,
                            resources={"metadata": {"path": os.getcwd()}})
    over, stopped = [], ""
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
        client.set_widgets_metadata()
    return over, stopped


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.classroom.grade_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell-limit", type=float, default=60.0)
    args = parser.parse_args(argv)
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                            # everything else printed goes to stderr
    sys.stdout = sys.stderr
    nb = nbformat.reads(sys.stdin.read(), as_version=4)
    try:
        over, stopped = asyncio.run(execute(nb, args.cell_limit))
    except Exception as error:
        over, stopped = [], f"the run failed: {type(error).__name__} {str(error)[:300]}"
    out.write(json.dumps({"notebook": nb, "over_limit": over, "stopped": stopped}))
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
