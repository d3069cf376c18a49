"""Write requirements.txt (what the notebooks need) and requirements-dev.txt
(what the tests and tools add) with exact versions: pip resolves the
packages below, without installing anything, once with Python 3.11 and once
with Python 3.10, and a line gets a python_version marker where the two
resolutions differ.

    .venv/bin/python -m tools.pin [--python310 PATH] [--check]

The result depends on what the package index offers on the day it runs.
--check writes nothing and exits 1 when the files would change.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEARNER = ["torch==2.13.0", "jupyterlab", "notebook", "ipywidgets", "graphviz", "torchviz", "matplotlib", "setuptools"]
DEV = ["pytest", "pytest-xdist", "nbval", "playwright", "ruff", "mypy", "psutil", "expecttest", "sphinx", "myst-nb",
       "sphinx-book-theme", "jupyterhub", "jupyterhub-idle-culler", "jupyter-repo2docker"]
# PyPI's Linux torch wheel for Python 3.10 is the CUDA build; the collection
# pins the CPU build, which needs none of these.
CUDA_ONLY = ("nvidia-", "cuda-", "triton")
HEADERS = {
    "requirements.txt": [
        "# What the notebooks need, with exact versions: stored notebook outputs depend on them.",
        "# Written by tools/pin.py: .venv/bin/python -m tools.pin --python310 /path/to/python3.10",
        "# torch is the CPU build's version; `make lab TORCH=cpu` takes that build from PyTorch's index.",
    ],
    "requirements-dev.txt": [
        "# What the tests and maintenance tools add (make test installs it), with exact versions.",
        "# Written by tools/pin.py together with requirements.txt.",
        "-r requirements.txt",
    ],
}


def resolve(python, packages):
    """{name: version} that pip would install for `packages` on `python`."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        subprocess.run([python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                        "--report", str(report), *packages], check=True, stderr=subprocess.DEVNULL)
        found = json.loads(report.read_text())["install"]
    versions = {item["metadata"]["name"]: item["metadata"]["version"].split("+")[0] for item in found}
    return {name: v for name, v in versions.items() if not name.lower().startswith(CUDA_ONLY)}


def merged(by_python):
    """requirement lines for {"3.11": versions, "3.10": versions}."""
    new, old = by_python["3.11"], by_python["3.10"]
    lines = []
    for name in sorted(set(new) | set(old), key=str.lower):
        if new.get(name) == old.get(name):
            lines.append(f"{name}=={new[name]}")
            continue
        if name in old:
            lines.append(f'{name}=={old[name]}; python_version < "3.11"')
        if name in new:
            lines.append(f'{name}=={new[name]}; python_version >= "3.11"')
    return sorted(lines, key=str.lower)


def files(pythons):
    learner, everything = {}, {}
    for version, python in pythons.items():
        learner[version] = resolve(python, LEARNER)
        everything[version] = resolve(python, LEARNER + DEV)
    kept = {v: {n: everything[v][n] for n in learner[v]} for v in pythons}
    extra = {v: {n: x for n, x in everything[v].items() if n not in learner[v]} for v in pythons}
    return {"requirements.txt": merged(kept), "requirements-dev.txt": merged(extra)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python310", default=shutil.which("python3.10"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if sys.version_info[:2] != (3, 11) or not args.python310:
        sys.exit("run this with Python 3.11 and a Python 3.10 on PATH (or --python310 PATH)")
    stale = []
    for name, lines in files({"3.11": sys.executable, "3.10": args.python310}).items():
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
