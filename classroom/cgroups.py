"""One cgroup for a tree of processes, as `make hub` makes one per learner and
`make grade` one per sandbox: memory, CPU and task limits, on cgroup v1 or v2.
Where a controller cannot be made or written (no root, a container) it is left
out of `enforced`, and the caller falls back to resource limits. The files are
written directly, not through systemd's scopes: CI runners and containers run
without systemd, and a Debian 12 host on v1 gets only part of its limits."""

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CGROUPS = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "cpu", "pids")
PERIOD = 100_000                       # microseconds of the CPU quota's period


@dataclass(frozen=True)
class Limits:
    """`memory` bytes (every process together), `cpus` cores, `tasks` processes and threads."""

    memory: int
    cpus: float = 1.0
    tasks: int = 1024


def settings(limits: Limits, v2: bool) -> dict[str, dict[str, str]]:
    """{controller: {file: value}} of the limits; swap included where the kernel counts it."""
    if v2:
        return {"memory": {"memory.max": str(limits.memory), "memory.swap.max": "0"},
                "cpu": {"cpu.max": f"{int(limits.cpus * PERIOD)} {PERIOD}"},
                "pids": {"pids.max": str(limits.tasks)}}
    return {"memory": {"memory.limit_in_bytes": str(limits.memory),
                       "memory.memsw.limit_in_bytes": str(limits.memory)},
            "cpu": {"cpu.cfs_period_us": str(PERIOD), "cpu.cfs_quota_us": str(int(limits.cpus * PERIOD))},
            "pids": {"pids.max": str(limits.tasks)}}


OPTIONAL = {"memory.memsw.limit_in_bytes", "memory.swap.max"}     # absent where the kernel counts no swap


class Group:
    """The cgroup at `path` (names, outermost first) in each controller: made with
    `limits`, else the one that exists. Folders above it are 0711: a learner
    reaches their own group and lists no one else's."""

    def __init__(self, path: tuple[str, ...], limits: Limits | None = None, root: Path = CGROUPS) -> None:
        self.path, self.root, self.v2 = tuple(path), root, (root / "cgroup.controllers").exists()
        self.folders = {c: root / Path(*self.path) if self.v2 else root / c / Path(*self.path) for c in CONTROLLERS}
        if limits is None:
            self.enforced = [c for c, folder in self.folders.items() if folder.is_dir()]
            return
        if self.v2:
            self._hand_down()
        self.enforced = [c for c, v in settings(limits, self.v2).items() if self._made(c) and self._written(c, v)]

    def _hand_down(self) -> None:
        """v2: the controllers enabled in each folder above the group, one at a time
        (the kernel refuses a whole write for one it cannot enable)."""
        for depth in range(len(self.path)):
            folder = self.root.joinpath(*self.path[:depth])
            with contextlib.suppress(OSError):
                folder.mkdir(exist_ok=True)
            for controller in CONTROLLERS:
                with contextlib.suppress(OSError), open(folder / "cgroup.subtree_control", "a") as control:
                    control.write(f"+{controller}")

    def _made(self, controller: str) -> bool:
        folder = self.root if self.v2 else self.root / controller
        if not folder.is_dir():
            return False
        try:
            for name in self.path:
                folder = folder / name
                folder.mkdir(exist_ok=True)
                if folder != self.folders[controller]:
                    folder.chmod(0o711)
        except OSError:
            return False
        return True

    def _written(self, controller: str, values: dict[str, str]) -> bool:
        """The values written, else written in the other order (v1 refuses a memory
        limit above the memory-and-swap one, and the reverse)."""
        return any(all(self._write(controller, *pair) for pair in order) for order in (values.items(),
                                                                                         [*values.items()][::-1]))

    def _write(self, controller: str, key: str, value: str) -> bool:
        try:
            (self.folders[controller] / key).write_text(value)
        except FileNotFoundError:
            return key in OPTIONAL
        except OSError:
            return False
        return True

    def join(self, pid: int) -> None:
        for controller in self.enforced:
            (self.folders[controller] / "cgroup.procs").write_text(str(pid))

    def task_files(self) -> list[str]:
        """The cgroup.procs file of each controller that holds (v2: one)."""
        return sorted({str(self.folders[c] / "cgroup.procs") for c in self.enforced})

    def procs(self) -> set[int]:
        found: set[int] = set()
        for folder in set(self.folders.values()):
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return found

    def remove(self, settle: float = 2.0, grace: float = 5.0) -> list[int]:
        """After up to `settle` seconds for what is ending by itself, SIGKILL what is
        left, again as long as it forks, and remove the folders; returns the ids killed."""
        deadline = time.monotonic() + settle
        while self.procs() and time.monotonic() < deadline:
            time.sleep(0.05)
        killed, deadline = sorted(self.procs()), time.monotonic() + grace
        left = [folder for folder in set(self.folders.values()) if folder.is_dir()]
        while left:          # a folder is removed once its processes are gone, each tried at least once
            self._kill_all()
            for folder in list(left):
                with contextlib.suppress(OSError):
                    folder.rmdir()
                    left.remove(folder)
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        return killed

    def _kill_all(self) -> None:
        """SIGKILL the group: at once with v2's cgroup.kill, else each process."""
        if self.v2:
            with contextlib.suppress(OSError):
                (self.folders["memory"] / "cgroup.kill").write_text("1")
                return
        for pid in self.procs():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def remove_tree(parent: str, root: Path = CGROUPS) -> list[int]:
    """Remove the groups under `parent`, killed first, then `parent`; returns the ids killed."""
    top = Group((parent,), root=root)
    names = {child.name for folder in top.folders.values() if folder.is_dir()
             for child in folder.iterdir() if child.is_dir()}
    return [pid for name in sorted(names) for pid in Group((parent, name), root=root).remove(settle=0)] + top.remove(0)
