"""The sandbox `make grade` runs each submission in (classroom/sandbox.py),
on its own: the watchdog kills at the wall-clock limit, nothing started
inside outlives it, no network, the collection read-only, no view of the
machine's files; and what an answer gives back is plain data the grader
rebuilds from exact built-in types (helpers/exercises/observe.py), its
subclasses read by their built-in value."""

import ast
import math
import re
import socket
import sys
import time
import uuid
from fractions import Fraction
from pathlib import Path

import pytest
import torch

from helpers.exercises import ____
from helpers.exercises.observe import NotPlain, Opaque, plain, unplain
from classroom import grade, grade_sandbox

ROOT = Path(__file__).resolve().parents[2]
NO_SANDBOX = grade_sandbox.why_no_sandbox()
pytestmark = pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")


def inside(code, **limits):
    return grade_sandbox.run([sys.executable, "-c", code], b"", grade_sandbox.RunLimits(**{"wall": 30, **limits}))


def test_the_watchdog_kills_at_the_wall_clock_limit_and_nothing_outlives_it():
    token = uuid.uuid4().hex
    start = time.monotonic()
    found = inside("import subprocess, sys, time\n"
                   f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(999)  # {token}'],"
                   " start_new_session=True)\n"
                   "while True:\n    try:\n        time.sleep(100)\n    except BaseException:\n        pass", wall=3)
    assert time.monotonic() - start < 10 and found.returncode is None and "wall-clock limit" in found.stopped
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _holds(p, token)]
    assert left == [], f"processes outlived the sandbox: {left}"


def _holds(proc, token):
    try:
        return token in (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def test_no_network_and_a_read_only_collection_in_an_empty_world():
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    code = ("import os, socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), timeout=2); print('NET')\n"
            "except OSError:\n    print('no-net')\n"
            f"try:\n    open({str(ROOT / 'helpers' / 'x.py')!r}, 'w'); print('WROTE')\n"
            "except OSError as e:\n    print('read-only', e.errno)\n"
            "print(sorted(os.listdir('/')), os.getuid(), os.path.expanduser('~'))\n"
            f"print(sorted(os.listdir({str(ROOT)!r})))")
    found = inside(code)
    server.close()
    lines = found.stdout.decode().splitlines()
    assert lines[:2] == ["no-net", "read-only 30"], (lines, found.stderr[-500:])
    seen = set(ast.literal_eval(lines[2].split("]")[0] + "]"))
    # the homes stay out, but for the one holding the interpreter (pyenv's under /root), bound alone
    interpreter_tops = {Path(p).resolve().parts[1] for p in (sys.prefix, sys.base_prefix)}
    assert not seen & ({"root", "home"} - interpreter_tops) and "65534" in lines[2], lines[2]
    bound = [Path(p).resolve() for p in (sys.prefix, sys.base_prefix)] + grade_sandbox._other_site_packages(set())
    environment = {p.relative_to(ROOT).parts[0] for p in bound if p.is_relative_to(ROOT)}    # .venv, mostly
    assert set(eval(lines[3])) <= {"helpers", "tools", "classroom", "notebooks", "jupyter", *environment}, lines[3]


RUNNER = """
import os, signal, sys, time
from classroom.grade_run import out_of_reach
assert os.getpid() == 1 and out_of_reach()
child = os.fork()
if child == 0:                       # the kernel's place: the same uid as the runner, below it
    found = []
    for path in ("/proc/1/fd/1", "/proc/1/fd/0", "/proc/1/mem", "/proc/1/environ"):
        try:
            open(path, "rb" if "fd" not in path else "w")
            found.append("opened " + path)
        except OSError as error:
            found.append(f"refused {path} {error.errno}")
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL, signal.SIGSTOP):
        os.kill(1, number)
    for path in ("/dev/planted", "/dev/shm/big"):
        try:
            with open(path, "wb") as f:
                f.write(b"x" * (3 * 2 ** 20))
            found.append("wrote " + path)
        except OSError as error:
            found.append(f"refused {path} {error.errno}")
    print(" | ".join(found), flush=True)
    os._exit(0)
os.waitpid(child, 0)
time.sleep(0.5)
print("the runner lives")
"""


def test_the_runner_is_out_of_the_kernel_s_reach_and_dev_is_bounded():
    found = inside(RUNNER, disk=2 * 2 ** 20)
    printed = found.stdout.decode()
    assert found.returncode == 0 and printed.endswith("the runner lives\n"), (printed, found.stderr[-1500:])
    assert "opened" not in printed and printed.count("refused /proc/1/") == 4, printed
    assert "refused /dev/planted 30" in printed, printed                 # /dev is read-only
    assert re.search(r"refused /dev/shm/big (27|28)", printed), printed      # /dev/shm bounded like /tmp


def test_without_a_cgroup_prlimit_bounds_memory_and_says_so(tmp_path):
    found = grade_sandbox.run([sys.executable, "-c", "b = bytearray(900 * 2 ** 20); print('ALLOCATED')"], b"",
                              grade_sandbox.RunLimits(wall=30, memory=600 * 2 ** 20),
                              cgroups_root=tmp_path / "no-cgroups-here")
    assert b"ALLOCATED" not in found.stdout and "MemoryError" in found.stderr, found
    said = "\n".join(found.enforced)
    assert "no cgroup, so prlimit bounds each process's address space to 600 MB" in said, said
    assert "cgroup:" not in said and said.startswith("namespaces: user"), said
    held = grade_sandbox.run([sys.executable, "-c", "print('ok')"], b"", grade_sandbox.RunLimits(wall=30))
    assert held.stdout == b"ok\n" and any(line.startswith("cgroup: memory") for line in held.enforced), held.enforced


def test_without_a_sandbox_grading_refuses_and_says_how(monkeypatch, tmp_path):
    monkeypatch.setattr(grade_sandbox, "why_no_sandbox", lambda: "grading's sandbox needs bubblewrap (bwrap)")
    with pytest.raises(grade.NoSandbox, match="apt|bubblewrap") as error:
        grade.grade(tmp_path, tmp_path / "out")
    assert "UNISOLATED=1" in str(error.value) and "--unisolated" in str(error.value)
    assert grade.main([str(tmp_path), "--out", str(tmp_path / "out")]) == 2


class Sly(int):
    def __int__(self):
        raise AssertionError("the grader's conversion called the answer's own __int__")

    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class Liar(str):
    def __eq__(self, other):
        return True

    def __str__(self):
        return "b"

    def strip(self):
        return self

    __hash__ = str.__hash__


@pytest.mark.parametrize("answer, expected", [
    (Sly(3), 3), (Liar("a"), "a"), ([Sly(1), Liar("p")], [1, "p"]), ({"p", "q"}, {"p", "q"}),
    (frozenset({2}), frozenset({2})), ((1.5, None, True), (1.5, None, True)), ({"k": (1,)}, {"k": (1,)}),
    (Fraction(16, 2), Fraction(8)), (10 ** 400, 10 ** 400), (-math.inf, -math.inf), ([math.inf, 1.0], [math.inf, 1.0]),
])
def test_an_answer_comes_back_as_its_built_in_value(answer, expected):
    import json

    back = unplain(json.loads(json.dumps(plain(answer))))
    assert back == expected and type(back) is type(expected)
    assert all(type(x) in (int, str, float, bool, type(None), tuple, dict, Fraction) for x in
               (back if isinstance(back, (list, tuple, set, frozenset)) else [back]))


def test_nan_comes_back_as_nan_through_strict_json_in_a_value_and_a_tensor():
    import json

    back = unplain(json.loads(json.dumps(plain([math.nan, torch.tensor([math.nan, 2.0])]), allow_nan=False)))
    assert math.isnan(back[0]) and math.isnan(back[1][0].item()) and back[1][1].item() == 2.0


def test_the_placeholder_and_other_types_come_back_as_what_they_are():
    assert unplain(plain(____)) is ____ and unplain(plain([1, ____]))[1] is ____
    assert unplain(plain(object())) == Opaque("object")


@pytest.mark.parametrize("data", [{"t": "eval", "v": "1"}, {"t": "list"}, [1, 2], {"t": "set", "v": [{"t": "list",
                                  "v": []}]}, {"t": "tensor", "shape": [3], "v": [1.0]}, {"t": "float", "v": "1e999"},
                                  {"t": "fraction", "v": [1, 0]}, {"t": "fraction", "v": [1.5, 2]}])
def test_data_plain_does_not_make_is_refused(data):
    with pytest.raises(NotPlain):
        unplain(data)
