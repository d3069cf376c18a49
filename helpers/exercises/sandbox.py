"""How a check runs: in the learner's kernel, as in a fresh session (`hermetic`), under a SIGALRM soft
time limit (`time_limit`); `replaced()` names torch functions the session replaced."""

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
from typing import Any

import torch

from ..arguments import MACHINERY

SEED = 0
TIME_LIMIT = 10.0           # seconds a check may take, the learner's code included, imports not
GRACE = 0.5                 # seconds more, each time the limit finds an import running
CHECKER_FILES = ("<stored notebook", "<exercise")     # lesson and solution code the checks compile: not the learner's
# What an answer may patch: given back after each check, and compared with torch's own before one.
NAMESPACES = {name: reduce(getattr, name.split(".")[1:], torch) for name in (
    "torch", "torch.Tensor", "torch.autograd", "torch.autograd.Function", "torch.nn", "torch.nn.functional",
    "torch.nn.Module", "torch.nn.init", "torch.optim", "torch.optim.Optimizer")}
RELIED_ON = ("torch.Tensor.backward", "torch.autograd.backward", "torch.autograd.grad")
TORCH_FILES = os.path.dirname(torch.__file__) + os.sep


class TimedOut(BaseException):
    """The time limit ran out (a BaseException: the learner's `except Exception` cannot swallow it)."""


def _state() -> Callable[[], None]:
    """A function that puts torch's settings, random states and namespaces back as they are now."""
    grad, dtype, device = torch.is_grad_enabled(), torch.get_default_dtype(), torch.get_default_device()
    anomaly, nan = torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
    deterministic, warn_only = torch.are_deterministic_algorithms_enabled(), \
        torch.is_deterministic_algorithms_warn_only_enabled()
    threads, rng, python_rng = torch.get_num_threads(), torch.get_rng_state(), random.getstate()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    namespaces = [(owner, dict(vars(owner))) for owner in NAMESPACES.values()]

    def restore() -> None:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        if torch.get_default_device() != device:      # None, not cpu: no DeviceContext mode left on every call
            torch.set_default_device(None if device == torch.device("cpu") else device)
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
        for owner, before in namespaces:        # added attributes go, except submodules an import bound
            now = vars(owner)
            for name in [name for name in now if name not in before and not isinstance(now[name], ModuleType)]:
                delattr(owner, name)
            for name, value in before.items():
                if name not in now or now[name] is not value:
                    setattr(owner, name, value)

    return restore


@contextmanager
def hermetic() -> Iterator[None]:
    """Run the block as in a fresh session; torch's state is given back afterwards."""
    restore = _state()
    try:
        with torch.inference_mode(False):
            torch.set_grad_enabled(True)
            torch.set_default_dtype(torch.float32)
            if torch.get_default_device() != torch.device("cpu"):
                torch.set_default_device(None)
            torch.set_anomaly_enabled(False)
            torch.manual_seed(SEED)
            random.seed(SEED)
            yield
    finally:
        restore()


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimedOut in the block after `seconds` (main thread, with SIGALRM; else no limit);
    time spent importing a module does not count."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(_signal: int, frame: FrameType | None) -> None:
        if not _importing(frame):
            raise TimedOut
        signal.setitimer(signal.ITIMER_REAL, GRACE)

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
    while frame is not None and not frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    return frame is not None


def learners_frame(error: BaseException) -> tuple[str, int] | None:
    """(function, line) of the innermost frame of the learner's code the error passed through."""
    found, tb = None, error.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(MACHINERY + CHECKER_FILES):
            found = (tb.tb_frame.f_code.co_name, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _members(owner: Any) -> dict[str, Any]:
    """The public functions, operators and descriptors `owner` offers, inherited ones too."""
    found: dict[str, Any] = {}
    for space in reversed(owner.__mro__[:-1]) if isinstance(owner, type) else (owner,):
        found.update(vars(space))
    return {name: value for name, value in found.items() if (name.startswith("__") or not name.startswith("_"))
            and not isinstance(value, ModuleType) and (callable(value) or hasattr(type(value), "__get__"))}


def _torchs(value: Any) -> bool:
    """Whether `value` is torch's own code (torch patches itself)."""
    code = getattr(value, "__code__", None)
    if code is not None:
        return str(code.co_filename).startswith(TORCH_FILES)
    module = sys.modules.get(str(getattr(value, "__module__", "")))
    return isinstance(value, type) and str(getattr(module, "__file__", "")).startswith(TORCH_FILES)


_GONE = object()
ORIGINAL = {name: _members(owner) for name, owner in NAMESPACES.items()}    # as torch was when helpers came in


def replaced() -> list[str]:
    """The torch functions the session no longer has as torch made them."""
    found = []
    for space, original in ORIGINAL.items():
        now = _members(NAMESPACES[space])
        for name, value in original.items():
            dotted, current = f"{space}.{name}", now.get(name, _GONE)
            if current is _GONE or (current is not value and not _torchs(current)) or \
                    (dotted in RELIED_ON and not (current is value and _torchs(value))):
                found.append(dotted)
    return found
