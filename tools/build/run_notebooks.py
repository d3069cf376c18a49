"""Re-execute notebooks in place, each from a fresh kernel in this Python
environment, saving outputs and widget state. An error output in a cell
without the `raises-exception` tag (or a tagged cell that did not raise)
stops the run and leaves that notebook unwritten. The tag is read by nbval
and by JupyterLab's Run All, which goes on past such a cell.

    python -m tools.build.run_notebooks [notebooks/01-....ipynb ...]
"""

import re
import sys
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

from tools.notebooks import notebook_paths

RAISES = "raises-exception"
ROOT = Path(__file__).resolve().parents[2]
# where a traceback names a file: a library's as from site-packages/, the collection's as
# from the repository's root, so no stored output holds the path of whoever ran it
MACHINE_PATHS = ((re.compile(r"/(?:[\w.+-]+/)*?(?:site|dist)-packages/"), "site-packages/"),
                 (re.compile(re.escape(f"{ROOT}/")), ""))


def raises(cell):
    """Whether the cell is tagged to raise on purpose."""
    return RAISES in cell.metadata.get("tags", [])


def output_text(cell):
    """A code cell's outputs as plain text (streams and text/plain)."""
    return "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in cell.outputs)


def execute(path):
    """Run one notebook; return it with fresh outputs."""
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(
        nb, km=km, timeout=600, allow_errors=True, store_widget_state=True, record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    return nb


def without_machine_paths(nb):
    """`nb` with the file paths in its error tracebacks made machine-free
    (MACHINE_PATHS). Only tracebacks: nbval compares a stream's text and an
    error's name and message, never the traceback, so what is compared stays
    exactly what the kernel printed."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                for pattern, replacement in MACHINE_PATHS:
                    output.traceback = [pattern.sub(replacement, line) for line in output.traceback]
    return nb


def problems(nb):
    """Cells whose errors do not match their `raises-exception` tags."""
    found = []
    for number, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        raised = any(out.output_type == "error" for out in cell.outputs)
        if raised != raises(cell):
            what = "raised without the raises-exception tag" if raised else "is tagged to raise but did not"
            found.append(f"cell {number} {what}: {cell.source.splitlines()[0] if cell.source else ''}")
    return found


def main(args):
    paths = [Path(a).resolve() for a in args] or notebook_paths()
    failed = False
    for path in paths:
        start = time.perf_counter()
        nb = execute(path)
        trouble = problems(nb)
        for line in trouble:
            print(f"{path.name}: {line}", file=sys.stderr)
        if trouble:
            failed = True
            continue
        nbformat.validate(without_machine_paths(nb))
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
