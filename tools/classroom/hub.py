"""`make hub`: JupyterHub for a class on one machine (hub/jupyterhub_config.py),
on 127.0.0.1 unless told otherwise, with configurable-http-proxy from npm
installed into build/hub/proxy/ (hub/package.json pins it).

    python -m tools.classroom.hub [--port 8000] [--ip 127.0.0.1]   run until Ctrl-C
    (a learner's server is started as python -m tools.runtime.singleuser)

Learners log in with any name and the class password (HUB_PASSWORD, made up
and printed when unset). `Hub` runs one for tools/classroom/load.py and the tests:
on free loopback ports, with a state folder of its own, and stopped with
everything it started, which `leftovers` checks."""

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

from tools.loopback import free_port, rest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "hub" / "jupyterhub_config.py"
BUILD = ROOT / "build" / "hub"
LEARNERS = ROOT / "hub-learners"          # the class's homes: out of git, and out of build/ (make clean)
PROXY_BIN = "node_modules/.bin/configurable-http-proxy"
NODE_HELP = "the hub's proxy needs Node.js and npm (Debian: sudo apt-get install nodejs npm)"
READY_WITHIN = 60          # seconds for the hub and its proxy to answer


def proxy(folder=BUILD / "proxy"):
    """The configurable-http-proxy program, installed from hub/package.json
    and hub/package-lock.json into `folder` with `npm ci` when missing."""
    pin = json.loads((ROOT / "hub" / "package.json").read_text())["dependencies"]["configurable-http-proxy"]
    installed = folder / "node_modules" / "configurable-http-proxy" / "package.json"
    if not installed.exists() or json.loads(installed.read_text())["version"] != pin:
        if not shutil.which("npm") or not shutil.which("node"):
            raise RuntimeError(NODE_HELP)
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(ROOT / "hub" / name, folder / name)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(folder)],
                       check=True, timeout=600, stdout=subprocess.DEVNULL)
    return folder / PROXY_BIN


class Hub:
    """A running hub: `with Hub(state) as hub:` starts it on free loopback
    ports and waits until it answers; leaving the block stops it and every
    process it started. `hub.url`, `hub.password`, `hub.token` (a service
    token with admin rights over users and servers, for the tools)."""

    def __init__(self, state, port=None, ip="127.0.0.1", learners=None):
        self.state, self.ip = Path(state), ip
        self.learners = Path(learners) if learners else self.state / "learners"
        self.ports = {"HUB_PORT": port or free_port(), "HUB_API_PORT": free_port(), "HUB_PROXY_API_PORT": free_port()}
        self.url = f"http://127.0.0.1:{self.ports['HUB_PORT']}"
        self.password = os.environ.get("HUB_PASSWORD") or secrets.token_urlsafe(12)
        self.token = secrets.token_hex(32)
        self.process, self.started = None, []

    def env(self):
        return {**os.environ, **{k: str(v) for k, v in self.ports.items()},
                "HUB_STATE": str(self.state / "state"), "HUB_LEARNERS": str(self.learners), "HUB_IP": self.ip,
                "HUB_PASSWORD": self.password,
                "HUB_TOOLS_TOKEN": self.token, "HUB_PROXY": str(proxy()),
                "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(32)}

    def __enter__(self):
        self.state.mkdir(parents=True, exist_ok=True)
        self.log = open(self.state / "hub.log", "w")     # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)], cwd=self.state, env=self.env(),
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def wait_ready(self, timeout=READY_WITHIN):
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyterhub exited with {self.process.returncode}; see {self.state / 'hub.log'}")
            try:
                with urllib.request.urlopen(f"{self.url}/hub/health", timeout=5) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyterhub did not answer within {timeout} s; see {self.state / 'hub.log'}")
            time.sleep(0.3)

    def api(self, path, method="GET"):
        """The hub's REST API with the tools' token."""
        return rest(f"{self.url}/hub/api{path}", self.token, method)

    def processes(self):
        """The hub and everything it started (proxy, culler, servers, kernels)."""
        try:
            hub = psutil.Process(self.process.pid)
            return [hub, *hub.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self, grace=30):
        """SIGTERM to the hub (which stops the learners' servers and the
        proxy), then SIGKILL to any process of its tree still there."""
        if self.process is None:
            return
        self.started = self.processes() or self.started
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        _, alive = psutil.wait_procs([p for p in self.started if p.is_running()], timeout=10)
        for p in alive:
            p.kill()
        psutil.wait_procs(alive, timeout=10)
        self.log.close()

    def leftovers(self):
        """What is still running or listening after `stop`: processes of the
        hub's tree, and listening sockets on the hub's ports."""
        running = [p.pid for p in self.started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        ports = set(self.ports.values())
        listening = [c.laddr.port for c in psutil.net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port in ports]
        return running + listening


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m tools.classroom.hub", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--ip", default="127.0.0.1", help="0.0.0.0 to serve a room (put TLS in front first)")
    args = parser.parse_args(argv)
    hub = Hub(BUILD, args.port, args.ip, LEARNERS)
    with hub:
        print(f"JupyterHub for the class: {hub.url} (listening on {args.ip})\n"
              f"Learners log in with any name and the class password: {hub.password}\n"
              f"Their notebooks: {LEARNERS}/<name>/my-notebooks. The hub's log: {BUILD / 'hub.log'}.\n"
              "Ctrl-C stops the hub and every learner's server.")
        try:
            hub.process.wait()
        except KeyboardInterrupt:
            print("stopping the hub and the learners' servers ...")
    return hub.process.returncode


if __name__ == "__main__":
    sys.exit(main())
