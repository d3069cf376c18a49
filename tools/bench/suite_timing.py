"""Where `make test`'s time goes: the suite run as the Makefile runs it,
with its wall time, the CPU time of everything it started, the 25 slowest
tests and the time of each file, each worker's share.

    .venv/bin/python -m tools.bench.suite_timing [--layers test|integration|quick|all] [-- more pytest arguments]

It prints figures and asserts nothing; docs/testing.md quotes what it
printed, with the date and the commit. On a shared machine, compare files
with each other in one run, not runs with each other."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from tools.testkit.shapes import _children_cpu

ROOT = Path(__file__).resolve().parents[2]
SLOWEST = 25


def by_file(report):
    """{file: seconds} from a JUnit XML report (a test's time is its call, set-up and teardown)."""
    totals = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("file") or (case.get("classname", "").replace(".", "/") + ".py")
        totals[name] += float(case.get("time") or 0.0)
    return dict(totals)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench.suite_timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", default="test", choices=("test", "integration", "quick", "all"),
                        help="whose selection to time: make test's (the default), make test-integration's, "
                             "make quick's, or all of them in one run")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.xml"
        command = [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadfile", "--no-loadscope-reorder",
                   f"--durations={SLOWEST}", f"--junitxml={report}", "-o", "junit_family=xunit1",
                   "--layers", args.layers, *args.pytest_args]
        workers = Path(folder) / "workers"
        workers.mkdir()
        started, start, cpu = time.time(), time.monotonic(), _children_cpu()
        done = subprocess.run(command, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1",
                                                      "SUITE_TIMING_WORKERS": str(workers)})
        wall, cpu = time.monotonic() - start, _children_cpu() - cpu
        files = by_file(report) if report.exists() else {}
        shares = {f.stem: json.loads(f.read_text()) for f in sorted(workers.glob("*.json"))}
    what = {"test": "make test", "integration": "make test-integration", "quick": "make quick", "all": "every layer"}
    print(f"\n## The suite's time ({what[args.layers]}'s selection)\n")
    print(f"- wall time: {wall:.0f} s ({wall / 60:.1f} min); exit status {done.returncode}")
    print(f"- CPU time of everything it ran: {cpu:.0f} s ({cpu / wall:.2f} cores busy on average of 2)")
    for worker, share in shares.items():
        print(f"- {worker}: its tests took {share['busy']:.0f} s; it ended {share['ended'] - started:.0f} s "
              f"after the start, {started + wall - share['ended']:.0f} s before the run did")
    if files:
        total = sum(files.values())
        print(f"- test time summed over files: {total:.0f} s (the longest file is the floor under --dist loadfile)\n")
        print("| file | seconds | share |\n|---|---:|---:|")
        for name, seconds in sorted(files.items(), key=lambda item: -item[1])[:SLOWEST]:
            print(f"| {name} | {seconds:.0f} | {seconds / total:.0%} |")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
