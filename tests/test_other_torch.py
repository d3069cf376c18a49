"""The other-torch layer sorts nbval's differences as tools/testkit/other_torch.py
says, and each sort is shown failing where it must: a notebook run by pytest
with --other-torch (tests/conftest.py) whose stored outputs were written by
"another torch". A cell tagged torch-release-behaviour whose output changed
passes and is listed; an untagged cell whose output changed fails, and so does
a tagged cell that raises. The sanitize rule makes the lines that name a
release equal whatever the release, and nothing else."""

import re
import subprocess
import sys

import nbformat
import pytest
from conftest import RELEASE, ROOT, selected
from test_nbval_checks import without_addopts

from helpers.torch_version import torch_report
from tools.build.run_notebooks import execute, reproducible
from tools.testkit import other_torch

CELLS = {
    "release-changed": ("print('fused step: _version', 7)", [RELEASE], "fused step: _version 3\n"),
    "lesson-changed": ("print('saved:', 16, 'bytes')", [], "saved: 32 bytes\n"),
    "release-raises": ("raise RuntimeError('gone in this release')", [RELEASE], None),
    "unchanged": ("print('same')", [], None),
}


def rules():
    """The sanitize rules the layer passes to nbval: the file's own and SANITIZE's."""
    text = (ROOT / "tests" / "sanitize.cfg").read_text() + other_torch.SANITIZE
    pairs = re.findall(r"^regex: (.*)\nreplace: (.*)$", text, flags=re.M)
    return [(re.compile(regex), replace) for regex, replace in pairs]


def sanitized(text):
    for regex, replace in rules():
        text = regex.sub(replace, text)
    return text


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("other-torch")
    path = folder / "release.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for cell_id, (source, tags, _) in CELLS.items():
        nb.cells.append(nbformat.v4.new_code_cell(source, id=cell_id, metadata={"tags": tags}))
    nbformat.write(nb, path)
    stored = reproducible(execute(path), None, path.stem)
    for cell in stored.cells:                  # what the pinned torch printed, said to differ
        if CELLS[cell.id][2] is not None:
            cell.outputs[0].text = CELLS[cell.id][2]
        if cell.id == "release-raises":        # the stored run did not raise
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    nbformat.write(stored, path)
    cfg = folder / "sanitize.cfg"
    cfg.write_text((ROOT / "tests" / "sanitize.cfg").read_text() + other_torch.SANITIZE)
    (folder / "pytest.ini").write_text("[pytest]\n")

    def nbval(*option):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-rA", "-p", "no:cacheprovider",
             "-p", "conftest", *option, f"--nbval-sanitize-with={cfg}", "-c", str(folder / "pytest.ini"),
             "--rootdir", str(folder), path.name],
            cwd=folder, capture_output=True, text=True,
            env={**without_addopts(), "PYTHONPATH": f"{ROOT / 'tests'}:{ROOT}"})
        return done.stdout + done.stderr

    return path, stored, nbval("--other-torch"), nbval()


def test_a_tagged_cell_that_changed_is_run_and_listed_not_compared(run):
    out = run[2]
    assert re.search(r"PASSED release.ipynb::Cell 0\b", out), out
    assert "run, not compared" in out and "release.ipynb cell 0" in out, out
    assert re.search(r"FAILED release.ipynb::Cell 0\b", run[3]), run[3]           # compared without the option


def test_an_untagged_cell_that_changed_fails(run):
    assert re.search(r"FAILED release.ipynb::Cell 1\b", run[2]), run[2]


def test_a_tagged_cell_that_raises_fails(run):
    assert re.search(r"FAILED release.ipynb::Cell 2\b", run[2]), run[2]
    assert re.search(r"PASSED release.ipynb::Cell 3\b", run[2]), run[2]


def test_the_new_rule_swaps_the_release_and_what_follows_it_only():
    same = torch_report("2.13.0+cpu", "2.13.0")[1]
    other = torch_report("2.14.1+cu130", "2.13.0")[1]
    assert same != other and sanitized(same) == sanitized(other) == "torch RELEASE", (sanitized(same), sanitized(other))
    assert sanitized("torch 2.13.0\n") == sanitized("torch 2.14.1\n")           # the set-up cells' line
    assert sanitized("saved 16 bytes with torch 2.13.0, here") == "saved 16 bytes with torch RELEASE, here"
    older = torch_report("2.8.0", "2.13.0")[1]
    assert sanitized(older) not in (sanitized(same), "torch RELEASE"), sanitized(older)    # a refusal stays one


def test_only_existing_make_test_files_are_left_out_and_never_the_exercises():
    """A misspelt name in SAME_ON_ANY_TORCH would leave nothing out; a file the other torch
    must run (the exercises' right answers, the notebooks' drawings) must not be named."""
    left_out = set(other_torch.SAME_ON_ANY_TORCH)
    missing = sorted(name for name in left_out if not (ROOT / "tests" / name).is_file())
    assert not missing, f"SAME_ON_ANY_TORCH names no such test file: {missing}"
    outside = sorted(name for name in left_out if not selected(ROOT / "tests" / name, "test"))
    assert not outside, f"SAME_ON_ANY_TORCH names files make test does not run: {outside}"
    needed = {"test_exercises.py", "test_solutions.py", "test_exercise_checks.py", "test_real_models.py",
              "test_dot.py", "test_graph.py"}
    assert not left_out & needed, sorted(left_out & needed)
    assert [f"--ignore=tests/{name}" for name in other_torch.SAME_ON_ANY_TORCH] == \
        [arg for arg in other_torch.pytest_command("python", "rules") if arg.startswith("--ignore=")]


def test_the_cuda_builds_own_tests_name_real_ones_of_the_integration_layer():
    """make test-torch runs ON_A_CUDA_BUILD beside make test's selection: a renamed test would
    leave pytest nothing to run there (it says 'not found' and fails, but only on that run)."""
    for node in other_torch.ON_A_CUDA_BUILD:
        path, name = node.split("::")
        assert re.search(rf"^def {name}\(", (ROOT / path).read_text(), re.M), f"{node} names no test"
        assert not selected(ROOT / path, "test"), f"{path} is in make test's selection already"
    also = [arg for arg in other_torch.pytest_command("python", "rules") if arg.startswith("--also=")]
    assert also == [f"--also={node}" for node in other_torch.ON_A_CUDA_BUILD]
    collected = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                                "--layers", "test", *also, "tests/test_check_limits.py"], cwd=ROOT,
                               capture_output=True, text=True, env=without_addopts())
    assert [line for line in collected.stdout.splitlines() if "::" in line] == list(other_torch.ON_A_CUDA_BUILD), \
        collected.stdout[-2000:]
