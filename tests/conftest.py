"""Shared fixtures: the note's examples, built fresh for every test."""

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


TIMINGS = pytest.StashKey[list]()


@pytest.fixture
def timings(request):
    """A list that the browser tests add measured figures to; printed at the end."""
    return request.config.stash.setdefault(TIMINGS, [])


def pytest_terminal_summary(terminalreporter, config):
    figures = config.stash.get(TIMINGS, [])
    if figures:
        terminalreporter.section("browser timings (figures, not assertions)")
        for line in figures:
            terminalreporter.write_line(line)


@pytest.fixture
def note_example():
    """The note's 'Inspecting the Graph' example: x = 2, y = x ** 2, z = y * 3."""
    x = torch.tensor(2.0, requires_grad=True)
    y = x**2
    z = y * 3
    return x, y, z


def dynamic_forward(x, use_extra_layer):
    """The note's first example, as written there."""
    y = x * 2
    if use_extra_layer:
        y = y + 1
    return y
