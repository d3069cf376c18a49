"""What classroom/load.py measures of a learner on the class hub: their server's
process tree (from the hub's record of its pid), its memory (RSS, and PSS,
which counts pages shared between processes once), its CPU time, and the
idle class's CPU use."""

import contextlib
import pwd
import time

import psutil

from classroom import hub_users

GB = 1e9
IDLE_SECONDS = 10          # how long the idle class's CPU is measured


def tree(hub, name):
    """A learner's server process and everything it started (kernels): from
    the hub's record of its pid with the tools' token, else (a running hub
    on this machine) the processes of the learner's Unix user, oldest first."""
    if getattr(hub, "token", None):
        server = psutil.Process(hub.api(f"/users/{name}")["servers"][""]["state"]["pid"])
        return [server, *server.children(recursive=True)]
    try:
        uid = pwd.getpwnam(hub_users.unix_name(name, hub.prefix)).pw_uid
    except KeyError:
        return []
    found = []
    for pid in hub_users.user_processes(uid):
        with contextlib.suppress(psutil.NoSuchProcess):
            found.append(psutil.Process(pid))
    return sorted(found, key=lambda p: p.create_time())


def cpu_seconds(processes):
    """CPU seconds used by these processes and their ended children."""
    total = 0.0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += sum(process.cpu_times()[:4])
    return total


def memory(hub, name):
    """(RSS, PSS) in bytes of a learner's server and everything it started."""
    rss = pss = 0
    for process in tree(hub, name):
        try:
            info = process.memory_full_info()
        except psutil.NoSuchProcess:
            continue
        rss, pss = rss + info.rss, pss + info.pss
    return rss, pss


def kernel_rss(hub, name, kernel_id):
    """RSS in bytes of the learner's kernel with this id, or nan when gone."""
    for process in tree(hub, name)[1:]:
        with contextlib.suppress(psutil.NoSuchProcess):
            if any(kernel_id in part for part in process.cmdline()):
                return process.memory_info().rss
    return float("nan")


def gone(hub, name, kernel_id, within=10.0):
    """Wait (bounded) until the kernel's process has exited."""
    deadline = time.monotonic() + within
    while kernel_rss(hub, name, kernel_id) == kernel_rss(hub, name, kernel_id) and time.monotonic() < deadline:
        time.sleep(0.2)


def idle_cpu(hub, names, seconds=IDLE_SECONDS):
    """Percent of one core used by the learners' servers and kernels while
    nobody does anything."""
    processes = []
    for name in names:
        with contextlib.suppress(Exception):      # a learner whose server failed has none
            processes += tree(hub, name)
    for p in processes:
        p.cpu_percent()
    time.sleep(seconds)
    total = 0.0
    for p in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += p.cpu_percent()
    return total
