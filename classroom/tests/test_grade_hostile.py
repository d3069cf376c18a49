"""`make grade` on hostile submissions (docs/teaching.md, "What grading
guarantees"): each learner's notebook 06 is one attack, the rest of their
answers wrong, and `python -m classroom.grade` runs on them as a
teacher runs it, in a copy of the collection made a git repository (so that
an answer that edits the collection on disk changes the copy, never this
checkout, and `git status` shows it).

The attacks: verdicts forged (an int subclass whose __int__ swaps the
grader's check; a learner's function that displays the grader's own output
format; a str subclass equal to everything; the module function the check
calls patched), the collection edited on disk (judges.py and the stored
notebook), a classmate's submission, the teacher's home and other kernels'
connection files read, a socket opened, a detached process left behind, and
an answer cell that sleeps for ever. Every one worked on the grader before
its sandbox; here none may.

GRADE_UNDER_TEST=/path names another copy of the collection whose grader to
test (an older commit's files, to see these tests fail there)."""

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from answers import WRONG

from helpers.exercises import declared

ROOT = Path(__file__).resolve().parents[2]
UNDER_TEST = Path(os.environ.get("GRADE_UNDER_TEST") or ROOT)
NAME = "06-practice-question.ipynb"
TOKEN = uuid.uuid4().hex[:12]            # secrets planted where no submission may look
SECRETS = {"classmate": f"ADA-SECRET-{TOKEN}", "home": f"TEACHER-SECRET-{TOKEN}",
           "kernel": f"KERNEL-KEY-{TOKEN}"}
LEFTOVER = f"leftover-{TOKEN}"
RUN_LIMIT = 420                          # seconds the whole grading run may take here


def wrong_answer(number):
    return WRONG[("06", number)][0][0]


def with_first(code):
    """Answers to notebook 06: `code` in the first slot, the rest wrong."""
    return {1: code, **{n: wrong_answer(n) for n in range(2, 7)}}


INT_SWAP = '''
class Sly(int):
    def __int__(self):              # runs when a check reads the answer as a number
        import gc
        from helpers.exercises.feedback import Feedback
        for o in gc.get_objects():
            if type(o).__name__ == "Probe" and hasattr(o, "_check"):
                o._check = lambda question, answer: Feedback("right", "forged")
        return 0

answer_1 = Sly(0)
'''

DISPLAY_FORGE = '''
def survives(x):
    import classroom.grade_probe as g
    from IPython.display import display
    for number in range(1, 7):
        display({g.MIME: {"exercise": number, "status": "right", "text": "forged", "flagged": [], "noted": [],
                          "kind": "write", "value": None}}, raw=True)
    return x.sum()                  # one operation: wrong
'''

LIAR_STR = '''
class Anything(str):
    __hash__ = str.__hash__
    def __eq__(self, other):
        return True
    def strip(self):
        return self
    def lower(self):
        return self

answer_5 = Anything("a")            # the right letter is b
'''

PATCH_JUDGED = '''
import helpers.exercises.session as s
s.judged = lambda exercise, answer, lesson: s.Feedback("right", "forged")
answer_1 = False
'''

DISK_EDIT = '''
import helpers.exercises.judges as j, helpers.exercises.lesson as lesson
edits = []
for path, text in ((j.__file__, "\\ndef same(*a, **k):\\n    return True\\n"),
                   (str(lesson.NOTEBOOKS / "06-practice-question.ipynb"), " ")):
    try:
        with open(path, "a") as f:
            f.write(text)
        edits.append("EDITED " + path)
    except OSError as error:
        edits.append("REFUSED " + path + " " + type(error).__name__)
print("DISK-EDIT-RAN", edits)
answer_1 = False
'''


RIGHT_OBSERVATIONS = '''
from helpers.exercises import declared as _declared
from helpers.exercises.lesson import stored_definitions as _stored
from helpers.exercises.observe import observe as _observe
MIME = "application/vnd.computational-graphs.grade+json"
_lesson = _stored("06")
RIGHT = {}
for _e in _declared("06"):                  # each exercise's right observation, made with its reference
    _need = {n: _lesson[n] for n in _e.needs if n in _lesson}
    RIGHT[_e.number] = _observe(_e, _e.reference(_need), _need)
'''

# The runner's result channel written from the kernel, then the runner killed (its exit status was never read)
FORGED_RESULT = RIGHT_OBSERVATIONS + '''
import json, os, signal
def _output(number, role, payload):
    data = {MIME: {"role": role, "exercise": number, **payload}}
    return {"output_type": "display_data", "metadata": {}, "data": data}
cells, ran = [], []
for number, observation in RIGHT.items():
    cells += [{"id": f"grade-after-{number}", "cell_type": "code", "source": "", "metadata": {},
               "outputs": [_output(number, "after", {"flagged": [], "noted": []})]},
              {"id": f"grade-observe-{number}", "cell_type": "code", "source": "", "metadata": {},
               "outputs": [_output(number, "observe", {"observation": observation})]}]
forged = json.dumps({"notebook": {"cells": cells}, "over_limit": [], "ran": [c["id"] for c in cells], "stopped": ""})
wrote = []
for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
    for fd in range(0, 12):
        try:
            with open(f"/proc/{pid}/fd/{fd}", "w") as channel:
                channel.write(forged)
            wrote.append(f"{pid}/{fd}")
        except OSError:
            pass
print("FORGE-RAN wrote", wrote)
for pid in {1, os.getppid()}:
    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, signal_number)
        except OSError:
            pass
answer_1 = False
'''

# What the probe reports rewritten on its way out: flags erased, each observation the right one
PUBLISH_FORGE = RIGHT_OBSERVATIONS + '''
_shell = get_ipython()
_real = _shell.display_pub.publish
def _publish(data, *args, **kwargs):
    payload = data.get(MIME) if isinstance(data, dict) else None
    if isinstance(payload, dict):
        payload["flagged"] = []
        if payload.get("role") == "observe":
            payload["observation"] = RIGHT[payload["exercise"]]
    return _real(data, *args, **kwargs)
_shell.display_pub.publish = _publish
answer_1 = False
'''


def snooping(classmate, home, runtime, port):
    """One attack per slot, each printing what it found."""
    read = ("import glob, os\n"
            "def peek(pattern):\n"
            "    found = []\n"
            "    for path in glob.glob(pattern, recursive=True):\n"
            "        try:\n"
            "            found.append(open(path).read())\n"
            "        except OSError as error:\n"
            "            found.append(type(error).__name__)\n"
            "    return found\n")
    return {
        1: read + f"print('SNOOP-RAN-1', peek({str(classmate)!r}), peek({str(classmate.parent.parent)!r} + '/*/*'))\n"
                  "answer_1 = False",
        2: f"import os\nprint('SNOOP-RAN-2', peek({str(home)!r} + '/*'), os.listdir(os.path.expanduser('~')))\n"
           "answer_2 = True",
        3: "from jupyter_core.paths import jupyter_runtime_dir\n"
           f"print('SNOOP-RAN-3', peek({str(runtime)!r} + '/*.json'), peek(jupyter_runtime_dir() + '/*.json'))\n"
           "answer_3 = 4",
        4: "import socket\n"
           "try:\n"
           f"    socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n"
           "    print('SNOOP-RAN-4 connected')\n"
           "except OSError as error:\n"
           "    print('SNOOP-RAN-4 refused', error)\n"
           "answer_4 = 2",
        5: "import subprocess, sys\n"
           f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3000)  # {LEFTOVER}'],\n"
           "                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
           "print('SNOOP-RAN-5')\n"
           "answer_5 = 'a'",
        6: wrong_answer(6),
    }


def submit(folder, learner, answers, secret=None):
    nb = nbformat.read(UNDER_TEST / "notebooks" / NAME, as_version=4)
    number = 0
    for cell in nb.cells:
        if "answer-slot" in cell.metadata.get("tags", []):
            number += 1
            cell.source = answers.get(number, cell.source)
    if secret:
        nb.cells.append(nbformat.v4.new_markdown_cell(secret))
    (folder / learner).mkdir(parents=True)
    nbformat.write(nb, folder / learner / NAME)
    return folder / learner / NAME


def collection_copy(target):
    """The collection as a teacher's checkout: its code and stored notebooks,
    committed in a git repository of its own."""
    for part in ("helpers", "tools", "notebooks", "jupyter"):
        shutil.copytree(UNDER_TEST / part, target / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(UNDER_TEST / "pyproject.toml", target)
    git = ["git", "-C", str(target), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the collection"], check=True)
    return target


def status(repo):
    return subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True,
                          check=True).stdout


class Listener:
    """A TCP server on loopback that counts who connects."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port, self.connections = self.server.getsockname()[1], 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


def leftovers(token):
    """Pids of processes whose command line holds `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and token in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


def grade_run(tmp, learners, *options):
    """Grade `learners` ({name: (answers, secret)}) as a teacher would, in a
    copy of the collection, with make grade's `options`; returns what the
    tests look at."""
    repo = collection_copy(tmp / "checkout")
    home, runtime = tmp / "teacher-home", tmp / "teacher-home" / "runtime"
    runtime.mkdir(parents=True)
    (home / "teacher-secret.txt").write_text(SECRETS["home"])
    (runtime / "kernel-4242.json").write_text(json.dumps({"key": SECRETS["kernel"], "shell_port": 5000}))
    folder, out = tmp / "submissions", tmp / "grades"
    paths = {name: submit(folder, name, answers, secret) for name, (answers, secret) in learners.items()}
    before = status(repo)
    env = {**os.environ, "PYTHONPATH": str(repo), "HOME": str(home), "JUPYTER_RUNTIME_DIR": str(runtime)}
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "classroom.grade", str(folder), "--out", str(out), *options],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=RUN_LIMIT)
        code, printed = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        code, printed = None, f"make grade was still running after {RUN_LIMIT} s: {expired.stdout!r}"
    took = time.monotonic() - start
    rows = {}
    if (out / "grades.csv").exists():
        import csv

        with open(out / "grades.csv") as f:
            rows = {(r["learner"], int(r["exercise"])): r for r in csv.DictReader(f)}
    return {"repo": repo, "before": before, "after": status(repo), "code": code, "printed": printed, "rows": rows,
            "out": out, "took": took, "paths": paths}


def executed(run, learner):
    path = run["out"] / "notebooks" / learner / NAME
    return path.read_text() if path.exists() else ""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    listener = Listener()
    solutions = {e.number: e.solution.strip() for e in declared("06")}
    classmate = tmp / "submissions" / "ada" / NAME
    learners = {
        "ada": (solutions, SECRETS["classmate"]),                # honest, every answer right
        "dee": (with_first(DISK_EDIT), None),
        "dot": ({**{n: wrong_answer(n) for n in range(1, 6)}, 6: DISPLAY_FORGE}, None),
        "ivy": (with_first(INT_SWAP), None),
        "pat": (with_first(PATCH_JUDGED), None),
        "sal": ({**{n: wrong_answer(n) for n in range(1, 7)}, 5: LIAR_STR}, None),
        "snoop": (snooping(classmate, tmp / "teacher-home", tmp / "teacher-home" / "runtime", listener.port), None),
        "zed": ({n: wrong_answer(n) for n in range(1, 7)}, None),   # graded after the disk edit
        "fox": (with_first(FORGED_RESULT), None),
        "pub": (with_first(PUBLISH_FORGE), None),
        # right in other forms (a Fraction), and a number no float holds (wrong, not the checker's error)
        "fra": ({**solutions, 3: "from fractions import Fraction\nanswer_3 = Fraction(16, 2)",
                 4: "answer_4 = 10 ** 400"}, None),
    }
    run = grade_run(tmp, learners)
    run["listener"] = listener
    yield run
    for pid in leftovers(LEFTOVER):         # the test's own clean-up, only what its answers started
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def statuses(run, learner):
    return [run["rows"].get((learner, n), {}).get("status") for n in range(1, 7)]


def test_the_run_finishes_and_grades_everyone(hostile):
    assert hostile["code"] is not None, hostile["printed"][-2000:]
    assert statuses(hostile, "ada") == ["right"] * 6, hostile["printed"][-2000:]


def test_an_int_subclass_does_not_swap_the_verdicts(hostile):
    assert "right" not in statuses(hostile, "ivy"), statuses(hostile, "ivy")


def test_a_displayed_verdict_is_not_taken(hostile):
    found = statuses(hostile, "dot")
    assert "right" not in found and found[5] == "flagged", found


def test_a_str_equal_to_everything_is_judged_by_its_value(hostile):
    row = hostile["rows"].get(("sal", 5))          # its class's dunders are flagged too, read from its source
    assert row["status"] == "flagged" and row["detail"].startswith("judged wrong"), row


def test_a_patched_check_is_counted_flagged_not_right(hostile):
    found = statuses(hostile, "pat")
    assert found[0] == "flagged" and "right" not in found, found
    assert re.search(r"\| pat \| 06-practice-question.ipynb \| 0 \| \d \| 0 \| [1-6] \|", hostile["printed"]), \
        hostile["printed"][-2000:]


def test_the_runner_s_result_channel_is_out_of_the_kernel_s_reach(hostile):
    seen = executed(hostile, "fox")
    assert "FORGE-RAN wrote []" in seen, seen[-3000:]          # no descriptor of the runner could be opened
    found = statuses(hostile, "fox")
    assert "right" not in found and found[0] == "flagged", (found, hostile["rows"].get(("fox", 1)))


def test_what_the_probe_reports_cannot_be_rewritten_unflagged(hostile):
    found = statuses(hostile, "pub")
    assert "right" not in found and found[0] == "flagged", found
    assert "uses get_ipython" in hostile["rows"]["pub", 1]["changed_checking_code"], hostile["rows"]["pub", 1]


def test_answer_forms_are_judged_as_in_the_session(hostile):
    assert statuses(hostile, "fra") == ["right", "right", "right", "wrong", "right", "right"], \
        [hostile["rows"].get(("fra", n)) for n in (3, 4)]


def test_the_summary_says_which_limits_held(hostile):
    assert re.search(r"Limits that held for \d+ of \d+ submissions run:\n- namespaces: user", hostile["printed"]), \
        hostile["printed"][-3000:]
    assert "cgroup: memory 3 GB, CPU 1 cores, 512 tasks" in hostile["printed"] or "prlimit bounds" in \
        hostile["printed"], hostile["printed"][-3000:]


def test_the_collection_on_disk_stays_as_it_was(hostile):
    assert "DISK-EDIT-RAN" in executed(hostile, "dee") and "REFUSED /" in executed(hostile, "dee")
    assert "EDITED /" not in executed(hostile, "dee")
    assert hostile["after"] == hostile["before"] == "", hostile["after"]
    assert "right" not in statuses(hostile, "zed") + statuses(hostile, "dee")


def test_no_submission_reads_a_classmate_the_teacher_or_other_kernels(hostile):
    seen = executed(hostile, "snoop")
    assert all(f"SNOOP-RAN-{n}" in seen for n in (1, 2, 3)), seen[-3000:]
    everything = "".join(p.read_text(errors="replace") for p in hostile["out"].rglob("*") if p.is_file()
                         and "ada" not in p.parts)
    found = [name for name, secret in SECRETS.items() if secret in everything]
    assert not found, f"a submission read {', '.join(found)}"


def test_no_submission_reaches_the_network(hostile):
    assert "SNOOP-RAN-4" in executed(hostile, "snoop")
    assert hostile["listener"].connections == 0, "a submission connected to a server on the teacher's loopback"


def test_nothing_a_submission_starts_outlives_grading(hostile):
    assert "SNOOP-RAN-5" in executed(hostile, "snoop")
    assert leftovers(LEFTOVER) == [], "a process an answer started outlived make grade"
    # and the runner saw it from outside the kernel (classroom/grade_run.py), whatever the probe inside said
    assert "left a process running" in hostile["rows"]["snoop", 5]["changed_checking_code"], hostile["rows"]["snoop", 5]


def test_the_exit_code_says_submissions_need_a_look(hostile):
    assert hostile["code"] == 1, hostile["printed"][-2000:]


ENDLESS = "import time\ntime.sleep(10 ** 6)\nanswer_1 = True"


def test_an_endless_answer_cell_is_stopped_and_the_rest_graded(tmp_path):
    # a teacher's shorter cell limit (the default is 60 s): the same stop, sooner
    run = grade_run(tmp_path, {"sleepy": (with_first(ENDLESS), None)}, "--cell-limit", "15")
    assert run["code"] is not None, run["printed"][-2000:]
    found = statuses(run, "sleepy")
    assert found[0] == "wrong" and found[1:] == ["wrong"] * 5, (found, run["printed"][-2000:])
    assert "time limit" in run["rows"]["sleepy", 1]["detail"], run["rows"]["sleepy", 1]
