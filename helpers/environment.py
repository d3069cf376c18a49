"""Check the learner's environment: torch, Graphviz's dot, and widgets."""

import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .svg import INSTALL_HINT
from .torch_version import torch_report

WIDGETS_EXTENSION = Path("share/jupyter/labextensions/@jupyter-widgets/jupyterlab-manager")
REINSTALL = "run `make lab` again from the repository root (it refreshes .venv from requirements.txt)"
# where a notebook runs on its own (Colab, a download), the set-up cell's own route
ALONE = "run the notebook's first code cell again (it installs what is missing), or pip install {name}"


def _advice(name: str) -> str:
    checkout = (Path(__file__).resolve().parent.parent / "Makefile").is_file()
    return REINSTALL if checkout else ALONE.format(name=name)


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, whether it is fine, and
    what was found or what to do."""

    name: str
    ok: bool
    detail: str


def check_environment() -> list[Check]:
    """The checks, in the order the index notebook prints them."""
    return [_torch(), _dot(), _package("ipywidgets"), _widgets_extension(), _package("torchviz")]


def report(checks: Sequence[Check] | None = None) -> str:
    """The checks as text, one line each, with advice where one failed."""
    checks = check_environment() if checks is None else checks
    lines = [f"{'ok     ' if c.ok else 'MISSING'} {c.name}: {c.detail}" for c in checks]
    verdict = "Everything the notebooks need is here." if all(c.ok for c in checks) else (
        "Something is missing: follow the advice above, then restart the kernel.")
    return "\n".join(lines + [verdict])


def _torch() -> Check:
    try:
        import torch
    except ImportError:
        return Check("torch", False, f"not importable; {_advice('torch')}")
    ok, line = torch_report(torch.__version__)
    return Check("torch", ok, line.removeprefix("torch "))


def _dot() -> Check:
    path = shutil.which("dot")
    if path is None:
        return Check("Graphviz dot", False, INSTALL_HINT)
    done = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=30, check=False)
    version = done.stderr.strip().removeprefix("dot - ") or "version unknown"
    return Check("Graphviz dot", True, f"found ({version})")


def _package(name: str) -> Check:
    try:
        return Check(name, True, metadata.version(name))
    except metadata.PackageNotFoundError:
        return Check(name, False, f"not installed; {_advice(name)}")


def _widgets_extension() -> Check:
    found = any((Path(prefix) / WIDGETS_EXTENSION).is_dir() for prefix in (sys.prefix, sys.base_prefix))
    if found:
        return Check("JupyterLab widgets extension", True, "installed")
    if "google.colab" in sys.modules:
        return Check("JupyterLab widgets extension", True, "not needed: Colab shows widgets itself")
    return Check("JupyterLab widgets extension", False,
                 "not found, so sliders and checkboxes will not show in a JupyterLab from this environment; "
                 f"{_advice('jupyterlab_widgets')} (VS Code and Colab show widgets without it)")
