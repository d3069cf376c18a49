"""The sandbox of `make grade` (classroom/grade_sandbox.py) on its own."""

import ast
import re
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from classroom import grade, grade_sandbox

ROOT = Path(__file__).resolve().parents[2]
NO_SANDBOX = grade_sandbox.why_no_sandbox()
pytestmark = pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")


def inside(code, **limits):
    limits = grade_sandbox.RunLimits(**{"wall": 30, **limits})
    return grade_sandbox.run([grade_sandbox.python(), "-c", code], b"", limits)


def test_the_watchdog_kills_at_the_wall_clock_limit_and_nothing_outlives_it():
    token = uuid.uuid4().hex
    found = inside("import subprocess, sys, time\n"
                   f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(999)  # {token}'],"
                   " start_new_session=True)\n"
                   "while True:\n    try:\n        time.sleep(100)\n    except BaseException:\n        pass", wall=3)
    assert found.returncode is None and "wall-clock limit" in found.stopped
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if token in " ".join(p.info["cmdline"] or [])]
    assert left == [], f"processes outlived the sandbox: {left}"


def test_an_empty_world_and_of_the_collection_only_what_grading_reads():
    """No network and a read-only collection: test_grade_hostile.py's network and write-checkout learners."""
    code = ("import os\n"
            "print(sorted(os.listdir('/')), os.getuid(), os.path.expanduser('~'))\n"
            f"print(sorted(os.listdir({str(ROOT)!r})))\n"
            f"print(sorted(os.listdir({str(ROOT / 'classroom')!r})))")
    found = inside(code)
    lines = found.stdout.decode().splitlines()
    seen = set(ast.literal_eval(lines[0].split("]")[0] + "]"))
    # the homes stay out, but for the one holding the interpreter (pyenv's under /root), bound alone
    interpreter_tops = {Path(p).resolve().parts[1] for p in (sys.prefix, sys.base_prefix)}
    assert not seen & ({"root", "home"} - interpreter_tops) and "65534" in lines[0], lines[0]
    binds = grade_sandbox._binds()
    bound = [Path(binds[i + 1]) for i, a in enumerate(binds) if a == "--ro-bind"]
    environment = {p.relative_to(ROOT).parts[0] for p in bound if p.is_relative_to(ROOT)} - {"helpers", "tools",
                   "notebooks", "jupyter", "classroom"}                                     # .venv, mostly
    assert set(eval(lines[1])) <= {"helpers", "tools", "notebooks", "jupyter", "classroom", *environment}, lines[1]
    assert sorted(eval(lines[2])) == ["__init__.py", "grade_run.py"], lines[2]      # the runner, not the hub's files


DEV = """
found = []
for path in ("/dev/planted", "/dev/shm/big"):
    try:
        with open(path, "wb") as f:
            f.write(b"x" * (3 * 2 ** 20))
        found.append("wrote " + path)
    except OSError as error:
        found.append(f"refused {path} {error.errno}")
print(" | ".join(found))
"""


def test_dev_is_read_only_and_dev_shm_bounded():
    printed = inside(DEV, disk=2 * 2 ** 20).stdout.decode()
    assert "refused /dev/planted 30" in printed, printed                 # /dev is read-only
    assert re.search(r"refused /dev/shm/big (27|28)", printed), printed      # /dev/shm bounded like /tmp


def test_a_venv_reached_through_a_link_runs_the_same(tmp_path, monkeypatch):
    link = tmp_path / "venv-link"
    link.symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    monkeypatch.setattr(sys, "executable", str(link / "bin" / Path(sys.executable).name))
    monkeypatch.setattr(sys, "prefix", str(link))
    python = grade_sandbox.python()
    assert "venv-link" not in python and Path(python).parent == Path(sys.prefix).resolve() / "bin"
    found = grade_sandbox.run([python, "-c", "import sys, nbclient, torch; print(sys.prefix)"], b"",
                              grade_sandbox.RunLimits(wall=60))
    assert found.returncode == 0 and found.stdout.decode().strip() == str(Path(sys.prefix).resolve()), found


def test_without_a_cgroup_prlimit_bounds_memory_and_says_so(tmp_path):
    found = grade_sandbox.run([sys.executable, "-c", "b = bytearray(900 * 2 ** 20); print('ALLOCATED')"], b"",
                              grade_sandbox.RunLimits(wall=30, memory=600 * 2 ** 20),
                              cgroups_root=tmp_path / "no-cgroups-here")
    assert b"ALLOCATED" not in found.stdout and "MemoryError" in found.stderr, found
    assert "no cgroup, so prlimit bounds each process's address space to 600 MB" in found.weaker[0], found.weaker
    held = grade_sandbox.run([sys.executable, "-c", "print('ok')"], b"", grade_sandbox.RunLimits(wall=30))
    assert held.stdout == b"ok\n" and held.weaker == (), held.weaker


def test_without_a_sandbox_grading_refuses_and_says_how(monkeypatch, tmp_path):
    monkeypatch.setattr(grade_sandbox, "why_no_sandbox", lambda: "grading's sandbox needs bubblewrap (bwrap)")
    with pytest.raises(grade.NoSandbox, match="apt|bubblewrap") as error:
        grade.grade(tmp_path, tmp_path / "out")
    assert "UNISOLATED=1" in str(error.value) and "--unisolated" in str(error.value)
    assert grade.main([str(tmp_path), "--out", str(tmp_path / "out")]) == 2
