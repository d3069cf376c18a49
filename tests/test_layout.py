"""The layout of tools/ (tools/__init__.py): packages by role, few modules
directly in tools/, no import cycle, and a learner's runtime that imports
nothing from the test kit or the other roles (the hub image runs it)."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
ROLES = {"runtime", "build", "testkit", "bench"}
MOST_TOP_LEVEL = 8
# what the runtime may import from the repository: itself, the notebooks' list, helpers
RUNTIME_MAY_IMPORT = ("tools.runtime", "tools.notebooks", "helpers")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = ROOT) -> set[str]:
    """Every module of the repository `path` imports, anywhere in it (imports
    inside functions too), named as absolute modules."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                if node.level else node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in ("tools", "helpers")}


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Modules of tools/ and helpers/ and the ones of them each imports."""
    paths = [p for folder in ("tools", "helpers") for p in (root / folder).rglob("*.py")]
    names = {module_name(p, root) for p in paths}
    return {module_name(p, root): (imports(p, root) & names) - {module_name(p, root)} for p in paths}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or round a loop
    (a package importing its own submodules for re-export is no cycle)."""
    reach = {}
    for start in edges:
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        reach[start] = seen
    groups = {frozenset([a, *(b for b in reach[a] if a in reach[b])]) for a in edges if a in reach[a]}
    return sorted(sorted(g) for g in groups
                  if not any(other != member and other.startswith(member + ".") for member in g for other in g))


def test_few_modules_directly_in_tools():
    top = sorted(p.name for p in TOOLS.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MOST_TOP_LEVEL, (
        f"tools/ holds {len(top)} modules directly ({', '.join(top)}); at most {MOST_TOP_LEVEL}: put a tool in "
        f"the package of its role ({', '.join(sorted(ROLES))}), as tools/__init__.py says")
    packages = {p.parent.name for p in TOOLS.glob("*/__init__.py")}
    assert packages == ROLES, f"tools/'s packages are {sorted(packages)}; tools/__init__.py describes {sorted(ROLES)}"


def test_no_import_cycle():
    found = cycles(graph())
    assert not found, "modules that import each other (move what both need into a module below them): " + \
        "; ".join(" <-> ".join(group) for group in found)


def test_the_runtime_imports_no_other_role():
    edges = graph()
    wrong = {(name, target) for name, targets in edges.items() if name.startswith("tools.runtime")
             for target in targets if not target.startswith(RUNTIME_MAY_IMPORT)}
    assert not wrong, "the learner's runtime (tools/runtime/, which the hub image runs) imports " + \
        ", ".join(f"{t} (in {n})" for n, t in sorted(wrong)) + f"; it may import only {', '.join(RUNTIME_MAY_IMPORT)}"


def helpers_importing_tools(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((name, target) for name, targets in edges.items() if name.split(".")[0] == "helpers"
                  for target in targets if target.split(".")[0] == "tools")


def test_helpers_import_no_tools():
    """helpers/ is what a learner's kernel imports, where a folder of the learner's named
    tools/ may come first on the path: it imports nothing from tools/."""
    wrong = helpers_importing_tools(graph())
    assert not wrong, "helpers/ imports tools/ (a learner's own tools/ folder may be found first): " + \
        ", ".join(f"{t} (in {n})" for n, t in wrong)


def test_a_helpers_import_of_tools_is_found(tmp_path):
    for folder in ("tools", "helpers/exercises"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "helpers/__init__.py").write_text("")
    (tmp_path / "tools/notebooks.py").write_text("SLOT = 'answer-slot'\n")
    (tmp_path / "helpers/exercises/lesson.py").write_text("def f():\n    from tools.notebooks import SLOT\n")
    assert helpers_importing_tools(graph(tmp_path)) == [("helpers.exercises.lesson", "tools.notebooks")]


@pytest.mark.parametrize("edges, expected", [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
    ({"p": {"p.x"}, "p.x": {"p"}}, []),
    ({"a": {"b"}, "b": set()}, []),
])
def test_cycles_are_found(edges, expected):
    assert cycles(edges) == expected


def test_a_runtime_import_of_the_test_kit_is_found(tmp_path):
    for folder in ("tools", "tools/runtime", "tools/testkit", "helpers"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "tools/testkit/browser.py").write_text("")
    (tmp_path / "tools/runtime/lab.py").write_text("def f():\n    from ..testkit import browser\n")
    assert graph(tmp_path)["tools.runtime.lab"] == {"tools.testkit", "tools.testkit.browser"}


NUMBER = r"(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d+)"
# "all nine notebooks", "the ten notebooks": a count of the collection written by hand,
# which goes stale when a notebook is added (make new). A range of notebooks a text is
# about ("notebooks 01 to 05") is no count.
COUNTED = re.compile(rf"\b(?:all|the|these|its) {NUMBER} (?:lesson |optional )?notebooks\b", re.I)


def counts_written_by_hand(root: Path = ROOT) -> list[str]:
    paths = [root / "README.md", root / "CONTRIBUTING.md", *(root / "docs").glob("*.md"),
             *(root / "notebooks").glob("*.ipynb"), *(root / "tools").rglob("*.py"), *(root / "helpers").rglob("*.py")]
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":     # its prose and code, not its outputs
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        found += [f"{path.relative_to(root)}: {m.group(0)!r}" for m in COUNTED.finditer(text)]
    return found


def test_no_count_of_the_notebooks_is_written_by_hand():
    found = counts_written_by_hand()
    assert not found, ("counts of the notebooks written by hand, stale once a notebook is added: say 'every "
                       "notebook', or derive the list (tools/notebooks.py): " + "; ".join(found))


def test_a_count_written_by_hand_is_found(tmp_path):
    for folder in ("docs", "notebooks", "tools", "helpers"):
        (tmp_path / folder).mkdir()
    (tmp_path / "README.md").write_text("Work through all nine notebooks, then notebooks 01 to 05 again.\n")
    (tmp_path / "CONTRIBUTING.md").write_text("Every notebook has three cells; the 10 lesson notebooks\n")
    assert counts_written_by_hand(tmp_path) == ["README.md: 'all nine notebooks'",
                                                "CONTRIBUTING.md: 'the 10 lesson notebooks'"]


def test_the_layers_name_test_files_that_exist_and_split_the_suite_in_two():
    """make test and make test-integration together collect every test file
    once; make quick collects a part of make test's."""
    from conftest import EXECUTING, integration_files

    named = sorted(integration_files()) + list(EXECUTING)
    missing = [name for name in named if not (ROOT / "tests" / name).is_file()]
    assert not missing, f"tests/conftest.py's layers name test files that do not exist: {', '.join(missing)}"
    assert not integration_files() & set(EXECUTING), "a file make test leaves out cannot be one make quick leaves out"
    collected = {layers: _collected(layers) for layers in ("all", "test", "integration", "quick")}
    assert collected["test"] & collected["integration"] == set(), "a file collected by both make test and integration"
    assert collected["test"] | collected["integration"] == collected["all"]
    assert collected["quick"] < collected["test"] and any(f.endswith(".ipynb") for f in collected["test"])
    assert sorted(collected["integration"]) == sorted(integration_files())


def _collected(layers):
    """The test files and notebooks conftest's rule runs under --layers `layers`."""
    from conftest import selected

    files = [*(ROOT / "tests").glob("test_*.py"), *(ROOT / "notebooks").glob("*.ipynb")]
    return {f.name for f in files if selected(f, layers)}


# one file of each kind: a notebook (nbval), one make test-integration runs, one make quick
# leaves out, one every layer but integration runs
SAMPLE = ("notebooks/00-index.ipynb", "tests/test_pins.py", "tests/test_solutions.py", "tests/test_arguments.py")


@pytest.mark.parametrize("layers, expected", [("test", (SAMPLE[0], SAMPLE[2], SAMPLE[3])),
                                              ("integration", (SAMPLE[1],))])
def test_pytest_itself_runs_what_the_layers_say(layers, expected):
    """The rule applied by pytest: `--collect-only --layers` over one file of each kind
    (the notebooks are collected by nbval, outside the folder of tests/conftest.py's hooks)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "--layers", layers, *SAMPLE],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert sorted({line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}) == sorted(expected)
