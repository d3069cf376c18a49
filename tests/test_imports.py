"""The import layers are import-linter's contracts ([tool.importlinter] in
pyproject.toml), checked by `lint-imports` in make test, make quick and make
check. Here they are shown failing: helpers/ importing tools/, the runtime
importing the test kit, tools/ importing the classroom, the classroom importing
the test kit, two modules importing each other, and a drawing
floor importing one above it through another module."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
BROKEN = {
    "helpers/lesson.py": "from tools.notebooks import NOTEBOOKS\n",
    "tools/runtime/lab.py": "def f():\n    from tools.testkit import browser\n",
    "tools/build/a.py": "from tools.bench import b\n",
    "tools/bench/b.py": "from tools.build import a\n",
    "helpers/walk.py": "def f():\n    from helpers import support\n",       # support imports draw: upward
    "tools/notebooks.py": "import classroom\n",
    "classroom/grade.py": "from tools.testkit import browser\n",
}
FLOORS = ("draw", "dot", "text_form", "plan", "roll", "from_scratch", "graph", "walk", "svg")


def _tree(folder, files):
    for package in ("helpers", "helpers/exercises", "helpers/lessons", "tools", "tools/runtime", "tools/testkit",
                    "tools/build", "tools/bench", "classroom"):
        (folder / package).mkdir(parents=True, exist_ok=True)
        (folder / package / "__init__.py").write_text("")
    (folder / "tools/notebooks.py").write_text("NOTEBOOKS = 'notebooks'\n")
    (folder / "tools/testkit/browser.py").write_text("")
    (folder / "tools/loopback.py").write_text("")
    for name in FLOORS:
        (folder / f"helpers/{name}.py").write_text("")
    (folder / "helpers/support.py").write_text("from helpers import draw\n")
    (folder / "helpers/exercises/session.py").write_text("def declared():\n    from .. import lessons\n")
    for name, text in files.items():
        (folder / name).write_text(text)
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")


def _lint(folder):
    return subprocess.run([str(LINT), "--no-cache"], cwd=folder, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(folder)})


@pytest.mark.parametrize("broken, contract", [
    ("helpers/lesson.py", "helpers/ imports nothing of tools/"),
    ("tools/runtime/lab.py", "The learner's runtime"),
    ("tools/build/a.py", "No import cycle"),
    ("helpers/walk.py", "The drawing goes down its floors"),
    ("tools/notebooks.py", "tools/ imports nothing of the classroom"),
    ("classroom/grade.py", "The class (make hub, make grade) runs without the test kit"),
])
def test_each_contract_fails_when_broken(tmp_path, broken, contract):
    files = {name: text for name, text in BROKEN.items() if name == broken or broken == "tools/build/a.py"
             and name.startswith("tools/b")}
    _tree(tmp_path, files)
    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    broken_part = done.stdout.split("Broken contracts", 1)[-1]
    assert contract in " ".join(broken_part.split()), done.stdout


def test_the_same_tree_unbroken_passes(tmp_path):
    _tree(tmp_path, {"helpers/lesson.py": "import json\n", "tools/runtime/lab.py": "from tools import notebooks\n"})
    done = _lint(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
