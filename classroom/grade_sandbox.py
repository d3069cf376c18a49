"""Where `make grade` runs a submission: a sandbox of its own (docs/teaching.md,
"What grading guarantees").

    run(argv, stdin, limits) -> Outcome

The command runs under bubblewrap (`bwrap`, Debian's `bubblewrap`) in new
user, mount, pid, network, IPC, UTS and cgroup namespaces: no network (only
its own loopback), no view of any process outside it, and a file system
made of read-only binds of the system (/usr), the Python environment and
the collection's code and stored notebooks (helpers/, tools/, notebooks/,
jupyter/), with its own empty home, working folder and /tmp in a size-bounded
tmpfs. Nothing the sandbox can write reaches the machine's disk: its input
comes on stdin, its result goes to stdout, both read here with a cap. It
runs as uid 65534 inside, without capabilities, in a new session, as the
pid namespace's first process (so nothing inside can signal it unless it
handles the signal); /dev is read-only, /dev/shm a bounded tmpfs. Its
resources are bounded by a cgroup of its own where the machine lets us make
one (memory, CPU share, number of tasks; cgroup v1 or v2) and always by
prlimit (CPU seconds, file size, open files, no core dumps; without a
cgroup, each process's address space and the user's tasks). `Outcome.enforced`
says in words which limits held. A watchdog
here, the grader's own, kills it at its wall-clock limit; killing it ends
its pid namespace, so nothing it started outlives it, and any task left in
its cgroup is killed by its id and reported.

`why_no_sandbox()` says why no sandbox can be made here (None when one can):
grading then refuses unless the teacher asks by name for an unisolated run
(`unisolated=True`: the same watchdog, a temporary home and a process group
of its own, no other isolation)."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from classroom import cgroups

ROOT = Path(__file__).resolve().parents[1]
SHARED = ("helpers", "tools", "notebooks", "jupyter", "classroom/__init__.py",   # what grading needs of the
          "classroom/grade_run.py")                                             # collection, no more
INSIDE = Path("/sandbox")                                # its home and working folder, inside
NOBODY = 65534
OUTPUT_CAP = 64 * 2 ** 20                                # bytes of stdout kept (the executed notebook)
ERRORS_CAP = 64 * 2 ** 10                                # bytes of stderr kept (its end)
INSTALL = ("sudo apt-get install bubblewrap (tools/setup_system.sh installs it on Debian and Ubuntu with "
           "make test, make grade and make lab)")


@dataclass(frozen=True)
class RunLimits:
    """What one sandbox may use: `wall` seconds of wall-clock time (then it is
    killed), `memory` bytes, `cpus` cores' worth of CPU time, `tasks`
    processes and threads (these three held by its cgroup: `cgroup()`),
    `disk` bytes of tmpfs for its home, work and /tmp."""

    wall: float = 900.0
    memory: int = 3 * 2 ** 30
    cpus: float = 1.0
    tasks: int = 512
    disk: int = 512 * 2 ** 20

    def __post_init__(self) -> None:
        for name in ("wall", "memory", "cpus", "tasks", "disk"):
            if not getattr(self, name) > 0:
                raise ValueError(f"the sandbox's {name} limit must be positive; got {getattr(self, name)!r}")

    def cgroup(self) -> cgroups.Limits:
        return cgroups.Limits(self.memory, self.cpus, self.tasks)


@dataclass
class Outcome:
    """How a run ended: its exit status (None when the watchdog killed it),
    its stdout (up to OUTPUT_CAP), the end of its stderr, why it was stopped
    ("" when it ended by itself), what was killed after it, the limits that
    were enforced, and its peak memory where the cgroup reports it."""

    returncode: int | None
    stdout: bytes
    stderr: str
    stopped: str = ""
    leftovers: list[int] = field(default_factory=list)
    enforced: tuple[str, ...] = ()
    peak_memory: int | None = None


def python() -> str:
    """This Python, by a path with no link in its folders (a `.venv` that is a
    link to elsewhere, a checkout reached through one): the sandbox binds the
    resolved prefixes, so the path it runs must be theirs. The file itself
    is not resolved: a venv's bin/python is a link to the base Python, which
    finds the venv from the path it was started by."""
    here = Path(sys.executable)
    return str(here.parent.resolve() / here.name)


def why_no_sandbox() -> str | None:
    """Why a sandbox cannot be made on this machine, with what to do; None
    when it can (a trial sandbox was made and ran)."""
    if not sys.platform.startswith("linux"):
        return (f"grading's sandbox needs Linux (namespaces, through bubblewrap); this is {sys.platform}: grade "
                "on a Linux machine or in a Linux container or virtual machine")
    if shutil.which("bwrap") is None:
        return f"grading's sandbox needs bubblewrap (bwrap), which this machine lacks: {INSTALL}"
    trial = subprocess.run(["bwrap", *_namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
                            "--", "true"], capture_output=True, text=True, timeout=30)
    if trial.returncode != 0:
        return ("bubblewrap is installed but cannot make a sandbox here (" + trial.stderr.strip()[:300] + "): "
                "it needs user namespaces (sysctl kernel.unprivileged_userns_clone=1 on Debian; on Ubuntu 24.04 "
                "an AppArmor profile for bwrap), or run make grade as root")
    return None


def _namespaces() -> list[str]:
    return ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--as-pid-1"]


def _system_binds() -> list[str]:
    """The system, read-only: /usr and the top-level links into it (or the
    folders themselves on a system not merged into /usr), the Python
    environment, and the few files of /etc that programs read."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for etc in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "fonts", "alternatives", "localtime", "mime.types",
                "ssl/openssl.cnf"):
        if (Path("/etc") / etc).exists():
            args += ["--ro-bind", f"/etc/{etc}", f"/etc/{etc}"]
    prefixes = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()} - {Path("/usr")}
    for prefix in sorted(prefixes):
        args += ["--ro-bind", str(prefix), str(prefix)]
    for packages in _other_site_packages(prefixes | {Path("/usr")}):
        args += ["--ro-bind", str(packages), str(packages)]
    return args


def _other_site_packages(bound):
    """Folders of packages on the import path outside the prefixes already
    bound (an environment that reads another venv's packages through a .pth
    file): only a venv's own site-packages (<venv>/lib/pythonX.Y/site-packages
    beside its pyvenv.cfg), never a user's ~/.local packages nor a checkout
    on the path, which may hold what learners must not read."""
    found = set()
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if path.name == "site-packages" and path.is_dir() and (path.parents[2] / "pyvenv.cfg").is_file() \
                and not any(path == b or b in path.parents for b in bound):
            found.add(path)
    return sorted(found)


def _collection_binds(root: Path) -> list[str]:
    args = []
    for part in SHARED:
        if (root / part).exists():
            args += ["--ro-bind", str(root / part), str(root / part)]
    return args


def environment(home: Path, root: Path, cpus: float) -> dict[str, str]:
    """The variables the sandboxed command gets (and no others): its own
    home and Jupyter folders, the collection on its import path, one thread
    per core it may use."""
    threads = str(max(1, int(cpus)))
    bin_dir = str(Path(python()).parent)
    return {"HOME": str(home), "USER": "learner", "LOGNAME": "learner", "PATH": f"{bin_dir}:/usr/bin:/bin",
            "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
            "TMPDIR": "/tmp", "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_CONFIG_DIR": str(home / "config"), "IPYTHONDIR": str(home / "ipython"),
            "MPLCONFIGDIR": str(home / "matplotlib"), "XDG_CACHE_HOME": str(home / "cache"),
            "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


def _files(folder: Path) -> list[str]:
    """A passwd, group and hosts of the sandbox's own (the machine's name no user's)."""
    (folder / "passwd").write_text(f"learner:x:{NOBODY}:{NOBODY}:learner:{INSIDE}:/bin/false\n")
    (folder / "group").write_text(f"learner:x:{NOBODY}:\n")
    (folder / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
    return [a for name in ("passwd", "group", "hosts") for a in ("--ro-bind", str(folder / name), f"/etc/{name}")]


def bwrap_argv(argv: list[str], files: Path, limits: RunLimits, root: Path = ROOT) -> list[str]:
    """The bubblewrap command line that runs `argv` in the sandbox."""
    home = INSIDE / "home"
    env = environment(home, root, limits.cpus)
    return ["bwrap", *_namespaces(), "--disable-userns", "--cap-drop", "ALL", "--uid", str(NOBODY),
            "--gid", str(NOBODY), "--hostname", "sandbox", "--clearenv",
            *[a for k, v in env.items() for a in ("--setenv", k, v)],
            "--size", str(limits.disk), "--tmpfs", "/tmp", "--size", str(limits.disk), "--tmpfs", str(INSIDE),
            *_system_binds(), *_collection_binds(root), *_files(files),     # after /tmp: a checkout may be in it
            "--proc", "/proc", "--dev", "/dev", "--size", str(limits.disk), "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev",
            "--dir", str(home), "--dir", str(INSIDE / "work"), "--chdir", str(INSIDE / "work"),
            "--", *argv]


def _prlimit(limits: RunLimits, held: list[str]) -> tuple[list[str], list[str]]:
    """prlimit's command line, and what it bounds: CPU seconds, file size,
    open files, no core dumps; and where no cgroup bounds them (`held` lists
    what one does), each process's address space and the number of tasks."""
    cpu = int(limits.wall * limits.cpus) + 60
    args = [f"--cpu={cpu}", f"--fsize={limits.disk}", "--nofile=4096", "--core=0"]
    said = [f"prlimit: {cpu} s of CPU, files of at most {_mb(limits.disk)}, 4096 open files, no core dumps"]
    if "memory" not in held:
        args.append(f"--as={limits.memory}")
        said.append(f"memory: no cgroup, so prlimit bounds each process's address space to {_mb(limits.memory)} "
                    "(not their sum)")
    if "pids" not in held:
        already = _tasks_of(os.getuid())
        args.append(f"--nproc={already + limits.tasks}")
        said.append(f"tasks: no cgroup, so prlimit bounds this user's tasks to {limits.tasks} more than the "
                    f"{already} it runs" + (" (root is exempt from it: nothing bounds them)" if os.getuid() == 0
                                            else ""))
    return ["prlimit", *args, "--"], said


def _mb(size: int) -> str:
    return f"{size / 2 ** 30:g} GB" if size >= 2 ** 30 else f"{size // 2 ** 20} MB"


def _tasks_of(uid: int) -> int:
    """How many tasks (threads included) the user `uid` runs now."""
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                count += len(os.listdir(entry / "task"))
        except OSError:
            continue
    return count


def _cgroup_said(group: cgroups.Group, limits: RunLimits) -> list[str]:
    """What the sandbox's cgroup bounds, in words."""
    words = {"memory": f"memory {_mb(limits.memory)}", "cpu": f"CPU {limits.cpus:g} cores",
             "pids": f"{limits.tasks} tasks"}
    return [f"cgroup: {', '.join(words[c] for c in group.enforced)}"] if group.enforced else []


NAMESPACES = ("namespaces: user (one uid, no capabilities), pid, mount, network (loopback only), IPC, UTS, cgroup; "
              "the command as pid 1")


def _tmpfs_said(limits: RunLimits) -> str:
    return (f"disk: /tmp, {INSIDE} (home and work) and /dev/shm in tmpfs of {_mb(limits.disk)} each; /dev "
            "read-only; the system and the collection read-only")


# Puts the shell into each cgroup named before "--", then becomes the command after it.
_ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def _reader(stream, cap: int, keep_end: bool, into: list[bytes], over: list[bool]) -> None:
    size = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return
        size += len(chunk)
        if keep_end:
            into.append(chunk)
            while sum(map(len, into)) > cap and len(into) > 1:
                into.pop(0)
        elif size <= cap:
            into.append(chunk)
        else:
            over.append(True)


def run(argv: list[str], stdin: bytes, limits: RunLimits = RunLimits(), *, unisolated: bool = False,
        root: Path = ROOT, cgroups_root: Path = cgroups.CGROUPS) -> Outcome:
    """Run `argv` in a sandbox of its own (or, with `unisolated`, as a plain
    process group with its own temporary home), feeding it `stdin`; kill it
    at `limits.wall` seconds or when its stdout passes OUTPUT_CAP. Its
    cgroup is made under `cgroups_root` (a folder where none can be made: no
    cgroup, prlimit bounds memory and tasks instead)."""
    cgroup = None if unisolated else cgroups.Group((f"grade-{uuid.uuid4().hex[:12]}",), limits.cgroup(), cgroups_root)
    enforced: list[str] = []
    with tempfile.TemporaryDirectory(prefix="grade-sandbox-") as files:
        if unisolated:
            home = Path(files) / "home"
            home.mkdir()
            command, env, cwd = argv, environment(home, root, limits.cpus), home
        else:
            prlimit, said = _prlimit(limits, cgroup.enforced)
            enforced = [NAMESPACES, *_cgroup_said(cgroup, limits), *said, _tmpfs_said(limits)]
            command = ["/bin/sh", "-c", _ENTER, "sh", *cgroup.task_files(), "--", *prlimit,
                       *bwrap_argv(argv, Path(files), limits, root)]
            env, cwd = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, Path(files)
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=env, cwd=cwd, start_new_session=True)
        out, err, over = [], [], []
        readers = [threading.Thread(target=_reader, args=(process.stdout, OUTPUT_CAP, False, out, over), daemon=True),
                   threading.Thread(target=_reader, args=(process.stderr, ERRORS_CAP, True, err, []), daemon=True)]
        for reader in readers:
            reader.start()
        try:
            process.stdin.write(stdin)
            process.stdin.close()
        except BrokenPipeError:
            pass
        stopped, deadline = "", time.monotonic() + limits.wall
        while process.poll() is None:
            if time.monotonic() > deadline:
                stopped = f"killed at the wall-clock limit of {limits.wall:g} s"
            elif over:
                stopped = f"killed: it wrote more than {OUTPUT_CAP // 2 ** 20} MB of output"
            if stopped:
                _kill_group(process)
                break
            time.sleep(0.1)
        process.wait()
        for reader in readers:
            reader.join(timeout=5)
        peak = cgroup.peak_memory() if cgroup else None
        leftovers = cgroup.remove() if cgroup else _kill_group(process)
        return Outcome(None if stopped else process.returncode, b"".join(out),
                       b"".join(err).decode(errors="replace"), stopped, leftovers, tuple(enforced), peak)


def _kill_group(process: subprocess.Popen) -> list[int]:
    """SIGKILL the process group this run started (its own session); returns
    [its id] when anything of it was still there."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
        return [process.pid] if process.poll() is None else []
    except ProcessLookupError:
        return []
