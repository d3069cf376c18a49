"""The course deployment without docker or a cluster (classroom/deploy.py):
hub/values.yaml against the chart's keys and the local hub's figures,
repo2docker reading the repository, and pip's resolver on repo2docker's base
environment with requirements.txt; each check shown failing."""

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import pytest
import yaml
from traitlets.config.loader import PyFileConfigLoader

from classroom import deploy

VALUES = deploy.ROOT / "classroom" / "hub" / "values.yaml"
REPO2DOCKER = shutil.which("repo2docker", path=os.path.dirname(sys.executable))
requires_repo2docker = pytest.mark.skipif(REPO2DOCKER is None,
                                          reason="jupyter-repo2docker is not installed (requirements-dev.txt)")


def schema_errors(values):
    validator = jsonschema.Draft7Validator(deploy.VALUES_SCHEMA)
    return [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(values)]


def test_values_fit_the_chart_schema():
    assert schema_errors(yaml.safe_load(VALUES.read_text())) == []


def test_schema_check_fails_on_a_misspelt_key_and_a_wrong_type():
    values = yaml.safe_load(VALUES.read_text())
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
    assert deploy.gigabytes(single["memory"]["guarantee"]) == deploy.memory_guarantee_gb() == 0.6
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
    done = subprocess.run([REPO2DOCKER, *deploy.image_command("course:check", build=False)[1:]],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"Building conda environment for python={deploy.project_python()}" in done.stdout + done.stderr
    assert '--file "environment.yml"' in done.stdout and "RUN ./postBuild" in done.stdout


@requires_repo2docker
def test_repo2docker_check_fails_on_a_broken_repository(tmp_path):
    (tmp_path / "environment.yml").write_text("dependencies: [python=3.11\n")
    done = subprocess.run([REPO2DOCKER, "--no-build", "--no-run", str(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0


@pytest.fixture(scope="module")
def resolved(tmp_path_factory):
    """pip's resolver, two runs at once: requirements.txt with the base pins
    it does not override, and (quick to fail) the project's JupyterLab pin
    alone, with no notebook pin, as Binder had it before."""
    jupyterlab = tmp_path_factory.mktemp("jupyterlab") / "requirements.txt"
    jupyterlab.write_text("".join(line for line in deploy.ROOT.joinpath("requirements.txt").read_text()
                                  .splitlines(keepends=True) if line.startswith("jupyterlab==")))
    runs = [(deploy.binder_requirements(), deploy.ROOT / "requirements.txt"),
            (deploy.binder_requirements(jupyterlab), jupyterlab)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda run: deploy.resolve(*run), runs))


@requires_repo2docker
def test_base_pins_are_read_from_repo2docker():
    pins = deploy.base_pins()
    assert {"notebook", "jupyterlab", "jupyterhub", "jupyter_server"} <= set(pins)
    assert "notebook" not in {line.split("==")[0] for line in deploy.binder_requirements()}


@requires_repo2docker
def test_binder_environment_resolves(resolved):
    ok, report = resolved[0]
    assert ok, report
    chosen = {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in report["install"]}
    for name in ("notebook", "jupyterlab"):
        assert f"{name}=={chosen[name]}" in deploy.ROOT.joinpath("requirements.txt").read_text().splitlines()


@requires_repo2docker
def test_binder_check_fails_without_the_notebook_pin(resolved):
    ok, error = resolved[1]
    assert not ok and f"notebook=={deploy.base_pins()['notebook']}" in error and "jupyterlab==" in error, error
