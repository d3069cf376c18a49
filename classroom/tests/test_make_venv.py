"""make hub's advice `make hub PYTHON=/usr/bin/python3` over a .venv another Python made (`make -n`)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from classroom.hub_users import SYSTEM_PYTHON

ROOT = Path(__file__).resolve().parents[2]
WHICH = "import sys; print(sys.base_prefix, sys.version)"


def which(python):
    return subprocess.run([str(python), "-c", WHICH], capture_output=True, text=True).stdout


def other_python():
    """A Python that is not the system's (pyenv's, another release), or None."""
    for candidate in (shutil.which("python3"), *sorted(Path.home().glob(".pyenv/versions/3.1*/bin/python3")),
                      shutil.which("python3.12"), shutil.which("python3.13")):
        if candidate and which(candidate) not in ("", which(SYSTEM_PYTHON)):
            return str(candidate)
    return None


def make(checkout, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS", "PYTHON"))}
    return subprocess.run(["make", "-n", ".venv/.installed-dev", *args], cwd=checkout, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.skipif(not os.access(SYSTEM_PYTHON, os.X_OK), reason=f"no {SYSTEM_PYTHON}")
def test_python_named_makes_the_venv_again_though_nothing_changed(tmp_path):
    other = other_python()
    if other is None:
        pytest.skip("only one Python on this machine")
    shutil.copy(ROOT / "Makefile", tmp_path)
    for name in ("requirements.txt", "requirements-dev.txt", "pyproject.toml"):
        (tmp_path / name).write_text("")
    subprocess.run([other, "-m", "venv", "--without-pip", str(tmp_path / ".venv")], check=True, timeout=120)
    (tmp_path / ".venv" / ".installed").touch()
    (tmp_path / ".venv" / ".installed-dev").touch()         # up to date with the requirements

    planned = make(tmp_path, f"PYTHON={SYSTEM_PYTHON}").stdout
    assert f"{SYSTEM_PYTHON}: making it again\"; rm -rf .venv" in planned, planned
    assert f"{SYSTEM_PYTHON} -m venv .venv" in planned and "pip install" in planned, planned
    # the Python that made it named: kept, nothing installed; nor with the default python3
    assert "pip install" not in make(tmp_path, f"PYTHON={other}").stdout
    assert "pip install" not in make(tmp_path).stdout
