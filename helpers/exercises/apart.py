"""Where a learner's check runs, so that its time limit holds whatever the
answer does. Where there is `os.fork` (Linux, macOS), in a child process
forked from the session: it holds everything the check needs (the lesson's
names, tensors, the learner's own function, which no pickling could send),
nothing it does reaches the session (a patch of torch, a changed setting),
and past the limit and HARD_MARGIN it is killed, however the answer resists
(a bare `except:` that swallows the limit's TimedOut, one long call into C,
an exception whose `__str__` never returns). Right after the fork the child
closes every descriptor of the session's but its own pipes (the kernel's
sockets too) and leaves for a process group of its own, which is killed
whole when the check ends (what the answer started with it). On Linux the
child is also a subreaper (an orphan below it becomes its child, not
init's), and every process below it, in a session of its own or not, is
killed at the end of the check: by the child before it ends, and by the
session before it ends a child stopped from outside. (An answer that ends
the child itself, os._exit, leaves its own children to init: that is in
the learner's hands, as the answer is.) Only plain
data comes back, as JSON of at most RESULT_LIMIT bytes: what the check
observed (the session judges it, session.py: the child gives no verdict)
and the line quoting the answer, and what the answer printed, of which the
session takes OUTPUT_LIMIT characters a stream, whatever the child writes.

Without fork (Windows) the check runs in the session, under the same soft
limit (sandbox.time_limit), and the hard stop is faulthandler's watchdog,
a thread in C that needs no GIL: past the limit and HARD_MARGIN it writes
where the check was to a file and ends the kernel, which Jupyter restarts.
`notice(notebook)`, called by the next `exercises(...)` of that notebook,
reads the file and says what happened.

A child where torch refuses autograd (a CUDA build of torch, once the
session ran a backward through a compiled function: "Unable to handle
autograd's threading in combination with fork-based multiprocessing")
says so before the check runs there (`_autograd_works`), and from then on
checks run as without fork: a forked child can never have autograd back,
and the session's own thread does.

Time spent importing modules does not count, for the soft limit as for the
hard one: at most IMPORT_ALLOWANCE seconds of it for the hard one, which
rests on the child's word (an answer can forge it), so the hard limit is
never more than TIME_LIMIT + HARD_MARGIN + IMPORT_ALLOWANCE."""

import ctypes
import faulthandler
import importlib
import json
import mmap
import os
import re
import select
import signal
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

import torch

from . import sandbox
from .cells import _shell
from .timeouts import imports_timed

HARD_MARGIN = 2.0           # seconds past the time limit before the check is ended from outside
IMPORT_ALLOWANCE = 8.0      # seconds of importing, at most, that extend the hard limit (the child's word for it)
OUTPUT_LIMIT = 20_000       # characters of an answer's prints passed on, per stream
RESULT_LIMIT = 4_000_000    # bytes of a child's result read (observe.plain stays well within): more is no verdict
DRAIN = 0.5                 # seconds given to read what a child that ended left in its pipes
POLL = 0.05                 # seconds between looks at whether the child ended while its pipes are still open
DUMP_WAIT = 0.5             # seconds given to the child to write where it was, before it is killed
KILL_ROUNDS = 20            # looks for processes below the child, each killing what it found (one may fork meanwhile)
PR_SET_CHILD_SUBREAPER = 36
WARMED = ("torch.", "numpy.")  # modules a check imported that the session imports after it, so the next is fast
FRAME = re.compile(r'File "(.*)", line (\d+) in (\S+)')
CUT = "\n[the rest of this output was cut: more than {limit:,} characters]\n"
Result = tuple[Any, str]      # what a check observed, as plain data (JSON), and the line quoting the answer
WORKS, REFUSED = b"+", b"-"    # the child's first byte on its result pipe: whether autograd runs there
_REFUSED: list[bool] = []      # [True] once a child found autograd refused: no check forks again


@dataclass(frozen=True)
class Stopped:
    """A check ended from outside: `why` is "time" (past the limit) or
    "ended" (the child died by itself); `where` the innermost frame of
    the learner's code when it was known; `detail` how the child ended."""

    why: str
    where: tuple[str, int] | None = None
    detail: str = ""


def forks() -> bool:
    """Whether checks run in a child process here: False on Windows, and
    once torch refused autograd in a forked child."""
    return hasattr(os, "fork") and sys.platform != "win32" and not _REFUSED


def run(work: Callable[[], Result], interrupted: Callable[[KeyboardInterrupt], Result], notebook: str = "",
        number: int = 0) -> Result | Stopped:
    """`work()`, what the check observed and the line quoting the answer, computed in a
    child process where there is fork (and torch allows autograd in one),
    else in the session with the hard stop that ends the kernel. In the
    child, which ignores the learner's interrupt, a KeyboardInterrupt is the
    answer's own: `interrupted(it)` is the result; in the session it goes on."""
    if forks():
        done = _in_child(work, interrupted)
        if done is not None:
            return done
        _REFUSED[:] = [True]           # torch refuses autograd in a child: this check, and the next, in the session
    with _hard_stop(notebook, number):
        return work()


# --- in a child process ------------------------------------------------------------------------------------------

class _Pipe:
    """A child's sys.stdout or sys.stderr: each write goes straight down a
    pipe (nothing is left in a buffer when the child is killed), and none
    past the first OUTPUT_LIMIT characters and one (which tells the session
    the output was cut: the session holds the limit, `_Output`)."""

    encoding, errors = "utf-8", "replace"

    def __init__(self, fd: int) -> None:
        self.fd, self.left = fd, OUTPUT_LIMIT + 1

    def write(self, text: str) -> int:
        text = str.__str__(text) if isinstance(text, str) else str(text)
        part, self.left = text[: max(self.left, 0)], self.left - len(text)
        if part:
            data = part.encode("utf-8", "replace")
            while data:
                data = data[os.write(self.fd, data):]
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


def _quiet_display() -> None:
    """IPython's display() in the child prints its text form: the kernel's
    own publisher would write to sockets the child must not touch."""
    shell = _shell()
    if shell is not None:
        from IPython.core.displaypub import DisplayPublisher

        shell.display_pub = DisplayPublisher(shell=shell)      # type: ignore[no-untyped-call]


def _autograd_works() -> bool:
    """Whether autograd runs in this child. torch refuses it in a child
    forked once its engine started threads for a device (on a CUDA build,
    after a backward through a compiled function, even with no GPU)."""
    try:
        with torch.inference_mode(False), torch.enable_grad():
            leaf = torch.zeros(1, requires_grad=True)
            torch.autograd.grad((leaf * 2).sum(), leaf)
    except Exception:
        return False
    return True


def _child(work: Callable[[], Result], interrupted: Callable[[KeyboardInterrupt], Result], pipes: list[int],
           shared: mmap.mmap) -> NoReturn:
    """The child's whole life: leave the session (`_apart_from_the_session`),
    say whether autograd runs here (one byte, written before the answer
    runs, so no answer can change it), run the check, send back its result
    as JSON, end without running any of the session's exit code."""
    code = 3
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)     # the learner's interrupt is the session's to handle
        result, dump = _apart_from_the_session(pipes)
        faulthandler.register(signal.SIGUSR1, file=dump, all_threads=False)
        torch.set_num_threads(1)           # OpenMP's threads are the parent's: a parallel region would hang
        if _autograd_works():
            os.write(result, WORKS)
            _send(result, _checked(work, interrupted, 1, 2, shared))
        else:
            os.write(result, REFUSED)
        code = 0
    finally:
        if _has_children():
            _kill_below(os.getpid())
        os._exit(code)


def _checked(work: Callable[[], Result], interrupted: Callable[[KeyboardInterrupt], Result], out: int, err: int,
             shared: mmap.mmap) -> list[object]:
    """The check run in the child: its result, then the torch and numpy
    modules it imported."""
    sys.stdout, sys.stderr = _Pipe(out), _Pipe(err)
    _quiet_display()

    def began() -> None:
        struct.pack_into("d", shared, 8, time.monotonic())

    def ended(seconds: float) -> None:
        struct.pack_into("dd", shared, 0, struct.unpack_from("d", shared, 0)[0] + seconds, 0.0)

    loaded = set(sys.modules)
    with imports_timed(began, ended):
        try:
            found = work()
        except KeyboardInterrupt as error:
            found = interrupted(error)
    new = sorted(name for name in set(sys.modules) - loaded if name.startswith(WARMED))
    observation, line = found
    return [observation, str.__str__(line), new]


def _send(fd: int, found: object) -> None:
    data = json.dumps(found).encode()
    while data:
        data = data[os.write(fd, data):]


def _in_child(work: Callable[[], Result],
              interrupted: Callable[[KeyboardInterrupt], Result]) -> Result | Stopped | None:
    """The check's result from a forked child; None when torch refuses
    autograd there (the check did not run)."""
    pipes = [os.pipe() for _ in range(4)]            # result, stdout, stderr, where it was
    shared = mmap.mmap(-1, 16)                       # seconds spent importing; when the import running began
    pid = os.fork()
    if pid == 0:
        _child(work, interrupted, [write for _, write in pipes], shared)
    with suppress(OSError):
        os.setpgid(pid, pid)        # as the child does itself: whichever runs first, the group exists before a kill
    for _, write in pipes:
        os.close(write)
    reads = [read for read, _ in pipes]
    try:
        found = _wait(pid, reads, shared)
    finally:
        status = _end(pid)
        for fd in reads:
            os.close(fd)
        shared.close()
    return found if isinstance(found, Stopped) else _result(found, status)


def _apart_from_the_session(pipes: list[int]) -> tuple[int, int]:
    """In the child, first: a process group of its own (killed whole when the
    check ends, whatever the answer started), killed with the session on
    Linux, and no descriptor of the session's but its own pipes (not the
    kernel's sockets, not its notebooks' files); 1 and 2 are its stdout and
    stderr pipes, 0 reads nothing. Gives the result and dump pipes' fds."""
    import fcntl  # Unix only, as fork is

    with suppress(OSError):
        os.setpgid(0, 0)
    _die_with_parent()
    _adopt_orphans()
    result, out, err, dump = (fcntl.fcntl(fd, fcntl.F_DUPFD, 3) if fd <= 2 else fd for fd in pipes)
    null = os.open(os.devnull, os.O_RDONLY)
    for fd, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
    keep = sorted({0, 1, 2, result, dump})
    for low, high in zip(keep, [*keep[1:], _max_fd()], strict=True):
        os.closerange(low + 1, high)
    return result, dump


def _adopt_orphans() -> None:
    """On Linux, make this child a subreaper: a process below it whose
    parent ends becomes its child, not init's, so that `_kill_below` finds
    it (a daemon's double fork, a shell's background job)."""
    if not sys.platform.startswith("linux"):
        return
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _below(pid: int) -> list[int]:
    """The processes below `pid` that still run (no zombies), read from
    /proc; [] where there is none (not Linux)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def _has_children() -> bool:
    """Whether this process has a child, running or ended (no process below
    it without one: orphans become its children); True where it cannot tell."""
    if not hasattr(os, "waitid"):
        return True
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _kill_below(pid: int) -> None:
    """Kill every process below `pid` (what the answer started, in its own
    session or process group too), looking again until none is left, at
    most KILL_ROUNDS times (one may have forked meanwhile)."""
    for _ in range(KILL_ROUNDS):
        found = _below(pid)
        if not found:
            return
        for child in found:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        time.sleep(0.01)


def _max_fd() -> int:
    with suppress(ValueError, OSError):
        return max(os.sysconf("SC_OPEN_MAX"), 256)
    return 65536


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this child when the session ends (a
    kernel Jupyter restarts is killed with its process group, which this
    child has left)."""
    if not sys.platform.startswith("linux"):
        return
    with suppress(OSError, AttributeError):
        parent = os.getppid()
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(3)                                                 # the session ended before it was set


class _Output:
    """One of the child's streams as the session takes it: the first
    OUTPUT_LIMIT characters, the rest read and dropped, said to be cut."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream, self.data, self.cut = stream, bytearray(), False

    def take(self, chunk: bytes) -> None:
        room = 4 * OUTPUT_LIMIT + 4 - len(self.data)           # UTF-8: at most 4 bytes a character
        self.data += chunk[:max(room, 0)]
        self.cut = self.cut or len(chunk) > room

    def pass_on(self) -> None:
        text = self.data.decode("utf-8", "replace")
        if self.cut or len(text) > OUTPUT_LIMIT:
            text = text[:OUTPUT_LIMIT] + CUT.format(limit=OUTPUT_LIMIT)
        if text:
            self.stream.write(text)
            self.stream.flush()


def _wait(pid: int, reads: list[int], shared: mmap.mmap) -> bytes | Stopped:
    """Read the child's result and output until it ends, or stop it once
    past its hard limit; print what it printed, OUTPUT_LIMIT characters of
    each stream at most. Once the child has ended (its pipes may be held
    open by a process it started) what is left in them is read for DRAIN
    seconds at most. The dump pipe is read and dropped meanwhile: only
    faulthandler writes to it for the session, and only once `_stopped` asks,
    so anything before is the answer's, which must not leave the child
    blocked on a full pipe until the hard limit."""
    streams = {reads[1]: _Output(sys.stdout), reads[2]: _Output(sys.stderr)}
    result = bytearray()
    open_fds, start, ended, ended_at = set(reads[:4]), time.monotonic(), False, 0.0
    try:
        while open_fds:
            total, importing = struct.unpack_from("dd", shared, 0)
            now = time.monotonic()
            allowance = min(total + (now - importing if importing else 0.0), IMPORT_ALLOWANCE)
            due = start + sandbox.TIME_LIMIT + HARD_MARGIN + allowance if not ended else ended_at + DRAIN
            if now >= due:
                return bytes(result) if ended else _stopped(pid, reads[3])
            ready, _, _ = select.select(list(open_fds), [], [], min(due - now, POLL))
            for fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    open_fds.discard(fd)
                elif fd == reads[0]:
                    result += chunk[:max(RESULT_LIMIT - len(result), 0)]
                elif fd in streams:
                    streams[fd].take(chunk)
            if not ended and _has_ended(pid):
                ended, ended_at = True, time.monotonic()
                _kill_group(pid)
    finally:
        for stream in streams.values():
            stream.pass_on()
    return bytes(result)


def _has_ended(pid: int) -> bool:
    """Whether the child has ended, leaving it unreaped (so that its process
    group's number cannot be taken by another until it is killed)."""
    if not hasattr(os, "waitid"):
        return False
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_group(pid: int) -> None:
    """Kill the child and every process of its group (what the answer
    started), before the child is reaped."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _result(data: bytes, status: int) -> Result | Stopped | None:
    """What the child observed, from its result and exit status; None when
    it said torch refuses autograd there. JSON too deep to decode is no result."""
    if data[:1] == REFUSED:
        return None
    try:
        found = json.loads(data[1:].decode()) if data[:1] == WORKS else None
    except (ValueError, RecursionError):
        found = None
    if type(found) is list and len(found) == 3 and type(found[1]) is str:
        _warm(found[2])
        return found[0], found[1]
    if os.WIFSIGNALED(status):
        how = f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"exit status {os.WEXITSTATUS(status)}"
    return Stopped("ended", None, how)


def _warm(names: object) -> None:
    """Import in the session the modules of torch and numpy the check's
    child imported (torch loads some on first use, torch._dynamo for an
    optimizer's first step: seconds), so that the next check need not."""
    for name in names if type(names) is list else []:
        if type(name) is str and name.startswith(WARMED) and name not in sys.modules:
            with suppress(Exception):
                importlib.import_module(name)


def _stopped(pid: int, dump: int) -> Stopped:
    """The child past its hard limit: ask where it is (faulthandler writes
    its traceback on SIGUSR1 without needing the GIL); the caller kills it."""
    os.kill(pid, signal.SIGUSR1)
    text, end = b"", time.monotonic() + DUMP_WAIT
    while time.monotonic() < end:
        ready, _, _ = select.select([dump], [], [], end - time.monotonic())
        if not ready:
            break
        chunk = os.read(dump, 65536)
        text += chunk
        if not chunk or b"most recent call first" in text and text.endswith(b"\n") and b"File" in text:
            break
    return Stopped("time", learners_line(text.decode("utf-8", "replace")))


def _end(pid: int) -> int:
    """Kill the child and its process group if they still run, and first,
    with the child stopped (so that it starts nothing more), every process
    below it; reap the child and give its exit status."""
    if not _has_ended(pid):
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGSTOP)
        _kill_below(pid)
    _kill_group(pid)
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def learners_line(dump: str) -> tuple[str, int] | None:
    """(function, line) of the innermost frame of the learner's code in a
    faulthandler traceback (most recent call first)."""
    for name, line, function in FRAME.findall(dump):
        if sandbox.learners_file(name):
            return function, int(line)
    return None


# --- in the session, without fork --------------------------------------------------------------------------------

def _marker(notebook: str) -> Path:
    return Path(tempfile.gettempdir()) / f"graph-notebooks-check-{notebook or 'any'}.txt"


@contextmanager
def _hard_stop(notebook: str, number: int) -> Iterator[None]:
    """End the kernel (faulthandler's watchdog, in C) if the block runs past
    the time limit and HARD_MARGIN, not counting time spent importing;
    first it writes where the block was to the notebook's marker file."""
    path, start, imported = _marker(notebook), time.monotonic(), [0.0]
    with path.open("w", encoding="utf-8") as marker:
        marker.write(json.dumps({"exercise": number, "limit": sandbox.TIME_LIMIT}) + "\n")
        marker.flush()

        def arm(extra: float) -> None:
            due = start + sandbox.TIME_LIMIT + HARD_MARGIN + extra
            faulthandler.dump_traceback_later(max(due - time.monotonic(), 0.01), exit=True, file=marker)

        def ended(seconds: float) -> None:
            imported[0] = min(imported[0] + seconds, IMPORT_ALLOWANCE)
            arm(imported[0])

        arm(0.0)
        try:
            with imports_timed(lambda: arm(IMPORT_ALLOWANCE), ended):
                yield
        finally:
            faulthandler.cancel_dump_traceback_later()
    path.unlink(missing_ok=True)


def notice(notebook: str) -> str | None:
    """What to tell the learner when the kernel was ended by a check's hard
    stop (its marker file holds faulthandler's traceback); None otherwise.
    The marker is removed: the notice is given once."""
    path = _marker(notebook)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    path.unlink(missing_ok=True)
    if "Timeout (" not in text:
        return None
    try:
        header = json.loads(text.splitlines()[0])
        number, limit = int(header["exercise"]), float(header["limit"])
    except (ValueError, KeyError, TypeError, IndexError):
        number, limit = 0, sandbox.TIME_LIMIT
    return (f"The kernel was restarted: the check of exercise {number} ran past its time limit of {limit:g} s and "
            f"did not stop{_at(learners_line(text))}, so it was ended. {LOOK_FOR} Then run the cells above again "
            "(Run > Run All Above Selected Cell).")


LOOK_FOR = ("Look for a loop that never ends, an `except:` that catches everything (the time limit too: catch "
            "`Exception` instead), or one call that runs for long, such as sum(range(10**10)).")


def _at(where: tuple[str, int] | None) -> str:
    return f" (it was in {where[0]}, line {where[1]})" if where else ""


def stopped_text(stopped: Stopped) -> str:
    """The feedback for a check ended from outside."""
    if stopped.why == "time":
        return (f"your answer ran past the time limit of {sandbox.TIME_LIMIT:g} s and did not stop when the limit "
                f"asked it to{_at(stopped.where)}, so the check ended it. {LOOK_FOR}")
    return (f"the process running this check ended ({stopped.detail}) before it gave a verdict: if your answer ends "
            "its process (os._exit, a crash in C code it calls), that is the cause; if not, this is a bug in the "
            "exercise: please report it, with this message, to the collection's maintainers.")
