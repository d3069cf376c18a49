"""Where `make grade` runs a submission: `run(argv, stdin, limits) -> Outcome`, under bubblewrap, a cgroup
and prlimit, with a watchdog of its own (docs/teaching.md, "The sandbox")."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
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
    """`wall` seconds (then killed), `memory` bytes, `cpus` cores, `tasks`, `disk` bytes of each tmpfs."""

    wall: float = 900.0
    memory: int = 3 * 2 ** 30
    cpus: float = 1.0
    tasks: int = 512
    disk: int = 512 * 2 ** 20


@dataclass
class Outcome:
    """Exit status (None when killed), stdout, stderr's end, why stopped, what was killed after, and the
    bounds weaker than a cgroup's that prlimit gave where no cgroup held memory or tasks."""

    returncode: int | None
    stdout: bytes
    stderr: str
    stopped: str = ""
    leftovers: list[int] = field(default_factory=list)
    weaker: tuple[str, ...] = ()


def python() -> str:
    """This Python by its folder's resolved path, as bound; the file itself not resolved (a venv's
    bin/python finds its venv from it)."""
    here = Path(sys.executable)
    return str(here.parent.resolve() / here.name)


def why_no_sandbox() -> str | None:
    """Why no sandbox can be made here, with what to do; None when one can."""
    if shutil.which("bwrap") is None:
        return f"grading's sandbox needs Linux and bubblewrap (bwrap), which this machine lacks: {INSTALL}"
    trial = subprocess.run(["bwrap", *_namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
                            "--", "true"], capture_output=True, text=True, timeout=30)
    if trial.returncode != 0:
        return (f"bubblewrap cannot make a sandbox here ({trial.stderr.strip()[:300]}): it needs user namespaces "
                "(Debian: sysctl kernel.unprivileged_userns_clone=1; Ubuntu 24.04: an AppArmor profile), or root")
    return None


def _namespaces() -> list[str]:
    return ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--as-pid-1"]


def _binds() -> list[str]:
    """Read-only: /usr and its top-level links, a few files of /etc, the Python's resolved prefixes (and a
    venv's site-packages a .pth file adds), SHARED."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += [a for etc in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "fonts", "alternatives", "localtime",
                           "mime.types", "ssl/openssl.cnf") for a in ("--ro-bind-try", f"/etc/{etc}", f"/etc/{etc}")]
    bound = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(python()).parent.parent} - {Path("/usr")}
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if path.name == "site-packages" and (path.parents[2] / "pyvenv.cfg").is_file() \
                and not any(b == path or b in path.parents for b in bound | {Path("/usr")}):
            bound.add(path)
    args += [a for prefix in sorted(bound) for a in ("--ro-bind", str(prefix), str(prefix))]
    return args + [a for part in SHARED if (ROOT / part).exists() for a in ("--ro-bind", *[str(ROOT / part)] * 2)]


def environment(home: Path, cpus: float) -> dict[str, str]:
    """The only variables the command gets: its own home, the collection on its path, a thread a core."""
    threads = str(max(1, int(cpus)))
    return {"HOME": str(home), "USER": "learner", "LOGNAME": "learner", "PATH": f"{Path(python()).parent}:/usr/bin",
            "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
            "TMPDIR": "/tmp", "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}    # Jupyter's folders: in HOME


def bwrap_argv(argv: list[str], files: Path, limits: RunLimits) -> list[str]:
    home = INSIDE / "home"
    (files / "passwd").write_text(f"learner:x:{NOBODY}:{NOBODY}:learner:{INSIDE}:/bin/false\n")
    (files / "group").write_text(f"learner:x:{NOBODY}:\n")
    (files / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
    size = ["--size", str(limits.disk)]
    return ["bwrap", *_namespaces(), "--disable-userns", "--cap-drop", "ALL", "--uid", str(NOBODY),
            "--gid", str(NOBODY), "--hostname", "sandbox", "--clearenv",
            *[a for k, v in environment(home, limits.cpus).items() for a in ("--setenv", k, v)],
            *size, "--tmpfs", "/tmp", *size, "--tmpfs", str(INSIDE),
            *_binds(), *[a for n in ("passwd", "group", "hosts") for a in ("--ro-bind", files / n, f"/etc/{n}")],
            "--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
            "--dir", str(home), "--dir", str(INSIDE / "work"), "--chdir", str(INSIDE / "work"), "--", *argv]


def _prlimit(limits: RunLimits, held: list[str]) -> tuple[list[str], list[str]]:
    """prlimit's command line; memory and tasks where no cgroup holds them, with these weaker bounds in words."""
    args = [f"--cpu={int(limits.wall * limits.cpus) + 60}", f"--fsize={limits.disk}", "--nofile=4096", "--core=0"]
    said = []
    if "memory" not in held:
        args.append(f"--as={limits.memory}")
        said.append(f"memory: no cgroup, so prlimit bounds each process's address space to "
                    f"{limits.memory // 2 ** 20} MB (not their sum)")
    if "pids" not in held:
        already = sum(_tasks(p) for p in Path("/proc").iterdir())
        args.append(f"--nproc={already + limits.tasks}")
        said.append(f"tasks: no cgroup, so prlimit bounds this user's tasks to {limits.tasks} more than the "
                    f"{already} it runs" + (" (root is exempt: nothing bounds them)" if os.getuid() == 0 else ""))
    return ["prlimit", *args, "--"], said


def _tasks(proc: Path) -> int:
    try:
        return len(os.listdir(proc / "task")) if proc.name.isdigit() and proc.stat().st_uid == os.getuid() else 0
    except OSError:
        return 0


# Puts the shell into each cgroup named before "--", then becomes the command after it.
_ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def run(argv: list[str], stdin: bytes, limits: RunLimits = RunLimits(), *, unisolated: bool = False,
        cgroups_root: Path = cgroups.CGROUPS) -> Outcome:
    """Run `argv` in a sandbox (or, `unisolated`, a process group with its own home), fed `stdin`."""
    limited = cgroups.Limits(limits.memory, limits.cpus, limits.tasks)
    group = None if unisolated else cgroups.Group((f"grade-{uuid.uuid4().hex[:12]}",), limited, cgroups_root)
    weaker = []
    with tempfile.TemporaryDirectory(prefix="grade-sandbox-") as files:
        if unisolated:
            home = Path(files) / "home"
            home.mkdir()
            command, env, cwd = argv, environment(home, limits.cpus), home
        else:
            prlimit, weaker = _prlimit(limits, group.enforced)
            command = ["/bin/sh", "-c", _ENTER, "sh", *group.task_files(), "--", *prlimit,
                       *bwrap_argv(argv, Path(files), limits)]
            env, cwd = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, Path(files)
        streams = {name: open(Path(files) / name, "w+b") for name in ("in", "out", "err")}    # noqa: SIM115
        streams["in"].write(stdin)
        streams["in"].seek(0)
        process = subprocess.Popen(command, stdin=streams["in"], stdout=streams["out"], stderr=streams["err"],
                                   env=env, cwd=cwd, start_new_session=True)
        stopped, deadline = "", time.monotonic() + limits.wall
        while process.poll() is None:
            if time.monotonic() > deadline:
                stopped = f"killed at the wall-clock limit of {limits.wall:g} s"
            elif os.fstat(streams["out"].fileno()).st_size > OUTPUT_CAP:
                stopped = f"killed: it wrote more than {OUTPUT_CAP // 2 ** 20} MB of output"
            if stopped:
                _kill_group(process)
                break
            time.sleep(0.1)
        process.wait()
        leftovers = group.remove() if group else _kill_group(process)
        streams["out"].seek(0)
        streams["err"].seek(max(0, os.fstat(streams["err"].fileno()).st_size - ERRORS_CAP))
        found = streams["out"].read(OUTPUT_CAP + 1), streams["err"].read(ERRORS_CAP).decode(errors="replace")
        for stream in streams.values():
            stream.close()
        return Outcome(None if stopped else process.returncode, *found, stopped, leftovers, tuple(weaker))


def _kill_group(process: subprocess.Popen) -> list[int]:
    """SIGKILL the process group this run started; [its id] when it was still there."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
        return [process.pid] if process.poll() is None else []
    except ProcessLookupError:
        return []
