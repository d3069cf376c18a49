"""The classroom's tests (`make test-classroom`): the hub, its users and limits, grading,
the load test's learner. They read the collection's test data (tests/answers/) too."""

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2] / "tests"))
