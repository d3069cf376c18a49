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


LONGEST = ("test_grade_hostile.py", "test_grade.py", "test_hub.py")


def pytest_collection_modifyitems(items):
    """The longest files first (the same order on every worker), so that under the
    Makefile's `--dist loadfile --no-loadscope-reorder` the two workers end together."""
    items.sort(key=lambda item: LONGEST.index(item.path.name) if item.path.name in LONGEST else len(LONGEST))
