"""A notebook opened on its own: in Google Colab, or downloaded alone from the
site. Each notebook's first code cell (written by tools/build/nav.py) installs the
collection when `helpers` cannot be imported, then calls `complete()`, which
installs the small packages the runtime lacks (torchviz) and never one that
would replace what the runtime has: its torch and its ipywidgets (Colab's are
7.x; the helpers work with 7 and 8) stay as they are."""

import importlib
import importlib.util
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib import metadata

from .svg import INSTALL_HINT, find_dot
from .torch_version import torch_report

# (module imported, the name pip installs it by); none of these depend on more than torch
# and each other, so each is installed without its dependencies
SMALL = (("graphviz", "graphviz"), ("torchviz", "torchviz"), ("matplotlib", "matplotlib"))
# the runtime's own: never installed from here, only reported
RUNTIME = (("torch", "torch"), ("ipywidgets", "ipywidgets"))


def missing(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """The pip names of the modules in `pairs` that this Python cannot import."""
    return [name for module, name in pairs if importlib.util.find_spec(module) is None]


def _pip(arguments: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *arguments],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"pip install {' '.join(arguments)} failed:\n{tail}\n"
                           "This needs the internet (PyPI): run the cell again once online, "
                           "then restart the kernel.")


def complete(install: Callable[[list[str]], None] = _pip) -> list[str]:
    """Install what the notebooks need and this runtime lacks, print one line
    saying what was done, and return the names installed. A runtime without
    torch or ipywidgets gets the line to run instead (torch's right build
    depends on the machine)."""
    absent = missing(RUNTIME)
    if absent:
        raise RuntimeError(f"this Python has no {' or '.join(absent)}, which the notebooks need; install "
                           f"{'them' if len(absent) > 1 else 'it'} (pip install {' '.join(absent)}; for torch "
                           "without an NVIDIA GPU: pip install torch --index-url "
                           "https://download.pytorch.org/whl/cpu), then restart the kernel")
    new_enough, torch_line = torch_report(metadata.version("torch"))
    if not new_enough:                             # one line: the version found, the one needed, the command
        raise RuntimeError(torch_line)
    added = missing(SMALL)
    if added:
        install(["--no-deps", *added])
        importlib.invalidate_caches()
    line = (f"The collection's helpers are installed{' with ' + ', '.join(added) if added else ''}; kept ipywidgets "
            f"{metadata.version('ipywidgets')}, and {torch_line}.")
    print(line if find_dot() else f"{line}\n{INSTALL_HINT}")
    return added
