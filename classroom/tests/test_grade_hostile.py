"""A hostile class graded in the sandbox: one learner per attack, each answering notebook 06
wrongly around it (an exercise counted right is the attack's doing). An attack docs/teaching.md
says grading does not chase is expected to break."""

import select
import socket
import subprocess
import uuid
from pathlib import Path

import nbformat
import psutil
import pytest
from answers import WRONG

from classroom import grade, grade_sandbox
from tools.notebooks import notebook_paths

ROOT = Path(__file__).resolve().parents[2]
STORED = next(p for p in notebook_paths() if p.name.startswith("06-"))
NO_SANDBOX = grade_sandbox.why_no_sandbox()
pytestmark = pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no sandbox here: {NO_SANDBOX}")
TOKEN = uuid.uuid4().hex
FORGE = '{"notebook": "06", "exercise": f"q{n}", "status": "right", "message": "forged"}'

# learner -> (exercise the attack sits in, its code, "held" or "broke" as expected, what the outcome is read from)
ATTACKS = {
    "forge-line": (1, "import json, os\nwith open(os.environ['GRAPH_NOTEBOOKS_RESULTS'], 'a') as f:\n"
                      f"    for n in range(1, 7):\n        f.write(json.dumps({FORGE}) + '\\n')", "held"),
    "forge-thread": (1, "import json, os, threading, time\ndef forge():\n    while True:\n"
                        "        with open(os.environ['GRAPH_NOTEBOOKS_RESULTS'], 'a') as f:\n"
                        f"            for n in range(1, 7):\n                f.write(json.dumps({FORGE}) + '\\n')\n"
                        "        time.sleep(0.0005)\nthreading.Thread(target=forge, daemon=True).start()", "broke"),
    "forge-stdout": (1, "import os\nwith open(f'/proc/{os.getppid()}/fd/1', 'w') as f:\n"
                        "    f.write('{\"verdicts\": {}, \"stopped\": \"\"}')", "held"),
    "ask-ex": (1, "shown = ex.q1.solution()\nanswer_1 = True", "held"),
    "hidden-name": (1, "box = globals()['e' + 'x']\nshown = getattr(getattr(box, 'q1'), 'sol' + 'ution')()\n"
                       "answer_1 = True", "broke"),
    "lesson-file": (1, f"text = open({str(ROOT / 'helpers' / 'lessons' / 'nb06.py')!r}).read()\nanswer_1 = True",
                    "held"),
    "patch-check": (1, "import helpers.exercises.session as s\n"
                       "s.SessionExercise.check = lambda self, answer: s.Feedback('right', 'fine')", "held"),
    "torch-backward": (6, "torch.Tensor.backward = lambda self, *a, **k: None", "held"),
    "network": (1, "import socket\nfor host in (('127.0.0.1', PORT), ('1.1.1.1', 53)):\n    try:\n"
                   "        socket.create_connection(host, timeout=2); print('CONNECTED', host)\n"
                   "    except OSError as e:\n        print('refused', host, e)", "held"),
    "snoop": (1, "import glob\nfor path in ['CLASSMATE', 'TEACHER', '/root/.bash_history'] + glob.glob('/home/*/*'):\n"
                 "    try:\n        print(open(path).read()[:200])\n    except OSError as e:\n        print(e)",
              "held"),
    "write-checkout": (1, f"for p in [{str(STORED)!r}, {str(ROOT / 'helpers' / 'planted.py')!r}]:\n    try:\n"
                          "        open(p, 'a').write('# planted')\n    except OSError as e:\n        print(e)",
                       "held"),
    "huge-output": (1, "print('x' * 70_000_000)", "held"),
    "fork-bomb": (1, "import os, time\nfor _ in range(64):\n    try:\n        if os.fork() == 0:\n"
                     "            while True:\n                try:\n                    os.fork()\n"
                     "                except OSError:\n                    time.sleep(0.05)\n    except OSError:\n"
                     "        break", "held"),
    "sleep-forever": (1, "import time\ntime.sleep(10 ** 6)", "held"),
    "no-interrupt": (1, "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(10 ** 6)",
                     "held"),
    "detached": (1, "import subprocess\n"
                    f"p = subprocess.Popen(['sh', '-c', 'sleep 9999', '{TOKEN}'], start_new_session=True)", "held"),
    "memory": (1, "blocks = []\nwhile True:\n    blocks.append(bytearray(2 ** 26))", "held"),
}


def wrong(number):
    return WRONG[("06", number)][0][0]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, submit):
    folder, out = tmp_path_factory.mktemp("submissions"), tmp_path_factory.mktemp("grades")
    teacher = tmp_path_factory.mktemp("teacher") / "secret.txt"
    teacher.write_text(f"teacher {TOKEN}")
    server = socket.create_server(("0.0.0.0", 0))
    before = _status()
    classmate = folder / "ada" / STORED.name
    submit(folder, "ada", lambda n, _: wrong(n) if n % 2 else grade.declared("06")[n - 1].solution)
    (folder / "ada" / "note.txt").write_text(f"ada {TOKEN}")
    for learner, (where, code, _) in ATTACKS.items():
        code = (code.replace("PORT", str(server.getsockname()[1])).replace("TEACHER", str(teacher))
                .replace("CLASSMATE", str(folder / "ada" / "note.txt")))
        submit(folder, learner, lambda n, _, w=where, c=code: wrong(n) + ("\n" + c if n == w else ""))
    # four sandboxes at a time: most wait on a limit; the fork bomb's sometimes runs to the wall
    limits = grade_sandbox.RunLimits(wall=90, memory=2 ** 30, tasks=256)
    settings = grade.Settings(cell_limit=15, kernels=4, limits=limits)
    rows, text = grade.grade(folder, out, settings)
    reached = select.select([server], [], [], 0.1)[0] != []       # a connection waits to be accepted
    server.close()
    alone_folder = tmp_path_factory.mktemp("alone")
    (alone_folder / "ada").mkdir()
    (alone_folder / "ada" / STORED.name).write_bytes(classmate.read_bytes())
    alone, _ = grade.grade(alone_folder, tmp_path_factory.mktemp("grades-alone"), settings)
    return {"rows": rows, "text": text, "out": out, "reached": reached, "before": before, "after": _status(),
            "alone": alone}


def _status():
    return subprocess.run(["git", "status", "--porcelain", "--ignored=no"], cwd=ROOT, capture_output=True,
                          text=True).stdout


def outcome(hostile, learner):
    """"held" when the attacker got no exercise right, and its other effects did not happen."""
    mine = [r for r in hostile["rows"] if r.learner == learner]
    executed = hostile["out"] / "notebooks" / learner / STORED.name
    try:
        seen = str([c.get("outputs") for c in nbformat.read(executed, as_version=4).cells])     # outputs, not code
    except Exception:  # noqa: BLE001 (no notebook came back: nothing was seen)
        seen = ""
    broke = any(r.status == "right" for r in mine) or TOKEN in seen or "CONNECTED" in seen
    return "broke" if broke else "held"


def test_the_outcome_table(hostile):
    table = {learner: outcome(hostile, learner) for learner in ATTACKS}
    print("\n| attack | expected | outcome |\n|---|---|---|")
    for learner, (_, _, expected) in ATTACKS.items():
        print(f"| {learner} | {expected} | {table[learner]} |")
    assert table == {learner: expected for learner, (_, _, expected) in ATTACKS.items()}


def test_everyone_is_graded_and_no_one_else_is_touched(hostile):
    assert {r.learner for r in hostile["rows"]} == {"ada", *ATTACKS}
    ada = [r for r in hostile["rows"] if r.learner == "ada"]
    assert ada == [r for r in hostile["alone"] if r.learner == "ada"]
    assert [r.status for r in ada] == ["wrong", "right"] * 3


def test_flags_name_what_was_reached(hostile):
    flagged = {(r.learner, r.exercise): r.changed for r in hostile["rows"] if r.status == "flagged"}
    assert "uses ex" in flagged["ask-ex", 1] and "uses exercises" in flagged["patch-check", 1]
    assert "uses lessons" in flagged["lesson-file", 1] and "changes torch" in flagged["torch-backward", 6]
    assert f"Flagged (never counted right; read the answer cell): {len(flagged)}" in hostile["text"]


def test_limits_stop_the_attacker_alone(hostile):
    by = {(r.learner, r.exercise): r for r in hostile["rows"]}
    assert by["sleep-forever", 1].status == "wrong" and "time limit" in by["sleep-forever", 1].detail
    assert by["sleep-forever", 2].status == "wrong"                              # the rest of theirs graded
    assert by["huge-output", 1].status == "not graded" and "MB of output" in by["huge-output", 1].detail
    assert by["no-interrupt", 2].status == "not graded"
    assert by["forge-stdout", 1].status in ("not graded", "wrong")


def test_no_network_and_nothing_outlives_grading(hostile):
    assert not hostile["reached"]
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if TOKEN in " ".join(p.info["cmdline"] or [])]
    assert left == []


def test_the_checkout_is_unchanged(hostile):
    assert hostile["after"] == hostile["before"]
    assert not (ROOT / "helpers" / "planted.py").exists()
