"""The classroom's tests (`make test-classroom`): the hub, its users and limits, grading,
the load test's learner. They read the collection's test data (tests/answers/) too."""

import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[2] / "tests"))

FIGURE = "figure"


class Figures:
    """Measured figures a test reports (start and Run All times), printed at
    the end of the run; they travel with the test's report, so they survive
    parallel workers (as tests/conftest.py's do for make test)."""

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
