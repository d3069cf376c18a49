"""The course deployment without docker or a cluster (classroom/README.md), each check shown failing."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from traitlets.config.loader import PyFileConfigLoader

from classroom import deploy
from tools.build import pin

ROOT = Path(__file__).resolve().parents[2]
VALUES = ROOT / "classroom" / "hub" / "values.yaml"
REQUIREMENTS = ROOT / "requirements.txt"
PYTHON = re.search(r"^\s*-\s*python\s*=\s*([\d.]+)", (ROOT / "environment.yml").read_text(), re.MULTILINE)[1]
# the image's command line (classroom/README.md), the repository kept out of the home (a volume)
IMAGE = ["--user-id", "1000", "--user-name", "jovyan", "--target-repo-dir", "/srv/computational-graphs"]
# conda-forge names in repo2docker's base environment that are not PyPI's, and what is not from PyPI
CONDA_TO_PYPI = {"jupyterhub-singleuser": "jupyterhub", "jupyterhub-base": "jupyterhub"}
NOT_PYPI = {"python", "nodejs", "pip"}
REPO2DOCKER = shutil.which("repo2docker", path=os.path.dirname(sys.executable))
requires_repo2docker = pytest.mark.skipif(REPO2DOCKER is None,
                                          reason="jupyter-repo2docker is not installed (requirements-dev.txt)")


def _section(**properties):       # a mapping that takes exactly these keys
    return {"type": "object", "additionalProperties": False, "properties": properties}


_NUMBER = {"type": ["number", "null"]}
_QUANTITY = {"type": ["string", "null"], "pattern": r"^[0-9.]+([KMGT]i?)?$"}
# The chart keys hub/values.yaml sets, typed as zero-to-jupyterhub 4.x documents them.
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


def schema_errors(values):
    validator = jsonschema.Draft7Validator(VALUES_SCHEMA)
    return [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(values)]


def test_values_fit_the_chart_schema_and_a_misspelt_key_or_a_wrong_type_does_not():
    values = yaml.safe_load(VALUES.read_text())
    assert schema_errors(values) == []
    values["singleuser"]["memory"]["limt"] = "1G"
    values["cull"]["timeout"] = "3600"
    errors = schema_errors(values)
    assert any("'limt' was unexpected" in e for e in errors) and any("cull.timeout" in e for e in errors), errors


def test_values_come_from_the_measured_figures_and_match_the_local_hub(monkeypatch, tmp_path):
    monkeypatch.setenv("HUB_PASSWORD", "a-trial-password")
    monkeypatch.setenv("HUB_STATE", str(tmp_path))
    local = PyFileConfigLoader("jupyterhub_config.py", path=str(VALUES.parent)).load_config()
    values = yaml.safe_load(VALUES.read_text())
    single = values["singleuser"]
    assert deploy.gigabytes(single["memory"]["guarantee"]) == round(deploy.SERVER_GB + deploy.KERNEL_GB, 2) == 0.6
    assert deploy.gigabytes(single["memory"]["limit"]) == deploy.memory_limit_gb() == 1.5
    assert single["cpu"]["limit"] == local.Spawner.cpu_limit
    assert single["startTimeout"] == local.Spawner.start_timeout == local.Spawner.http_timeout == 180
    assert values["hub"]["concurrentSpawnLimit"] == deploy.concurrent_starts(deploy.NODE_CORES) == 48
    assert deploy.START_TIMEOUT >= 1.5 * deploy.SLOWEST_START
    assert f"--timeout={values['cull']['timeout']}" in local.JupyterHub.services[0]["command"]
    assert single["cmd"][1:] == local.Spawner.cmd[1:] == ["-m", "classroom.singleuser"]
    assert single["defaultUrl"] == local.Spawner.default_url


@requires_repo2docker
def test_repo2docker_reads_the_repository():
    assert "repo2docker " + " ".join(IMAGE) in (ROOT / "classroom" / "README.md").read_text()
    done = subprocess.run([REPO2DOCKER, *IMAGE, "--image-name", "course:check", "--no-run", "--no-build", str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"Building conda environment for python={PYTHON}" in done.stdout + done.stderr
    assert '--file "environment.yml"' in done.stdout and "RUN ./postBuild" in done.stdout


@requires_repo2docker
def test_repo2docker_check_fails_on_a_broken_repository(tmp_path):
    (tmp_path / "environment.yml").write_text("dependencies: [python=3.11\n")
    done = subprocess.run([REPO2DOCKER, "--no-build", "--no-run", str(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0


def base_pins():
    """{PyPI name: version} of what repo2docker's base environment installs for the image's Python."""
    folder = Path(importlib.util.find_spec("repo2docker").origin).parent / "buildpacks" / "conda"
    specs = yaml.safe_load((folder / "environment.yml").read_text())["dependencies"]
    wanted = [re.match(r"[A-Za-z0-9_.-]+", spec)[0] for spec in specs if isinstance(spec, str)]
    locked = {}
    for line in (folder / f"environment.py-{PYTHON}-linux-64.lock").read_text().splitlines():
        if line.startswith("https://"):
            name, version, _build = line.rsplit("/", 1)[1].split("#")[0].removesuffix(".conda").removesuffix(
                ".tar.bz2").rsplit("-", 2)
            locked[name] = version
    return {CONDA_TO_PYPI.get(n, n): locked[n] for n in wanted if n not in NOT_PYPI}


def binder_requirements(requirements=REQUIREMENTS):
    """What Binder's pip installs: `requirements` for the image's Python, and the base
    environment's pins it does not override (pip keeps them)."""
    own = pin.for_python(requirements, f"{PYTHON}.0")
    named = {canonicalize_name(Requirement(line).name) for line in own}
    return [*own, *(f"{n}=={v}" for n, v in sorted(base_pins().items()) if canonicalize_name(n) not in named)]


@requires_repo2docker
def test_binder_environment_resolves_and_not_without_the_notebook_pin(tmp_path):
    no_notebook = tmp_path / "requirements.txt"
    no_notebook.write_text("".join(line for line in REQUIREMENTS.read_text().splitlines(keepends=True)
                                   if not line.startswith("notebook==")))
    both = [binder_requirements(), binder_requirements(no_notebook)]
    with ThreadPoolExecutor(max_workers=2) as pool:        # pip's resolver, wheels for the image's Python
        (found, said), (found_without, error) = pool.map(pin.dry_run, [sys.executable] * 2, [f"{PYTHON}.0"] * 2, both)
    assert found is not None, said
    assert {"notebook", "jupyterlab", "jupyterhub", "jupyter_server"} <= set(base_pins())    # read from repo2docker
    assert found_without is None and f"notebook=={base_pins()['notebook']}" in error and "jupyterlab==" in error, error
