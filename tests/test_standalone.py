"""Every notebook opened on its own, as Colab or a download meets it (tools/testkit/alone.py): the set-up cell
installs the collection in one line, every cell prints what the stored notebook printed, every widget redraws."""

import ast
import copy
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from importlib.metadata import packages_distributions

import nbformat
import pytest
from packaging.requirements import Requirement

from helpers import standalone
from helpers.project import BRANCH, REPOSITORY, colab_url
from tools.build.nav import INSTALL, OFFLINE
from tools.build.run_notebooks import problems
from tools.notebooks import notebook_paths
from tools.testkit import alone

# changes each control of every panel in the kernel and prints whether the view redrew
REDRAW = """\
import gc
import warnings

from helpers.widgets import Panel

with warnings.catch_warnings():  # touching every object wakes deprecated modules
    warnings.simplefilter("ignore")
    panels = [o for o in gc.get_objects() if issubclass(type(o), Panel)]
for panel in panels:
    for name, control in panel.controls.items():
        before = panel.view.value
        options = getattr(control, "options", None)
        if options:
            values = [o[1] if isinstance(o, tuple) else o for o in options]
            control.value = next(v for v in values if v != control.value)
        elif isinstance(control.value, bool):
            control.value = not control.value
        else:
            control.value = control.max if control.value != control.max else control.min
        after = panel.view.value
        print(name, "failed" if 'role="alert"' in after else
              "redrew" if after != before else "did not redraw")
"""


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """(python, source): the Colab-like environment and the stand-in for GitHub."""
    root = tmp_path_factory.mktemp("alone")
    return alone.environment(root / "env"), alone.build_repository(root / "github")


def run(nb_path, colab, folder, extra=None, source=None, stop_on_error=False):
    """Run `nb_path` alone (a last cell `extra` added). The first run's set-up cell installs the collection from
    the stand-in; the next ones find it installed (every set-up cell is the same: tests/structure.py)."""
    python, github = colab
    if extra:
        nb = nbformat.read(nb_path, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(extra))
        nb_path = folder.with_suffix(".ipynb")
        nbformat.write(nb, nb_path)
    return alone.run_alone(nb_path, python, source or github, folder, stop_on_error=stop_on_error)


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_a_notebook_alone_runs_as_in_the_repository(path, colab, tmp_path):
    fresh = run(path, colab, tmp_path / "alone", extra=REDRAW)
    stored = nbformat.read(path, as_version=4)
    said = alone.set_up_output(fresh)
    assert said.startswith("Ready: ") and said.count("\n") == 1, said    # pip's lines cleared: one line
    extra = fresh.cells.pop()
    assert problems(fresh) == []
    assert alone.differences(stored, fresh) == []
    redraws = "".join(o.get("text", "") + o.get("evalue", "") for o in extra.outputs)
    assert not any(o.output_type == "error" for o in extra.outputs), redraws
    assert "did not redraw" not in redraws and "failed" not in redraws, redraws
    has_panel = any("panel(" in c.source for c in stored.cells if c.cell_type == "code")
    assert ("redrew" in redraws) == has_panel, redraws


def test_offline_run_all_stops_at_the_set_up_cell(colab, tmp_path):
    """No network (git cannot fetch the collection): the set-up cell fails in
    three lines, pip's, ours saying what to do and IPython's UsageError, and
    Run All runs no cell after it."""
    alone.uninstall(colab[0])
    fresh = run(notebook_paths()[1], colab, tmp_path / "alone", source=tmp_path / "no-network", stop_on_error=True)
    code = [c for c in fresh.cells if c.cell_type == "code"]
    assert code[0].get("id") == INSTALL
    printed = alone.set_up_output(fresh).splitlines()
    assert len(printed) == 3 and "git clone" in printed[0], printed
    assert printed[1:] == [OFFLINE, "UsageError: Missing module name."], printed
    assert [c.outputs for c in code[1:] if c.outputs] == []


def test_a_changed_output_is_a_difference():
    stored = nbformat.read(notebook_paths()[1], as_version=4)
    changed = copy.deepcopy(stored)
    cell = next(c for c in changed.cells if c.cell_type == "code" and c.get("id") != INSTALL
                and any(o.output_type == "stream" for o in c.outputs))
    next(o for o in cell.outputs if o.output_type == "stream").text += "one line more\n"
    assert alone.differences(stored, stored) == []
    assert len(alone.differences(stored, changed)) == 1


def imported(source):
    """The top-level modules `source` imports (none for an answer slot's placeholder, not Python yet)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    checked_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and getattr(
        node.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(node)}     # read by the type checker only
    found = set()
    for node in (n for n in ast.walk(tree) if id(n) not in checked_only):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_wheel_carries_and_declares_what_the_notebooks_use(tmp_path):
    wheel = alone.build_wheel(tmp_path / "wheel")
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"helpers/stored_notebooks/{p.name}" for p in notebook_paths()} <= set(names)
    assert {f"helpers/exercises/{p.name}" for p in alone.ROOT.joinpath("helpers", "exercises").glob("*.py")} <= set(
        names)
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    declared = {Requirement(line.split(":", 1)[1]).name.lower() for line in meta.splitlines()
                if line.startswith("Requires-Dist:")}
    sources = [c.source for p in notebook_paths() for c in nbformat.read(p, as_version=4).cells
               if c.cell_type == "code"]
    sources += [p.read_text() for p in alone.ROOT.joinpath("helpers").rglob("*.py")]
    modules = set().union(*(imported("\n".join(line for line in s.splitlines() if not line.lstrip().startswith(
        ("%", "!")))) for s in sources)) - set(sys.stdlib_module_names) - {"helpers", "__future__"}
    distributions = packages_distributions()
    # IPython comes with ipywidgets (it requires ipython), as it does with every Jupyter kernel
    undeclared = {m for m in modules if not {d.lower() for d in distributions.get(m, [m])} & (declared | {"ipython"})}
    assert undeclared == set(), f"imported but not in pyproject.toml's dependencies: {sorted(undeclared)}"


@pytest.mark.parametrize("absent", ["torchviz", "torch", "ipywidgets"])
def test_ready_installs_only_what_the_runtime_lacks_never_the_runtimes_own(monkeypatch, absent):
    real = standalone.importlib.util.find_spec
    monkeypatch.setattr(standalone.importlib.util, "find_spec", lambda name: None if name == absent else real(name))
    calls = []
    if absent == "torchviz":
        line = standalone.ready(install=calls.append)
        assert calls == [["--no-deps", "torchviz"]]
        assert line == standalone.ready_line(metadata.version("torch")) and line.startswith("Ready: ")
        return
    with pytest.raises(standalone.SetUpError, match=f"this Python has no {absent}: pip install {absent}") as raised:
        standalone.ready(install=calls.append)
    assert calls == []
    shown = raised.value._render_traceback_()          # what a notebook shows: the message, no traceback
    assert len(shown) <= 3 and shown[0].startswith("SetUpError: this Python has no"), shown


def test_the_ready_line_names_the_learners_torch_where_it_differs():
    same = standalone.ready_line("2.13.0+cpu", pinned="2.13.0", tagged=5)
    other = standalone.ready_line("2.14.1", pinned="2.13.0", tagged=5)
    assert same == "Ready: torch 2.13.0, the release this text was checked against."
    assert other.startswith("Ready: this text was checked against torch 2.13.0; yours is 2.14.1, so the 5 cells")
    assert "\n" not in same + other


def test_every_address_of_the_repository_names_the_one_in_project_py():
    """The README and pyproject.toml spell it out (they cannot import it): a fork that changes it is told where
    else to."""
    ours = re.compile(r"colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/|github\.com/([\w.-]+/[\w.-]+)/archive/"
                      r"|^Repository = \"https://github\.com/([\w.-]+/[\w.-]+)\"", re.M)
    for name in ("README.md", "pyproject.toml"):
        named = {"".join(found) for found in ours.findall(alone.ROOT.joinpath(name).read_text())}
        assert named == {REPOSITORY}, f"{name} names {sorted(named)}, helpers/project.py {REPOSITORY}"
    readme = alone.ROOT.joinpath("README.md").read_text()
    assert colab_url("00-index.ipynb") in readme and f"/refs/heads/{BRANCH}.zip" in readme


def test_the_set_up_cell_needs_neither_torch_nor_ipywidgets_to_speak():
    """The set-up cell loads helpers.standalone before it knows torch and ipywidgets are there: a runtime without
    them gets ready()'s message, not a bare ModuleNotFoundError."""
    code = "import sys, helpers.standalone; print(sorted({'torch', 'ipywidgets'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
