"""Run a notebook the way Google Colab or a download meets it: copied alone
into an empty folder, in a venv that links this one's site-packages but for
what Colab lacks or has at another version (ipywidgets 7 and torchviz, from
colab-requirements.txt, and this repository). Its set-up cell must install
the collection from GitHub's address, which git (url.<base>.insteadOf)
fetches from a local repository of this checkout."""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbval.plugin import get_sanitize_patterns

from helpers.project import repository_url
from tools.build.nav import INSTALL
from tools.testkit.other_torch import purelib

ROOT = Path(__file__).resolve().parents[2]
COLAB = Path(__file__).with_name("colab-requirements.txt")
# what Colab's runtime lacks, or has at another version: left out of the links
LEFT_OUT = ("ipywidgets", "widgetsnbextension", "jupyterlab_widgets", "torchviz", "__editable__",
            "computational_graphs_notebooks")
KERNEL, KERNELS = "alone", "share/jupyter/kernels"
# nbval's (tests/sanitize.cfg), and the ipywidgets version the index reports
PATTERNS = [*get_sanitize_patterns((ROOT / "tests/sanitize.cfg").read_text()), (r"ipywidgets: \S+", "ipywidgets: N")]


def build_repository(folder):
    """A git repository in `folder` of this checkout's files as they are now, uncommitted changes included."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True, text=True).stdout.split("\0")
    folder = Path(folder)
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, folder / name)
    git = ["git", "-C", str(folder), "-c", "user.name=alone", "-c", "user.email=alone@localhost"]
    for command in (["init", "--quiet"], ["add", "--all"], ["commit", "--quiet", "-m", "a stand-in for GitHub"]):
        subprocess.run(git + command, check=True, capture_output=True, text=True)
    return folder


def build_wheel(folder):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(folder), str(ROOT)], check=True, capture_output=True, text=True)
    (wheel,) = Path(folder).glob("computational_graphs_notebooks-*.whl")
    return wheel


def environment(folder):
    """A venv in `folder` like Colab's runtime; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = Path(folder) / "bin" / "python"
    target, ours = purelib(folder), Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        if not entry.name.startswith(LEFT_OUT) and not (target / entry.name).exists():
            (target / entry.name).symlink_to(entry)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-r", str(COLAB)],
                   check=True, capture_output=True, text=True)
    spec = Path(folder) / KERNELS / KERNEL         # a kernel run by `python`
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [str(python), "-m", "ipykernel_launcher", "-f",
                                                           "{connection_file}"], "language": "python"}))
    return python


def run_alone(path, python, source, folder, stop_on_error=False):
    """Notebook `path` copied alone into the new folder `folder` and executed there by `python`, no PYTHONPATH,
    GitHub's address fetched from `source`; with `stop_on_error`, stopped at the first error, as Run All does."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=False)
    copy = folder / Path(path).name
    copy.write_bytes(Path(path).read_bytes())
    nb = nbformat.read(copy, as_version=4)
    for cell in nb.cells:               # a cell the run does not reach shows nothing, not its stored outputs
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    specs = KernelSpecManager(kernel_dirs=[str(Path(python).parents[1] / KERNELS)])
    km = KernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # the build uses this venv's setuptools (PIP_NO_BUILD_ISOLATION=0 turns isolation off), as offline as the rest
    env |= {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_BUILD_ISOLATION": "0",
            # git fetches GitHub's address of the collection from `source` (a path that is none: offline)
            "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.{source}.insteadOf",
            "GIT_CONFIG_VALUE_0": repository_url()}
    client = NotebookClient(nb, km=km, timeout=600, allow_errors=not stop_on_error, record_timing=False,
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute(env=env, cwd=str(folder))
    except CellExecutionError:
        if not stop_on_error:
            raise
    return nb


def uninstall(python):
    """Undo what a set-up cell installed, so the next notebook meets the runtime as it was."""
    subprocess.run([str(python), "-m", "pip", "uninstall", "--quiet", "--yes", "computational-graphs-notebooks",
                    "torchviz"], check=True, capture_output=True, text=True)


def set_up_output(nb):
    cell = next(c for c in nb.cells if c.get("id") == INSTALL)
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def _texts(cell):
    """Each stream whole (it arrives in chunks that depend on timing), then text/plain and error names."""
    streams = {}
    for o in cell.outputs:
        if o.output_type == "stream":
            streams[o.name] = streams.get(o.name, "") + o.text
    others = [o for o in cell.outputs if o.output_type != "stream"]
    texts = [*streams.values(), *(o.get("data", {}).get("text/plain", "") + o.get("ename", "") for o in others)]
    for pattern, replacement in PATTERNS:
        texts = [re.sub(pattern, replacement, t) for t in texts]
    return texts


def differences(stored, fresh):
    """Code cells whose text outputs differ between `stored` and `fresh`, compared as nbval would; the set-up cell
    (its line names the runtime's torch) and the cells nbval ignores left out."""
    found = []
    pairs = zip(stored.cells, fresh.cells, strict=True)
    for number, (old, new) in enumerate(pairs):
        if old.cell_type != "code" or old.get("id") == INSTALL or "nbval-ignore-output" in old.metadata.get(
                "tags", []):
            continue
        before, after = _texts(old), _texts(new)
        if before != after:
            found.append(f"cell {number} ({old.get('id')}): stored {before!r:.300}, alone {after!r:.300}")
    return found

