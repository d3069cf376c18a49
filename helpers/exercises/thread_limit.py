"""The time limit where there is no SIGALRM (Windows) or the check runs in
a thread other than the main one: a watcher thread makes the block's
thread raise TimedOut (`PyThreadState_SetAsyncExc`, through ctypes), which
it does at its next call or backward jump. sandbox.time_limit loads this
module only then: a kernel on Unix runs its checks in the main thread,
with SIGALRM, and never imports it (tests/test_exercise_checks.py holds
that). Without fork (Windows) the check runs in the kernel itself, under
this limit and apart.py's hard stop."""

import ctypes
import os
import sys
import threading
import time
from contextlib import AbstractContextManager

from .timeouts import GRACE, TimedOut, importing, imports_timed

PAUSED = 1e6               # seconds: a limit's deadline while an import runs
RETRY = 0.005               # seconds more, each time the limit finds a thread being started (_ring)

# The thread limits running, per thread (by ident) in the order they began, and the one
# thread that raises their TimedOut, started with the first limit; _LOCK guards both. A
# plain lock: a with statement takes and gives it back without running Python code, so
# a TimedOut can never strike between the two and leave it taken.
_RUNNING: dict[int, list["ThreadLimit"]] = {}
_WATCHER: list[threading.Thread] = []
_LOCK = threading.Lock()
_WAKE = threading.Condition(_LOCK)


def _after_fork_in_child() -> None:
    """A forked child (apart.py) has none of its parent's other threads: no
    watcher, no limits running there, and a lock and condition of its own
    (another thread of the parent may have held the parent's at the fork)."""
    global _LOCK, _WAKE
    _RUNNING.clear()
    _WATCHER.clear()
    _LOCK = threading.Lock()
    _WAKE = threading.Condition(_LOCK)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class ThreadLimit:
    """A time limit without SIGALRM: the watcher thread (_watch) makes the
    block's thread raise TimedOut (PyThreadState_SetAsyncExc), which it does
    at its next call or backward jump. A limit raises only while it runs,
    and `__exit__` ends it, both under _LOCK, so a TimedOut set just before
    is raised by `__exit__` itself, at its next call, never after the with
    statement. Raising ends the limits begun inside the block too (the
    TimedOut ends their blocks), so one whose `__exit__` it cut short
    cannot raise later."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.thread, self.depth, self.deadline, self.left = seconds, 0, 0, 0.0, 0.0
        self.imports: AbstractContextManager[None] = imports_timed(self._began, self._ended)

    def _began(self) -> None:              # an import: the limit waits for it
        with _LOCK:
            self.left, self.deadline = self.deadline - time.monotonic(), time.monotonic() + PAUSED

    def _ended(self, _seconds: float) -> None:
        with _LOCK:
            self.deadline = time.monotonic() + max(self.left, 0.0)
            _WAKE.notify()

    def __enter__(self) -> None:
        self.imports.__enter__()
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
        self.imports.__exit__(None, None, None)


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


def _ring(limit: ThreadLimit, now: float) -> None:
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
    if frame is not None and importing(frame):
        limit.deadline = now + GRACE
    elif frame is not None and starting:
        limit.deadline = now + RETRY
    else:
        if frame is not None:                           # else its thread is gone
            set_async_exc(thread, error)
        _stop(limit)


def _stop(limit: ThreadLimit) -> None:
    """End `limit` and the limits begun inside its block (under _LOCK)."""
    running = _RUNNING.get(limit.thread, [])
    del running[limit.depth:]
    if not running:
        _RUNNING.pop(limit.thread, None)
