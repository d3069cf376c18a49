"""What both of a check's soft time limits need (sandbox.py's, with
SIGALRM; thread_limit.py's, without): the error a limit raises, and the
time spent importing modules, which does not count (torch imports some on
first use: an optimizer's first step loads torch._dynamo)."""

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

GRACE = 0.5                 # seconds more, each time the limit finds an import running


class TimedOut(BaseException):
    """The time limit ran out (a BaseException, so that the learner's own
    `except Exception` cannot swallow it)."""


@contextmanager
def imports_timed(began: Callable[[], None], ended: Callable[[float], None]) -> Iterator[None]:
    """Call `began()` as an import of a module not yet loaded starts in this
    thread and `ended(seconds)` as it ends (outermost imports only), in the
    block: every such import goes through importlib's _find_and_load. A
    wrapper that another one wrapped in the meantime stays in place, inactive."""
    bootstrap: Any = sys.modules["_frozen_importlib"]
    find, depth, thread, active = bootstrap._find_and_load, [0], threading.get_ident(), [True]

    def timed(name: str, import_: Any) -> Any:
        if depth[0] or not active[0] or threading.get_ident() != thread:
            return find(name, import_)
        depth[0], start = 1, time.monotonic()
        began()
        try:
            return find(name, import_)
        finally:
            depth[0] = 0
            ended(time.monotonic() - start)

    bootstrap._find_and_load = timed
    try:
        yield
    finally:
        active[0] = False
        if bootstrap._find_and_load is timed:
            bootstrap._find_and_load = find


def importing(frame: FrameType | None) -> bool:
    """Whether the interrupted code is in the middle of an import."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False
