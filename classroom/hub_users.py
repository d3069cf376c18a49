"""Each learner of `make hub` (classroom/README.md, "What a learner can reach"): a
Unix user of their own (`ensure_user`), a home only they open, their own /proc
view, /tmp and /dev/shm (`private_mounts`, run by `preexec`), and a cgroup.
`why_not_isolated` says why this machine cannot isolate learners, with the
command that fixes it; None when it can."""

import contextlib
import ctypes
import fcntl
import grp
import hashlib
import multiprocessing
import os
import pwd
import re
import resource
import signal
import stat
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
PREFIX = os.environ.get("HUB_USER_PREFIX", "hub-")
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
PRIVATE_TMP = "size=512m,mode=1777"          # a learner's own /tmp, /var/tmp and /dev/shm (tmpfs, charged to them)
PRIVATE_FOLDERS = (b"/tmp", b"/var/tmp", b"/dev/shm")
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


LEARNER = "class hub learner"                 # the comment (GECOS) of every learner's Unix user
SYSTEM_UIDS = (100, 999)                      # useradd --system's range (login.defs' defaults)


def unix_name(learner, prefix=PREFIX):
    """The learner's Unix user: the prefix and a short plain name as it is, else its
    letters, an underscore and a hash ("Zoë B": hub-zob_1a2b3c4d5e6f). Only the
    second form holds an underscore, so no two names share a user."""
    if re.fullmatch(r"[a-z][a-z0-9-]{0,19}", learner):
        return f"{prefix}{learner}"
    letters = re.sub(r"[^a-z0-9]", "", learner.lower())[:10]
    return f"{prefix}{letters}_{hashlib.sha256(learner.encode()).hexdigest()[:12]}"


UIDS_GIVEN = Path("/var/lib/computational-graphs-hub/uids")
# The machine's lock for picking and taking a uid, fixed as the module loads: a record moved
# afterwards (a test's) still waits for every other class making users on this machine.
MACHINE_LOCK = UIDS_GIVEN.parent / "useradd.lock"


def given_uids():
    """{uid: home} of every learner's user made on this machine (any class) whose home is still there."""
    found = {}
    with contextlib.suppress(OSError):       # no record yet
        for line in UIDS_GIVEN.read_text().splitlines():
            uid, _, home = line.partition(" ")
            if uid.isdigit() and home and os.path.lexists(home):      # a line edited by hand is passed over
                found[int(uid)] = home
    return found


def free_uid(homes):
    """The highest system uid no user has, owning nothing in `homes` and no kept
    home (`given_uids`): a removed learner's uid is not handed on while their home is there."""
    taken = {entry.pw_uid for entry in pwd.getpwall()} | {entry.gr_gid for entry in grp.getgrall()}
    taken |= set(given_uids())
    with contextlib.suppress(OSError):
        taken |= {child.stat().st_uid for child in Path(homes).iterdir()}
    for uid in range(SYSTEM_UIDS[1], SYSTEM_UIDS[0] - 1, -1):
        if uid not in taken:
            return uid
    raise RuntimeError(f"no system uid is free between {SYSTEM_UIDS[0]} and {SYSTEM_UIDS[1]}")


def ensure_user(unix, home):
    """The pwd entry of the learner's system user `unix` with home `home`, made
    unless it exists (no shell, no password); another's user of that name raises
    PermissionError. A lock of the whole machine is held while a uid is picked and taken, in
    root's own folder (one every user could open, in /tmp, would let a learner's kernel hold it for ever)."""
    MACHINE_LOCK.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    MACHINE_LOCK.parent.chmod(0o700)
    with open(MACHINE_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)     # per open file, so threads wait for each other too
        try:
            entry = pwd.getpwnam(unix)
        except KeyError:
            uid = free_uid(Path(home).parent)
            done = subprocess.run(["useradd", "--system", "--uid", str(uid), "--user-group", "--no-create-home",
                                   "--home-dir", str(home), "--shell", "/usr/sbin/nologin", "--comment", LEARNER,
                                   unix], capture_output=True, text=True, timeout=60)
            if done.returncode != 0:
                raise OSError(f"useradd could not make {unix} (exit status {done.returncode}): "
                              f"{done.stderr.strip()}") from None
            with open(os.open(UIDS_GIVEN, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "a") as ledger:
                ledger.write(f"{uid} {home}\n")         # root's alone; a later line for a uid wins
            entry = pwd.getpwnam(unix)
    if entry.pw_gecos != LEARNER or os.path.realpath(entry.pw_dir) != os.path.realpath(home):
        raise PermissionError(f"the Unix user {unix} is not this learner's (its home is {entry.pw_dir}, not {home}): "
                        "log in under another name, or ask the teacher to remove that user")
    return entry


def give_back(home, entry):
    """A learner back after FORGET=1 has a new uid: their home's files are given to
    it (links themselves, never what they point to: chown -R follows none)."""
    if os.path.isdir(home) and os.lstat(home).st_uid != entry.pw_uid:
        subprocess.run(["chown", "-R", "--no-dereference", f"{entry.pw_uid}:{entry.pw_gid}", str(home)],
                       check=True, timeout=600)


def remove_users(chosen):
    """Remove the learners' Unix users `chosen(entry)` picks, what they run ended
    first; their homes stay. Returns the names removed."""
    removed = []
    for entry in pwd.getpwall():
        if entry.pw_gecos == LEARNER and chosen(entry):
            kill_user(entry.pw_uid)       # then waited for (userdel refuses a user whose processes run)
            stop_all(lambda uid=entry.pw_uid: user_processes(uid))
            if subprocess.run(["userdel", entry.pw_name], capture_output=True, timeout=60).returncode == 0:
                removed.append(entry.pw_name)
    return removed


def kill_user(uid):
    """SIGKILL every process of the learner's user `uid` in one pass (a child
    become that user calls kill(-1): a fork loop cannot slip out as from kills by id;
    a fork, not a program run as the learner, which may not reach the class's Python)."""
    if uid == 0 or uid == os.getuid():
        raise ValueError(f"kill_user is for a learner's user, not uid {uid}")
    found = user_processes(uid)
    child = os.fork()
    if child == 0:
        try:
            os.setgroups([])
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    return found


def class_uids(learners):
    learners = os.path.realpath(os.fsencode(learners))
    return {entry.pw_uid for entry in pwd.getpwall()
            if entry.pw_gecos == LEARNER and _under(os.path.realpath(os.fsencode(entry.pw_dir)), learners)}


def end_class(learners):
    """End every process of the class whose homes are in `learners`; returns the ids ended."""
    ended = [pid for uid in class_uids(learners) for pid in kill_user(uid)]
    return ended + stop_all(lambda: class_processes(learners))


def class_processes(learners):
    """Every process of the class: run by a learner's user (by any of its uids: a
    setuid program keeps theirs as its real uid), or working in `learners` with
    JupyterHub's variables (an unisolated server and its kernels run as the teacher;
    a teacher's shell there has none)."""
    uids, learners = class_uids(learners), os.path.realpath(os.fsencode(learners))
    return _processes(lambda p: uids & set(p.uids()) or _under(os.fsencode(p.cwd()), learners)
                      and "JUPYTERHUB_USER" in p.environ())


def _processes(match):
    """Ids of the live processes (not zombies, not this one) `match(psutil.Process)` picks."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.pid != os.getpid() and match(process) and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process.pid)
    return found


def stop_all(find, rounds=10):
    """Kill what `find()` lists until it lists nothing (SIGTERM first, then SIGKILL
    alone, for a process that forks when told to stop); returns every id killed."""
    killed = kill_pids(find())
    while rounds and (pids := find()):
        killed, rounds = killed + kill_pids(pids, grace=1.0, signals=(signal.SIGKILL,)), rounds - 1
    return killed


def kill_pids(pids, grace=5.0, signals=(signal.SIGTERM, signal.SIGKILL)):
    """Each of `signals`, `grace` seconds apart, to those still running; returns the pids that were running.
    Not psutil.wait_procs: it waits out its timeout on a zombie whose parent does not reap it."""
    hit = alive = [pid for pid in pids if _live(pid)]
    for how in signals:
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, how)
        deadline = time.monotonic() + grace
        while (alive := [pid for pid in alive if _live(pid)]) and time.monotonic() < deadline:
            time.sleep(0.1)
    return hit


def _live(pid):
    with contextlib.suppress(psutil.Error):
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    return False


def user_processes(uid):
    """Process ids running as `uid`, by any of their uids."""
    return _processes(lambda process: uid in process.uids())


def _check(result, what):
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _under(path, folder):
    return path == folder or path.startswith(folder.rstrip(b"/") + b"/")


def private_mounts(keep=()):
    """In a new mount namespace: /proc with hidepid=2, and a /tmp, /var/tmp and
    /dev/shm of its own; a folder of `keep` under one of them is bound back in."""
    kept = sorted({os.path.realpath(os.fsencode(k)) for k in keep})
    kept = [k for k in kept if not any(other != k and _under(k, other) for other in kept)]
    _check(_LIBC.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(_LIBC.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    _check(_LIBC.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"hidepid=2"),
           "mount proc hidepid=2")
    for folder in PRIVATE_FOLDERS:
        if not os.path.isdir(folder):
            continue
        inside = [k for k in kept if _under(k, os.path.realpath(folder))]
        handles = [os.open(k, os.O_PATH) for k in inside]        # reachable after the folder is covered
        try:
            _check(_LIBC.mount(b"tmpfs", folder, b"tmpfs", MS_NOSUID | MS_NODEV, PRIVATE_TMP.encode()),
                   f"mount tmpfs {folder.decode()}")
            for path, handle in zip(inside, handles, strict=True):
                if os.path.isdir(f"/proc/self/fd/{handle}"):
                    os.makedirs(path, mode=0o755, exist_ok=True)
                else:                                    # a file (an interpreter) is bound over an empty one
                    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
                _check(_LIBC.mount(f"/proc/self/fd/{handle}".encode(), path, None, MS_BIND | MS_REC, None),
                       f"mount --bind {path.decode()}")
        finally:
            for handle in handles:
                os.close(handle)


def preexec(home, group, limits, become, keep=()):
    """What the learner's server runs as root between fork and exec: its cgroup, its
    mounts, resource limits where no cgroup holds them, then `become()` the learner's user."""
    def run():
        group.join(os.getpid())
        private_mounts([home, *keep])
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if "pids" not in group.enforced:
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.tasks, limits.tasks))
        if "memory" not in group.enforced:
            resource.setrlimit(resource.RLIMIT_DATA, (limits.memory, limits.memory))
        become()
    return run


def class_paths(learners):
    """What a learner's server must reach besides its home: the collection, the
    class's homes, the environment and the Python's installation (a venv's
    standard library lies there)."""
    return [ROOT, Path(learners), Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable))]


def unreachable(paths):
    """(path, folder, why) of the first of `paths` a learner's user cannot reach (by the
    modes for others: a learner owns none of them, nor is in their group); None when it reaches all."""
    for path in map(Path, paths):
        for folder in [*reversed(path.parents), path]:
            try:
                mode = folder.stat().st_mode
            except OSError as error:
                return path, folder, f"{folder}: {error.strerror}"
            runs = folder != path or stat.S_ISDIR(mode) or mode & 0o111      # a folder entered, a program run
            if not mode & (0o001 if runs else 0o004):                         # ... else a file read
                return path, folder, f"{folder} is closed to other users (mode {mode & 0o777:04o})"
    return None


def why_not_isolated(keep=()):
    """Why learners cannot be isolated here, with what to do; None when a trial child
    made a learner's mounts and a learner's user reaches all of `keep`."""
    if not sys.platform.startswith("linux"):
        return f"a user per learner needs Linux; this is {sys.platform}"
    if os.geteuid() != 0:
        return "a user per learner needs root: run make hub as root (sudo make hub)"
    try:        # in a child of its own, which the mounts end with
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as trial:
            trial.submit(private_mounts, keep).result()
    except Exception as error:      # noqa: BLE001 (whatever stops the mounts is said)
        return f"this machine does not let root give each learner a private /proc and /tmp ({error})"
    blocked = unreachable(keep)
    if blocked:
        path, folder, why = blocked
        return f"a learner's Unix user cannot reach {path}: {why}. {advice(path, folder)}"
    return None


SYSTEM_PYTHON = "/usr/bin/python3"


def advice(path, folder):
    """The command that makes `path` reachable, as typed: .venv made again with the
    system's Python, else the closed folders opened for passing (o+x)."""
    pythons = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.executable)}
    if os.path.realpath(path) in pythons or Path(path).name.startswith("python"):     # the class's Python
        return ("Make the class's environment with the system's Python (.venv is made again, a few minutes; where "
                f"it lacks, Debian: sudo apt-get install python3 python3-venv): make hub PYTHON={SYSTEM_PYTHON}")
    closed = [str(f) for f in [*reversed(Path(path).parents), Path(path)]
              if f.is_dir() and not f.stat().st_mode & 0o001] or [str(folder)]
    return (f"Let other users pass through {', '.join(closed)} (they can enter, not list): chmod o+x "
            f"{' '.join(closed)}; or put the class in a clone every user can read (under /srv or /opt)")
