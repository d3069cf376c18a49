"""Where a check runs: as in a fresh session (gradient recording on, the
default dtype and device, its own random numbers), under a time limit, and
with the session given back exactly as it was found, whatever the answer
did. An error is then the learner's when it passed through their code,
else the checker's."""

import ctypes
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType
from typing import TypeVar

import torch

from ..arguments import MACHINERY

T = TypeVar("T")
SEED = 0
TIME_LIMIT = 10.0           # seconds a check may take, the learner's code included
GRACE = 0.5                 # seconds more, each time the limit finds an import running
RETRY = 0.005               # seconds more, each time the limit finds a thread being started (_ring)
# Code that is not the learner's besides arguments.MACHINERY: the lesson and solution code
# the checks compile themselves (file names in angle brackets).
CHECKER_FILES = ("<stored notebook", "<exercise")


class TimedOut(BaseException):
    """The time limit ran out (a BaseException, so that the learner's own
    `except Exception` cannot swallow it)."""


def _default_device() -> object:
    """The device torch.set_default_device set, or None when none is set
    (then no device mode is active, and tensors are made on the CPU)."""
    return getattr(getattr(getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None), "device_context", None), "device", None)


def _state() -> Callable[[], None]:
    """A function that puts torch's global settings back as they are now."""
    grad, dtype, device = torch.is_grad_enabled(), torch.get_default_dtype(), _default_device()
    anomaly, nan = torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
    deterministic, warn_only = torch.are_deterministic_algorithms_enabled(), \
        torch.is_deterministic_algorithms_warn_only_enabled()
    threads, rng, python_rng = torch.get_num_threads(), torch.get_rng_state(), random.getstate()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

    def restore() -> None:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        if _default_device() != device:
            torch.set_default_device(device)     # type: ignore[arg-type]
        torch.set_anomaly_enabled(anomaly, nan)
        if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) \
                != (deterministic, warn_only):       # only when changed: the setter imports half of torch
            torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        torch.set_rng_state(rng)
        random.setstate(python_rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)

    return restore


@contextmanager
def hermetic(seed: int = SEED) -> Iterator[None]:
    """Run the block as in a fresh session; afterwards torch's settings and
    random states are what they were before, whatever the block did."""
    restore = _state()
    try:
        with torch.inference_mode(False):
            torch.set_grad_enabled(True)
            torch.set_default_dtype(torch.float32)
            if _default_device() is not None:
                torch.set_default_device(None)
            torch.set_anomaly_enabled(False)
            torch.manual_seed(seed)
            random.seed(seed)
            yield
    finally:
        restore()


def time_limit(seconds: float) -> AbstractContextManager[None]:
    """Raise TimedOut in the block after `seconds`, not counting time spent
    importing modules (torch imports some on first use: an optimizer's first
    step loads torch._dynamo). In the main thread where there is SIGALRM
    (Unix; a Jupyter kernel runs cells there), a signal; elsewhere (Windows,
    another thread) a thread that raises TimedOut in the block's thread
    (`_ThreadLimit`). Either way a long call inside torch's C++ code is
    interrupted only when it returns to Python; the signal also interrupts
    a sleep, the thread does not (nor any other blocking call)."""
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        return _signal_limit(seconds)
    return _ThreadLimit(seconds)


@contextmanager
def _signal_limit(seconds: float) -> Iterator[None]:
    def ring(_signal: int, frame: FrameType | None) -> None:
        if _importing(frame):
            signal.setitimer(signal.ITIMER_REAL, GRACE)      # ask again once the import is done
            return
        raise TimedOut

    start, previous = time.monotonic(), signal.signal(signal.SIGALRM, ring)
    earlier, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if earlier:                        # someone else's timer was running: give it its remaining time
            signal.setitimer(signal.ITIMER_REAL, max(earlier - (time.monotonic() - start), 1e-3))


# The thread limits running, per thread (by ident) in the order they began, and the one
# thread that raises their TimedOut, started with the first limit; _LOCK guards both. A
# plain lock: a with statement takes and gives it back without running Python code, so
# a TimedOut can never strike between the two and leave it taken.
_RUNNING: dict[int, list["_ThreadLimit"]] = {}
_WATCHER: list[threading.Thread] = []
_LOCK = threading.Lock()
_WAKE = threading.Condition(_LOCK)


class _ThreadLimit:
    """A time limit without SIGALRM: the watcher thread (_watch) makes the
    block's thread raise TimedOut (PyThreadState_SetAsyncExc), which it does
    at its next call or backward jump. A limit raises only while it runs,
    and `__exit__` ends it, both under _LOCK, so a TimedOut set just before
    is raised by `__exit__` itself, at its next call, never after the with
    statement. Raising ends the limits begun inside the block too (the
    TimedOut ends their blocks), so one whose `__exit__` it cut short
    cannot raise later."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.thread, self.depth, self.deadline = seconds, 0, 0, 0.0

    def __enter__(self) -> None:
        with _LOCK:
            if not (_WATCHER and _WATCHER[0].is_alive()):
                _WATCHER[:] = [threading.Thread(target=_watch, name="exercise time limits", daemon=True)]
                _WATCHER[0].start()
            self.thread, self.deadline = threading.get_ident(), time.monotonic() + self.seconds
            running = _RUNNING.setdefault(self.thread, [])
            self.depth = len(running)
            running.append(self)
            _WAKE.notify()

    def __exit__(self, *exc: object) -> None:
        with _LOCK:
            _stop(self)


def _watch() -> None:
    """The watcher thread: rings each thread's outermost limit that ran out."""
    with _LOCK:
        while True:
            now = time.monotonic()
            for limits in list(_RUNNING.values()):
                due = next((limit for limit in limits if limit.deadline <= now), None)
                if due is not None:
                    _ring(due, now)
            deadlines = [limit.deadline for limits in _RUNNING.values() for limit in limits]
            _WAKE.wait(max(min(deadlines) - time.monotonic(), 0.0) if deadlines else None)


def _ring(limit: _ThreadLimit, now: float) -> None:
    """Raise TimedOut in the thread of `limit`, which ran out (under _LOCK);
    ask again GRACE later while that thread is importing, and RETRY later
    while any thread is being started: before Python 3.12 a new thread's
    state bears the id of the thread starting it until it runs, and would
    take the TimedOut (and hang its start). Nothing between that check and
    the raise lets another thread run: no Python call, and
    ctypes.pythonapi keeps the GIL."""
    frame = sys._current_frames().get(limit.thread)
    starting = getattr(threading, "_limbo", {})         # threads started, not yet running
    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    thread, error = ctypes.c_ulong(limit.thread), ctypes.py_object(TimedOut)
    if frame is not None and _importing(frame):
        limit.deadline = now + GRACE
    elif frame is not None and starting:
        limit.deadline = now + RETRY
    else:
        if frame is not None:                           # else its thread is gone
            set_async_exc(thread, error)
        _stop(limit)


def _stop(limit: _ThreadLimit) -> None:
    """End `limit` and the limits begun inside its block (under _LOCK)."""
    running = _RUNNING.get(limit.thread, [])
    del running[limit.depth:]
    if not running:
        _RUNNING.pop(limit.thread, None)


def _importing(frame: FrameType | None) -> bool:
    """Whether the interrupted code is in the middle of an import."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def learners_frame(error: BaseException) -> tuple[str, int] | None:
    """(function, line) of the innermost frame of the learner's code that
    the error passed through; None when it passed through none."""
    found, tb = None, error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith(MACHINERY) and not name.startswith(CHECKER_FILES):
            found = (tb.tb_frame.f_code.co_name, tb.tb_lineno)
        tb = tb.tb_next
    return found


def in_sandbox(run: Callable[[], T]) -> T:
    """`run()` in a fresh session and under the time limit (TIME_LIMIT)."""
    with hermetic(), time_limit(TIME_LIMIT):
        return run()

