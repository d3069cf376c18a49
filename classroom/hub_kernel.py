"""What every kernel on the class hub runs as it starts (a start-up file in the
learner's IPython profile, written by classroom/singleuser.py): the debugger off
(ipykernel's debugger listens on loopback with no token: anyone could attach),
and `install(ip)`: after the learner's memory cgroup counted a kill, NOTICE on
the first cell the next kernel runs (JupyterLab only says "the kernel died")."""

import contextlib
import os
import sys
from pathlib import Path

CGROUPS = Path("/sys/fs/cgroup")
SEEN = Path.home() / ".cache" / "class-hub" / "memory-kills-seen"
NOTICE = ("Your last kernel was stopped: the notebooks you had running reached your memory limit of {limit} "
          "(your server and all your kernels together). Shut down the kernels of notebooks you are not using "
          "(Kernel > Shut Down Kernel, or the Running tab), then run this notebook from the top; a cell that "
          "makes something big, make it smaller.")


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def memory_folder(cgroups=CGROUPS, own=Path("/proc/self/cgroup")):
    """This process's memory cgroup folder (v1's, else v2's), or None."""
    for _, controllers, path in (line.split(":", 2) for line in _read(own).splitlines()):
        if "memory" in controllers.split(",") or not controllers:       # v1's hierarchies come before v2's 0::
            return cgroups.joinpath(*["memory"][:bool(controllers)], path.lstrip("/"))
    return None


def pending(folder, seen=SEEN):
    """(the notice or None, the kill count to `record` once it is shown: a kernel
    restarted again before a cell ran leaves it to the next), from the cgroup's kills at its
    memory limit (v2's memory.events, v1's memory.oom_control) and the kills already told."""
    events = _read(folder / "memory.events") or _read(folder / "memory.oom_control")
    kills = next((int(value) for key, _, value in (line.partition(" ") for line in events.splitlines())
                  if key == "oom_kill" and value.strip().isdigit()), 0)
    limit = (_read(folder / "memory.max") or _read(folder / "memory.limit_in_bytes")).strip()
    before = _read(seen).strip()
    if not limit.isdigit() or int(limit) >= 2 ** 60 or kills <= (int(before) if before.isdigit() else 0):
        return None, kills            # no limit (v2's "max", v1's near 2 ** 63), or nothing new
    return NOTICE.format(limit=f"{int(limit) / 1e9:.1f} GB"), kills


def install(ip, folder=None, seen=None):
    """In a starting kernel (`ip`, its shell): the notice, if any, above the first cell's output."""
    folder, seen = folder or memory_folder(), seen or SEEN
    text, kills = pending(folder, seen) if folder else (None, 0)
    if not text:
        return

    def once(*_):
        print(text, file=sys.stderr)
        with contextlib.suppress(OSError):
            seen.parent.mkdir(parents=True, exist_ok=True)
            seen.write_text(str(kills))
        ip.events.unregister("pre_run_cell", once)
    ip.events.register("pre_run_cell", once)


STARTUP = """# Written by the class hub's server (classroom/singleuser.py): no debugger (ipykernel
# then neither advertises nor starts one), and the memory limit's notice.
import importlib.util as _spec_util
import ipykernel.debugger as _debugger
_debugger._is_debugpy_available = False
_spec = _spec_util.spec_from_file_location("class_hub_kernel", {path!r})
_start = _spec_util.module_from_spec(_spec)
_spec.loader.exec_module(_start)
_start.install(get_ipython())
del _spec_util, _debugger, _spec, _start
"""


def write_startup(home):
    """The start-up file in the learner's IPython profile (written at each server start)."""
    startup = Path(home) / ".ipython" / "profile_default" / "startup" / "00-class-hub-limits.py"
    startup.parent.mkdir(parents=True, exist_ok=True)
    startup.write_text(STARTUP.format(path=os.path.abspath(__file__)))
