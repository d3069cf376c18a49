"""The course deployment, checked without docker or a cluster (tests/test_deploy.py):
`image_command` (repo2docker, as Binder builds the image), `base_pins` and
`resolve` (repo2docker's base environment with requirements.txt, through pip's
resolver), `VALUES_SCHEMA` (hub/values.yaml's chart keys), and the measured
figures the hub and the chart's values share."""

import importlib.util
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REPO_DIR = "/srv/computational-graphs"      # where the image keeps the repository (the home is a volume)
# conda-forge names in repo2docker's base environment that are not PyPI's, and what is not from PyPI
CONDA_TO_PYPI = {"jupyterhub-singleuser": "jupyterhub", "jupyterhub-base": "jupyterhub"}
NOT_PYPI = {"python", "nodejs", "pip"}
RESOLVE_TIMEOUT = 900

# Measured by `make load` on a 2-core, 24 GB machine (classroom/README.md has the tables): the
# figures the class hub (hub/jupyterhub_config.py) and the chart's values (hub/values.yaml) use.
SERVER_GB = 0.15            # a learner's server with no notebook open (RSS 0.14-0.15 GB)
KERNEL_GB = 0.45            # the heaviest notebook's kernel after Run All (RSS 0.27-0.44 GB)
START_CPU_SECONDS = 7.5     # CPU time of a server's first start, the working copy made (6.5-11 s)
SLOWEST_START = 101         # seconds: the slowest of 20 learners logging in within 4 s, 2 busy cores
START_TIMEOUT = 180         # seconds: a start may take (hub and chart), 1.8 x SLOWEST_START
OPEN_AT_ONCE = 3            # notebooks a learner may keep open (idle culling ends the others' kernels)
NODE_CORES = 4              # cores of a Kubernetes node the chart's numbers assume
RESERVED_GB = 2.0           # what a machine of `make hub` keeps for the hub, the proxy and the system


def concurrent_starts(cores):
    """Starts at a time that each end within half of START_TIMEOUT on `cores` cores."""
    return int(cores * (START_TIMEOUT / 2) / START_CPU_SECONDS)


def memory_guarantee_gb():
    """What a node keeps for each learner: a server and one notebook."""
    return round(SERVER_GB + KERNEL_GB, 2)


def memory_limit_gb():
    """Where a learner's memory stops: a server and OPEN_AT_ONCE notebooks."""
    return round(SERVER_GB + OPEN_AT_ONCE * KERNEL_GB, 2)


def gigabytes(quantity):
    """A memory quantity ("1.5G", "800M", "2Gi", "1500000000") in GB (1e9 bytes)."""
    units = {"": 1e-9, "K": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3, "Ki": 2 ** 10 / 1e9, "Mi": 2 ** 20 / 1e9,
             "Gi": 2 ** 30 / 1e9}
    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]i?)?B?\s*", str(quantity))
    if not found:
        raise ValueError(f"{quantity!r} is not a memory size: write it as 1.5G, 800M or 2Gi")
    return float(found[1]) * units[found[2] or ""]


def server_cap(machine_gb, limit_gb):
    """Servers that may each reach `limit_gb` at once with RESERVED_GB left: (24 - 2) / 1.5 = 14."""
    return max(1, int((machine_gb - RESERVED_GB) / limit_gb))


def project_python(environment=ROOT / "environment.yml"):
    """The Python version environment.yml asks for ('3.11')."""
    found = re.search(r"^\s*-\s*python\s*=\s*([\d.]+)", environment.read_text(), re.MULTILINE)
    return found[1]


def base_pins(python=None):
    """{PyPI name: version} of what repo2docker's base environment installs for `python`."""
    spec = importlib.util.find_spec("repo2docker")     # found, not imported
    if spec is None:
        raise ModuleNotFoundError("base_pins reads jupyter-repo2docker's files: install requirements-dev.txt")
    folder = Path(spec.origin).parent / "buildpacks" / "conda"
    python = python or project_python()
    specs = yaml.safe_load((folder / "environment.yml").read_text())["dependencies"]
    wanted = [re.match(r"[A-Za-z0-9_.-]+", spec)[0] for spec in specs if isinstance(spec, str)]
    locked = {}
    for line in (folder / f"environment.py-{python}-linux-64.lock").read_text().splitlines():
        if line.startswith("https://"):
            name, version, _build = line.rsplit("/", 1)[1].split("#")[0].removesuffix(".conda").removesuffix(
                ".tar.bz2").rsplit("-", 2)
            locked[name] = version
    return {CONDA_TO_PYPI.get(n, n): locked[n] for n in wanted if n not in NOT_PYPI}


def named(requirements):
    """Normalised names of the packages a requirements file pins."""
    names = set()
    for line in Path(requirements).read_text().splitlines():
        found = re.match(r"\s*([A-Za-z0-9_.-]+)\s*==", line)
        if found:
            names.add(re.sub(r"[-_.]+", "-", found[1]).lower())
    return names


def binder_requirements(requirements=ROOT / "requirements.txt", python=None):
    """The base environment's pins that requirements.txt does not override (pip keeps them)."""
    own = named(requirements)
    return [f"{n}=={v}" for n, v in sorted(base_pins(python).items()) if re.sub(r"[-_.]+", "-", n).lower() not in own]


def resolve(lines, requirements=ROOT / "requirements.txt"):
    """pip's resolver on `lines` with `requirements`, nothing installed: (resolved, report or error)."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                   "--report", str(report), "-r", str(requirements), *lines]
        done = subprocess.run(command, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT)
        if done.returncode:
            return False, "\n".join(done.stderr.strip().splitlines()[-12:])
        return True, json.loads(report.read_text())


def image_command(tag, build=True):
    """repo2docker's command line for the course image, the repository kept out of the home (a volume)."""
    return ["repo2docker", "--user-id", "1000", "--user-name", "jovyan", "--target-repo-dir", REPO_DIR,
            "--image-name", tag, "--no-run", *([] if build else ["--no-build"]), str(ROOT)]


def _section(**properties):
    """A JSON schema of a mapping that takes exactly these keys."""
    return {"type": "object", "additionalProperties": False, "properties": properties}


_NUMBER = {"type": ["number", "null"]}
_QUANTITY = {"type": ["string", "null"], "pattern": r"^[0-9.]+([KMGT]i?)?$"}
# The chart keys hub/values.yaml sets, with the types zero-to-jupyterhub 4.x documents: a
# misspelt or moved key, or a wrong type, fails (`helm template` tells the rest).
VALUES_SCHEMA = _section(
    hub=_section(config={"type": "object"}, concurrentSpawnLimit={"type": "integer"},
                 consecutiveFailureLimit={"type": "integer"}),
    singleuser=_section(
        image=_section(name={"type": "string"}, tag={"type": "string"}),
        cmd={"type": ["array", "string"]}, defaultUrl={"type": "string"},
        startTimeout={"type": "integer"},
        memory=_section(guarantee=_QUANTITY, limit=_QUANTITY),
        cpu=_section(guarantee=_NUMBER, limit=_NUMBER),
        storage=_section(capacity=_QUANTITY)),
    cull=_section(enabled={"type": "boolean"}, timeout={"type": "integer"}, every={"type": "integer"},
                  users={"type": "boolean"}, maxAge={"type": "integer"}, concurrency={"type": "integer"}),
)
