"""Re-execute notebooks in place, each from a fresh kernel, saving outputs
and widget state. An error in a cell not tagged `raises-exception` (or a
tagged cell that did not raise) leaves that notebook unwritten. What is
written is reproducible (`reproducible`; docs/maintaining.md, "Stored
outputs are real").

    python -m tools.build.run_notebooks [03 | notebooks/03-....ipynb ...]
"""

import json
import re
import sys
import time
import uuid
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

from tools.notebooks import RAISES, WIDGET_VIEW, model_references, notebook_paths, widget_state
from tools.runtime import kernel

ROOT = Path(__file__).resolve().parents[2]
# where a traceback names a file: a library's as from site-packages/, the collection's as
# from the repository's root, so no stored output holds the path of whoever ran it
MACHINE_PATHS = ((re.compile(r"/(?:[\w.+-]+/)*?(?:site|dist)-packages/"), "site-packages/"),
                 (re.compile(re.escape(f"{ROOT}/")), ""))


# a memory address: as Python prints one (0x7f...), or as a drawing names a node by id(),
# in decimal (torchviz's 140670413256928)
ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b|\b\d{12,}\b")
NAMESPACE = uuid.UUID("6f1c8f57-3f1e-4c52-9a55-3a1b2b1e0c34")   # the collection's, for uuid5


def raises(cell):
    return RAISES in cell.metadata.get("tags", [])


def output_text(cell):
    return "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in cell.outputs)


NO_START = "Kernel died before replying to kernel_info"
STARTS = 3      # kernels started for one notebook at most, when each ends so


def again_if_it_dies_starting(start):
    """`start` (which starts a kernel), called again when the kernel dies as it
    starts (NO_START: a port taken between choice and bind), up to STARTS times.
    nbval's kernels start through it too (tests/one_execution.py)."""
    def started(*args, **kwargs):
        for attempt in range(1, STARTS + 1):
            try:
                return start(*args, **kwargs)
            except RuntimeError as error:
                if NO_START not in str(error) or attempt == STARTS:
                    raise
                print(f"the kernel died as it started ({error}); starting another", file=sys.stderr)
    return started


@again_if_it_dies_starting
def execute(path):
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name=kernel.NAME, kernel_spec_manager=kernel.Specs())
    NotebookClient(nb, km=km, timeout=600, allow_errors=True, store_widget_state=True, record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def without_machine_paths(nb):
    """`nb` with its tracebacks' file paths made machine-free (MACHINE_PATHS).
    nbval never compares a traceback, so what is compared stays as printed."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                for pattern, replacement in MACHINE_PATHS:
                    output.traceback = [pattern.sub(replacement, line) for line in output.traceback]
    return nb


def stable_widget_ids(nb, name):
    """`nb` with each widget model's random id replaced by one made from where
    it is shown (the cell's id, the output's place, the path through the states
    naming it), so a run again, or a change to another cell, keeps the ids."""
    state = widget_state(nb)
    if not state:
        return nb
    names = {}

    def name_from(model, where):
        pending = [(model, where)]
        while pending:
            model, where = pending.pop(0)
            if model in names:
                continue
            names[model] = where
            pending += [(child, f"{where}/{path}") for path, child in model_references(state[model].get("state", {}))
                        if child in state]

    for cell in nb.cells:
        for place, output in enumerate(cell.get("outputs", [])):
            model = output.get("data", {}).get(WIDGET_VIEW, {}).get("model_id")
            if model in state:
                name_from(model, f"{cell.get('id', '')}/{place}/model_id")
    for order, model in enumerate(state):
        name_from(model, f"shown nowhere/{order}")
    text = json.dumps(nb)
    for model, where in names.items():
        text = text.replace(model, uuid.uuid5(NAMESPACE, f"{name}/{where}").hex)
    return nbformat.from_dict(json.loads(text))


def _without_addresses(value):
    return ADDRESS.sub("0xADDRESS", json.dumps(value, sort_keys=True))


def reproducible(nb, stored, name):
    """The freshly executed `nb` as written: stable widget ids, each run of
    outputs to one stream joined (however flushes cut it), no run number on a
    cell without outputs, and `stored`'s text kept where outputs (or the widget
    state) differ from it only in memory addresses."""
    nb, _ = CoalesceStreamsPreprocessor().preprocess(stable_widget_ids(nb, name), {})
    before = {cell.get("id"): cell for cell in (stored.cells if stored else [])}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if not cell.outputs:
            cell.execution_count = None
        old = before.get(cell.get("id"))
        if old and old.cell_type == "code" and _without_addresses(old.outputs) == _without_addresses(cell.outputs):
            cell.outputs = old.outputs
    if stored is not None:
        old_state, new_state = stored.metadata.get("widgets"), nb.metadata.get("widgets")
        if old_state is not None and _without_addresses(old_state) == _without_addresses(new_state):
            nb.metadata["widgets"] = old_state
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


def named(arg):
    """The notebook `arg` names: its path, or its number (3 or 03)."""
    if arg.isascii() and arg.isdigit():
        found = [path for path in notebook_paths() if path.name.startswith(f"{int(arg):02d}-")]
        if not found:
            raise SystemExit(f"make notebooks NB={arg}: no notebook numbered {arg} in notebooks/ "
                             "(NB=03 runs notebooks/03-*.ipynb)")
        return found[0]
    if not (arg.endswith(".ipynb") and Path(arg).is_file()):
        raise SystemExit(f"make notebooks NB={arg}: no such file (NB=03, or NB=notebooks/03-....ipynb)")
    return Path(arg).resolve()


def main(args):
    paths = [named(a) for a in args] or notebook_paths()
    failed = False
    for path in paths:
        start = time.perf_counter()
        stored = nbformat.read(path, as_version=4)
        nb = execute(path)
        trouble = problems(nb)
        for line in trouble:
            print(f"{path.name}: {line}", file=sys.stderr)
        if trouble:
            failed = True
            continue
        nb = reproducible(without_machine_paths(nb), stored, path.stem)
        nbformat.validate(nb)
        nbformat.write(nb, path)
        print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
