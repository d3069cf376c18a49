"""Each learner of `make hub` on this machine (classroom/README.md, "What a learner
can reach"): a Unix user of their own, a home only they can open, a view of
/proc that shows only their own processes, their own /tmp and /dev/shm, and a
cgroup of their own that enforces their memory, CPU and task limits.

    unix_name("ada") -> "hub-ada"          the learner's Unix user (made by `ensure_user`)
    learner_group(hub, unix, limits)       the learner's cgroup (classroom/cgroups.py)
    preexec(unix, home, group)             what the learner's server process does before it runs

`why_not_isolated(keep)` says why this machine cannot isolate learners (None when it
can), by running the mounts a learner's server makes in a trial child, and
whether a learner's user can reach the folders in `keep` (the environment's
Python, the collection): `make hub` then refuses to start unless the teacher
asks for a class without isolation (`make hub UNISOLATED=1`)."""

import contextlib
import ctypes
import grp
import hashlib
import os
import pwd
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from classroom import cgroups

ROOT = Path(__file__).resolve().parents[1]
PREFIX = os.environ.get("HUB_USER_PREFIX", "hub-")
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
PRIVATE_TMP = "size=512m,mode=1777"          # a learner's own /tmp, /var/tmp and /dev/shm (tmpfs, charged to them)
PRIVATE_FOLDERS = (b"/tmp", b"/var/tmp", b"/dev/shm")
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


LEARNER = "class hub learner"                 # the comment (GECOS) of every learner's Unix user
_MAKING = threading.Lock()


class Collision(RuntimeError):
    """A learner's Unix user exists and belongs to someone else."""


def unix_name(learner, prefix=PREFIX):
    """The Unix user of a learner, one per name: the prefix and their name
    where it is a short name of lowercase letters, digits and hyphens, else
    its letters, an underscore and a hash of the whole name (names are the
    learner's choice: "Zoë B" is hub-zob_1a2b3c4d5e6f). The first form never
    holds an underscore and the second always does, so no two names share a user."""
    if re.fullmatch(r"[a-z][a-z0-9-]{0,19}", learner):
        return f"{prefix}{learner}"
    letters = re.sub(r"[^a-z0-9]", "", learner.lower())[:10]
    return f"{prefix}{letters}_{hashlib.sha256(learner.encode()).hexdigest()[:12]}"


def _system_uids():
    """The range useradd --system takes uids from (/etc/login.defs)."""
    found = {"SYS_UID_MIN": 100, "SYS_UID_MAX": 999}
    with contextlib.suppress(OSError):
        for line in Path("/etc/login.defs").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key in found and value.strip().isdigit():
                found[key] = int(value.strip())
    return found["SYS_UID_MIN"], found["SYS_UID_MAX"]


UIDS_GIVEN = Path(os.environ.get("HUB_UIDS_FILE") or "/var/lib/computational-graphs-hub/uids")


def given_uids(ledger=None):
    """{uid: home} of every learner's user made on this machine (by any
    class, any checkout) whose home is still there: root's own record,
    written when each user is made."""
    found = {}
    with contextlib.suppress(OSError):
        for line in Path(ledger or UIDS_GIVEN).read_text().splitlines():
            uid, _, home = line.partition(" ")
            if uid.isdigit() and home and os.path.lexists(home):
                found[int(uid)] = home
    return found


def record_uid(uid, home, ledger=None):
    """Add `uid` and its home to the record (root's alone), dropping entries whose home is gone."""
    ledger = Path(ledger or UIDS_GIVEN)
    ledger.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    kept = {**given_uids(ledger), uid: str(home)}
    fresh = ledger.with_name(ledger.name + ".new")
    fresh.write_text("".join(f"{u} {h}\n" for u, h in sorted(kept.items())))
    fresh.chmod(0o600)
    fresh.replace(ledger)


def free_uid(homes):
    """The highest system uid that no user has, that owns nothing in
    `homes` (the class's folder) and that no kept home of any class on this
    machine was made for (`given_uids`): a removed learner's uid is not
    handed to a new learner while their home is there."""
    taken = {entry.pw_uid for entry in pwd.getpwall()} | {entry.gr_gid for entry in grp.getgrall()}
    taken |= set(given_uids())
    with contextlib.suppress(OSError):
        taken |= {child.stat().st_uid for child in Path(homes).iterdir()}
    low, high = _system_uids()
    for uid in range(high, low - 1, -1):
        if uid not in taken:
            return uid
    raise RuntimeError(f"no system uid is free between {low} and {high} (/etc/login.defs)")


def ensure_user(unix, home):
    """The system user `unix` of the learner whose home is `home` (made,
    with its own group, no login shell and no password, unless it exists);
    returns its pwd entry. A user of that name that is not this learner's
    (another home, or not a learner's user at all) raises `Collision`.
    Picking a free uid and taking it hold a lock every process of the
    machine takes (two classes' first logins at once, or a class and
    another tool making users: each would pick the same highest free uid)."""
    with _MAKING, _machine_lock():
        try:
            entry = pwd.getpwnam(unix)
        except KeyError:
            entry = _made(unix, home)
    if entry.pw_gecos != LEARNER or os.path.realpath(entry.pw_dir) != os.path.realpath(home):
        raise Collision(f"the Unix user {unix} is not this learner's (its home is {entry.pw_dir}, not {home}): "
                        "log in under another name, or ask the teacher to remove that user")
    return entry


USERADD_UID_TAKEN, USERADD_NAME_TAKEN = 4, 9        # useradd's exit statuses (useradd(8))


def _made(unix, home, attempts=5):
    """Make the user; a uid or name another program took meanwhile (one that
    does not take this module's lock, useradd itself) is tried again."""
    for _ in range(attempts):
        uid = free_uid(Path(home).parent)
        done = subprocess.run(["useradd", "--system", "--uid", str(uid), "--user-group", "--no-create-home",
                               "--home-dir", str(home), "--shell", "/usr/sbin/nologin", "--comment", LEARNER, unix],
                              capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            record_uid(uid, home)
        if done.returncode == 0 or done.returncode == USERADD_NAME_TAKEN:
            return pwd.getpwnam(unix)
        if done.returncode != USERADD_UID_TAKEN:
            break
    raise OSError(f"useradd could not make {unix} (exit status {done.returncode}): {done.stderr.strip()}")


@contextlib.contextmanager
def _machine_lock():
    """An exclusive lock held by one process of the machine at a time, on a
    file in root's own folder (the uid record's, 0700): a lock file where
    every user can open it (/run/lock, /tmp) lets a learner's kernel take
    it for ever, and every server start would wait on it."""
    import fcntl

    folder = UIDS_GIVEN.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    with open(folder / "useradd.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def remove_users(prefix):
    """Remove every system user whose name starts with `prefix` (the tests'
    and the load tool's learners), after killing what they still run."""
    removed = []
    for entry in pwd.getpwall():
        if entry.pw_name.startswith(prefix) and entry.pw_gecos == LEARNER:
            kill_user(entry.pw_uid)
            stop_all(lambda uid=entry.pw_uid: user_processes(uid))
            subprocess.run(["userdel", entry.pw_name], capture_output=True, timeout=60)
            removed.append(entry.pw_name)
    return removed


def give_back(home, entry):
    """A learner whose user was removed after a course (make hub FORGET=1)
    and who logs in again gets a new uid: their home's files, still owned by
    the old one, are given to it (links themselves, never what they point to)."""
    home = Path(home)
    if not home.exists() or home.lstat().st_uid == entry.pw_uid and not any(
            child.lstat().st_uid != entry.pw_uid for child in home.iterdir()):
        return 0
    changed = 0
    for folder, folders, files in os.walk(home):
        for name in [".", *folders, *files]:
            path = os.path.join(folder, name)
            if os.lstat(path).st_uid != entry.pw_uid:
                os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
                changed += 1
    return changed


def remove_class_users(learners):
    """Remove the Unix user of every learner whose home is in `learners`
    (after killing what they still run); their homes stay, and their uids
    are not handed on while they do (`free_uid`). Returns the names removed."""
    removed = []
    uids = class_uids(learners)
    for entry in pwd.getpwall():
        if entry.pw_uid in uids:
            kill_user(entry.pw_uid)
            stop_all(lambda uid=entry.pw_uid: user_processes(uid))
            subprocess.run(["userdel", entry.pw_name], capture_output=True, timeout=60, check=True)
            removed.append(entry.pw_name)
    return removed


def kill_user(uid):
    """SIGKILL every process of the learner's user `uid` at once; returns
    the ids it ran. A child that becomes that user calls kill(-1), which the
    kernel delivers to all of its processes in one pass, so one that forks
    and exits in a loop cannot slip out, as it can from kills by id."""
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
    """The uids of the learners' users whose homes are in `learners`."""
    learners = os.path.realpath(os.fsencode(learners))
    return {entry.pw_uid for entry in pwd.getpwall()
            if entry.pw_gecos == LEARNER and _under(os.path.realpath(os.fsencode(entry.pw_dir)), learners)}


def end_class(learners):
    """End every process of the class whose homes are in `learners`: each
    learner's user at once (kill_user), then what is left (a server of a
    class without isolation, a setuid program a learner started) until none
    is; returns the ids ended."""
    ended = [pid for uid in class_uids(learners) for pid in kill_user(uid)]
    return ended + stop_all(lambda: class_processes(learners))


def class_processes(learners):
    """Every process of the class whose homes are in `learners`: those run
    by a learner's Unix user whose home is there, and those a hub started
    that work in it (a server of a class without isolation runs as the
    teacher; the teacher's own shell there is not the class's)."""
    uids = class_uids(learners)
    learners = os.path.realpath(os.fsencode(learners))
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:     # any of its uids (a setuid program a learner started keeps theirs as its real uid)
            if (uids & _uids(entry) or _spawned_in(entry, learners)) and not _zombie(entry.name):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _spawned_in(entry, learners):
    """Whether /proc/<pid> works in the class's folder and was started by a
    hub (a server, or what it runs: JupyterHub's variables in its
    environment), not a teacher's shell that happens to be there."""
    if not _under(os.readlink(os.fsencode(entry / "cwd")), learners):
        return False
    return any(v.startswith(b"JUPYTERHUB_USER=") for v in (entry / "environ").read_bytes().split(b"\0"))


def _uids(entry):
    """The real, effective, saved and file-system uids of /proc/<pid>."""
    for line in (entry / "status").read_text().splitlines():
        if line.startswith("Uid:"):
            return {int(u) for u in line.split()[1:]}
    return set()


def stop_all(find, rounds=10):
    """Kill what `find()` lists until it lists nothing: SIGTERM first, then
    SIGKILL, and SIGKILL alone for what is found after (a process that forks
    when it is told to stop); returns every id killed."""
    killed = []
    for round_ in range(rounds):
        pids = find()
        if not pids:
            break
        killed += kill_pids(pids) if round_ == 0 else kill_pids(pids, grace=1.0, signals=(signal.SIGKILL,))
    return killed


def kill_pids(pids, grace=5.0, signals=(signal.SIGTERM, signal.SIGKILL)):
    """SIGTERM, then SIGKILL after `grace` seconds, to each of `pids`;
    returns those that were running."""
    def alive():
        return [pid for pid in pids if Path(f"/proc/{pid}").exists() and not _zombie(pid)]
    hit = alive()
    for how in signals:
        for pid in alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, how)
        deadline = time.monotonic() + grace
        while alive() and time.monotonic() < deadline:
            time.sleep(0.1)
    return hit


def _zombie(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def user_processes(uid):
    """Process ids running as `uid`, by any of their uids (not those that
    ended and wait to be reaped)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if uid in _uids(entry) and not _zombie(entry.name):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def learner_group(hub, unix, limits=None):
    """The learner `unix`'s cgroup in the class `hub`'s (classroom/cgroups.py):
    made with `limits`, else the one that exists."""
    return cgroups.Group((hub, unix), limits)


def remove_hub_groups(hub):
    """Remove the class's cgroups (each learner's first, what runs in it
    killed); returns the ids killed."""
    return cgroups.remove_tree(hub)


def _check(result, what):
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _under(path, folder):
    return path == folder or path.startswith(folder.rstrip(b"/") + b"/")


def private_mounts(keep=()):
    """In a new mount namespace: /proc showing only the caller's own
    processes (hidepid=2), and a /tmp, /var/tmp and /dev/shm of its own
    (tmpfs). A folder of `keep` (the learner's home, the collection, its
    Python) that lies under one of them is bound back into the new one, so a
    checkout under /tmp still works and its /tmp is still private."""
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


def preexec(entry, home, group, limits, keep=()):
    """The function the learner's server runs after fork, before exec, as
    root: into its cgroup, its own mounts (`keep`: what must stay reachable
    besides the home), resource limits (all that holds where no cgroup
    could be made: tasks per user, memory per process), then the learner's
    user and home."""
    def run():
        group.join(os.getpid())
        private_mounts([home, *keep])
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


def class_paths(learners):
    """What a learner's server must reach besides its home: the collection
    (its code and notebooks), the class's folder of homes, the environment
    and the Python it runs (its file and its installation's prefix: a venv
    made with --copies from a Python under a private home runs, as a learner,
    without its standard library)."""
    return [ROOT, Path(learners), Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable))]


def _in_child(work):
    """Run `work()` in a forked child; returns what it raised, as one line
    ('' when it returned)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        message = ""
        try:
            work()
        except BaseException as error:      # noqa: BLE001 (reported to the parent, whatever it is)
            message = str(error) or type(error).__name__
        os.write(write, message.encode(errors="replace")[:2000])
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 and not said:
        said = f"the trial child ended with status {os.waitstatus_to_exitcode(status)}"
    return said


NOBODY = 65534


def unreachable(paths, uid=NOBODY):
    """The first of `paths` (or a folder above one) that a user with no
    rights of its own (uid 65534) cannot open, as (path, folder); None when
    it reaches them all."""
    def trial():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        for path in map(Path, paths):
            for folder in reversed(path.parents):
                if not os.access(folder, os.X_OK):
                    raise PermissionError(f"{path}\0{folder}")
            runs = path.is_file() and path.stat().st_mode & 0o111      # a program (the interpreter) must run
            if not os.access(path, os.X_OK if path.is_dir() or runs else os.R_OK):    # a folder entered, a file read
                raise PermissionError(f"{path}\0{path}")
    said = _in_child(trial)
    if not said:
        return None
    path, _, folder = said.partition("\0")
    return path, folder or path


def why_not_isolated(keep=()):
    """Why learners cannot be isolated here, with what to do; None when
    they can: a trial child, as root, made the mounts a learner's server
    makes (keeping `keep` reachable), and a user with no rights of its own
    can open every folder of `keep`."""
    if not sys.platform.startswith("linux"):
        return f"a user per learner needs Linux; this is {sys.platform}"
    if os.geteuid() != 0:
        return "a user per learner needs root: run make hub as root (sudo make hub)"
    said = _in_child(lambda: private_mounts(keep))
    if said:
        return f"this machine does not let root give each learner a private /proc and /tmp ({said})"
    blocked = unreachable(keep)
    if blocked:
        path, folder = blocked
        try:
            why = f"{folder} is closed to other users (mode {os.stat(folder).st_mode & 0o777:04o})"
        except OSError as error:
            why = f"{folder}: {error.strerror}"
        return f"a learner's Unix user cannot reach {path}: {why}. {advice(path, folder)}"
    return None


SYSTEM_PYTHON = "/usr/bin/python3"


def is_python(path):
    """Whether `path` is the Python the class runs on (its interpreter, its installation, the venv)."""
    pythons = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.executable)}
    return os.path.realpath(path) in pythons or Path(path).name.startswith("python")


def advice(path, folder):
    """The command that makes `path` reachable, as a teacher types it: the
    environment made again with the system's Python (the Makefile makes .venv
    again for a PYTHON= that did not make it), else the closed folder opened
    for passing through (o+x: other users can enter it, not list it)."""
    if is_python(path) and os.access(SYSTEM_PYTHON, os.X_OK) and unreachable([SYSTEM_PYTHON]) is None:
        return (f"Make the class's environment with the system's Python (.venv is made again, a few minutes): "
                f"make hub PYTHON={SYSTEM_PYTHON}")
    if is_python(path):
        return ("Install the system's Python (Debian: sudo apt-get install python3 python3-venv), then: "
                f"make hub PYTHON={SYSTEM_PYTHON}")
    closed = [str(f) for f in [*reversed(Path(path).parents), Path(path)]
              if f.is_dir() and not f.stat().st_mode & 0o001] or [str(folder)]
    return (f"Let other users pass through {', '.join(closed)} (they can enter, not list): chmod o+x "
            f"{' '.join(closed)}; or put the class in a clone every user can read (under /srv or /opt)")
