"""Inside a submission's sandbox: run the notebook on stdin with nbclient from
a fresh kernel, each cell within its time limit; on stdout, {"notebook",
"verdicts": {check cell id: [lines]}, "raised": {cell id: "Name: value"},
"over_limit": [cell ids], "stopped"}. The checks append their verdicts to
GRAPH_NOTEBOOKS_RESULTS (helpers/exercises/session.py, `report`), a file in
the private /tmp read after every cell, bounded, without following a link."""

import asyncio
import contextlib
import json
import os
import sys
import tempfile

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

from helpers.exercises.session import RESULTS
from tools.notebooks import CHECK

GRACE = 10.0            # seconds a kernel has to stop after an interrupt
LINES_CAP = 2 ** 16     # bytes of verdicts read after one check cell
LINES = 8               # verdict lines kept from one check cell


def read_new(path, offset):
    """(the verdict lines added to `path` since `offset`, the new offset: its end)."""
    try:
        with open(path, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK | os.O_NOFOLLOW)) as file:
            file.seek(offset)
            data, end = file.read(LINES_CAP), os.fstat(file.fileno()).st_size
    except OSError:         # gone, a link or a FIFO: the learner's code made it so, for their grade alone
        return [], offset
    lines = []
    for raw in data.split(b"\n")[:LINES]:
        with contextlib.suppress(ValueError, AttributeError, RecursionError):      # not a verdict: skipped
            line = json.loads(raw)
            lines += [{k: str(line.get(k, ""))[:2000] for k in ("notebook", "exercise", "status", "message")}]
    return lines, end


async def execute(nb, cell_limit, results, found):
    """Run every code cell, filling `found` as it goes (what a failure leaves is kept)."""
    km = AsyncKernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(nb, km=km, timeout=None, allow_errors=True, record_timing=False,
                            resources={"metadata": {"path": os.getcwd()}})
    verdicts, over, offset = found["verdicts"], found["over_limit"], 0
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
                done, _ = await asyncio.wait({task}, timeout=GRACE)
                cell.setdefault("outputs", []).append(nbformat.v4.new_output(
                    "error", ename="TimeLimit", evalue=f"past its time limit of {cell_limit:g} s", traceback=[]))
                if not done:
                    task.cancel()
                    found["stopped"] = f"the kernel did not stop within {GRACE:g} s of an interrupt at {cell.get('id')}"
                    break
            if task.exception() is not None:
                found["stopped"] = f"the kernel stopped at cell {cell.get('id')}: {type(task.exception()).__name__}"
                break
            lines, offset = read_new(results, offset)
            if CHECK in cell.get("metadata", {}).get("tags", []):
                verdicts[cell.get("id")] = lines


def raised(nb):
    """{cell id: "Name: value"} of the cells that ended in an error."""
    errors = {c.get("id"): [o for o in c.get("outputs", []) if o.get("output_type") == "error"] for c in nb.cells}
    return {k: f"{e[0].get('ename')}: {str(e[0].get('evalue'))[:300]}" for k, e in errors.items() if e}


def main():
    cell_limit = float(sys.argv[1])         # seconds; classroom/grade.py runs it
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                            # everything else printed goes to stderr
    sys.stdout = sys.stderr
    nb = nbformat.reads(sys.stdin.read(), as_version=4)
    handle, results = tempfile.mkstemp(prefix="verdicts-", suffix=".jsonl")
    os.close(handle)
    os.environ[RESULTS] = results            # the kernel inherits it
    found = {"verdicts": {}, "over_limit": [], "stopped": ""}
    try:
        asyncio.run(execute(nb, cell_limit, results, found))
    except Exception as error:  # noqa: BLE001 (said in the result: what is not judged is not graded)
        found["stopped"] = f"the run failed: {type(error).__name__} {str(error)[:300]}"
    out.write(json.dumps({"notebook": nb, "raised": raised(nb), **found}))
    out.close()
    sys.stderr.flush()
    # Out at once: the sandbox's end (its pid namespace) then ends whatever the notebook left. An exit that
    # tidies up first could wait on the threads of a kernel whose fork bomb had taken every task left, and
    # did, to the wall limit (3 runs of 4 of the hostile class's fork bomb: 62 s against a 60 s wall).
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
