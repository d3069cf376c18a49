"""The index notebook's environment check and its advice."""

import pytest

from helpers import report
from helpers.environment import Check, check_environment
from helpers.svg import INSTALL_HINT


@pytest.mark.system
def test_everything_here():
    checks = check_environment()
    assert [c.name for c in checks] == ["torch", "Graphviz dot", "ipywidgets", "JupyterLab widgets extension",
                                     "torchviz"]
    assert all(c.ok for c in checks), report(checks)
    assert report(checks).endswith("Everything the notebooks need is here.")


def test_missing_dot_gives_the_install_line(monkeypatch):
    monkeypatch.setattr("helpers.environment.find_dot", lambda: None)
    text = report()
    assert f"MISSING Graphviz dot: {INSTALL_HINT}" in text
    assert text.endswith("follow the advice above, then restart the kernel.")


def test_missing_package_advice():
    text = report([Check("ipywidgets", False, "not installed; run `make lab` again")])
    assert text.startswith("MISSING ipywidgets: not installed")
