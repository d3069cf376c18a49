"""Where a check runs: as in a fresh session (gradient recording on, the
default dtype and device, its own random numbers), under a time limit, and
with the session given back exactly as it was found, whatever the answer
did. An error is then the learner's when it passed through their code,
else the checker's."""

import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

import torch

from ..arguments import MACHINERY

T = TypeVar("T")
SEED = 0
TIME_LIMIT = 10.0           # seconds a check may take, the learner's code included
GRACE = 0.5                 # seconds more, each time the limit finds an import running
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


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimedOut in the block after `seconds`, not counting time spent
    importing modules (torch imports some on first use: an optimizer's first
    step loads torch._dynamo). Unix only, and only in the main thread (a
    Jupyter kernel runs cells there): it needs SIGALRM; elsewhere there is
    no limit. A long call inside torch's C++ code is interrupted only when
    it returns to Python."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

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

