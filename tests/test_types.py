"""The public API is typed: mypy checks `helpers/` with the settings in
pyproject.toml ([tool.mypy], strict), and a fixture with type errors proves
those settings report them.

A module listed in PENDING is not annotated yet: its errors are not held
against it, and once it has none, the suite says to take it off the list.
"""

import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "build" / "mypy-cache"           # cache_dir in pyproject.toml
ERROR = re.compile(r"^(?P<path>[^:\n]+\.py):(?P<line>\d+): error: (?P<message>.*)$", re.MULTILINE)
# path (or folder) -> why its types are not checked yet
PENDING: dict[str, str] = {}


def run_mypy(*files):
    """mypy with the project's settings: on `files`, or on pyproject's `files`."""
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *map(str, files)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    finished = re.search(r"^(Success: no issues found|Found \d+ errors?) in", done.stdout, re.MULTILINE)
    assert done.returncode in (0, 1) and finished, f"mypy did not run:\n{done.stdout}\n{done.stderr}"
    return done.stdout, time.perf_counter() - start


def errors_by_path(output):
    found = defaultdict(list)
    for match in ERROR.finditer(output):
        found[match["path"]].append(f"{match['path']}:{match['line']}: {match['message']}")
    return found


def pending_reason(path):
    return next((reason for prefix, reason in PENDING.items() if path.startswith(prefix)), None)


@pytest.fixture(scope="module")
def report():
    """mypy's output over pyproject's files, how long it took, and whether
    its cache was there before."""
    warm = CACHE.exists()
    return (*run_mypy(), warm)


def test_checked_modules_have_no_type_errors(report, timings):
    output, seconds, warm = report
    timings.append(f"mypy over helpers/: {seconds:.1f} s ({'with' if warm else 'without'} a cache)")
    errors = [line for path, lines in errors_by_path(output).items() if pending_reason(path) is None for line in lines]
    assert not errors, "mypy reports:\n" + "\n".join(errors)


def test_pending_modules_are_not_clean_yet(report, timings):
    """A module stays in PENDING only while mypy reports errors in it: once
    it is clean, it is taken off the list, so its types are checked."""
    by_path = errors_by_path(report[0])
    clean = []
    for pending, reason in PENDING.items():
        errors = [line for path, lines in by_path.items() if path.startswith(pending) for line in lines]
        timings.append(f"pending {pending} ({reason}): {len(errors)} type errors")
        if not errors:
            clean.append(pending)
    assert not clean, f"no type errors in {clean}: remove them from PENDING in tests/test_types.py"


FIXTURE = '''\
import torch

from helpers import trace_graph

graph = trace_graph(torch.ones(2, requires_grad=True) * 2)
ops: str = graph.count("op")
graph.count("operation")


def untyped(x):
    return x
'''


def test_the_settings_report_type_errors():
    """The same settings on a small module with three errors: a count used as
    text, a kind that is not one of the node kinds, a function without types.
    It is written to one fixed place: mypy's cache remembers a module's errors
    with the path it was first checked at."""
    fixture = ROOT / "build" / "type-check-fixture" / "uses_the_api.py"
    fixture.parent.mkdir(parents=True, exist_ok=True)
    fixture.write_text(FIXTURE)
    output, _ = run_mypy(fixture)
    found = [line.split(": ", 1)[1] for line in errors_by_path(output)[str(fixture.relative_to(ROOT))]]
    assert found == [
        'Incompatible types in assignment (expression has type "int", variable has type "str")  [assignment]',
        'Argument 1 to "count" of "Graph" has incompatible type "Literal[\'operation\']"; expected '
        '"Literal[\'output\', \'op\', \'leaf\', \'const\', \'group\']"  [arg-type]',
        "Function is missing a type annotation  [no-untyped-def]",
    ], output
