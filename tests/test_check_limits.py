"""The check limits run to their ends: the learner's interrupt stops a check and its earlier verdict; after a
compiled backward in the session right answers stay right. Nothing here times anything."""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

from helpers.exercises import declared, exercises

ROOT = Path(__file__).resolve().parents[1]
SIGN = declared("01")[1].solution          # the right sign_forward
HANG = 120                                 # seconds after which a check that did not stop fails the test
ROW = "2. a graph that follows a sign (write): "


def _defined(source):
    scope = {"torch": torch}
    exec(compile(source, "<cell 2>", "exec"), scope)
    return scope["sign_forward"]


def test_an_answer_that_raises_keyboard_interrupt_leaves_no_earlier_right():
    """A kernel cannot tell the answer's own KeyboardInterrupt from the learner's: both count as the interrupt."""
    ex = exercises("01", {})
    assert ex.q2.check(_defined(SIGN)).status == "right"
    with pytest.raises(KeyboardInterrupt):
        ex.q2.check(_defined("def sign_forward(x):\n    raise KeyboardInterrupt\n"))
    assert ROW + "interrupted" in repr(ex.score())


def test_the_learners_interrupt_stops_the_check_and_its_verdict():
    """KeyboardInterrupt goes on, so Run All stops too. The answer sleeps 60 s under a 120 s limit: only the interrupt
    ends it early."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGINT is handled in the main thread")
    # as in a kernel, whatever this process inherited (a CI job's `&` starts it with SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    ex = exercises("01", {})
    assert ex.q2.check(_defined(SIGN)).status == "right"
    slow = _defined("import time\n\ndef sign_forward(x):\n    time.sleep(60)\n    return x * 3\n")
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.MonkeyPatch.context() as patch, pytest.raises(KeyboardInterrupt):
            patch.setattr("helpers.exercises.sandbox.TIME_LIMIT", HANG)
            ex.q2.check(slow)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert ROW + "interrupted" in repr(ex.score())


COMPILED_CHECKS = """
import json, torch
from helpers.exercises import declared, exercises
compiled = torch.compile(lambda x: (x * 2).sin().sum(), backend="aot_eager")
compiled(torch.ones(3, requires_grad=True)).backward()
ex = exercises("09", {})
found = [getattr(ex, f"q{e.number}").check(e.reference({})) for e in declared("09") if e.kind in ("write", "fix")]
print(json.dumps([[f.status, f.text] for f in found]))
"""


def test_after_a_compiled_backward_in_the_session_right_answers_are_right():
    """Notebook 09's write and fix checks (a compiled function's backward), after the session ran one itself."""
    done = subprocess.run([sys.executable, "-c", COMPILED_CHECKS], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found and all(status == "right" for status, _ in found), found
