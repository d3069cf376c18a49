"""The pins as pip sees them on each supported Python, each at its oldest patch
release (tests/test_pins.py, classroom/tests/test_deploy.py). `make pin` writes
requirements.txt and requirements-dev.txt from requirements.in and
requirements-dev.in with `uv pip compile --universal` (docs/maintaining.md, the pins).
"""

import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# each as its oldest patch release: Requires-Python is checked against it
PYTHONS = ("3.10.0", "3.11.0", "3.12.0", "3.13.0")


def dry_run(python, python_version, requirements):
    """What pip (run by `python`) would install for `requirements` on Python
    `python_version`: (the report's "install" list, or None when pip found
    none, pip's stderr). pip takes a target version only with --target: a
    folder that stays empty."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        done = subprocess.run([str(python), "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                               "--only-binary=:all:", f"--python-version={python_version}", f"--target={folder}/target",
                               "--report", str(report), *requirements], capture_output=True, text=True, check=False)
        return (json.loads(report.read_text())["install"] if done.returncode == 0 else None), done.stderr


def for_python(path, python_version):
    """The requirement lines of `path` (and of the files it includes with
    -r) that apply on Python `python_version`, markers evaluated for it and
    dropped: what pip on that Python would be asked for."""
    from packaging.requirements import Requirement

    environment = {"python_version": ".".join(python_version.split(".")[:2]), "python_full_version": python_version}
    lines = []
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r"):
            lines += for_python(Path(path).parent / line[2:].strip(), python_version)
        elif line:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(environment):
                requirement.marker = None
                lines.append(str(requirement))
    return lines

