"""Verdicts a learner can trust, one test per way they used to go wrong:
the session's state (gradient recording, default dtype) must not flip a
verdict, and a check must give the session back as it found it (its random
state included); a learner's function that raises without a message or
never returns is feedback, not a crash or a hang, with SIGALRM or without
it (Windows, a thread other than the main one), and the time limit never
raises after its block; the truth comes from the stored notebook, not from
the learner's edited copy of a lesson function; a bug in a checker is the
checker's; no solution shows through repr, dir, Tab completion or the
score, and feedback stays short; every answer form is accepted alike; an
answer that behaves otherwise than the solution on any input of its check
is not right."""

import ast
import ctypes
import linecache
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from contextlib import contextmanager
from types import SimpleNamespace

import numpy
import pytest
import torch

from helpers.exercises import Exercise, ExerciseSet, ____, declared, exercises
from helpers.exercises.exercise import predict, write
from helpers.exercises.judges import FORMS, op_labels, value
from helpers.exercises.sandbox import time_limit
from helpers.exercises.thread_limit import _RUNNING
from helpers.exercises.timeouts import TimedOut
from tools.notebooks import notebook_paths
from tools.testkit.lessons import lesson_function, notebook_source

# (notebook, number, a wrong answer that session state used to turn Right)
FLIPPED = [("08", 5, True), ("04", 2, "c"), ("05", 3, {"p", "q", "r"}), ("06", 4, 1), ("03", 3, 0)]
ALL = [(notebook, e) for notebook in ("01", "02", "03", "04", "05", "06", "07", "08") for e in declared(notebook)]
IDS = [f"nb{notebook}-q{e.number}" for notebook, e in ALL]


NOTEBOOKS = {path.name[:2]: path for path in notebook_paths()[1:]}


def _lesson(notebook):
    """The notebook's lesson functions, as a learner's globals hold them."""
    return {need: lesson_function(NOTEBOOKS[notebook].stem, need) for e in declared(notebook) for need in e.needs}


def _session(notebook, lesson=None):
    return exercises(notebook, _lesson(notebook) if lesson is None else lesson)


def _check(notebook, number, answer, lesson=None):
    return getattr(_session(notebook, lesson), f"q{number}").check(answer)


def _reference(notebook, exercise):
    return exercise.reference(_lesson(notebook))


def cell(source, scope):
    """Run `source` as a notebook cell does: its lines kept for inspect."""
    name = f"<cell {len(linecache.cache)}>"
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    exec(compile(source, name, "exec"), scope)
    return scope


@pytest.fixture
def session_state():
    """Whatever a test does to torch's settings is undone after it."""
    grad, dtype, rng = torch.is_grad_enabled(), torch.get_default_dtype(), torch.get_rng_state()
    yield
    torch.set_grad_enabled(grad)
    torch.set_default_dtype(dtype)
    torch.set_rng_state(rng)


@pytest.mark.parametrize("notebook, exercise", ALL, ids=IDS)
def test_reference_solutions_are_right_with_gradient_recording_off(session_state, notebook, exercise):
    torch.set_grad_enabled(False)
    answer = _reference(notebook, exercise)
    feedback = getattr(_session(notebook), f"q{exercise.number}").check(answer)
    assert feedback.status == "right", feedback
    assert not torch.is_grad_enabled()


@pytest.mark.parametrize("notebook, number, answer", FLIPPED)
def test_wrong_answers_stay_wrong_with_gradient_recording_off(session_state, notebook, number, answer):
    torch.set_grad_enabled(False)
    assert _check(notebook, number, answer).status == "wrong"


def test_a_float64_default_dtype_changes_no_verdict(session_state):
    torch.set_default_dtype(torch.float64)
    assert _check("03", 3, 36096).status == "wrong" and _check("03", 3, 18048).status == "right"
    assert torch.get_default_dtype() == torch.float64


@pytest.mark.parametrize("notebook, exercise", ALL, ids=IDS)
def test_a_check_leaves_the_random_numbers_as_they_were(session_state, notebook, exercise):
    answer = _reference(notebook, exercise)
    torch.manual_seed(123)
    random.seed(123)
    expected, expected_py = torch.rand(3), random.random()
    torch.manual_seed(123)
    random.seed(123)
    getattr(_session(notebook), f"q{exercise.number}").check(answer)
    assert torch.equal(torch.rand(3), expected) and random.random() == expected_py


def test_whatever_the_answer_did_to_the_session_is_undone(session_state):
    scope = cell("def sign_forward(x):\n    torch.set_grad_enabled(False)\n    torch.set_default_dtype(torch.float64)\n"
                 "    torch.manual_seed(1)\n    torch.set_anomaly_enabled(True)\n    return x * 3\n", {"torch": torch})
    torch.manual_seed(5)
    expected = torch.rand(2)
    torch.manual_seed(5)
    assert _check("01", 2, scope["sign_forward"]).status == "wrong"
    assert torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32
    assert not torch.is_anomaly_enabled() and torch.equal(torch.rand(2), expected)


@pytest.mark.parametrize("body, said", [("assert x > 100", "AssertionError (no message)"),
                                        ("raise NotImplementedError", "NotImplementedError (no message)"),
                                        ("raise ValueError('a\\nb')", "ValueError: a in sign_forward, line 2")])
def test_an_exception_in_the_learners_function_is_feedback(body, said):
    ex = _session("01")
    ex.q2.check(cell(declared("01")[1].solution, {"torch": torch})["sign_forward"])
    assert repr(ex.score()).startswith("Your score this session: 1 of 2 core exercises right")
    feedback = ex.q2.check(cell(f"def sign_forward(x):\n    {body}\n", {})["sign_forward"])
    assert feedback.status == "wrong" and said in feedback.text and "running your answer raised" in feedback.text
    assert "2. a graph that follows a sign (write): not quite" in repr(ex.score())


class Hung(BaseException):
    """The test's own alarm: the check did not stop the learner's loop."""


def test_an_answer_that_never_returns_is_stopped(monkeypatch):
    monkeypatch.setattr("helpers.exercises.sandbox.TIME_LIMIT", 0.5)

    def ring(_signal, _frame):
        raise Hung

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        feedback = _check("01", 2, cell("def sign_forward(x):\n    while True:\n        pass\n", {})["sign_forward"])
        still_armed = signal.getitimer(signal.ITIMER_REAL)[0] > 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert feedback.status == "wrong" and "your function did not return within the time limit of 0.5 s" in feedback.text
    assert still_armed, "the test's own timer was not given back"


@pytest.fixture
def no_sigalrm(monkeypatch):
    """As on Windows: no SIGALRM, nor the timer calls that send it."""
    for name in ("SIGALRM", "setitimer", "getitimer", "ITIMER_REAL", "alarm"):
        monkeypatch.delattr(signal, name)


@pytest.fixture(params=["SIGALRM", "no SIGALRM"])
def either_limit(request):
    """The time limit as on Unix (a signal) and as on Windows (a thread)."""
    if request.param == "no SIGALRM":
        request.getfixturevalue("no_sigalrm")


@contextmanager
def backstop(seconds):
    """The test's own alarm without a signal: Hung raised in this thread
    after `seconds`, so a limit that never fires fails the test instead of
    hanging it."""
    args = (ctypes.c_ulong(threading.get_ident()), ctypes.py_object(Hung))
    timer = threading.Timer(seconds, ctypes.pythonapi.PyThreadState_SetAsyncExc, args)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()


def spin(seconds):
    """Work in Python for `seconds`, never waiting in a C call."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


LOOPING = "def sign_forward(x):\n    while True:\n        pass\n"


def test_without_sigalrm_an_answer_that_never_returns_is_stopped(monkeypatch, no_sigalrm):
    monkeypatch.setattr("helpers.exercises.sandbox.TIME_LIMIT", 0.5)
    with backstop(5.0):
        feedback = _check("01", 2, cell(LOOPING, {})["sign_forward"])
    assert feedback.status == "wrong" and "your function did not return within the time limit of 0.5 s" in feedback.text


def test_off_the_main_thread_an_answer_that_never_returns_is_stopped(monkeypatch):
    monkeypatch.setattr("helpers.exercises.sandbox.TIME_LIMIT", 0.5)
    answer, said = cell(LOOPING, {})["sign_forward"], []
    worker = threading.Thread(target=lambda: said.append(_check("01", 2, answer)), daemon=True)
    worker.start()
    worker.join(10.0)
    assert not worker.is_alive(), "the check in another thread was never stopped"
    assert said[0].status == "wrong" and "your function did not return within the time limit of 0.5 s" in said[0].text


def test_without_sigalrm_a_busy_loop_is_stopped_on_time(no_sigalrm):
    start = time.monotonic()
    with backstop(5.0), pytest.raises(TimedOut), time_limit(0.2):
        while True:
            pass
    assert 0.2 <= time.monotonic() - start < 1.0
    assert not _RUNNING


def test_a_sleep_is_cut_short_only_by_the_signal(either_limit, request):
    """The thread's TimedOut waits for the sleep (or any call into C) to return."""
    start = time.monotonic()
    with backstop(5.0), pytest.raises(TimedOut), time_limit(0.1):
        time.sleep(0.6)
    took = time.monotonic() - start
    assert took < 0.5 if request.node.callspec.params["either_limit"] == "SIGALRM" else took >= 0.6


def test_without_sigalrm_a_block_done_in_time_gets_no_time_out_later(no_sigalrm):
    with time_limit(0.1):
        spin(0.02)
    spin(0.3)
    assert not _RUNNING


def test_without_sigalrm_no_time_out_comes_after_the_with_statement(no_sigalrm):
    """Blocks that end before, at and after their limit, so that the limit
    also runs out while the block is being left: a TimedOut may end the
    block or its with statement, never the code after it."""
    outcomes = Counter()
    for n in range(300):
        try:
            with time_limit(0.002):
                spin(0.001 + n * 0.00005)      # 1 to 16 ms
            outcome = "finished"
        except TimedOut:
            outcome = "timed out"
        try:
            spin(0.004)
        except TimedOut:
            outcome = "raised after the block"
        outcomes[outcome] += 1
    assert outcomes["raised after the block"] == 0 and outcomes["finished"] and outcomes["timed out"], outcomes
    assert not _RUNNING


def test_without_sigalrm_nested_limits_each_hold(no_sigalrm):
    """An inner limit that runs out leaves the outer one running; an outer
    one that runs out first ends the inner one too."""
    start = time.monotonic()
    with backstop(5.0), pytest.raises(TimedOut), time_limit(0.4):
        with pytest.raises(TimedOut), time_limit(0.1):
            while True:
                pass
        inner = time.monotonic() - start
        while True:
            pass
    assert 0.1 <= inner < 0.35 and 0.4 <= time.monotonic() - start < 1.0
    with backstop(5.0), pytest.raises(TimedOut), time_limit(0.1), time_limit(0.3):
        while True:
            pass
    spin(0.4)
    assert not _RUNNING


def test_without_sigalrm_a_limit_whose_exit_was_cut_short_never_raises(no_sigalrm):
    """The outer limit's TimedOut can strike as an inner block is left,
    before the inner limit's __exit__ has run: the inner limit, ended with
    the outer one, does not raise later."""
    with backstop(5.0), pytest.raises(TimedOut), time_limit(0.1):
        time_limit(0.3).__enter__()         # its __exit__ never runs
        while True:
            pass
    spin(0.4)
    assert not _RUNNING


STARTING_THREADS = """
import signal, sys, threading
for name in ("SIGALRM", "setitimer"):
    delattr(signal, name)
from helpers.exercises.sandbox import time_limit
from helpers.exercises.timeouts import TimedOut
lost = []
sys.unraisablehook = lambda hook: lost.append(hook.exc_type.__name__)
for _ in range(30):
    try:
        with time_limit(0.02):
            while True:
                started = threading.Thread(target=int)
                started.start()
                started.join()
    except TimedOut:
        pass
print("lost:", lost)
"""


THREAD_LIMIT_LOADED = """
import sys, threading
from helpers.exercises.sandbox import time_limit
with time_limit(1.0):
    pass
print("main thread:", "helpers.exercises.thread_limit" in sys.modules)
worker = threading.Thread(target=lambda: time_limit(1.0))
worker.start()
worker.join()
print("another thread:", "helpers.exercises.thread_limit" in sys.modules)
"""


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no SIGALRM here (Windows)")
def test_a_kernel_running_its_checks_in_the_main_thread_never_loads_the_thread_limit():
    """The limit that raises in a thread through ctypes, with its watcher
    thread and lock, is loaded only where a check runs without SIGALRM."""
    done = subprocess.run([sys.executable, "-c", THREAD_LIMIT_LOADED], capture_output=True, text=True, timeout=60)
    assert done.stdout.split("\n")[:2] == ["main thread: False", "another thread: True"], done.stdout + done.stderr


def test_without_sigalrm_a_time_out_never_goes_to_a_thread_being_started():
    """Before Python 3.12 a thread being started bears its parent's id until
    it runs: a TimedOut sent then went to it, and its start hung."""
    done = subprocess.run([sys.executable, "-c", STARTING_THREADS], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "lost: []", done.stdout + done.stderr


FORK_WHILE_HELD = """
import os, threading, time
from helpers.exercises import sandbox, thread_limit
held, go = threading.Event(), threading.Event()

def hold():
    with thread_limit._LOCK:          # as a thread limit's watcher holds it, for a moment
        held.set()
        go.wait()

holder = threading.Thread(target=hold)
holder.start()
held.wait()
pid = os.fork()
if pid == 0:
    try:
        with thread_limit.ThreadLimit(0.05):
            while True:
                pass
    except thread_limit.TimedOut:
        os._exit(0)
    os._exit(1)
go.set()
holder.join()
print("child", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork here (Windows)")
def test_a_child_forked_while_another_thread_holds_the_limits_lock_keeps_working_limits():
    """A check's child is forked from a kernel where another thread may hold the thread
    limits' lock at that moment: the child gets a lock of its own (sandbox's at-fork hook),
    so the fork waits for nothing and a thread limit there still rings."""
    done = subprocess.run([sys.executable, "-c", FORK_WHILE_HELD], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "child 0", done.stdout + done.stderr


def test_time_spent_importing_does_not_count(monkeypatch, tmp_path, either_limit):
    """torch imports modules on first use (an optimizer's first step loads
    torch._dynamo, seconds on a slow machine): that is not the learner's loop."""
    # a limit the check itself keeps on a busy machine (its 100 inputs), and an import past it
    monkeypatch.setattr("helpers.exercises.sandbox.TIME_LIMIT", 1.5)
    (tmp_path / "slow_to_import.py").write_text("import time\ntime.sleep(3.0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_to_import", raising=False)      # imported anew each time
    source = declared("01")[1].solution.replace("(x):", "(x):\n    import slow_to_import")
    feedback = _check("01", 2, cell(source, {"torch": torch})["sign_forward"])
    assert feedback.status == "right", feedback


QUARTERING = """
def halve_until_small(x, limit=1.0):
    y = x
    while y.abs() > limit:
        y = y / 4
    return y
"""


def test_the_truth_comes_from_the_stored_notebook_not_an_edited_copy():
    edited = cell(QUARTERING, {"torch": torch})
    right, wrong = _check("01", 3, 8, edited), _check("01", 3, 4, edited)
    assert right.status == "right" and wrong.status == "wrong"
    assert "you changed `halve_until_small`; this check uses the notebook's version" in right.text


def test_an_unchanged_lesson_function_gets_no_note_and_a_missing_one_is_read_from_the_notebook():
    tree = ast.parse(source := notebook_source(NOTEBOOKS["01"]))
    definition = next(node for node in tree.body if getattr(node, "name", "") == "halve_until_small")
    same = cell(ast.get_source_segment(source, definition), {})
    assert "you changed" not in _check("01", 3, 8, same).text
    assert _check("01", 3, 8, {}).status == "right"


def test_without_the_stored_notebook_the_learners_globals_are_used():
    ex = ExerciseSet(declared("01"), cell(QUARTERING, {"torch": torch}), stored=dict)
    assert ex.q3.check(4).status == "right"
    assert ExerciseSet(declared("01"), {}, stored=dict).q3.check(8).text.startswith("this check uses halve_until_small")


def test_a_bug_in_a_checker_is_reported_as_the_checkers():
    broken = predict(1, "a broken check", "a number", value(op_labels, "why"), answer="1", hint="h")
    ex = ExerciseSet([broken])
    feedback = ex.q1.check(1)
    assert feedback.status == "error" and feedback.text.startswith("the check itself failed (TypeError")
    assert "not in your answer: please report it" in feedback.text and "your answer raised" not in feedback.text
    assert "1. a broken check (predict): the check failed" in repr(ex.score())


@pytest.mark.parametrize("notebook, exercise", ALL, ids=IDS)
def test_no_solution_shows_through_repr_dir_or_the_score(notebook, exercise):
    ex = exercises(notebook)
    question = getattr(ex, f"q{exercise.number}")
    assert dir(question) == ["check", "hint", "solution"]
    seen = [repr(ex), repr(question), repr(ex.score()), repr(ex.score().rows), ex.score()._repr_html_(),
            *(repr(getattr(question, name)) for name in dir(question))]
    for text in seen:
        assert exercise.solution.strip() not in text and exercise.hint not in text


def test_tab_completion_offers_only_the_three_methods():
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    completer = pytest.importorskip("IPython.core.completer")
    shell = interactive.InteractiveShell.instance()
    shell.user_ns["ex"] = exercises("01")

    def offered(text):
        with completer.provisionalcompleter():
            return sorted(c.text for c in shell.Completer.completions(text, len(text)))

    assert offered("ex.") == ["q1", "q2", "q3", "q4", "score"]
    assert offered("ex.q1.") == ["check", "hint", "solution"] and offered("ex.q1._") == []


def test_feedback_is_short_whatever_the_answer():
    feedback = _check("01", 1, list(range(1_000_000)))
    assert feedback.status == "wrong" and len(repr(feedback)) < 300
    long_message = cell("def sign_forward(x):\n    raise ValueError('x' * 10_000_000)\n", {})["sign_forward"]
    assert len(_check("01", 2, long_message).text) <= 1000


def test_the_score_records_the_latest_verdict_whatever_it_is():
    ex = _session("01")
    ex.q3.check(8)
    assert "3. halvings of 200 (predict, optional): right" in repr(ex.score())
    ex.q3.check(____)
    assert "3. halvings of 200 (predict, optional): not answered yet" in repr(ex.score())
    ex.q2.check(cell(declared("01")[1].solution, {"torch": torch})["sign_forward"])
    ex.q2.check(cell("def sign_forward(x):\n    assert False\n", {})["sign_forward"])
    assert "2. a graph that follows a sign (write): not quite" in repr(ex.score())


def _forms(answer):
    """The same answer in every form FORMS allows for its kind."""
    if isinstance(answer, bool):
        return [answer, numpy.bool_(answer)]
    if isinstance(answer, (int, float)):
        return [answer, float(answer), numpy.float64(answer), numpy.float32(answer)] + (
            [numpy.int64(answer)] if float(answer).is_integer() else [])
    if isinstance(answer, (set, frozenset)):
        items = sorted(answer)
        return [set(items), frozenset(items), items, tuple(reversed(items)), [numpy.str_(i) for i in items]]
    return [answer, f" {answer.upper()} "]


PREDICTIONS = [(n, e) for n, e in ALL if e.kind in ("predict", "choose")]


@pytest.mark.parametrize("notebook, exercise", PREDICTIONS, ids=[f"nb{n}-q{e.number}" for n, e in PREDICTIONS])
def test_every_answer_form_is_accepted_alike(notebook, exercise):
    """Sets, frozensets, lists, tuples, numpy scalars: the forms FORMS states,
    for every predict and choose exercise (03 q1 took no frozenset before)."""
    for answer in _forms(_reference(notebook, exercise)):
        feedback = _check(notebook, exercise.number, answer)
        assert feedback.status == "right", (answer, feedback)


def test_the_forms_are_stated_once_and_a_wrong_form_says_which_to_give():
    assert "frozenset" in FORMS and "numpy" in FORMS
    assert "without quotes" in _check("02", 5, "5").text and "not a tensor" in _check("02", 5, torch.tensor(5)).text
    assert "True and False are not numbers" in _check("02", 5, True).text
    assert "True or False" in _check("02", 1, "True").text and "set of names" in _check("05", 3, "p, r").text


def test_a_write_or_fix_exercise_needs_a_probe_and_only_one_does():
    solution = "def f(x):\n    return x\n"
    with pytest.raises(TypeError, match="a write or fix exercise, and only one, needs a probe"):
        Exercise(9, "write", "t", "slot", lambda answer, lesson: (True, ""), "h", solution, "f")
    with pytest.raises(TypeError, match="needs a probe"):
        Exercise(9, "predict", "t", "a number", lambda answer, lesson: (True, ""), "h", "a = 1", "a",
                 probe=lambda answer, lesson: {})


def test_an_error_in_the_reference_solution_is_the_checkers():
    """The check runs the solution to compare behaviour; its failure is not the learner's."""
    broken = write(1, "a broken solution", lambda answer, lesson: (True, "why"),
                   "def sign_forward(x):\n    raise ValueError('the solution itself')\n",
                   probe=declared("01")[1].probe, hint="h")           # a probe of the package, as in use
    right = cell(declared("01")[1].solution, {"torch": torch})["sign_forward"]
    feedback = ExerciseSet([broken]).q1.check(right)
    assert feedback.status == "error" and "ValueError: the solution itself" in feedback.text


def test_an_answer_that_behaves_otherwise_on_any_input_of_the_check_is_not_right():
    """A judge that finds nothing wrong is not the last word: the probe compares behaviour."""
    lenient = write(1, "lenient", lambda answer, lesson: (True, "why"), "def f(x):\n    return x * 2\n",
                    probe=lambda answer, lesson: {f"x = {x}": {"value": answer(x)} for x in (0, 1, 5)}, hint="h")
    ex = ExerciseSet([lenient])
    assert ex.q1.check(cell("def f(x):\n    return x + x\n", {})["f"]).status == "right"
    feedback = ex.q1.check(cell("def f(x):\n    return x * 2 if x < 3 else 0\n", {})["f"])
    assert feedback.status == "wrong" and feedback.text.startswith("on x = 5, your value differs from what the")


@pytest.fixture
def kernel():
    """An IPython shell running cells as a notebook's kernel does (IPython's
    own run_cell, its pre_run_cell and post_run_cell events), notebook 01's
    exercises loaded by a cell as the notebook's first code cell loads them.
    `kernel.run(source)` runs a cell; `kernel.check(source)` runs a check
    cell and returns its feedback. What the test added to the shell is taken
    away after it."""
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactive.InteractiveShell.instance()
    callbacks = {event: list(found) for event, found in shell.events.callbacks.items()}
    names = set(shell.user_ns)
    shell.user_ns["halve_until_small"] = lesson_function(NOTEBOOKS["01"].stem, "halve_until_small")

    def run(source):
        return shell.run_cell(source, store_history=True)

    def check(source):
        run(f"_feedback = {source}")
        return shell.user_ns.pop("_feedback")

    run("from helpers.exercises import ____, exercises\nex = exercises('01', globals())")
    yield SimpleNamespace(shell=shell, run=run, check=check)
    for event, found in callbacks.items():
        shell.events.callbacks[event][:] = found
    for name in set(shell.user_ns) - names:
        del shell.user_ns[name]


def test_a_check_after_its_answer_cell_raised_says_so_and_judges_nothing(kernel):
    """`answer_4 = d` raises NameError and leaves answer_4 as it was: the
    check names the error, not the earlier answer's hint, however often it
    is run again; once the cell is fixed and run, its answer is judged."""
    kernel.run("answer_4 = 'a'")
    assert "recorded like any other" in kernel.check("ex.q4.check(answer_4)").text
    slot = kernel.run("answer_4 = d")
    assert isinstance(slot.error_in_exec, NameError)
    for _ in range(2):                              # the check run again, the slot not
        feedback = kernel.check("ex.q4.check(answer_4)")
        assert feedback.status == "blank" and "recorded like any other" not in feedback.text, feedback
        assert feedback.text.startswith(f"the cell that sets answer_4 (cell [{slot.execution_count}]) raised "
                                        "NameError: name 'd' is not defined, so answer_4 was not set: fix that cell "
                                        "and run it again, then this one."), feedback
        assert "answer_4 = 'd'" in feedback.text      # what a bare letter needs
    assert "4. where the comparison went (choose, optional): not answered yet" in repr(kernel.check("ex.score()"))
    assert kernel.check("ex.q4.check('b')").status == "right"     # a value given as it is is judged as it is
    kernel.run("answer_4 = 'b'")
    feedback = kernel.check("ex.q4.check(answer_4)")
    assert feedback.status == "right" and repr(feedback).endswith("\nYou answered 'b'.")


def test_a_function_cell_with_a_syntax_error_is_not_judged_by_the_old_function(kernel):
    """A write or fix slot is a def: a syntax error runs nothing, and the
    function defined before would be judged in its place."""
    kernel.run("def sign_forward(x):\n    return x * 3 if x >= 0 else x ** 2\n")
    assert kernel.check("ex.q2.check(sign_forward)").status == "wrong"
    slot = kernel.run("def sign_forward(x):\n    return (x * 3 if x > 0 else x ** 2\n")
    assert isinstance(slot.error_before_exec, SyntaxError)
    feedback = kernel.check("ex.q2.check(sign_forward)")
    assert feedback.status == "blank" and feedback.text.startswith(
        f"the cell that defines sign_forward (cell [{slot.execution_count}]) raised SyntaxError: "), feedback
    assert "so sign_forward was not defined: fix that cell and run it again" in feedback.text
    fixed = kernel.run(declared("01")[1].solution)
    feedback = kernel.check("ex.q2.check(sign_forward)")
    assert feedback.status == "right" and repr(feedback).endswith(
        f"\nJudged your sign_forward from cell [{fixed.execution_count}]."), feedback


def test_a_cell_that_raised_after_setting_its_answer_has_that_answer_judged(kernel):
    """A learner tries their function in the cell that defines it, and the
    try raises: the function was defined, and is judged; the quote says
    the cell raised."""
    slot = kernel.run(declared("01")[1].solution + "\nsign_forward(no_such_tensor)\n")
    assert isinstance(slot.error_in_exec, NameError)
    feedback = kernel.check("ex.q2.check(sign_forward)")
    assert feedback.status == "right", feedback
    assert repr(feedback).endswith(f"\nJudged your sign_forward from cell [{slot.execution_count}] (which then "
                                   "raised NameError: name 'no_such_tensor' is not defined)."), feedback
    kernel.run("answer_3 = 8\nanswer_3 + 'one'")
    assert kernel.check("ex.q3.check(answer_3)").status == "right"


def test_the_hook_is_registered_once_per_kernel(kernel):
    from helpers.exercises import cells

    kernel.run("ex = exercises('01', globals())\nex2 = exercises('02', globals())")
    for event, hook in (("pre_run_cell", cells.before_cell), ("post_run_cell", cells.after_cell)):
        assert kernel.shell.events.callbacks[event].count(hook) == 1


def test_outside_ipython_an_answer_is_judged_as_given(monkeypatch):
    """Plain Python: no kernel, no record of cells; every check judges the
    value it is given, and quotes it."""
    from helpers.exercises import cells

    monkeypatch.setattr(cells, "_shell", lambda: None)
    scope = cell("answer_4 = 'a'\n", dict(_lesson("01")))
    ex = exercises("01", scope)
    assert ex.q4.check(scope["answer_4"]).status == "wrong"
    assert repr(ex.q4.check("b")).endswith("\nYou answered 'b'.")


def test_each_feedback_quotes_the_answer_it_judged_on_one_short_line():
    from helpers.exercises.feedback import QUOTE_LIMIT

    assert repr(_check("01", 4, "c")).splitlines()[1:] == ["You answered 'c'."]
    assert repr(_check("01", 1, 38.0)).splitlines()[1:] == ["You answered 38."]
    huge = _check("01", 1, torch.arange(1_000_000.0).reshape(1000, 1000))
    quote = repr(huge).splitlines()[-1]
    assert quote.startswith("You answered tensor([[") and len(quote) <= QUOTE_LIMIT and quote == huge.judged
    assert "You answered tensor" in huge._repr_html_()
    mine = cell(declared("01")[1].solution, {"torch": torch})["sign_forward"]
    assert repr(_check("01", 2, mine)).splitlines()[1:] == ["Judged your sign_forward."]
    assert "\n" not in repr(_check("01", 1, ____))              # the placeholder: nothing to quote


@pytest.mark.parametrize("value", [1, "sign_forward", None])
def test_a_value_where_a_function_goes_is_the_learners_mistake(value):
    """`sign_forward = 1` in a write exercise's slot: feedback that says what
    to do, not a bug of the check."""
    feedback = _check("01", 2, value)
    assert feedback.status == "wrong", feedback
    assert "must be a function you define with def" in str(feedback) and "bug" not in str(feedback)
