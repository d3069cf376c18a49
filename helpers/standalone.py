"""The second half of every notebook's set-up cell: `%reload_ext
helpers.standalone` installs the small packages the runtime lacks (never torch
or ipywidgets), turns on the short form of errors and prints one line on the
torch the text was checked against. What stops the set-up is shown as its
message alone. Imports neither torch nor ipywidgets: it speaks when they are
missing."""

import importlib
import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from .errors import short_tracebacks
from .svg import INSTALL_HINT
from .torch_version import RELEASE_TAG, pinned_torch, release, release_cells, torch_report

# (module imported, the name pip installs it by); none of these depend on more than torch
# and each other, so each is installed without its dependencies
SMALL = (("graphviz", "graphviz"), ("torchviz", "torchviz"), ("matplotlib", "matplotlib"))
# the runtime's own: never installed from here, only named
RUNTIME = (("torch", "torch"), ("ipywidgets", "ipywidgets"))
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


class SetUpError(RuntimeError):
    """What stops the set-up, shown as its message alone."""

    def _render_traceback_(self) -> list[str]:
        return f"{type(self).__name__}: {self}".splitlines()


def missing(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """The pip names of the modules in `pairs` that this Python cannot import."""
    return [name for module, name in pairs if importlib.util.find_spec(module) is None]


def _pip(arguments: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *arguments],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        said = [line for line in done.stderr.splitlines() if line.strip()] or ["?"]
        raise SetUpError(f"pip install {' '.join(arguments)} failed ({said[-1].strip()[:120]}).\n"
                         "It needs the internet for a moment: run this cell again once online.")


def ready_line(found: str, pinned: str | None = None, tagged: int | None = None) -> str:
    """The one line the set-up cell prints: the torch the text was checked
    against, and `found` where it differs."""
    pinned = pinned_torch() if pinned is None else pinned
    found = found.split("+")[0]
    if pinned is None or release(found) == release(pinned):
        return f"Ready: torch {found}, the release this text was checked against."
    tagged = release_cells() if tagged is None else tagged
    cells = f"the {tagged} cells tagged {RELEASE_TAG}" if tagged else "a few cells"
    return f"Ready: this text was checked against torch {pinned}; yours is {found}, so {cells} may print otherwise."


def ready(install: Callable[[list[str]], None] = _pip) -> str:
    """Install what this runtime lacks (never torch or ipywidgets: their
    absence, or a torch too old, raises with the line to run) and return the line
    to print, Graphviz's install hint under it when `dot` is missing."""
    absent = missing(RUNTIME)
    if absent:
        raise SetUpError(f"this Python has no {' or '.join(absent)}: pip install {' '.join(absent)} "
                         f"(torch without an NVIDIA GPU: {CPU_TORCH}),\nrestart the kernel, then run this cell again.")
    found = metadata.version("torch")
    new_enough, line = torch_report(found)
    if not new_enough:
        raise SetUpError(line)
    added = missing(SMALL)
    if added:
        install(["--no-deps", *added])
        importlib.invalidate_caches()
    said = ready_line(found)
    return said if shutil.which("dot") else f"{said}\n{INSTALL_HINT}"


def load_ipython_extension(shell: Any) -> None:
    """`ready`, the short form of errors, and the one line, printed over
    pip's "you may need to restart" note (the helpers are imported after it)."""
    line = ready()
    short_tracebacks(shell)
    if getattr(shell, "kernel", None) is not None:
        from IPython.display import clear_output

        clear_output()  # type: ignore[no-untyped-call]
    print(line)
