"""Verdicts a learner can trust, whatever the session, the answer's form or
what the answer does; the feedback of a check in a kernel; the results file."""

import inspect
import json
import linecache
import math
import random
import signal
import subprocess
import sys
import threading
import time
from fractions import Fraction
from types import SimpleNamespace

import numpy
import pytest
import torch

from helpers.exercises import ExerciseSet, ____, answer_from, declared, exercises, session
from helpers.exercises.exercise import predict, write
from helpers.exercises.feedback import QUOTE_LIMIT
from helpers.exercises.judges import CHECKER, op_labels, value
from helpers.exercises.lesson import fingerprint
from helpers.exercises.sandbox import TimedOut, hermetic, replaced, time_limit
from tools.notebooks import notebook_paths
from tools.testkit.lessons import lesson_function

# (notebook, number, a wrong answer that session state could turn right)
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


SESSION = [(notebook, e.number, None, "right") for notebook, e in ALL] + [(*flipped, "wrong") for flipped in FLIPPED]


@pytest.mark.parametrize("notebook, number, answer, status", SESSION,
                         ids=[*IDS, *(f"nb{notebook}-q{number}-wrong" for notebook, number, _ in FLIPPED)])
def test_verdicts_stand_whatever_the_session_state(session_state, notebook, number, answer, status):
    """Checked with grad off and with a float64 default dtype; the check must leave the RNG state alone."""
    if answer is None:
        answer = declared(notebook)[number - 1].reference(_lesson(notebook))
    torch.set_grad_enabled(False)
    feedback = _check(notebook, number, answer)
    assert feedback.status == status and not torch.is_grad_enabled(), feedback
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float64)
    assert _check(notebook, number, answer).status == status and torch.get_default_dtype() == torch.float64
    torch.manual_seed(123)
    random.seed(123)
    expected, expected_py = torch.rand(3), random.random()
    torch.manual_seed(123)
    random.seed(123)
    _check(notebook, number, answer)
    assert torch.equal(torch.rand(3), expected) and random.random() == expected_py


def test_whatever_the_answer_did_to_the_session_is_undone(session_state):
    learners = {"torch": torch, **_lesson("01")}
    halve, backward = learners["halve_until_small"], torch.Tensor.backward
    answer = cell("def sign_forward(x):\n    global halve_until_small\n    halve_until_small = None\n"
                  "    torch.set_grad_enabled(False)\n    torch.set_default_dtype(torch.float64)\n"
                  "    torch.manual_seed(1)\n    torch.set_anomaly_enabled(True)\n"
                  "    torch.Tensor.backward = lambda self, *a, **k: None\n    return x * 3\n",
                  learners)["sign_forward"]
    torch.manual_seed(5)
    expected = torch.rand(2)
    torch.manual_seed(5)
    feedback = exercises("01", learners).q2.check(answer)
    assert torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32
    assert not torch.is_anomaly_enabled() and torch.equal(torch.rand(2), expected)
    assert torch.Tensor.backward is backward and learners["halve_until_small"] is halve
    assert feedback.status == "wrong" and feedback.text.startswith(
        "your answer replaced `torch.Tensor.backward` while the check ran it"), feedback


@pytest.mark.parametrize("body, said", [("assert x > 100", "AssertionError (no message)"),
                                        ("raise NotImplementedError", "NotImplementedError (no message)"),
                                        ("raise ValueError('a\\nb')", "ValueError: a in sign_forward, line 2")])
def test_an_exception_in_the_learners_function_is_feedback(body, said):
    feedback = _check("01", 2, cell(f"def sign_forward(x):\n    {body}\n", {})["sign_forward"])
    assert feedback.status == "wrong" and said in feedback.text and "running your answer raised" in feedback.text


class Hung(BaseException):
    """The test's own alarm: the check did not stop the learner's loop."""


def test_an_answer_that_never_returns_is_stopped(monkeypatch):
    monkeypatch.setattr("helpers.exercises.sandbox.TIME_LIMIT", 0.5)

    def ring(_signal, _frame):
        raise Hung

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    ex = _session("01")
    try:
        feedback = ex.q2.check(cell("def sign_forward(x):\n    while True:\n        pass\n", {})["sign_forward"])
        still_armed = signal.getitimer(signal.ITIMER_REAL)[0] > 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    monkeypatch.undo()      # the session judges on after a stopped loop, at the usual limit (a loaded machine)
    then = ex.q2.check(cell(declared("01")[1].solution, {"torch": torch})["sign_forward"])
    assert feedback.status == "wrong" and feedback.text.startswith(
        "your function did not return within the time limit of 0.5 s (it was in sign_forward, line "), feedback
    assert feedback.text.endswith("): is there a loop that never ends?"), feedback
    assert still_armed, "the test's own timer was not given back"
    assert then.status == "right" and "2. a graph that follows a sign (write): right" in repr(ex.score())


@pytest.mark.parametrize("where", ["without SIGALRM", "off the main thread"])
def test_where_no_alarm_can_ring_a_check_has_no_limit_and_judges_as_usual(where, monkeypatch):
    """Windows has no SIGALRM and threads get no signals: no limit there (Kernel › Interrupt stops a runaway check)."""
    if where == "without SIGALRM":
        for name in ("SIGALRM", "setitimer", "getitimer", "ITIMER_REAL", "alarm"):
            monkeypatch.delattr(signal, name)
    answers = [cell(declared("01")[1].solution, {"torch": torch})["sign_forward"],
               cell("def sign_forward(x):\n    return x\n", {})["sign_forward"]]
    said = []

    def work():
        with time_limit(0.01):
            time.sleep(0.05)                # nothing rings
        said.extend(_check("01", 2, answer).status for answer in answers)

    if where == "off the main thread":
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
    else:
        work()
    assert said == ["right", "wrong"], said


def test_the_signal_cuts_a_sleep_short():
    """Had SIGALRM not interrupted the sleep, the block would end without TimedOut."""
    with pytest.raises(TimedOut), time_limit(0.1):
        time.sleep(3)


LEFT_WRAPPED = """
import sys, time
from helpers.exercises.sandbox import time_limit
bootstrap = sys.modules["_frozen_importlib"]
with time_limit(0.2):
    inner = bootstrap._find_and_load
    bootstrap._find_and_load = lambda name, import_: inner(name, import_)      # someone's wrapper, left in place
import json.tool
time.sleep(0.5)
print("alive")
"""


def test_an_import_after_the_limit_arms_no_timer_whatever_wraps_the_import_machinery():
    """Import timing left wrapped by other code must go inactive: a SIGALRM with no handler left ends the kernel."""
    done = subprocess.run([sys.executable, "-c", LEFT_WRAPPED], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "alive", done.stdout + done.stderr


def test_time_spent_importing_does_not_count(monkeypatch, tmp_path):
    """torch imports modules on first use (an optimizer's first step loads torch._dynamo: seconds on a slow machine)."""
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
    same = cell(inspect.getsource(lesson_function(NOTEBOOKS["01"].stem, "halve_until_small")), {})
    assert "you changed" not in _check("01", 3, 8, same).text
    assert _check("01", 3, 8, {}).status == "right"


def test_functions_whose_source_is_gone_are_compared_by_their_code():
    """torch.compile clears linecache: an unchanged function must not read as changed then."""
    same, other = (cell(f"def f(x):\n    return x * {k}\n", {})["f"] for k in (2, 3))
    again = cell("def f(x):\n    return x * 2\n", {})["f"]
    linecache.clearcache()
    assert fingerprint(same) == fingerprint(again) != fingerprint(other)


def test_without_the_stored_notebook_the_learners_globals_are_used():
    ex = ExerciseSet(declared("01"), cell(QUARTERING, {"torch": torch}), stored=dict)
    assert ex.q3.check(4).status == "right"
    assert ExerciseSet(declared("01"), {}, stored=dict).q3.check(8).text.startswith("this check uses halve_until_small")


def test_a_check_whose_own_code_runs_past_the_limit_blames_no_one(monkeypatch):
    """A busy machine can push the checker's own code past the limit: say to run it again, not that there is a bug."""
    monkeypatch.setattr("helpers.exercises.sandbox.TIME_LIMIT", 0.3)
    slow = answer_from("def judge(answer, lesson):\n    while True:\n        pass\n", "judge", filename=CHECKER)
    feedback = ExerciseSet([predict(1, "a slow check", "a number", slow, answer="1", hint="h")]).q1.check(1)
    assert feedback.status == "error" and "a busy or slow machine" in feedback.text, feedback
    assert "bug" not in feedback.text and "your answer" not in feedback.text.replace("not in your answer's", "")


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
    for answer in _forms(_reference(notebook, exercise)):
        feedback = _check(notebook, exercise.number, answer)
        assert feedback.status == "right", (answer, feedback)


def test_a_wrong_form_says_which_to_give():
    assert "without quotes" in _check("02", 5, "5").text and "not a tensor" in _check("02", 5, torch.tensor(5)).text
    assert "True and False are not numbers" in _check("02", 5, True).text
    assert "True or False" in _check("02", 1, "True").text and "set of names" in _check("05", 3, "p, r").text


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
    """An IPython shell with notebook 01's exercises: `.run(source)` runs a cell, `.check(source)` returns feedback."""
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
    """`answer_4 = d` raises NameError and leaves the earlier answer_4 in place, which must not be judged."""
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
    kernel.run("answer_4 = true")
    assert "Python spells it True: answer_4 = True." in kernel.check("ex.q4.check(answer_4)").text
    assert kernel.check("ex.q4.check('b')").status == "right"     # a value given as it is is judged as it is
    kernel.run("answer_4 = 'b'")
    feedback = kernel.check("ex.q4.check(answer_4)")
    assert feedback.status == "right" and repr(feedback).endswith("\nYou answered 'b'.")


@pytest.mark.parametrize("cell_source", ["answer_4, note = 'b', d", "answer_4 += d", "for answer_4 in ['b', d]: pass",
                                         "with open(d) as answer_4: pass", "x = answer_4 = d"])
def test_a_cell_that_raised_before_binding_its_answer_in_any_form_is_not_judged(kernel, cell_source):
    kernel.run("answer_4 = 'b'")
    slot = kernel.run(cell_source)
    assert isinstance(slot.error_in_exec, NameError)
    feedback = kernel.check("ex.q4.check(answer_4)")
    assert feedback.status == "blank" and "so answer_4 was not set" in feedback.text, feedback


def test_a_function_cell_with_a_syntax_error_is_not_judged_by_the_old_function(kernel):
    """A syntax error runs nothing, so the function defined earlier would otherwise be judged in its place."""
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
    """Learners try their function in the cell that defines it: the def ran, so it is judged though the try raised."""
    slot = kernel.run(declared("01")[1].solution + "\nsign_forward(no_such_tensor)\n")
    assert isinstance(slot.error_in_exec, NameError)
    feedback = kernel.check("ex.q2.check(sign_forward)")
    assert feedback.status == "right", feedback
    assert repr(feedback).endswith(f"\nJudged your sign_forward from cell [{slot.execution_count}] (which then "
                                   "raised NameError: name 'no_such_tensor' is not defined)."), feedback
    kernel.run("answer_3 = 8\nanswer_3 + 'one'")
    assert kernel.check("ex.q3.check(answer_3)").status == "right"


def test_the_hook_is_registered_once_per_kernel(kernel):
    kernel.run("ex = exercises('01', globals())\nex2 = exercises('02', globals())")
    for event, hook in (("pre_run_cell", session.before_cell), ("post_run_cell", session.after_cell)):
        assert kernel.shell.events.callbacks[event].count(hook) == 1


def test_outside_ipython_an_answer_is_judged_as_given(monkeypatch):
    """Plain Python keeps no record of cells to report on."""
    monkeypatch.setattr(session, "current_shell", lambda: None)
    scope = cell("answer_4 = 'a'\n", dict(_lesson("01")))
    ex = exercises("01", scope)
    assert ex.q4.check(scope["answer_4"]).status == "wrong"
    assert repr(ex.q4.check("b")).endswith("\nYou answered 'b'.")


def test_feedback_is_short_and_quotes_the_answer_it_judged_on_one_line():
    assert repr(_check("01", 4, "c")).splitlines()[1:] == ["You answered 'c'."]
    assert repr(_check("01", 1, 38.0)).splitlines()[1:] == ["You answered 38."]
    huge = _check("01", 1, torch.arange(1_000_000.0).reshape(1000, 1000))
    quote = repr(huge).splitlines()[-1]
    assert quote.startswith("You answered tensor([[") and len(quote) <= QUOTE_LIMIT and quote == huge.judged
    assert "You answered tensor" in huge._repr_html_()
    mine = cell(declared("01")[1].solution, {"torch": torch})["sign_forward"]
    assert repr(_check("01", 2, mine)).splitlines()[1:] == ["Judged your sign_forward."]
    assert "\n" not in repr(_check("01", 1, ____))              # the placeholder: nothing to quote
    assert len(repr(_check("01", 1, list(range(100_000))))) < 300
    long_message = cell("def sign_forward(x):\n    raise ValueError('x' * 10_000_000)\n", {})["sign_forward"]
    assert len(_check("01", 2, long_message).text) <= 1000


@pytest.mark.parametrize("value", [1, "sign_forward", None])
def test_a_value_where_a_function_goes_is_the_learners_mistake(value):
    feedback = _check("01", 2, value)
    assert feedback.status == "wrong", feedback
    assert "must be a function you define with def" in str(feedback) and "bug" not in str(feedback)


# --- torch replaced in the session, and the results file --------------------------------------------------------

@pytest.fixture
def replaced_backward(monkeypatch):
    """torch.Tensor.backward replaced, as an answer cell can: given back after the test."""
    monkeypatch.setattr(torch.Tensor, "backward", lambda self, *args, **kwargs: None)


def test_a_replaced_tensor_backward_is_named_not_judged(replaced_backward):
    """Judged with a replaced backward, a right answer could fail and a wrong one pass: neither is judged."""
    right = cell(declared("01")[1].solution, {"torch": torch})["sign_forward"]
    for answer in (right, cell("def sign_forward(x):\n    return x\n", {})["sign_forward"]):
        feedback = _check("01", 2, answer)
        assert feedback.status == "error", feedback
        assert feedback.text.startswith("`torch.Tensor.backward` is not torch's own any more: code in this session "
                                        "replaced it, and this check does not judge with a replaced torch. To get "
                                        "torch back, restart the kernel (Kernel › Restart Kernel)"), feedback
    assert _check("01", 1, 38).status == "error"          # a prediction's truth is computed with torch too


@pytest.mark.parametrize("where, replacement", [
    ("torch.tanh", lambda x: x), ("torch.Tensor.__mul__", lambda self, other: self),
    ("torch.autograd.grad", lambda *a, **k: ()), ("torch.nn.functional.relu", None)])
def test_any_torch_function_replaced_is_named(where, replacement, monkeypatch):
    with monkeypatch.context() as patch:
        if replacement is None:
            patch.delattr(where)
        else:
            patch.setattr(where, replacement)
        feedback = _check("01", 1, 38)
    assert feedback.status == "error" and feedback.text.startswith(f"`{where}` is not torch's own"), feedback
    assert _check("01", 1, 38).status == "right"


def test_torch_patching_itself_is_not_a_replacement():
    """Importing torch._dynamo (the first torch.compile does) wraps torch.manual_seed and nn.Module.__init__."""
    import torch._dynamo  # noqa: F401

    torch.nn.Linear(2, 2)
    assert replaced() == []


def test_a_tampered_check_of_replacements_lets_the_replacement_judge(replaced_backward, monkeypatch):
    """Shows the replacement check matters: made blind, it lets the replaced backward judge a right answer."""
    monkeypatch.setattr("helpers.exercises.session.replaced", list)
    monkeypatch.setattr("helpers.exercises.sandbox.replaced", list)
    right = cell(declared("01")[1].solution, {"torch": torch})["sign_forward"]
    assert _check("01", 2, right).status != "right"


def test_every_check_appends_its_verdict_to_the_results_file(tmp_path, monkeypatch):
    results = tmp_path / "results.jsonl"
    monkeypatch.setenv("GRAPH_NOTEBOOKS_RESULTS", str(results))
    ex = _session("01")
    ex.q1.check(38)
    ex.q1.check(37)
    ex.q2.check(____)
    ex.q2.check(cell("def sign_forward(x):\n    raise ValueError('no')\n", {})["sign_forward"])
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert [(line["notebook"], line["exercise"], line["status"]) for line in lines] == [
        ("01", "q1", "right"), ("01", "q1", "wrong"), ("01", "q2", "blank"), ("01", "q2", "wrong")]
    assert all(set(line) == {"notebook", "exercise", "status", "message"} for line in lines)
    assert lines[3]["message"] == "running your answer raised ValueError: no in sign_forward, line 2."
    monkeypatch.delenv("GRAPH_NOTEBOOKS_RESULTS")
    ex.q1.check(38)
    assert len(results.read_text(encoding="utf-8").splitlines()) == 4


# --- liars and answer forms ----------------------------------------------------------------------------------

LIES = ("__eq__", "__hash__", "__int__", "__index__", "__float__", "__bool__", "__sub__", "__rsub__", "__abs__",
        "__iter__", "__len__", "strip", "lower")


def liar(value, claimed):
    """`value` in a subclass of its type whose methods above answer as `claimed` would."""
    def lie(name):
        return lambda self, *args: getattr(claimed, name)(*args)

    base = type(value)
    lies = {name: lie(name) for name in LIES if hasattr(base, name) and hasattr(claimed, name)}
    return type(f"Lying{base.__name__.title()}", (base,), lies)(value)


LIARS = [  # (notebook, exercise, a wrong answer whose class claims the right one)
    ("01", 4, liar("a", "b")),                  # choose
    ("01", 1, liar(37, 38)),                    # predict
    ("05", 1, liar(0.5, 0.675)),
    ("05", 3, liar({"q"}, {"p", "r"})),
    ("05", 3, liar(["q"], ["p", "r"])),
    ("02", 2, liar("_saved_self", "_saved_result")),    # a judge of its own
]
ANSWER_FORMS = [  # (notebook, exercise, an answer in another form than the solution's, the verdict it deserves)
    *((notebook, number, answer, "wrong") for notebook, number, answer in LIARS),     # judged by its built-in value
    ("06", 3, Fraction(16, 2), "right"),        # 8
    ("06", 3, Fraction(17, 2), "wrong"),
    ("05", 1, Fraction(27, 40), "right"),       # 0.675
    ("06", 3, 10 ** 400, "wrong"),              # no float holds it: wrong, never the checker's own error
    ("03", 3, 10 ** 400, "wrong"),
    ("05", 1, math.nan, "wrong"),
    ("05", 1, math.inf, "wrong"),
    ("06", 3, math.inf, "wrong"),
]


@pytest.mark.parametrize(("notebook", "number", "answer", "deserved"), ANSWER_FORMS,
                         ids=[f"nb{n}-q{q}-{i}-{type(a).__name__}" for i, (n, q, a, _) in enumerate(ANSWER_FORMS)])
def test_an_answer_in_another_form_or_a_liar_gets_the_verdict_it_deserves(notebook, number, answer, deserved):
    feedback = _check(notebook, number, answer)
    assert feedback.status == deserved, feedback


def test_a_default_device_set_in_a_check_leaves_no_mode_behind():
    """torch.set_default_device installs a mode every factory call then goes through; cpu again means none."""
    modes = torch._C._len_torch_function_stack()
    with hermetic():
        torch.set_default_device("meta")
        assert torch.zeros(1).is_meta
    assert torch.get_default_device() == torch.device("cpu") and torch._C._len_torch_function_stack() == modes
