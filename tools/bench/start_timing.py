"""What a process pays before it does anything: the import of nbformat (every
test worker, `make notebooks`, each sandbox `make grade` starts) and a Jupyter
server's start, from its command to its first answer on /api/status (what a
learner waits for after `make lab`, and a hub's learner after logging in).
Each is timed in fresh processes, in turns, the median kept; with
`--blocking MODULE`, in each turn also with MODULE's import refused (as if it
were not installed), so that its share shows side by side in one run.

    .venv/bin/python -m tools.bench.start_timing [--repeats N] [--blocking rfc3987_syntax]

It prints figures and asserts nothing.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
from pathlib import Path

from tools.loopback import free_port, rest

# a sitecustomize-free way to refuse one module: a meta path finder put first by -c code
START_LIMIT = 120.0     # seconds a server may take to answer
BLOCK = ("import sys\nclass _Refuse:\n    def find_spec(self, name, path=None, target=None):\n"
         "        if name.split('.')[0] == {name!r}:\n            raise ImportError(name)\n"
         "sys.meta_path.insert(0, _Refuse())\n")


def _cpu_of(process):
    """User and system CPU-seconds of a process that ended (os.wait4's rusage)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def import_seconds(prefix):
    """(wall, CPU) of a fresh Python importing nbformat."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", prefix + "import nbformat"])
    cpu = _cpu_of(process)
    if process.returncode:
        sys.exit("importing nbformat failed (is the refused module one nbformat cannot do without?)")
    return time.perf_counter() - start, cpu


def server_seconds(prefix):
    """(wall, CPU) from a Jupyter server's command to its first answer on
    /api/status; the CPU is the server's whole life, its stop included."""
    port, token = free_port(), "start-timing"
    with tempfile.TemporaryDirectory() as home:
        code = prefix + "from jupyter_server.serverapp import main\nsys.exit(main())"
        command = [sys.executable, "-c", "import sys\n" + code, f"--ServerApp.port={port}",
                   "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
                   "--no-browser", f"--ServerApp.root_dir={home}", *(["--allow-root"] if os.geteuid() == 0 else [])]
        start = time.perf_counter()
        process = subprocess.Popen(command, env={**os.environ, "HOME": home, "JUPYTER_RUNTIME_DIR": home},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    rest(f"http://127.0.0.1:{port}/api/status", token)
                    break
                except urllib.error.HTTPError as error:
                    sys.exit(f"the server answered {error.code} on /api/status")
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    if process.poll() is not None:
                        sys.exit("the server ended before it answered")
                    if time.perf_counter() - start > START_LIMIT:
                        sys.exit(f"the server did not answer within {START_LIMIT:g} s")
                    time.sleep(0.02)
            wall = time.perf_counter() - start
            process.terminate()
            return wall, _cpu_of(process)
        finally:
            if process.returncode is None:       # stopped early: no server is left behind
                process.kill()
                process.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench.start_timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--blocking", metavar="MODULE", help="also time each with MODULE's import refused")
    args = parser.parse_args(argv)
    kinds = {"as installed": ""}
    if args.blocking:
        kinds[f"{args.blocking} refused"] = BLOCK.format(name=args.blocking)
    measures = {"import nbformat": import_seconds, "a Jupyter server's start": server_seconds}
    found = {(m, k): [] for m in measures for k in kinds}
    for _ in range(args.repeats):
        for measure, run in measures.items():
            for kind, prefix in kinds.items():
                found[measure, kind].append(run(prefix))
    print(f"| what ({Path(sys.executable).parent.parent.name}, median of {args.repeats}) | wall, to the first answer "
          "| CPU, the whole process |")
    print("|---|---:|---:|")
    for (measure, kind), times in found.items():
        wall, cpu = (statistics.median(t[i] for t in times) for i in (0, 1))
        print(f"| {measure}, {kind} | {wall:.2f} s | {cpu:.2f} s |")


if __name__ == "__main__":
    main()
