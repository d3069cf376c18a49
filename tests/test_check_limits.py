"""A check's limits hold whatever the answer does: its time limit cannot be
escaped (a retry loop with a bare `except:`, one long call into C, an
exception whose `__str__` never returns), on Unix by ending the child
process the check ran in, and where there is no fork (Windows) by ending
the kernel, which the next session reports; a KeyboardInterrupt never
leaves an earlier verdict in the score; a patch of torch made by an answer
does not outlive its check; and a prediction or a letter is judged by its
built-in value, whatever its class claims. Where torch refuses autograd in a
forked child (a CUDA build, after a backward through a compiled function)
checks run in the session, right answers judged right and the hard stop
holding. Nothing the answer does in the check's child reaches the session:
not the kernel's descriptors, not a process it started (in a session of
its own or orphaned too), not more output than the cap, not a hard limit
stretched by a forged claim of importing. Answer forms (a Fraction,
10 ** 400, NaN, the infinities) are judged in the session as the grader
judges them.

The tests that could hang on a limit that does not hold run their check in
a process of their own, under a timeout of the test's."""

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from fractions import Fraction
from pathlib import Path

import numpy
import pytest
import torch

from helpers.exercises import declared, exercises
from helpers.exercises.apart import HARD_MARGIN, IMPORT_ALLOWANCE, OUTPUT_LIMIT
from helpers.exercises.judges import canonical
from helpers.exercises.observe import observe
from classroom import grade
from tools.testkit.lessons import lesson_function

ROOT = Path(__file__).resolve().parents[1]
SIGN = declared("01")[1].solution          # the right sign_forward
LIMIT = 0.5                                # seconds, the limit these tests set
HANG = 40                                  # seconds after which a check counts as hung
# The slow-import tests: a limit the right answer's own check keeps on a busy machine (0.5 s it
# did not, under CI's two workers), and an import that sleeps past it and past the margin.
SLOW_LIMIT, SLOW_IMPORT = 2.0, 3.5

# Answers that escape a limit raised inside the kernel.
ESCAPES = {
    "a retry loop with a bare except": "def sign_forward(x):\n    while True:\n        try:\n"
                                       "            while True:\n                pass\n        except:\n"
                                       "            pass\n",
    "one long call into C": "def sign_forward(x):\n    return sum(range(10**12))\n",
    "an exception whose __str__ never returns": "class Endless(Exception):\n    def __str__(self):\n"
                                                "        while True:\n            pass\n\n"
                                                "def sign_forward(x):\n    raise Endless\n",
}

# Checks a learner's session runs, as a script: the answer's check, then a right answer's.
SESSION = """
import json, os, sys, time
{before}
import torch
from helpers.exercises import declared, exercises, sandbox
from tools.testkit.lessons import lesson_function
usual, sandbox.TIME_LIMIT = sandbox.TIME_LIMIT, {limit}
ex = exercises("01", {{}})
scope = {{"torch": torch}}
exec({answer!r}, scope)
start = time.monotonic()
first = ex.q2.check(scope["sign_forward"])
took = time.monotonic() - start
right = {{"torch": torch}}
exec({right!r}, right)
sandbox.TIME_LIMIT = usual      # the right answer's check under the usual limit: 0.5 s is too short on a busy machine
second = ex.q2.check(right["sign_forward"])
print(json.dumps([first.status, first.text, took, second.status, repr(ex.score())]))
"""

# As on Windows: no fork, no SIGALRM.
WINDOWS = """
import os, signal
del os.fork
for name in ("SIGALRM", "setitimer", "getitimer", "ITIMER_REAL", "alarm"):
    delattr(signal, name)
"""


def _session(source, env=None, timeout=HANG):
    done = subprocess.run([sys.executable, "-c", source], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    return done


def _run(answer, before="", limit=LIMIT):
    """[status, text, seconds, the right answer's status, the score] from a fresh process."""
    source = SESSION.format(before=before, limit=limit, answer=answer, right=SIGN)
    try:
        done = _session(source)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the check was still running after {HANG} s: the time limit of {LIMIT} s did not hold")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("answer", ESCAPES.values(), ids=ESCAPES.keys())
def test_an_answer_cannot_escape_the_time_limit(answer):
    status, text, took, then, score = _run(answer)
    assert status == "wrong" and f"{LIMIT:g} s" in text and "time limit" in text, text
    assert took < LIMIT + 6, f"the check took {took:.1f} s under a limit of {LIMIT} s"
    assert then == "right", "the session did not work as before after the check was stopped"
    assert "2. a graph that follows a sign (write): right" in score


def test_an_escaping_answer_is_told_what_to_look_for():
    status, text, *_ = _run(ESCAPES["a retry loop with a bare except"])
    assert status == "wrong" and "except" in text and "sign_forward" in text, text


def test_an_answers_prints_reach_the_notebook():
    _, _, _, then, _ = _run("def sign_forward(x):\n    print('looking at', float(x))\n    return x * 3\n")
    assert then == "right"
    source = SESSION.format(before="", limit=LIMIT, answer="def sign_forward(x):\n    print('looking at', 2)\n"
                                                          "    return x * 3\n", right=SIGN)
    assert "looking at 2" in _session(source).stdout


@pytest.mark.parametrize("answer", ESCAPES.values(), ids=ESCAPES.keys())
def test_without_fork_the_kernel_is_stopped_and_the_next_session_says_why(answer, tmp_path):
    """Windows: the check runs in the kernel itself; past its limit and a
    margin the kernel is ended (Jupyter restarts it), and the next
    `exercises(...)` of that notebook says what happened."""
    env = {"TMPDIR": str(tmp_path), "TEMP": str(tmp_path), "TMP": str(tmp_path)}
    source = SESSION.format(before=WINDOWS + "from helpers.exercises import apart\napart.HARD_MARGIN = 1.0\n",
                            limit=LIMIT, answer=answer, right=SIGN)
    start = time.monotonic()
    try:
        done = _session(source, env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the kernel was still running after {HANG} s: the limit did not hold without fork")
    took = time.monotonic() - start
    assert done.returncode != 0 and took < HANG, done.stdout + done.stderr[-2000:]
    after = _session(WINDOWS + "from helpers.exercises import exercises\nexercises('01', {})\n", env)
    assert "exercise 2" in after.stdout and "time limit" in after.stdout and "restart" in after.stdout, \
        after.stdout + after.stderr[-2000:]
    again = _session(WINDOWS + "from helpers.exercises import exercises\nexercises('01', {})\n", env)
    assert "time limit" not in again.stdout, "the notice is given once"


def test_without_fork_a_slow_import_is_not_the_kernels_end(tmp_path):
    """torch imports modules on first use: time spent importing counts
    neither for the limit nor for its margin."""
    (tmp_path / "slow_to_import.py").write_text(f"import time\ntime.sleep({SLOW_IMPORT})\n")
    answer = SIGN.replace("(x):", "(x):\n    import slow_to_import")
    before = (WINDOWS + f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
              "from helpers.exercises import apart\napart.HARD_MARGIN = 1.0\n")
    env = {"TMPDIR": str(tmp_path), "TEMP": str(tmp_path), "TMP": str(tmp_path)}
    done = _session(SESSION.format(before=before, limit=SLOW_LIMIT, answer=answer, right=SIGN), env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])[0] == "right"


def test_a_slow_import_in_the_child_does_not_end_the_check(tmp_path):
    (tmp_path / "slow_to_import.py").write_text(f"import time\ntime.sleep({SLOW_IMPORT})\n")
    answer = SIGN.replace("(x):", "(x):\n    import slow_to_import")
    status, text, *_ = _run(answer, before=f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n", limit=SLOW_LIMIT)
    assert status == "right", text


# --- where torch refuses autograd in a forked child -------------------------------------------------------------

# A CUDA build of torch, once the session ran a backward through a compiled function, refuses autograd in a forked
# child. The CPU build never does: there the refusal is made as torch makes it, in every child forked from then on.
REFUSING = """
import os, torch
from torch.autograd.variable import Variable

class Refusing:
    def __init__(self, engine):
        self.engine = engine

    def run_backward(self, *args, **kwargs):
        raise RuntimeError("Unable to handle autograd's threading in combination with fork-based multiprocessing. "
                           "See https://github.com/pytorch/pytorch/wiki/Autograd-and-Fork")

    def __getattr__(self, name):
        return getattr(self.engine, name)

if torch.version.cuda is None:
    os.register_at_fork(after_in_child=lambda: setattr(Variable, "_execution_engine",
                                                       Refusing(Variable._execution_engine)))
else:                   # what makes a CUDA build refuse
    compiled = torch.compile(lambda x: (x * 2).sin().sum(), backend="aot_eager")
    compiled(torch.ones(3, requires_grad=True)).backward()
"""

COMPILED_CHECKS = REFUSING + """
import json
from helpers.exercises import apart, declared, exercises
from tools.testkit.lessons import lesson_function
ex = exercises("09", {})
found = [getattr(ex, f"q{e.number}").check(e.reference({})) for e in declared("09") if e.kind in ("write", "fix")]
print(json.dumps([[f.status, f.text] for f in found] + [apart.forks()]))
"""


def test_where_torch_refuses_autograd_in_a_child_right_answers_are_right():
    """Notebook 09's write and fix checks (a compiled function's backward)
    after a compiled backward in the session: judged right, in the session."""
    done = _session(COMPILED_CHECKS, timeout=180)       # two checks of dynamo's captures, no limit tested here
    assert done.returncode == 0, done.stderr[-3000:]
    *found, forks = json.loads(done.stdout.strip().splitlines()[-1])
    assert [status for status, _ in found] == ["right", "right"], found
    assert forks is False, "checks still fork where torch refuses autograd in a child"


def test_where_torch_refuses_autograd_in_a_child_the_hard_stop_holds(tmp_path):
    env = {"TMPDIR": str(tmp_path), "TEMP": str(tmp_path), "TMP": str(tmp_path)}
    ready = tmp_path / "ready"             # written once the session made children refuse (a CUDA build compiles)
    before = (REFUSING + f"open({str(ready)!r}, 'w').close()\n"
              "from helpers.exercises import apart\napart.HARD_MARGIN = 1.0\n")
    source = SESSION.format(before=before, limit=LIMIT, answer=ESCAPES["a retry loop with a bare except"], right=SIGN)
    try:
        done = _session(source, env, timeout=HANG + 120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the kernel was still running after {HANG + 120} s: the limit did not hold in the session")
    took = time.time() - ready.stat().st_mtime
    assert done.returncode != 0 and took < HANG, (took, done.stdout + done.stderr[-2000:])
    after = _session("from helpers.exercises import exercises\nexercises('01', {})\n", env)
    assert "exercise 2" in after.stdout and "time limit" in after.stdout, after.stdout + after.stderr[-2000:]


# --- what the check's child can reach -------------------------------------------------------------------------

# A session holding a descriptor as a kernel holds its channels; the answer's check; what came back.
ATTACK = """
import json, os, socket, sys, time
import torch
from helpers.exercises import declared, exercises, sandbox
sandbox.TIME_LIMIT = {limit}
kernel, channel = socket.socketpair()       # as the kernel's sockets: descriptors the session holds
CHANNEL = channel.fileno()
ex = exercises("01", {{}})
scope = {{"torch": torch}}
exec({answer!r}, scope)
start = time.monotonic()
found = ex.q2.check(scope["sign_forward"])
took = time.monotonic() - start
kernel.setblocking(False)
try:
    heard = kernel.recv(1000).decode()
except BlockingIOError:
    heard = ""
print(json.dumps([found.status, found.text, took, heard]))
"""
RIGHT_BODY = "    return x * 3 if x > 0 else x ** 2\n"
# The attack made once: the check calls the answer on many inputs.
ONCE = "    global done\n    if 'done' in globals():\n    " + RIGHT_BODY + "    done = True\n"
USUAL = 10.0                      # the usual limit, where the limit is not what a test is about


def _attack(answer, limit=USUAL, timeout=HANG):
    """[status, text, seconds, what the session's descriptor received], and all the session printed."""
    try:
        done = _session(ATTACK.format(limit=limit, answer=answer), timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the check was still running after {timeout} s")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stdout


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads /proc")
def test_the_child_holds_no_descriptor_of_the_session(tmp_path):
    listed = tmp_path / "descriptors"
    answer = ("import os, __main__\n\ndef sign_forward(x):\n" + ONCE +
              f"    open({str(listed)!r}, 'w').write(' '.join(os.listdir('/proc/self/fd')))\n"
              "    try:\n        os.write(__main__.CHANNEL, b'queued by the answer')\n"
              "    except OSError:\n        pass\n" + RIGHT_BODY)
    (status, text, _, heard), _ = _attack(answer)
    assert status == "right", text
    assert heard == "", f"the answer wrote to a descriptor of the session: {heard!r}"
    held = sorted(int(fd) for fd in listed.read_text().split())
    assert len(held) <= 3 + 2 + 2, f"the child held descriptors {held}: 0 to 2, its result and dump pipes, " \
                                   "the listing's own, the answer's file"


def _state(pid):
    """A process's state letter (Z for a zombie), or None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


# How an answer starts a process that would outlive its check (its pid is what the expression gives): in
# the check's process group, out of it, and orphaned out of it (its parent ended: a daemon's double fork)
ORPHAN = ("import subprocess; print(subprocess.Popen(['sleep', '300'], start_new_session=True, "
          "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)")
STARTS = {
    "in the check's process group": "subprocess.Popen(['sleep', '300']).pid",
    "in a session of its own": "subprocess.Popen(['sleep', '300'], start_new_session=True).pid",
    "orphaned, in a session of its own": f"int(subprocess.run([sys.executable, '-c', {ORPHAN!r}], "
                                         "capture_output=True, text=True).stdout)",
}
ENDLESS = ESCAPES["a retry loop with a bare except"].split("\n", 1)[1]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("then", ["returns", "never returns"])
@pytest.mark.parametrize("how", STARTS, ids=list(STARTS))
def test_a_process_the_answer_started_does_not_outlive_the_check(tmp_path, how, then):
    """Whether the check ends by itself or is ended past its limit (the
    child killed from outside)."""
    written = tmp_path / "pid"
    answer = ("import subprocess, sys\n\ndef sign_forward(x):\n" + ONCE +
              f"    open({str(written)!r}, 'w').write(str({STARTS[how]}))\n" +
              (RIGHT_BODY if then == "returns" else ENDLESS))
    (status, text, took, _), _ = _attack(answer, limit=USUAL if then == "returns" else LIMIT)
    pid = int(written.read_text())
    try:
        end = time.monotonic() + 3
        while _state(pid) not in (None, "Z") and time.monotonic() < end:
            time.sleep(0.05)
        assert _state(pid) in (None, "Z"), f"the answer's process {pid} still runs after the check"
    finally:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if then == "returns":
        assert status == "right" and took < USUAL, (status, text, took)
    else:
        assert status == "wrong" and "time limit" in text, (status, text, took)


def test_the_session_holds_the_output_cap_whatever_the_child_writes():
    """Past the child's own stream (which stops at the cap): straight to its
    pipe's descriptor, and to descriptor 1."""
    answer = ("import os, sys\n\ndef sign_forward(x):\n" + ONCE +
              "    os.write(sys.stdout.fd, b'x' * 10_000_000)\n    os.write(1, b'y' * 10_000_000)\n" + RIGHT_BODY)
    (status, text, _, _), printed = _attack(answer)
    assert status == "right", text
    assert len(printed) < OUTPUT_LIMIT + 1000, f"{len(printed):,} characters of output reached the session"
    assert "cut" in printed


# What a child may forge on its result pipe (after the one byte that says autograd runs there):
# a verdict of its own, and a judge's "right" with a probe that is not the solution's.
FORGED = {
    "a verdict of right": ([{"said": ["right", "forged"]}, "You answered right.", []], "error"),
    "a judge's right, a made-up probe": ([{"judge": [True, "forged"], "probe": {"t": "dict", "v": []}}, "", []],
                                         "wrong"),
    "the old three strings": (["right", "forged", "", []], "error"),
    "JSON too deep to decode": ("[" * 100_000, "error"),
}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the child's result pipe exists where there is fork")
@pytest.mark.parametrize("forged", FORGED, ids=list(FORGED))
def test_a_child_that_forges_its_result_is_never_right(forged):
    """The verdict is the session's own, judged from the child's plain data:
    an answer that writes a result of its own to every descriptor the child
    holds and ends the child before the check's own result is sent gets no
    right from it."""
    data, status = FORGED[forged]
    text = data if isinstance(data, str) else json.dumps(data)
    answer = ("import os\n\ndef sign_forward(x):\n"
              f"    for fd in range(3, 64):\n        try:\n            os.write(fd, {text.encode()!r})\n"
              "        except OSError:\n            pass\n    os._exit(0)\n")
    (found, said, _, _), _ = _attack(answer)
    assert found == status, said
    assert found != "right"


# A session that watches, while a check runs (a right answer that imports and sleeps), what the
# limit's machinery could change in the kernel's own process.
PLAIN = r"""
import json, sys, threading, time
import torch
from helpers.exercises import apart, exercises
apart._REFUSED[:] = [True] if {refused} else []
bootstrap, alarm = sys.modules["_frozen_importlib"], __import__("signal").getsignal(14)
original, threads = bootstrap._find_and_load, set(threading.enumerate())
changed, done = set(), threading.Event()

def watch():
    while not done.is_set():
        if bootstrap._find_and_load is not original:
            changed.add("importlib's _find_and_load")
        if __import__("signal").getsignal(14) is not alarm:
            changed.add("SIGALRM's handler")
        changed.update(t.name for t in threading.enumerate() if t not in threads and t.name != "watch")
        if "helpers.exercises.thread_limit" in sys.modules:
            changed.add("helpers.exercises.thread_limit")
        time.sleep(0.002)

ex = exercises("01", {})
watcher = threading.Thread(target=watch, name="watch")
watcher.start()
scope = {"torch": torch}
exec("import time\nfirst = [True]\ndef sign_forward(x):\n    if first.pop() if first else False:\n"
     "        import json.tool\n        time.sleep(0.3)\n    return x * 3 if x > 0 else x ** 2\n", scope)
found = ex.q2.check(scope["sign_forward"])
done.set()
watcher.join()
print(json.dumps([found.status, sorted(changed), found.text]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="checks run in a child where there is fork")
@pytest.mark.parametrize("where", ["in a child", "in the session"])
def test_while_a_check_runs_in_its_child_the_kernel_s_own_process_stays_plain(where):
    """The limit's machinery (importlib wrapped to time imports, SIGALRM's
    handler, a watcher thread raising through ctypes) runs in the check's
    child: the kernel's own process forks, reads the child's pipes and
    ends it, nothing more. Where checks run in the session (torch refused
    autograd in a child) the same watch sees the machinery at work there."""
    done = _session(PLAIN.replace("{refused}", str(where == "in the session")))
    assert done.returncode == 0, done.stderr[-3000:]
    status, changed, text = json.loads(done.stdout.strip().splitlines()[-1])
    assert status == "right", text
    if where == "in a child":
        assert changed == [], changed
    else:
        assert {"importlib's _find_and_load", "SIGALRM's handler"} <= set(changed), changed


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the child's pipes exist where there is fork")
def test_a_child_that_fills_its_pipes_is_not_waited_for_until_the_limit():
    """More than a pipe holds written to every descriptor the child has, the
    pipe the session reads where a stopped child was included: the session
    reads them all, so the child ends and the check with it, not the limit."""
    answer = ("import os\n\ndef sign_forward(x):\n    for fd in range(3, 64):\n        try:\n"
              "            os.write(fd, b'x' * 200_000)\n        except OSError:\n            pass\n"
              "    os._exit(0)\n")
    (status, text, took, _), _ = _attack(answer)
    assert status != "right", text
    assert took < USUAL / 2, f"the check took {took:.1f} s: it waited for the limit of {USUAL} s"


def test_a_forged_claim_of_importing_does_not_stretch_the_hard_limit():
    """The child tells the session how long it spent importing (time that
    does not count, up to IMPORT_ALLOWANCE): an answer that claims 1000 s
    and escapes the soft limit is ended within the margin and that
    allowance, 10 s past its limit. It escapes the soft limit asleep, in a
    retry loop with a bare except (the hard limit is what is tested, and a
    sleeping answer leaves the CPU to the tests beside it)."""
    answer = ("import struct, sys, time\n\ndef sign_forward(x):\n    frame = sys._getframe()\n"
              "    while frame is not None and 'shared' not in frame.f_locals:\n        frame = frame.f_back\n"
              "    struct.pack_into('dd', frame.f_locals['shared'], 0, 1000.0, 1.0)\n"
              "    while True:\n        try:\n            time.sleep(0.05)\n        except:\n            pass\n")
    (status, text, took, _), _ = _attack(answer, limit=LIMIT)
    assert status == "wrong" and "time limit" in text, text
    assert took < LIMIT + 10 + 5, f"the check took {took:.1f} s under a limit of {LIMIT} s"
    assert HARD_MARGIN + IMPORT_ALLOWANCE <= 10


# --- KeyboardInterrupt -----------------------------------------------------------------------------------------

def _lesson():
    return {need: lesson_function("01-dynamic-control-flow", need) for e in declared("01") for need in e.needs}


def _defined(source):
    scope = {"torch": torch}
    exec(source, scope)
    return scope["sign_forward"]


RAISES_INTERRUPT = "def sign_forward(x):\n    raise KeyboardInterrupt\n"
ROW = "2. a graph that follows a sign (write): "


@pytest.fixture(params=["fork", "no fork"])
def route(request, monkeypatch):
    """Where the check runs: in a child process (Unix), or in the session
    itself (Windows: no fork)."""
    if request.param == "no fork":
        monkeypatch.delattr(os, "fork")
    return request.param


def test_an_answer_that_raises_keyboard_interrupt_leaves_no_earlier_right(route):
    ex = exercises("01", _lesson())
    assert ex.q2.check(_defined(SIGN)).status == "right"
    if route == "fork":
        try:
            feedback = ex.q2.check(_defined(RAISES_INTERRUPT))
        except KeyboardInterrupt:
            pytest.fail("the answer's own KeyboardInterrupt went through the check, the earlier verdict kept: "
                        f"{ex.score()!r}")
        assert feedback.status == "wrong" and "KeyboardInterrupt" in feedback.text, feedback
        assert ROW + "not quite" in repr(ex.score())
    else:
        with pytest.raises(KeyboardInterrupt):
            ex.q2.check(_defined(RAISES_INTERRUPT))
        assert ROW + "interrupted" in repr(ex.score())


def test_the_learners_interrupt_stops_the_check_and_its_verdict(route):
    """Jupyter's interrupt (SIGINT to the kernel) during a check: the check
    stops, KeyboardInterrupt goes on (so Run All stops too), and the score
    no longer shows the earlier verdict."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGINT is handled in the main thread")
    # as in a kernel, whatever this process inherited: started in the background by a
    # non-interactive shell (a CI job's `&`), a process begins with SIGINT ignored
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupted_check()
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupted_check():
    ex = exercises("01", _lesson())
    assert ex.q2.check(_defined(SIGN)).status == "right"
    slow = _defined("import time\n\ndef sign_forward(x):\n    time.sleep(3)\n    return x * 3\n")
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            ex.q2.check(slow)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 2.5
    assert ROW + "interrupted" in repr(ex.score())


# --- patches of torch -------------------------------------------------------------------------------------------

PATCHES = {
    "torch.Tensor.backward": "torch.Tensor.backward = lambda self, *a, **k: None",
    "torch.autograd.backward": "torch.autograd.backward = lambda *a, **k: None",
    "torch.Tensor.__mul__": "torch.Tensor.__mul__ = lambda self, other: self",
    "torch.nn.functional.relu": "torch.nn.functional.relu = lambda x, inplace=False: x",
    "torch.tanh": "torch.tanh = lambda x: x",
    "del torch.Tensor.backward": "del torch.Tensor.backward",
}


def _where(path):
    owner, name = path.removeprefix("del ").rsplit(".", 1)
    thing = torch
    for part in owner.split(".")[1:]:
        thing = getattr(thing, part)
    return thing, name


@pytest.mark.parametrize("patch", PATCHES.values(), ids=PATCHES.keys())
def test_a_patch_of_torch_does_not_outlive_its_check(patch, route):
    owner, name = _where(next(k for k, v in PATCHES.items() if v == patch))
    original = owner.__dict__.get(name, getattr(owner, name))
    ex = exercises("01", _lesson())
    patching = _defined(f"def sign_forward(x):\n    {patch}\n    return x * 3 if x > 0 else x ** 2\n")
    try:
        ex.q2.check(patching)
        now = getattr(owner, name, None)
        assert now is original or (isinstance(owner, type) and owner.__dict__.get(name) is original), \
            f"{name} is still patched after the check"
        assert ex.q2.check(_defined(SIGN)).status == "right"
    finally:
        setattr(owner, name, original)


# --- liars ------------------------------------------------------------------------------------------------------

class AlwaysEqualStr(str):
    def __eq__(self, other):
        return True

    def __hash__(self):
        return hash("b")

    def strip(self, *args):
        return self

    def lower(self):
        return AlwaysEqualStr("b")


class LyingInt(int):
    def __int__(self):
        return 38

    def __index__(self):
        return 38

    def __eq__(self, other):
        return True

    def __hash__(self):
        return hash(38)

    def __sub__(self, other):
        return 0

    def __rsub__(self, other):
        return 0

    def __abs__(self):
        return 0


class LyingFloat(float):
    def __float__(self):
        return 0.675

    def __eq__(self, other):
        return True

    def __hash__(self):
        return hash(0.675)

    def __sub__(self, other):
        return 0.0

    def __rsub__(self, other):
        return 0.0


class LyingBool(numpy.bool_):
    def __bool__(self):
        return True

    def __eq__(self, other):
        return True

    def __hash__(self):
        return hash(True)


class LyingSet(set):
    def __iter__(self):
        return iter(["p", "r"])

    def __eq__(self, other):
        return True

    def __len__(self):
        return 2


class LyingList(list):
    def __iter__(self):
        return iter(["p", "r"])

    def __len__(self):
        return 2


LIARS = [  # (notebook, exercise, a wrong answer whose class claims the right one)
    ("01", 4, AlwaysEqualStr("a")),          # choose: the right letter is 'b'
    ("01", 4, AlwaysEqualStr("z")),
    ("01", 1, LyingInt(37)),                 # predict: 38
    ("05", 1, LyingFloat(0.5)),              # predict: 0.675
    ("02", 1, LyingBool(False)),             # predict: True
    ("05", 3, LyingSet({"q"})),              # predict: {'p', 'r'}
    ("05", 3, LyingList(["q"])),
    ("02", 2, AlwaysEqualStr("_saved_self")),    # a judge of its own: '_saved_result'
]


def _lesson_of(notebook):
    return {need: lesson_function(path.stem, need) for path in sorted((ROOT / "notebooks").glob(f"{notebook}-*"))
            for e in declared(notebook) for need in e.needs}


@pytest.mark.parametrize(("notebook", "number", "answer"), LIARS,
                         ids=[f"nb{n}-q{q}-{type(a).__name__}" for n, q, a in LIARS])
def test_a_liar_is_judged_by_its_built_in_value(notebook, number, answer):
    feedback = getattr(exercises(notebook, _lesson_of(notebook)), f"q{number}").check(answer)
    assert feedback.status == "wrong", feedback


FORMS = [  # (notebook, exercise, an answer in another form than the solution's, the verdict it deserves)
    ("06", 3, Fraction(16, 2), "right"),        # 8
    ("06", 3, Fraction(17, 2), "wrong"),
    ("05", 1, Fraction(27, 40), "right"),       # 0.675
    ("06", 3, 10 ** 400, "wrong"),              # no float holds it: wrong, never the checker's own error
    ("06", 3, -10 ** 400, "wrong"),
    ("03", 3, 10 ** 400, "wrong"),
    ("05", 1, math.nan, "wrong"),               # JSON has no number for these: they travel tagged by name
    ("05", 1, math.inf, "wrong"),
    ("05", 1, -math.inf, "wrong"),
    ("06", 3, math.inf, "wrong"),
]


@pytest.mark.parametrize(("notebook", "number", "answer", "deserved"), FORMS,
                         ids=[f"nb{n}-q{q}-{str(a)[:12]}" for n, q, a, _ in FORMS])
def test_an_answer_form_is_judged_in_the_session_as_the_grader_judges_it(notebook, number, answer, deserved):
    """The session's check (in its child, judged from what the child sent)
    and `make grade`'s judge (from the observation as it leaves the sandbox,
    JSON) give one verdict, in the same words."""
    lesson = _lesson_of(notebook)
    session = getattr(exercises(notebook, lesson), f"q{number}").check(answer)
    exercise = declared(notebook)[number - 1]
    observation = json.loads(json.dumps(observe(exercise, answer, lesson), allow_nan=False))
    status, text = grade.Judge()(notebook, exercise, observation)
    assert (session.status, session.text) == (status, text)
    assert status == deserved, text


@pytest.mark.parametrize(("answer", "plain"), [
    (AlwaysEqualStr("a"), "a"), (LyingInt(37), 37), (LyingFloat(0.5), 0.5), (LyingBool(False), False),
    (LyingSet({"q"}), frozenset({"q"})), (LyingList(["q"]), frozenset({"q"})),
    (numpy.int64(3), 3), (numpy.float32(0.5), 0.5), (True, True), ([1, 2.5], frozenset({1, 2.5}))])
def test_canonical_gives_exact_built_in_types(answer, plain):
    made = canonical(answer)
    assert type(made) is type(plain) and made == plain
    if isinstance(made, frozenset):
        assert all(type(item) in (str, int, float, bool) for item in made)
