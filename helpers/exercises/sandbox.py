"""How a check runs: as in a fresh session (gradient recording on, the
default dtype and device, its own random numbers), under a time limit, and
with the session given back exactly as it was found, whatever the answer
did (torch's settings, random states and namespaces: NAMESPACES). An error
is then the learner's when it passed through their code, else the
checker's. The limit here is raised inside the running code, which an
answer can escape; apart.py runs each learner's check where a hard limit
holds."""

import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType, ModuleType
from typing import Any, TypeVar

import torch

from ..arguments import MACHINERY
from .timeouts import GRACE, TimedOut, importing, imports_timed

T = TypeVar("T")
SEED = 0
TIME_LIMIT = 10.0           # seconds a check may take, the learner's code included
# Code that is not the learner's besides arguments.MACHINERY: the lesson and solution code
# the checks compile themselves (file names in angle brackets).
CHECKER_FILES = ("<stored notebook", "<exercise")


def _namespaces() -> tuple[Any, ...]:
    """What an answer may patch that a check gives back: torch's own
    namespaces and the classes autograd lessons use."""
    return (torch, torch.Tensor, torch.autograd, torch.autograd.Function, torch.nn, torch.nn.functional,
            torch.nn.Module, torch.nn.init, torch.optim, torch.optim.Optimizer)


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

    namespaces = [(owner, dict(vars(owner))) for owner in _namespaces()]

    def restore_all() -> None:
        restore()
        for owner, before in namespaces:
            _put_back(owner, before)

    return restore_all


def _put_back(owner: Any, before: dict[str, Any]) -> None:
    """Give `owner` (a module or class) back the attributes it had: a changed
    or deleted one rebound, an added one removed, unless it is a module (an
    import binds its submodules there, and they stay imported)."""
    now = vars(owner)
    for name in [name for name in now if name not in before and not isinstance(now[name], ModuleType)]:
        delattr(owner, name)
    for name, value in before.items():
        if name not in now or now[name] is not value:
            setattr(owner, name, value)


@contextmanager
def hermetic(seed: int = SEED) -> Iterator[None]:
    """Run the block as in a fresh session; afterwards torch's settings,
    random states and namespaces are what they were before, whatever the
    block did."""
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
    step loads torch._dynamo): the limit waits while one runs (imports_timed),
    and, should it ring during one all the same, asks again GRACE later. In the main thread where there is SIGALRM
    (Unix; a Jupyter kernel runs cells there), a signal; elsewhere (Windows,
    another thread) a thread that raises TimedOut in the block's thread
    (thread_limit.py). Either way a long call inside torch's C++ code is
    interrupted only when it returns to Python; the signal also interrupts
    a sleep, the thread does not (nor any other blocking call)."""
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        return _signal_limit(seconds)
    # loaded only here: a kernel on Unix runs its checks in the main thread
    from .thread_limit import ThreadLimit

    return ThreadLimit(seconds)


@contextmanager
def _signal_limit(seconds: float) -> Iterator[None]:
    def ring(_signal: int, frame: FrameType | None) -> None:
        if importing(frame):
            signal.setitimer(signal.ITIMER_REAL, GRACE)      # ask again once the import is done
            return
        raise TimedOut

    left = [seconds]

    def began() -> None:                   # an import: the limit waits for it
        left[0] = signal.setitimer(signal.ITIMER_REAL, 0)[0]

    def ended(_seconds: float) -> None:
        signal.setitimer(signal.ITIMER_REAL, max(left[0], 1e-3))

    start, previous = time.monotonic(), signal.signal(signal.SIGALRM, ring)
    earlier, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with imports_timed(began, ended):
            yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if earlier:                        # someone else's timer was running: give it its remaining time
            signal.setitimer(signal.ITIMER_REAL, max(earlier - (time.monotonic() - start), 1e-3))


def learners_frame(error: BaseException) -> tuple[str, int] | None:
    """(function, line) of the innermost frame of the learner's code that
    the error passed through; None when it passed through none."""
    found, tb = None, error.__traceback__
    while tb is not None:
        if learners_file(tb.tb_frame.f_code.co_filename):
            found = (tb.tb_frame.f_code.co_name, tb.tb_lineno)
        tb = tb.tb_next
    return found


def learners_file(name: str) -> bool:
    """Whether code of this file name is the learner's (not the helpers',
    a library's or the checker's own)."""
    return not name.startswith(MACHINERY) and not name.startswith(CHECKER_FILES)


def in_sandbox(run: Callable[[], T]) -> T:
    """`run()` in a fresh session and under the time limit (TIME_LIMIT)."""
    with hermetic(), time_limit(TIME_LIMIT):
        return run()

