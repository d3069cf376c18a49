"""`make hub`: JupyterHub for a class on one machine (hub/jupyterhub_config.py),
on 127.0.0.1 unless told otherwise, with configurable-http-proxy from npm.

The class password (HUB_PASSWORD, else kept, else made up) and the teacher's
admin password are kept in the hub's state folder, which only root reads.
Ctrl-C, a crash or SIGTERM stop the hub only: the proxy (kept with its ports,
whatever a restart asks) and every learner's server run on, and the next
`make hub` takes them back; `--stop-class` ends them all, `--remove-users`
then removes the learners' Unix users (make load ends its own class so too)."""

import argparse
import contextlib
import fcntl
import hashlib
import json
import logging.handlers
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

import psutil

from classroom import cgroups, deploy, hub_users

ROOT = Path(__file__).resolve().parents[1]
HUB = ROOT / "classroom" / "hub"
CONFIG = HUB / "jupyterhub_config.py"
PROXY_FOLDER = ROOT / "build" / "hub" / "proxy"
# The hub's folder (state, logs) and the class's homes (out of git, and out of build/, which
# make clean removes); a second class from the same checkout names its own (classroom/README.md).
BUILD = Path(os.environ.get("HUB_DIR") or ROOT / "build" / "hub").absolute()
LEARNERS = Path(os.environ.get("HUB_LEARNERS") or ROOT / "hub-learners").absolute()
NODE_HELP = "the hub's proxy needs Node.js and npm (Debian: sudo apt-get install nodejs npm)"
READY_WITHIN = 60          # seconds for the hub and its proxy to answer
LOG_BYTES = 20 * 2 ** 20   # hub.log is rotated to hub.log.1 (then .2, .3) past this size
PASSWORD_LENGTH = 8        # JupyterHub's own minimum for a shared password
ADMIN_PASSWORD_LENGTH = 32  # and for its admin password (SharedPasswordAuthenticator.admin_password)
UNENCRYPTED = ("WARNING: plain HTTP on a network: the class password and every notebook cross it unencrypted. "
               "Put TLS in front (HUB_SSL_CERT= and HUB_SSL_KEY=, or a reverse proxy: classroom/README.md).")


def proxy(folder=PROXY_FOLDER):
    """The configurable-http-proxy program, installed with `npm ci` from hub/package*.json
    when missing (one install at a time)."""
    pin = json.loads((HUB / "package.json").read_text())["dependencies"]["configurable-http-proxy"]
    installed = folder / "node_modules" / "configurable-http-proxy" / "package.json"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".installing", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.exists() or json.loads(installed.read_text())["version"] != pin:
            if not shutil.which("npm") or not shutil.which("node"):
                raise RuntimeError(NODE_HELP)
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(HUB / name, folder / name)
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(folder)],
                           check=True, timeout=600, stdout=subprocess.DEVNULL)
    return folder / "node_modules" / ".bin" / "configurable-http-proxy"


def given_password(admin=False, class_password=None):
    """HUB_PASSWORD (the teacher's: HUB_ADMIN_PASSWORD), None when unset; ValueError says in one line
    what is wrong with it."""
    name, least = ("HUB_ADMIN_PASSWORD", ADMIN_PASSWORD_LENGTH) if admin else ("HUB_PASSWORD", PASSWORD_LENGTH)
    password = os.environ.get(name)
    if password and len(password) < least:
        raise ValueError(f"{name} is {len(password)} characters long; the {'admin' if admin else 'class'} password "
                         f"needs at least {least}")
    if password and (password != password.strip() or not password.isprintable()):
        raise ValueError(f"{name} has spaces at its ends or characters that cannot be typed; choose another")
    if password and password == class_password:
        raise ValueError(f"{name} is the class password; the teacher's must be another")
    return password or None


def kept_secret(path, make, given=None):
    """The secret kept in `path` (root's alone, in a folder of root's alone): `given` when
    there is one, else the one kept, else `make()`."""
    if given or not path.exists() or not path.read_text().strip():
        path.write_text((given or make()) + "\n")
    path.chmod(0o600)
    return path.read_text().strip()


def addresses(ip):
    """The addresses learners type: `ip`, or for 0.0.0.0 this machine's own and its name."""
    if ip not in ("0.0.0.0", ""):
        return [ip]
    found = [a.address for links in psutil.net_if_addrs().values() for a in links
             if a.family == socket.AF_INET and not a.address.startswith("127.")]
    return [*found, socket.getfqdn()]


def why(returncode, log):
    if returncode < 0:
        return f"it was killed by {signal.Signals(-returncode).name}"
    if returncode == 0:
        return "it was stopped (SIGTERM or Ctrl-C)"
    errors = [line for line in Path(log).read_text(errors="replace").splitlines()[-200:]
              if line.startswith(("[E ", "[C ")) or "Error" in line]
    return f"it exited with status {returncode}" + (f": {errors[-1].strip()[:300]}" if errors else "")


def answering(url, process, log, timeout=READY_WITHIN):
    """Return once the hub at `url` answers /hub/health; RuntimeError saying why (from `log`) when
    `process`, the hub's or `make hub`'s, ends first or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyterhub stopped: {why(process.returncode, log)}; see {log}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/hub/health", timeout=5) as reply:
            if reply.status == 200:
                return
        time.sleep(0.3)
    raise RuntimeError(f"jupyterhub did not answer within {timeout} s; see {log}")


def take_ctrl_c():
    """SIGTERM as Ctrl-C; and Ctrl-C itself, which a class started in the background (make hub &) inherits as
    ignored: JupyterHub stops the culler and a learner's server with SIGINT first, and waited 10 s on each."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.default_int_handler)


def cgroup_name(state):
    """The cgroup folder of a class's learners: one per hub folder, the same after a crash."""
    return f"class-hub-{hashlib.sha256(str(Path(state).resolve()).encode()).hexdigest()[:10]}"


class Hub:
    """The class's hub in the folder `state`: `start()` starts it (and the proxy, unless
    one of the class runs), `stop()` stops the hub alone; the class runs on."""

    def __init__(self, state, learners, ports, ip="127.0.0.1", admin=None):
        self.state, self.learners, self.ports, self.ip, self.admin = Path(state), Path(learners), ports, ip, admin
        self.url = f"http://127.0.0.1:{self.ports['HUB_PORT']}"
        self.secrets = self.state / "state"
        self.cgroup = cgroup_name(self.state)
        self.process = None
        self.secrets.mkdir(parents=True, exist_ok=True)
        self.secrets.chmod(0o700)
        self.password = kept_secret(self.secrets / "class-password", lambda: secrets.token_urlsafe(12),
                                    given_password())
        self.proxy_token = kept_secret(self.secrets / "proxy-token", lambda: secrets.token_hex(32))
        named = self.secrets / "admin-name"       # the teacher named once stays the admin across restarts
        self.admin = (kept_secret(named, str, admin) or None) if admin or named.exists() else None
        self.admin_password = self.admin and kept_secret(self.secrets / "admin-password",
                                                         lambda: secrets.token_urlsafe(ADMIN_PASSWORD_LENGTH),
                                                         given_password(admin=True, class_password=self.password))
        self.learners.mkdir(parents=True, exist_ok=True)
        self.learners.chmod(0o711)         # a learner reaches their own home, lists no one else's

    def env(self):
        secret = ("HUB_PASSWORD", "HUB_ADMIN_PASSWORD", "HUB_ADMIN", "CONFIGPROXY_AUTH_TOKEN")
        keep = {k: v for k, v in os.environ.items() if k not in secret}
        return {**keep, **{k: str(v) for k, v in self.ports.items()},
                "HUB_STATE": str(self.secrets), "HUB_LEARNERS": str(self.learners), "HUB_IP": self.ip,
                "HUB_CGROUP": self.cgroup, **({"HUB_ADMIN": self.admin} if self.admin else {})}

    def _open_log(self, name):
        log = self.state / name
        if log.exists() and log.stat().st_size > LOG_BYTES:       # to .1, and .1 to .2 ...
            logging.handlers.RotatingFileHandler(log, backupCount=3, delay=True).doRollover()
        handle = open(log, "a")     # noqa: SIM115 (closed by the caller once the process has it); in BUILD, root's alone
        handle.write(f"\n----- {datetime.now().isoformat(timespec='seconds')}: started by classroom/hub.py "
                     f"-----\n")
        handle.flush()
        return handle

    def running_proxy(self):
        """(ports, address) of the class's proxy kept from an earlier run, or None."""
        with contextlib.suppress(OSError, ValueError, psutil.Error):
            line = psutil.Process(int((self.secrets / "proxy.pid").read_text())).cmdline()
            if any("configurable-http-proxy" in part for part in line):
                given = dict(zip(line, line[1:], strict=False))
                return {"HUB_PORT": int(given["--port"]), "HUB_PROXY_API_PORT": int(given["--api-port"]),
                        "HUB_API_PORT": urllib.parse.urlsplit(given["--error-target"]).port}, given["--ip"]
        return None

    def start_proxy(self):
        """The proxy kept from an earlier run, with its own ports (said when they are not those
        asked, so the learners' open pages keep working), else a new one."""
        running = self.running_proxy()
        if running is not None:
            ports, ip = running
            asked = [f"{k}={v}" for k, v in self.ports.items() if ports[k] != v] + [f"IP={self.ip}"] * (ip != self.ip)
            if asked:
                print(f"The class's proxy is running on {ip}:{ports['HUB_PORT']} (HUB_PROXY_API_PORT="
                      f"{ports['HUB_PROXY_API_PORT']}, HUB_API_PORT={ports['HUB_API_PORT']}): it is kept, with its "
                      f"ports, so the learners' open pages keep working; {', '.join(asked)} is not used. To move the "
                      "class: make hub STOP=1 (the learners' servers stop, their notebooks stay), then make hub with "
                      "the new settings.", flush=True)
            self.ports.update(ports)
            self.ip, self.url = ip, f"http://127.0.0.1:{ports['HUB_PORT']}"
            return
        want = ["--port", str(self.ports["HUB_PORT"]), "--api-port", str(self.ports["HUB_PROXY_API_PORT"])]
        command = [str(proxy()), "--ip", self.ip, *want, "--api-ip", "127.0.0.1",
                   "--error-target", f"http://127.0.0.1:{self.ports['HUB_API_PORT']}/hub/error"]
        if os.environ.get("HUB_SSL_CERT"):
            command += ["--ssl-cert", os.environ["HUB_SSL_CERT"], "--ssl-key", os.environ["HUB_SSL_KEY"]]
        with self._open_log("proxy.log") as log:
            started = subprocess.Popen(command, env={**os.environ, "CONFIGPROXY_AUTH_TOKEN": self.proxy_token},
                                       stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        (self.secrets / "proxy.pid").write_text(str(started.pid))

    def start(self):
        self.start_proxy()
        command = [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)]
        with self._open_log("hub.log") as log:
            self.process = subprocess.Popen(command, cwd=self.secrets, env=self.env(), stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        try:
            answering(self.url, self.process, self.state / "hub.log")
        except BaseException:       # a hub that did not come up (or was told to stop meanwhile): the class runs on
            self.stop()
            raise

    def stop(self, grace=30):
        """Stop the hub (SIGTERM, then SIGKILL); the learners' servers and the proxy run on."""
        if self.process is not None and self.process.poll() is None:
            hub_users.kill_pids([self.process.pid], grace=grace)
            self.process.wait(timeout=10)


def stop_class(hub):
    """Stop the hub, the proxy and every learner's process (by user, folder and
    cgroup: a class with no cgroup stops too); returns the ids ended."""
    ended = []
    for pid_file, program in ((hub.secrets / "jupyterhub.pid", "jupyterhub"),
                              (hub.secrets / "proxy.pid", "configurable-http-proxy")):
        with contextlib.suppress(OSError, ValueError, psutil.Error):
            process = psutil.Process(int(pid_file.read_text()))
            if any(program in part for part in process.cmdline()):      # not a process that took a dead one's id
                ended += hub_users.kill_pids([process.pid], grace=15)
        pid_file.unlink(missing_ok=True)
    return sorted({*ended, *hub_users.end_class(hub.learners), *cgroups.remove_tree(hub.cgroup)})


def banner(hub, ip, isolation):
    limit = os.environ.get("HUB_MEM_LIMIT") or f"{deploy.memory_limit_gb()}G"
    cap = deploy.server_cap(psutil.virtual_memory().total / 1e9, deploy.gigabytes(limit))
    scheme = "https" if os.environ.get("HUB_SSL_CERT") else "http"
    where = ", ".join(f"{scheme}://{a}:{hub.ports['HUB_PORT']}" for a in addresses(ip))
    lines = [f"JupyterHub for the class: learners open {where}",
             f"Learners log in with any name and the class password: {hub.password} "
             f"(kept in {hub.secrets / 'class-password'}; HUB_PASSWORD=... make hub changes it)",
             *([f"The teacher's admin page (who is logged in, stop or start one learner's server): "
                f"{scheme}://{addresses(ip)[0]}:{hub.ports['HUB_PORT']}/hub/admin: log in as {hub.admin} with the "
                f"admin password {hub.admin_password} (kept in {hub.secrets / 'admin-password'}; "
                "HUB_ADMIN_PASSWORD=... changes it)"] if hub.admin else []),
             f"Their notebooks: {hub.learners}/<name>/my-notebooks. The hub's log: {hub.state / 'hub.log'}.",
             f"At most {cap} learners at a time, {limit} of memory each (MEM_LIMIT=... make hub to change).",
             "Each learner runs as a Unix user of their own (hub-<name>), sees only their own processes, and has "
             f"their own /tmp, /var/tmp and /dev/shm; {limits_line(hub)}\n{NOT_ISOLATED}" if isolation is None else
             f"WARNING: no isolation between learners ({isolation}): every server runs as "
             f"{pwd.getpwuid(os.geteuid()).pw_name}, and a learner's code can read and change the others' files and "
             "the hub's secrets.",
             "Ctrl-C stops the hub only: the learners' servers keep running and the next make hub takes them back; "
             "make hub STOP=1 stops the class."]
    if ip not in ("127.0.0.1", "localhost", "::1") and scheme == "http":
        lines.append(UNENCRYPTED)
    return "\n".join(lines)


NOT_ISOLATED = ("Not isolated (classroom/README.md, \"What a learner can reach\"): the network (a learner's code "
                "can open connections, to other learners' servers too, which refuse them without that learner's "
                "token), and one web origin for every learner's pages (tell learners not to open a classmate's links).")


def limits_line(hub):
    """What enforces each learner's limits here, read from a trial cgroup."""
    trial = cgroups.Group((hub.cgroup, "trial"), cgroups.Limits(2 ** 30))
    trial.remove()
    if trial.enforced:
        return f"their memory, CPU and tasks limited by a cgroup each ({', '.join(trial.enforced)})."
    return ("no cgroup could be made, so their memory is limited per process and their tasks per user "
            "(resource limits), and their CPU not at all.")


UNISOLATED_HELP = ("make hub refuses to start a class whose learners could read each other's work. Fix the cause "
                   "above, or, for a class of one or of learners you trust, start it without isolation by name: "
                   "make hub UNISOLATED=1")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m classroom.hub", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--ip", default="127.0.0.1", help="0.0.0.0 to serve a room (put TLS in front first)")
    parser.add_argument("--stop-class", action="store_true", help="stop the hub, every learner's server, the proxy")
    parser.add_argument("--unisolated", action="store_true",
                        help="run every learner's server as this user, with no isolation (make hub UNISOLATED=1)")
    parser.add_argument("--admin", metavar="NAME", help="the teacher's name: a JupyterHub admin (make hub ADMIN=NAME)")
    parser.add_argument("--remove-users", action="store_true", help="after a course: --stop-class, then remove "
                        "the learners' Unix users; their notebooks stay (make hub FORGET=1)")
    args = parser.parse_args(argv)
    admin = args.admin.strip().lower() if args.admin else None
    try:        # a port that is not a number, or a password refused, in one line
        ports = {"HUB_PORT": args.port}
        for name, default in (("HUB_API_PORT", "8081"), ("HUB_PROXY_API_PORT", "8001")):
            given = os.environ.get(name) or default
            if not given.isdigit():
                raise ValueError(f"{name} must be a port number, such as {default} (it is {given!r})")
            ports[name] = int(given)
        hub = Hub(BUILD, LEARNERS, ports, ip=args.ip, admin=admin)
    except ValueError as error:
        print(f"make hub: {error}.", file=sys.stderr)
        return 2
    BUILD.chmod(0o700)
    if args.stop_class or args.remove_users:
        uids, ended = hub_users.class_uids(hub.learners), stop_class(hub)
        removed = hub_users.remove_users(lambda entry: entry.pw_uid in uids) if args.remove_users else []
        left = hub_users.class_processes(hub.learners)        # a removed user has none: userdel refuses one that has
        print(f"the class is stopped: the hub, the proxy and every learner's server ({len(ended)} processes ended)"
              f"{', and their Unix users are removed: ' + ', '.join(removed) if removed else ''}; their notebooks "
              f"stay in {hub.learners}")
        if left:
            print(f"make hub: {len(left)} processes of the class are still running: {left}", file=sys.stderr)
        return 1 if left else 0
    isolation = hub_users.why_not_isolated(hub_users.class_paths(hub.learners))
    if isolation is not None and not args.unisolated:
        print(f"make hub: no isolation between learners here: {isolation}\n{UNISOLATED_HELP}", file=sys.stderr)
        return 2
    os.environ["HUB_ISOLATE"] = "0" if isolation else "1"     # an inherited HUB_ISOLATE=0 never runs under the banner
    take_ctrl_c()
    try:
        hub.start()
        print(banner(hub, hub.ip, isolation), flush=True)
        hub.process.wait()
    except RuntimeError as error:
        print(f"make hub: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopping the hub; the learners' servers keep running (make hub STOP=1 stops them) ...", flush=True)
        hub.stop()
        return 0
    print(f"make hub: the hub stopped: {why(hub.process.returncode, hub.state / 'hub.log')}. The learners' "
          "servers and the proxy keep running; make hub starts it again and takes them back.", file=sys.stderr)
    return 0 if hub.process.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
