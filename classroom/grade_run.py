"""What runs inside a submission's sandbox (classroom/grade_sandbox.py): execute
one probed notebook from a fresh kernel, cell by cell, each within its time
limit, and hand the executed notebook back.

    python -m classroom.grade_run --cell-limit 60 < probed.ipynb > result.json

The notebook comes on stdin; the result, {"notebook": ..., "over_limit":
[cell ids], "ran": [cell ids], "seen": {answer cell id: [what it left
behind]}, "stopped": "..."}, goes to stdout, which nothing else writes
(this process's own prints and the kernel's go to stderr). A cell past its limit is interrupted and gets an error output
saying so; a kernel that does not stop after the interrupt, or dies, ends
the run there. `ran` lists the cells whose execution this process saw end.

This process is the sandbox's pid 1 and makes itself not dumpable before
the kernel starts: the kernel, the learner's code, runs as the same uid
but can neither open this process's descriptors (/proc/1/fd: the result
channel), nor read or write its memory, nor trace it, nor signal it (a pid
namespace's first process gets only the signals it handles, and it handles
none but SIGINT, which it ignores). What the kernel controls is what it
sends over its own channels: the outputs, which the grader takes as data
and nothing more.

What the kernel's process holds is read here from outside it, in /proc,
before and after each answer cell (a cell tagged answer-slot), so no code
in the kernel can change the reading: the processes it started that are
still running, the sockets and files it opened and left open, the native
libraries it loaded. The grader flags each (classroom/grade.py); the
probe in the kernel reports what changed inside the interpreter, which the
answer's code could also rewrite (classroom/grade_source.py names
the ways in, read from the source in the grader's own process)."""

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

from tools.notebooks import SLOT

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


def _children(pid):
    """Every process below `pid`, as {pid: command name}."""
    found, todo = {}, [pid]
    while todo:
        parent = todo.pop()
        for task in _listing(f"/proc/{parent}/task"):
            for child in _read(f"/proc/{parent}/task/{task}/children").split():
                if child not in found:
                    found[child] = _command(child)
                    todo.append(child)
    return found


def _command(pid):
    """A process's command line, shortened (its name where it has none: a
    kernel thread, or one already gone). Not /proc/PID/comm: that is set a
    moment after the process that started this one goes on (vfork), and
    can still be the parent's name."""
    argv = _read(f"/proc/{pid}/cmdline").split("\0")
    return " ".join([os.path.basename(argv[0]), *argv[1:]]).strip()[:80] or _read(f"/proc/{pid}/comm").strip()


def _listing(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def _files(pid):
    """What the process's descriptors point at: (how many sockets, the files
    open), not pipes or anonymous descriptors."""
    sockets, files = 0, set()
    for fd in _listing(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        sockets += target.startswith("socket:")
        if target.startswith("/") and not target.startswith(("/dev/null", "/dev/urandom", "/proc/")):
            files.add(target)
    return sockets, files


def _libraries(pid):
    """The shared libraries mapped into the process."""
    fields = (line.split(None, 5) for line in _read(f"/proc/{pid}/maps").splitlines())
    return {f[5] for f in fields if len(f) == 6 and ".so" in f[5].rsplit("/", 1)[-1]}


def held(pid):
    """What a kernel process holds, read from /proc: (processes, sockets and files, libraries)."""
    return _children(pid), _files(pid), _libraries(pid)


def left_behind(before, after):
    """What an answer cell left behind, from `held` before and after it."""
    (procs, (sockets, files), libs), (procs2, (sockets2, files2), libs2) = before, after
    found = [f"left a process running: {name or pid}" for pid, name in sorted(procs2.items()) if pid not in procs]
    found += [f"left {sockets2 - sockets} more socket(s) open"] if sockets2 > sockets else []
    found += [f"left a file open: {f}"[:200] for f in sorted(files2 - files)]
    found += [f"loaded a native library: {lib}"[:200] for lib in sorted(libs2 - libs)]
    return found[:20]


def _over(cell, limit):
    cell.setdefault("outputs", []).append(nbformat.v4.new_output(
        "error", ename="TimeLimit", evalue=f"the cell ran past its time limit of {limit:g} s and was interrupted",
        traceback=[]))


async def execute(nb, cell_limit):
    """Run every cell; returns (ids of cells over the limit, ids of the cells seen to end, why the run
    stopped or "", {answer cell id: what it left behind})."""
    km = AsyncKernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(nb, km=km, timeout=None, allow_errors=True, record_timing=False,
                            resources={"metadata": {"path": os.getcwd()}})
    over, ran, stopped, seen = [], [], "", {}
    client.reset_execution_trackers()
    async with client.async_setup_kernel():
        pid = (await km.provisioner.get_provisioner_info()).get("pid") if km.provisioner else None
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            answer = pid is not None and SLOT in cell.get("metadata", {}).get("tags", [])
            before = held(pid) if answer else None
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
            if answer:
                seen[cell.get("id")] = left_behind(before, held(pid))
        client.set_widgets_metadata()
    return over, ran, stopped, seen


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m classroom.grade_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell-limit", type=float, default=60.0)
    args = parser.parse_args(argv)
    hidden = out_of_reach()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                            # everything else printed goes to stderr
    sys.stdout = sys.stderr
    nb = nbformat.reads(sys.stdin.read(), as_version=4)
    over, ran, stopped, seen = [], [], "", {}
    if not hidden:
        stopped = "the runner could not make itself not dumpable: nothing was run"
    else:
        try:
            over, ran, stopped, seen = asyncio.run(execute(nb, args.cell_limit))
        except Exception as error:
            stopped = f"the run failed: {type(error).__name__} {str(error)[:300]}"
    out.write(json.dumps({"notebook": nb, "over_limit": over, "ran": ran, "seen": seen, "stopped": stopped}))
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
