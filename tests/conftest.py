"""Shared fixtures: the note's examples, built fresh for every test, and the
--regen-golden flag that rewrites the golden drawings in tests/golden/."""

from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
FIGURE = "figure"


def pytest_addoption(parser):
    parser.addoption("--regen-golden", action="store_true",
                     help="rewrite tests/golden/ from the current helpers instead of comparing")


@pytest.fixture
def golden(request):
    """compare(name, text): text must equal tests/golden/<name>; with
    --regen-golden the file is rewritten instead."""
    folder = ROOT / "tests" / "golden"

    def compare(name, text):
        path = folder / name
        if request.config.getoption("--regen-golden"):
            folder.mkdir(exist_ok=True)
            path.write_text(text)
        assert path.exists(), f"no golden file {path.name}: run pytest --regen-golden once"
        assert text == path.read_text(), f"{path.name} changed: check the drawing, then pytest --regen-golden"

    return compare


class Figures:
    """Measured figures a test reports (browser timings, sweep counts). They
    travel with the test's report, so they survive parallel workers, and are
    printed at the end of the run."""

    def __init__(self, node):
        self.node = node

    def append(self, line):
        self.node.user_properties.append((FIGURE, line))


@pytest.fixture
def timings(request):
    return Figures(request.node)


def pytest_terminal_summary(terminalreporter, config):
    reports = [r for kind in ("passed", "failed") for r in terminalreporter.stats.get(kind, []) if r.when == "call"]
    figures = [line for r in reports for name, line in r.user_properties if name == FIGURE]
    if figures:
        terminalreporter.section("figures (measured, not asserted)")
        for line in figures:
            terminalreporter.write_line(line)


@pytest.fixture
def note_example():
    """The note's 'Inspecting the Graph' example: x = 2, y = x ** 2, z = y * 3."""
    x = torch.tensor(2.0, requires_grad=True)
    y = x**2
    z = y * 3
    return x, y, z

