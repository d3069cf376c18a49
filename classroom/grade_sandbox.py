"""Where `make grade` runs a submission: a sandbox of its own (docs/teaching.md,
"The sandbox").

    run(argv, stdin, limits) -> Outcome

bubblewrap (`bwrap`) in new user, mount, pid, network, IPC, UTS and cgroup
namespaces: no network (a loopback of its own), no other process in view,
and a file system of read-only binds of the system (/usr), the Python
environment (by resolved paths: `python()`) and what grading needs of the
collection (SHARED), with its own home, working folder and /tmp in bounded
tmpfs; its input on stdin, its result on stdout, both read here with a cap.
As uid 65534 inside, no capabilities, a new session, the command as pid 1;
/dev read-only. A cgroup of its own (classroom/cgroups.py: memory, CPU,
tasks) where one can be made, and always prlimit (CPU seconds, file size,
open files, no core dumps; without a cgroup, each process's address space
and the user's tasks); `Outcome.enforced` says which held, in words. A
watchdog here kills it at its wall-clock limit or past OUTPUT_CAP; its pid
namespace ends with it, and what is left in its cgroup is killed by id.

`why_no_sandbox()` says why none can be made here (None when one can);
`unisolated=True` runs the command with the same watchdog, a temporary home
and a process group of its own, and no other isolation."""

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
SHARED = ("helpers", "tools", "notebooks", "jupyter", "classroom/__init__.py", "classroom/grade_run.py")
INSIDE = Path("/sandbox")                                # its home and working folder, inside
NOBODY = 65534
OUTPUT_CAP = 64 * 2 ** 20                                # bytes of stdout kept (the executed notebook)
ERRORS_CAP = 64 * 2 ** 10                                # bytes of stderr kept (its end)
INSTALL = "sudo apt-get install bubblewrap (tools/setup_system.sh installs it with make test, grade and lab)"


@dataclass(frozen=True)
class RunLimits:
    """`wall` seconds (then killed), `memory` bytes, `cpus` cores, `tasks`
    processes and threads, `disk` bytes of each tmpfs."""

    wall: float = 900.0
    memory: int = 3 * 2 ** 30
    cpus: float = 1.0
    tasks: int = 512
    disk: int = 512 * 2 ** 20

    def __post_init__(self) -> None:
        for name in ("wall", "memory", "cpus", "tasks", "disk"):
            if not getattr(self, name) > 0:
                raise ValueError(f"the sandbox's {name} limit must be positive; got {getattr(self, name)!r}")


@dataclass
class Outcome:
    """Its exit status (None when killed), stdout (up to OUTPUT_CAP), the end
    of stderr, why it was stopped, what was killed after it, the limits that
    held, and its peak memory where the cgroup reports it."""

    returncode: int | None
    stdout: bytes
    stderr: str
    stopped: str = ""
    leftovers: list[int] = field(default_factory=list)
    enforced: tuple[str, ...] = ()
    peak_memory: int | None = None


def python() -> str:
    """This Python by a path with no link in its folders (a `.venv` that is a
    link, a checkout reached through one), as the sandbox binds them; the file
    itself not resolved: a venv's bin/python finds its venv from that path."""
    here = Path(sys.executable)
    return str(here.parent.resolve() / here.name)


def why_no_sandbox() -> str | None:
    if not sys.platform.startswith("linux"):
        return f"grading's sandbox needs Linux (namespaces, through bubblewrap); this is {sys.platform}"
    if shutil.which("bwrap") is None:
        return f"grading's sandbox needs bubblewrap (bwrap), which this machine lacks: {INSTALL}"
    trial = subprocess.run(["bwrap", *_namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
                            "--", "true"], capture_output=True, text=True, timeout=30)
    if trial.returncode != 0:
        return ("bubblewrap cannot make a sandbox here (" + trial.stderr.strip()[:300] + "): it needs user "
                "namespaces (sysctl kernel.unprivileged_userns_clone=1 on Debian; on Ubuntu 24.04 an AppArmor "
                "profile for bwrap), or run make grade as root")
    return None


def _namespaces() -> list[str]:
    return ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--as-pid-1"]


def _binds(root: Path) -> list[str]:
    """Read-only: /usr and the top-level links into it, a few files of /etc,
    the Python environment's resolved prefixes (and a venv's site-packages
    that a .pth file adds, never a user's or a checkout's), SHARED."""
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
    bound = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(python()).parent.parent} - {Path("/usr")}
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if path.name == "site-packages" and (path.parents[2] / "pyvenv.cfg").is_file() \
                and not any(b == path or b in path.parents for b in bound | {Path("/usr")}):
            bound.add(path)
    args += [a for prefix in sorted(bound) for a in ("--ro-bind", str(prefix), str(prefix))]
    return args + [a for part in SHARED if (root / part).exists() for a in ("--ro-bind", str(root / part),
                                                                            str(root / part))]


def environment(home: Path, root: Path, cpus: float) -> dict[str, str]:
    """The only variables the command gets: its own home and Jupyter folders,
    the collection on its import path, one thread per core it may use."""
    threads = str(max(1, int(cpus)))
    return {"HOME": str(home), "USER": "learner", "LOGNAME": "learner", "PATH": f"{Path(python()).parent}:/usr/bin:/bin",
            "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
            "TMPDIR": "/tmp", "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_CONFIG_DIR": str(home / "config"), "IPYTHONDIR": str(home / "ipython"),
            "MPLCONFIGDIR": str(home / "matplotlib"), "XDG_CACHE_HOME": str(home / "cache"),
            "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


def bwrap_argv(argv: list[str], files: Path, limits: RunLimits, root: Path = ROOT) -> list[str]:
    """The bubblewrap command line that runs `argv` in the sandbox."""
    home = INSIDE / "home"
    (files / "passwd").write_text(f"learner:x:{NOBODY}:{NOBODY}:learner:{INSIDE}:/bin/false\n")
    (files / "group").write_text(f"learner:x:{NOBODY}:\n")
    (files / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
    size = ["--size", str(limits.disk)]
    return ["bwrap", *_namespaces(), "--disable-userns", "--cap-drop", "ALL", "--uid", str(NOBODY),
            "--gid", str(NOBODY), "--hostname", "sandbox", "--clearenv",
            *[a for k, v in environment(home, root, limits.cpus).items() for a in ("--setenv", k, v)],
            *size, "--tmpfs", "/tmp", *size, "--tmpfs", str(INSIDE),
            *_binds(root), *[a for n in ("passwd", "group", "hosts") for a in ("--ro-bind", str(files / n), f"/etc/{n}")],
            "--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
            "--dir", str(home), "--dir", str(INSIDE / "work"), "--chdir", str(INSIDE / "work"), "--", *argv]


def _mb(size: int) -> str:
    return f"{size / 2 ** 30:g} GB" if size >= 2 ** 30 else f"{size // 2 ** 20} MB"


def _prlimit(limits: RunLimits, held: list[str]) -> tuple[list[str], list[str]]:
    """prlimit's command line and what it bounds, in words; memory and tasks where no cgroup holds them."""
    cpu = int(limits.wall * limits.cpus) + 60
    args = [f"--cpu={cpu}", f"--fsize={limits.disk}", "--nofile=4096", "--core=0"]
    said = [f"prlimit: {cpu} s of CPU, files of at most {_mb(limits.disk)}, 4096 open files, no core dumps"]
    if "memory" not in held:
        args.append(f"--as={limits.memory}")
        said.append(f"memory: no cgroup, so prlimit bounds each process's address space to {_mb(limits.memory)} "
                    "(not their sum)")
    if "pids" not in held:
        already = sum(len(os.listdir(p / "task")) for p in Path("/proc").iterdir() if _owned(p))
        args.append(f"--nproc={already + limits.tasks}")
        said.append(f"tasks: no cgroup, so prlimit bounds this user's tasks to {limits.tasks} more than the "
                    f"{already} it runs" + (" (root is exempt: nothing bounds them)" if os.getuid() == 0 else ""))
    return ["prlimit", *args, "--"], said


def _owned(proc: Path) -> bool:
    try:
        return proc.name.isdigit() and proc.stat().st_uid == os.getuid() and (proc / "task").is_dir()
    except OSError:
        return False


NAMESPACES = ("namespaces: user (one uid, no capabilities), pid, mount, network (loopback only), IPC, UTS, cgroup; "
              "the command as pid 1")
# Puts the shell into each cgroup named before "--", then becomes the command after it.
_ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def _reader(stream, cap: int, keep_end: bool, into: list[bytes], over: list[bool]) -> None:
    size = 0
    while chunk := stream.read(65536):
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
    """Run `argv` in a sandbox of its own (or, `unisolated`, as a plain process
    group with its own temporary home), fed `stdin`; killed at `limits.wall`
    seconds or past OUTPUT_CAP of stdout. Its cgroup is made under `cgroups_root`."""
    group = None if unisolated else cgroups.Group((f"grade-{uuid.uuid4().hex[:12]}",),
                                                  cgroups.Limits(limits.memory, limits.cpus, limits.tasks), cgroups_root)
    enforced: list[str] = []
    with tempfile.TemporaryDirectory(prefix="grade-sandbox-") as files:
        if unisolated:
            home = Path(files) / "home"
            home.mkdir()
            command, env, cwd = argv, environment(home, root, limits.cpus), home
        else:
            prlimit, said = _prlimit(limits, group.enforced)
            words = {"memory": f"memory {_mb(limits.memory)}", "cpu": f"CPU {limits.cpus:g} cores",
                     "pids": f"{limits.tasks} tasks"}
            enforced = [NAMESPACES, *([f"cgroup: {', '.join(words[c] for c in group.enforced)}"] if group.enforced
                                      else []), *said,
                        f"disk: /tmp, {INSIDE} (home and work) and /dev/shm in tmpfs of {_mb(limits.disk)} each; "
                        "/dev read-only; the system and the collection read-only"]
            command = ["/bin/sh", "-c", _ENTER, "sh", *group.task_files(), "--", *prlimit,
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
        peak = group.peak_memory() if group else None
        leftovers = group.remove() if group else _kill_group(process)
        return Outcome(None if stopped else process.returncode, b"".join(out),
                       b"".join(err).decode(errors="replace"), stopped, leftovers, tuple(enforced), peak)


def _kill_group(process: subprocess.Popen) -> list[int]:
    """SIGKILL the process group this run started; [its id] when it was still there."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
        return [process.pid] if process.poll() is None else []
    except ProcessLookupError:
        return []
