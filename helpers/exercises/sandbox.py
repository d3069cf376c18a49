"""How a check runs: in the learner's kernel, in the thread that called it,
as in a fresh session (`hermetic`: gradient recording on, the default dtype
and device, its own random numbers; afterwards torch's settings, random
states and namespaces are as they were, whatever the answer did), under a
soft time limit (`time_limit`: SIGALRM, in the main thread, where a kernel
runs its cells). An answer can defeat the limit (a bare `except:` that
swallows it, one long call into C), and without SIGALRM (Windows) or off
the main thread there is none: such a check is stopped as any cell is,
with Kernel › Interrupt, or Kernel › Restart Kernel. `replaced()` names the
torch functions the session no longer has as torch made them, which a
check does not judge with. An error is the learner's when it passed
through their code (`learners_frame`), else the checker's."""

import os
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import reduce
from types import FrameType, ModuleType
from typing import Any, TypeVar

import torch

from ..arguments import MACHINERY

T = TypeVar("T")
SEED = 0
TIME_LIMIT = 10.0           # seconds a check may take, the learner's code included, imports not
GRACE = 0.5                 # seconds more, each time the limit finds an import running
# Code that is not the learner's besides arguments.MACHINERY: the lesson and solution code
# the checks compile themselves (file names in angle brackets).
CHECKER_FILES = ("<stored notebook", "<exercise")
# What an answer may patch: given back after each check, and compared with torch's own before one.
NAMESPACES = {name: reduce(getattr, name.split(".")[1:], torch) for name in (
    "torch", "torch.Tensor", "torch.autograd", "torch.autograd.Function", "torch.nn", "torch.nn.functional",
    "torch.nn.Module", "torch.nn.init", "torch.optim", "torch.optim.Optimizer")}
RELIED_ON = ("torch.Tensor.backward", "torch.autograd.backward", "torch.autograd.grad")
TORCH_FILES = os.path.dirname(torch.__file__) + os.sep


class TimedOut(BaseException):
    """The time limit ran out (a BaseException, so that the learner's own
    `except Exception` cannot swallow it)."""


def _default_device() -> object:
    """The device torch.set_default_device set, or None when none is set."""
    return getattr(getattr(getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None), "device_context", None), "device", None)


def _state() -> Callable[[], None]:
    """A function that puts torch's global settings, random states and
    namespaces back as they are now."""
    grad, dtype, device = torch.is_grad_enabled(), torch.get_default_dtype(), _default_device()
    anomaly, nan = torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
    deterministic, warn_only = torch.are_deterministic_algorithms_enabled(), \
        torch.is_deterministic_algorithms_warn_only_enabled()
    threads, rng, python_rng = torch.get_num_threads(), torch.get_rng_state(), random.getstate()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    namespaces = [(owner, dict(vars(owner))) for owner in NAMESPACES.values()]

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
        for owner, before in namespaces:
            _put_back(owner, before)

    return restore


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
    random states and namespaces are what they were before."""
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
    """Raise TimedOut in the block after `seconds`, with SIGALRM, in the main
    thread where there is one; elsewhere no limit. Time spent importing a
    module does not count (an optimizer's first step loads torch._dynamo):
    the timer stops while one runs, and asks again GRACE later should it
    ring during one. A timer already running gets its remaining time back."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(_signal: int, frame: FrameType | None) -> None:
        if _importing(frame):
            signal.setitimer(signal.ITIMER_REAL, GRACE)
            return
        raise TimedOut

    bootstrap: Any = sys.modules["_frozen_importlib"]
    find, importing, active = bootstrap._find_and_load, False, True

    def timed(name: str, import_: Any) -> Any:      # every import of a module not yet loaded comes here
        nonlocal importing
        if importing or not active or threading.current_thread() is not threading.main_thread():
            return find(name, import_)
        importing, left = True, signal.setitimer(signal.ITIMER_REAL, 0)[0]
        try:
            return find(name, import_)
        finally:
            importing = False
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3))

    start, previous = time.monotonic(), signal.signal(signal.SIGALRM, ring)
    earlier, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    bootstrap._find_and_load = timed
    try:
        yield
    finally:
        active = False              # a wrapper someone put over this one keeps it in place: inactive
        signal.setitimer(signal.ITIMER_REAL, 0)
        if bootstrap._find_and_load is timed:
            bootstrap._find_and_load = find
        signal.signal(signal.SIGALRM, previous)
        if earlier:
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


def _members(owner: Any) -> dict[str, Any]:
    """The functions, methods, operators and descriptors `owner` offers
    (a class's inherited ones too: `torch.Tensor.__mul__`), by name; not
    its private names nor its submodules."""
    found: dict[str, Any] = {}
    for space in reversed(owner.__mro__[:-1]) if isinstance(owner, type) else (owner,):
        found.update(vars(space))
    return {name: value for name, value in found.items() if (name.startswith("__") or not name.startswith("_"))
            and not isinstance(value, ModuleType) and (callable(value) or hasattr(type(value), "__get__"))}


def _torchs(value: Any) -> bool:
    """Whether `value` is torch's own code (torch patches itself: importing
    torch._dynamo wraps torch.manual_seed and nn.Module.__init__)."""
    code = getattr(value, "__code__", None)
    if code is not None:
        return str(code.co_filename).startswith(TORCH_FILES)
    module = sys.modules.get(str(getattr(value, "__module__", "")))
    return isinstance(value, type) and str(getattr(module, "__file__", "")).startswith(TORCH_FILES)


_GONE = object()
ORIGINAL = {name: _members(owner) for name, owner in NAMESPACES.items()}    # as torch was when helpers came in


def replaced() -> list[str]:
    """The torch functions this session no longer has as torch made them
    (`torch.Tensor.backward`, ...): deleted, or replaced by code that is not
    torch's since helpers were imported; and the three every backward goes
    through (RELIED_ON) when they are not the very functions torch made."""
    found = []
    for space, original in ORIGINAL.items():
        now = _members(NAMESPACES[space])
        for name, value in original.items():
            dotted, current = f"{space}.{name}", now.get(name, _GONE)
            if current is _GONE or (current is not value and not _torchs(current)) or \
                    (dotted in RELIED_ON and not (current is value and _torchs(value))):
                found.append(dotted)
    return found
