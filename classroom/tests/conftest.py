"""The classroom's tests (`make test-classroom`): the hub, its users and limits, grading,
the load test's learner. They read the collection's test data (tests/answers/) too."""

import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[2] / "tests"))

from figures import Figures, figure_lines  # noqa: E402


@pytest.fixture
def timings(request):
    return Figures(request.node)


def pytest_terminal_summary(terminalreporter, config):
    figure_lines(terminalreporter)
