"""The index notebook's environment check and its advice."""

import json
import re
from pathlib import Path

import pytest
import torch

from helpers import report, standalone
from helpers.environment import check_environment
from helpers.svg import INSTALL_HINT
from helpers.torch_version import (
    RELEASE_TAG,
    TORCH_NEEDED,
    UPGRADE,
    pinned_torch,
    release,
    release_cells,
    torch_report,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.system
def test_everything_here():
    checks = check_environment()
    assert [c.name for c in checks] == ["torch", "Graphviz dot", "ipywidgets", "JupyterLab widgets extension",
                                     "torchviz"]
    assert all(c.ok for c in checks), report(checks)
    assert report(checks).endswith("Everything the notebooks need is here.")


def test_missing_dot_gives_the_install_line(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    text = report()
    assert f"MISSING Graphviz dot: {INSTALL_HINT}" in text
    assert text.endswith("follow the advice above, then restart the kernel.")


def test_the_torch_needed_is_pyprojects_and_the_pin_is_requirements():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'dependencies = \[[^]]*"torch>=([\d.]+)"', pyproject).group(1) == TORCH_NEEDED
    pin = re.search(r"^torch==([\w.+]+)$", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M).group(1)
    assert pinned_torch() == pin
    assert '"helpers.pins" = ["requirements.txt"]' in pyproject, "an installed copy must carry requirements.txt"


def test_the_pin_is_read_from_an_installed_copy_when_there_is_no_checkout(tmp_path):
    (tmp_path / "requirements.txt").write_text("numpy==2.0\ntorch==2.13.0; python_version >= '3.10'\n")
    assert pinned_torch((tmp_path / "no-checkout.txt", tmp_path / "requirements.txt")) == "2.13.0"
    assert pinned_torch((tmp_path / "no-checkout.txt",)) is None


@pytest.mark.parametrize("version, expected", [("2.13.0+cpu", (2, 13, 0)), ("2.14.0a0+git1", (2, 14, 0)),
                                               ("2.9", (2, 9)), ("2.10.1.dev20260101", (2, 10, 1))])
def test_release_numbers(version, expected):
    assert release(version) == expected


def test_torch_lines():
    old = torch_report("2.8.0+cu128", pinned="2.13.0")
    assert old == (False, f"torch 2.8.0 is older than the {TORCH_NEEDED} these helpers need: {UPGRADE}")
    assert "pip install --upgrade torch" in UPGRADE
    assert torch_report("2.13.0+cpu", pinned="2.13.0") == (
        True, "torch 2.13.0, the one the collection's outputs were checked against")
    assert torch_report("2.14.1", pinned="2.13.0", tagged=2) == (
        True, "torch 2.14.1; the collection's outputs were checked against 2.13.0, so the 2 cells tagged "
              f"{RELEASE_TAG} (what one release does) may differ")
    assert torch_report("2.14.1", pinned="2.13.0", tagged=1)[1].endswith(f"the 1 cell tagged {RELEASE_TAG} "
                                                                         "(what one release does) may differ")


def test_another_torch_is_told_how_many_cells_show_what_one_release_does(tmp_path):
    """The count is read from the stored notebooks, never typed; with none to read or none tagged, it says "a few"."""
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    tagged = sum(RELEASE_TAG in c.get("metadata", {}).get("tags", []) for nb in stored for c in nb["cells"])
    assert tagged and release_cells() == tagged
    assert f"so the {tagged} cell" in torch_report("2.14.1", pinned="2.13.0")[1]
    copy = tmp_path / "stored_notebooks"
    copy.mkdir()
    (copy / "01-one.ipynb").write_text(json.dumps({"cells": [{"metadata": {"tags": [RELEASE_TAG]}}, {}]}))
    assert release_cells((tmp_path / "notebooks", copy)) == 1
    assert release_cells((tmp_path / "notebooks",)) is None
    assert torch_report("2.14.1", pinned="2.13.0", tagged=0)[1].endswith(", so a few may differ")


def test_an_old_torch_is_one_line_in_the_check_and_the_set_up_cell(monkeypatch):
    """The check gives no all-clear; the set-up cell (helpers.standalone.ready) stops with the same line."""
    monkeypatch.setattr(torch, "__version__", "2.8.0+cpu")
    text = report()
    assert f"MISSING torch: 2.8.0 is older than the {TORCH_NEEDED} these helpers need: {UPGRADE}" in text
    assert "Everything the notebooks need is here" not in text
    real = standalone.metadata.version
    monkeypatch.setattr(standalone.metadata, "version", lambda name: "2.8.0" if name == "torch" else real(name))
    with pytest.raises(RuntimeError, match=r"^torch 2\.8\.0 is older than the .* need: pip install --upgrade torch"):
        standalone.ready(install=lambda arguments: pytest.fail("installed before saying torch is too old"))
