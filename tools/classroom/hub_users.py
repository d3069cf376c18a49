"""Each learner of `make hub` on this machine (docs/teaching.md, "What a learner
can reach"): a Unix user of their own, a home only they can open, a view of
/proc that shows only their own processes, their own /tmp and /dev/shm, and a
cgroup of their own that enforces their memory, CPU and task limits.

    unix_name("ada") -> "hub-ada"          the learner's Unix user (made by `ensure_user`)
    Group(hub, unix, limits)               the learner's cgroup (v1 or v2), `enforced` says what holds
    preexec(unix, home, group)             what the learner's server process does before it runs

`missing()` says why this machine cannot isolate learners (None when it can):
`make hub` then says so and runs every server as the teacher's own user."""

import ctypes
import hashlib
import os
import pwd
import re
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

CGROUPS = Path("/sys/fs/cgroup")
PREFIX = os.environ.get("HUB_USER_PREFIX", "hub-")
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PRIVATE_TMP = "size=512m,mode=1777"          # a learner's own /tmp and /dev/shm (tmpfs, charged to them)
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def unix_name(learner, prefix=PREFIX):
    """The Unix user of a learner: the prefix and their name where it is a
    valid short user name, else its letters and a hash of it (names are the
    learner's choice: "Zoë B" is hub-zob-1a2b3c4d)."""
    if re.fullmatch(r"[a-z][a-z0-9_-]{0,19}", learner):
        return f"{prefix}{learner}"
    letters = re.sub(r"[^a-z0-9]", "", learner.lower())[:10] or "x"
    return f"{prefix}{letters}-{hashlib.sha256(learner.encode()).hexdigest()[:8]}"


def ensure_user(unix, home):
    """Make the system user `unix` (its own group, no login shell, no
    password) unless it exists; returns its pwd entry."""
    try:
        return pwd.getpwnam(unix)
    except KeyError:
        subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", str(home),
                        "--shell", "/usr/sbin/nologin", "--comment", "class hub learner", unix],
                       check=True, capture_output=True, timeout=60)
        return pwd.getpwnam(unix)


def remove_users(prefix):
    """Remove every system user whose name starts with `prefix` (the tests'
    and the load tool's learners), after killing what they still run."""
    removed = []
    for entry in pwd.getpwall():
        if entry.pw_name.startswith(prefix) and entry.pw_gecos == "class hub learner":
            kill_user(entry.pw_uid)
            subprocess.run(["userdel", entry.pw_name], capture_output=True, timeout=60)
            removed.append(entry.pw_name)
    return removed


def user_processes(uid):
    """Process ids running as `uid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def kill_user(uid, grace=5.0):
    """SIGTERM, then SIGKILL, to every process of `uid`; returns their ids."""
    pids = user_processes(uid)
    for how in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, how)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + grace
        while user_processes(uid) and time.monotonic() < deadline:
            time.sleep(0.1)
    return pids


@dataclass(frozen=True)
class Limits:
    """What one learner may use: `memory` bytes (server and kernels
    together), `cpus` cores' worth of CPU time, `tasks` processes and threads."""

    memory: int
    cpus: float = 1.0
    tasks: int = 1024


class Group:
    """A learner's cgroup, `<hub>/<unix>` in each controller we can write
    (memory, cpu, pids; cgroup v1 or v2). `enforced` lists what holds; with
    none, the learner's server runs with resource limits only (`preexec`)."""

    def __init__(self, hub, unix, limits=None):
        self.hub, self.unix, self.enforced = hub, unix, []
        self.v2 = (CGROUPS / "cgroup.controllers").exists()
        if self.v2:
            self.folders = {name: CGROUPS / hub / unix for name in ("memory", "cpu", "pids")}
        else:
            self.folders = {name: CGROUPS / name / hub / unix for name in ("memory", "cpu", "pids")}
        if limits is not None:
            self._make(limits)
        else:           # an existing group: what its folders hold
            self.enforced = [name for name, folder in self.folders.items() if folder.is_dir()]

    def _settings(self, limits):
        period = 100_000
        if self.v2:
            return {"memory": {"memory.max": str(limits.memory), "memory.swap.max": "0"},
                    "cpu": {"cpu.max": f"{int(limits.cpus * period)} {period}"},
                    "pids": {"pids.max": str(limits.tasks)}}
        return {"memory": {"memory.limit_in_bytes": str(limits.memory), "memory.memsw.limit_in_bytes": str(
                    limits.memory)},
                "cpu": {"cpu.cfs_period_us": str(period), "cpu.cfs_quota_us": str(int(limits.cpus * period))},
                "pids": {"pids.max": str(limits.tasks)}}

    def _make(self, limits):
        if self.v2:       # the controllers must be handed down to the hub's folder and the learner's
            for parent in (CGROUPS, CGROUPS / self.hub):
                try:
                    parent.mkdir(exist_ok=True)
                    (parent / "cgroup.subtree_control").write_text("+memory +cpu +pids")
                except OSError:
                    pass
        for controller, values in self._settings(limits).items():
            folder = self.folders[controller]
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError:
                continue
            written = True
            for key, value in values.items():
                try:
                    (folder / key).write_text(value)
                except FileNotFoundError:       # memsw: the kernel counts no swap; there is none to limit
                    continue
                except OSError:
                    written = False
            if written:
                self.enforced.append(controller)

    def join(self, pid):
        """Put process `pid` (and so everything it starts) in the group."""
        for controller in self.enforced:
            (self.folders[controller] / "cgroup.procs").write_text(str(pid))

    def procs(self):
        """Process ids in the group, in any of its controllers."""
        found = set()
        for folder in set(self.folders.values()):
            try:
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
            except OSError:
                continue
        return found

    def oom_kills(self):
        """How many processes the kernel killed in this group for its memory limit."""
        name = "memory.events" if self.v2 else "memory.oom_control"
        try:
            for line in (self.folders["memory"] / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except OSError:
            pass
        return 0

    def remove(self, grace=5.0):
        """Kill what is left in the group (SIGKILL) and remove its folders;
        returns the ids of what was killed."""
        left = sorted(self.procs())
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + grace
        while self.procs() and time.monotonic() < deadline:
            time.sleep(0.1)
        for folder in set(self.folders.values()):
            try:
                folder.rmdir()
            except OSError:
                continue
        return left


def remove_hub_groups(hub):
    """Remove the hub's cgroup folders (each learner's first); returns what was killed."""
    killed = []
    roots = [CGROUPS / hub] if (CGROUPS / "cgroup.controllers").exists() else \
        [CGROUPS / name / hub for name in ("memory", "cpu", "pids")]
    for root in roots:
        if root.is_dir():
            for child in sorted(p for p in root.iterdir() if p.is_dir()):
                killed += Group(hub, child.name).remove()
            try:
                root.rmdir()
            except OSError:
                continue
    return killed


def _check(result, what):
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def private_mounts(home="/"):
    """In a new mount namespace: /proc showing only the caller's own
    processes (hidepid=2) and a /tmp and /dev/shm of its own (not over a
    folder that holds `home`)."""
    _check(_LIBC.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(_LIBC.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    _check(_LIBC.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"hidepid=2"),
           "mount proc hidepid=2")
    for folder in (b"/tmp", b"/dev/shm"):
        if os.path.isdir(folder) and not os.path.realpath(home).startswith(os.path.realpath(folder) + b"/"):
            _check(_LIBC.mount(b"tmpfs", folder, b"tmpfs", MS_NOSUID | MS_NODEV, PRIVATE_TMP.encode()),
                   f"mount tmpfs {folder.decode()}")


def preexec(entry, home, group, limits):
    """The function the learner's server runs after fork, before exec, as
    root: into its cgroup, its own mounts, resource limits (all that holds
    where no cgroup could be made: tasks per user, memory per process), then
    the learner's user and home."""
    def run():
        group.join(os.getpid())
        private_mounts(home.encode())
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if "pids" not in group.enforced:
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.tasks, limits.tasks))
        if "memory" not in group.enforced:
            resource.setrlimit(resource.RLIMIT_DATA, (limits.memory, limits.memory))
        os.setgroups([])
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
        os.chdir(home)
    return run


def missing():
    """Why learners cannot be isolated here, with what to do; None when
    they can (a trial child made its own mounts)."""
    if not sys.platform.startswith("linux"):
        return f"a user per learner needs Linux; this is {sys.platform}"
    if os.geteuid() != 0:
        return "a user per learner needs root: run make hub as root (sudo make hub)"
    pid = os.fork()
    if pid == 0:
        try:
            private_mounts()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return "this machine does not let root make a mount namespace with a private /proc (hidepid=2)"
    return None
