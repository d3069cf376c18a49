"""Each notebook executed once, compared two ways: by nbval's sanitized rules, then the same kernel messages
written as `make notebooks` writes them, which must equal the stored file byte for byte. nbval has no hook
for its messages: keep_nbvals_messages wraps IPyNbFile.get_kernel_message, and without them a notebook fails."""

import difflib
import inspect
import io

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionComplete
from nbval import kernel as nbval_kernel
from nbval.kernel import RunningKernel
from nbval.plugin import IPyNbFile

from tools.build import run_notebooks

KEPT = "_messages_kept_for_bytes"
# what is wrapped, as nbval 0.11 defines it: an upgrade that changes either fails at once
WRAPPED = ((IPyNbFile, "get_kernel_message", ["self", "timeout", "stream"]),
           (RunningKernel, "execute_cell_input", ["self", "cell_input", "allow_stdin"]))
NAME = "byte for byte"


def keep_nbvals_messages():
    """Keep every iopub message nbval reads, on its IPyNbFile, and run cells with store_history=True as a notebook does
    (nbval's store_history=False numbers every cell 1 and writes "Cell In[1]" in every traceback), and start a
    kernel again when it dies as it starts."""
    read = IPyNbFile.get_kernel_message
    if getattr(read, "keeps", False):
        return
    for owner, name, parameters in WRAPPED:
        found = list(inspect.signature(getattr(owner, name)).parameters)
        if found != parameters:
            raise RuntimeError(f"nbval's {owner.__name__}.{name} is now {name}({', '.join(found)}): "
                               "tests/one_execution.py wraps it; read nbval's new code and wrap it again")

    def execute_cell_input(self, cell_input, allow_stdin=None):
        return self.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)

    RunningKernel.execute_cell_input = execute_cell_input

    def get_kernel_message(self, timeout=None, stream="iopub"):
        message = read(self, timeout=timeout, stream=stream)
        if stream == "iopub":
            self.__dict__.setdefault(KEPT, []).append(message)
        return message

    get_kernel_message.keeps = True
    IPyNbFile.get_kernel_message = get_kernel_message
    # a kernel that dies as it starts (a port taken between choice and bind) is started again, as make notebooks does
    nbval_kernel.start_new_kernel = run_notebooks.again_if_it_dies_starting(nbval_kernel.start_new_kernel)


def written(path, messages):
    """The notebook as `make notebooks` writes it from one kernel's iopub `messages` (ValueError: a cell not run)."""
    stored, nb = nbformat.read(path, as_version=4), nbformat.read(path, as_version=4)
    client = NotebookClient(nb, store_widget_state=True, record_timing=False)
    client.reset_execution_trackers()
    replies = {}
    for message in messages:
        replies.setdefault(message["parent_header"].get("msg_id"), []).append(message)
    runs = iter([m for m in messages if m["msg_type"] == "execute_input"])
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue                                   # nbclient runs no empty cell
        run = next((r for r in runs if r["content"]["code"] == cell.source), None)
        if run is None:
            raise ValueError(f"cell {index} was not executed")
        cell.outputs, cell.execution_count, client.clear_before_next_output = [], None, False
        if "nbval-ignore-output" in cell.metadata.get("tags", ()) and "time.perf_counter()" in cell.source:
            cell.outputs = stored.cells[index].outputs     # measured times: nbval ignores them too
            cell.execution_count = stored.cells[index].execution_count
            continue
        for message in replies[run["parent_header"]["msg_id"]]:
            try:
                client.process_message(message, cell, index)
            except CellExecutionComplete:
                break
    client.set_widgets_metadata()
    nb = run_notebooks.reproducible(run_notebooks.without_machine_paths(nb), stored, path.stem)
    nbformat.validate(nb)
    written = io.StringIO()
    nbformat.write(nb, written)             # as make notebooks writes the file
    return written.getvalue()


class ByteForByte(pytest.Item):
    def runtest(self):
        messages = self.parent.__dict__.get(KEPT)
        if not messages:
            pytest.fail(f"nbval's kernel messages for {self.path.name} were not kept: has nbval's "
                        "IPyNbFile.get_kernel_message changed? (tests/one_execution.py)")
        try:
            fresh = written(self.path, messages)
        except ValueError as error:
            pytest.fail(f"{self.path.name}: {error}: run all of the notebook's cells to compare it byte for byte")
        stored = self.path.read_text(encoding="utf-8")
        if fresh != stored:
            diff = list(difflib.unified_diff(stored.splitlines(), fresh.splitlines(), "stored", "executed again",
                                             lineterm="", n=1))
            pytest.fail(f"{self.path.name} changes when executed again ({len(diff)} diff lines; run make notebooks "
                        "and review the diff):\n" + "\n".join(diff[:40]))

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::{NAME}"


def add_items(items):
    last = {}
    for position, item in enumerate(items):
        if isinstance(item.parent, IPyNbFile):
            last[item.parent] = position
    for parent, position in sorted(last.items(), key=lambda pair: -pair[1]):
        items.insert(position + 1, ByteForByte.from_parent(parent, name=NAME))
