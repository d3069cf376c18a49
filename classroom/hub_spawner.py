"""What hub/jupyterhub_config.py plugs into JupyterHub for `make hub`:

- `ClassSpawner`: each learner's server as a local process of a Unix user of
  their own, with their own home, /proc view, /tmp and cgroup
  (classroom/hub_users.py); where the machine cannot isolate, as the
  teacher's user, as SimpleLocalProcessSpawner does.
- `ClassPassword`: the class password, with failed logins limited per client
  address (believed only from the class's proxy)."""

import asyncio
import contextlib
import ipaddress
import os
import pwd
import shutil
import socket
import sys
import time
from pathlib import Path

from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from tornado import web
from traitlets import Bool, Integer, List, Unicode

from classroom import cgroups, hub_users
from tools.runtime import lab

FAILED_LOGINS = 5          # wrong passwords allowed for each learner of a class behind one address ...
WINDOW = 60                # ... in this many seconds


class ClassSpawner(LocalProcessSpawner):
    learners_dir = Unicode(config=True, help="where each learner's home <name>/ is made")
    isolate = Bool(True, config=True, help="a Unix user, mounts and a cgroup per learner (needs root)")
    cgroup_parent = Unicode("class-hub", config=True, help="the cgroup folder holding one per learner")

    @property
    def home(self):
        return Path(self.learners_dir) / self.user.name

    @property
    def unix(self):
        return hub_users.unix_name(self.user.name) if self.isolate else pwd.getpwuid(os.getuid()).pw_name

    def limits(self):
        return cgroups.Limits(int(self.mem_limit), float(self.cpu_limit))     # and cgroups' 1024 tasks

    def group(self, limits=None):
        return cgroups.Group((self.cgroup_parent, self.unix), limits)

    async def start(self):
        lab.install_settings()     # as root, so the learner's set-up step writes nothing into the environment
        self.home.mkdir(parents=True, exist_ok=True)
        if self.isolate:
            entry = await asyncio.to_thread(hub_users.ensure_user, self.unix, self.home)
            await asyncio.to_thread(hub_users.give_back, self.home, entry)     # made now, or back after FORGET=1
            self.home.chmod(0o700)
            group = self.group(self.limits())
            self.log.info("%s runs as %s, limits enforced by cgroup: %s", self.user.name, self.unix,
                          ", ".join(group.enforced) or "none (resource limits only)")
        return await super().start()

    def make_preexec_fn(self, name):
        if not self.isolate:
            home = str(self.home)
            return lambda: os.chdir(home)
        return hub_users.preexec(str(self.home), self.group(), self.limits(), set_user_setuid(self.unix),
                                 keep=hub_users.class_paths(self.learners_dir))

    def user_env(self, env):
        env.update(USER=self.unix, LOGNAME=self.unix, HOME=str(self.home), SHELL=shutil.which("bash") or "/bin/sh",
                   # torch.compile's caches in the learner's own home, not in a /tmp folder named after them
                   TORCHINDUCTOR_CACHE_DIR=str(self.home / ".cache" / "torchinductor"),
                   TRITON_CACHE_DIR=str(self.home / ".cache" / "triton"))
        if self.isolate:        # the kernels' sockets and connection files, in the learner's private /tmp
            env.update(JUPYTER_RUNTIME_DIR="/tmp/jupyter-runtime")
        return env

    async def stop(self, now=False):
        await super().stop(now=now)
        if self.isolate:       # a kernel its server left behind (a server killed) goes with it
            left = await asyncio.to_thread(self.group().remove)
            if left:
                self.log.warning("%s: killed %s left in its cgroup", self.user.name, left)


class Failures:
    """Failed logins by key (a name, an address) over the last `window` seconds."""

    def __init__(self, limit, window):
        self.limit, self.window, self.seen = limit, window, {}

    def wait(self, key, now):
        """Seconds until `key` may try again; 0 when it may now."""
        recent = [t for t in self.seen.pop(key, ()) if now - t < self.window]
        if recent:
            self.seen[key] = recent
        return int(self.window - (now - recent[0])) + 1 if len(recent) >= self.limit else 0

    def add(self, key, now):
        self.seen.setdefault(key, []).append(now)
        if len(self.seen) > 10_000:          # forget keys whose failures are all older than the window
            self.seen = {k: v for k, v in self.seen.items() if now - v[-1] < self.window}


def _endpoint(field):
    """(address, port) of a /proc/net/tcp field ("0100007F:1F90": the address's bytes in the machine's order)."""
    address, port = field.split(":")
    return socket.inet_ntoa(int(address, 16).to_bytes(4, sys.byteorder)), int(port, 16)


ESTABLISHED = "01"


def socket_owner(peer, mine, table="/proc/net/tcp"):
    """The uid owning the far end (`peer`) of the live connection `peer`-`mine` to the hub
    (on 127.0.0.1: IPv4): the kernel's ESTABLISHED entry with exactly those ends (a TIME_WAIT
    one on the same ports belongs to no one now); None where there is none. Not psutil's connections:
    they name a process holding the socket, not its owner, and read every process's descriptors."""
    with contextlib.suppress(OSError):
        for fields in map(str.split, Path(table).read_text().splitlines()[1:]):
            if fields[3] == ESTABLISHED and (_endpoint(fields[1]), _endpoint(fields[2])) == (peer[:2], mine[:2]):
                return int(fields[7])
    return None


def peer_uid(request):
    """The uid of the process that opened this request's connection (over loopback)."""
    try:
        sock = request.connection.stream.socket
        return socket_owner(sock.getpeername(), sock.getsockname())
    except (AttributeError, OSError, ValueError, IndexError):
        return None


def _is_address(text):
    with contextlib.suppress(ValueError):
        return bool(ipaddress.ip_address(text))
    return False


def client_address(request, proxy_uid, trusted=(), owner=peer_uid):
    """The address a login came from. The hub listens on loopback: a connection
    opened by the class's proxy (`proxy_uid`) carries the address the proxy
    appended to X-Forwarded-For (past the `trusted` reverse proxies); anything
    else on the machine (a learner's kernel) could write any header and is "local"."""
    if proxy_uid is None or owner(request) != proxy_uid:
        return "local"
    hops = [hop.strip() for line in request.headers.get_list("X-Forwarded-For") for hop in line.split(",")]
    hops = [hop for hop in hops if _is_address(hop)]        # no text of a client's becomes a key or a log line
    return next((hop for hop in reversed(hops) if hop not in trusted), hops[0] if hops else "local")


class ClassPassword(SharedPasswordAuthenticator):
    """The class password; failed logins limited per address (`failed_logins_per_address`
    a window: enough for a whole class behind one address to mistype). A right password
    is refused only from an address past its limit, never for what was typed under its name."""

    failed_logins_per_address = Integer(FAILED_LOGINS * 20, config=True,
                                        help="wrong passwords allowed from one address per window")
    proxy_uid = Integer(os.geteuid(), allow_none=True, config=True,     # make hub starts the proxy as the hub's user
                        help="the uid the class's proxy runs as: only its X-Forwarded-For is believed")
    trusted_proxies = List(Unicode(), config=True, help="addresses of reverse proxies in front of the class's proxy")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._addresses = Failures(self.failed_logins_per_address, WINDOW)

    def address(self, handler):
        return client_address(handler.request, self.proxy_uid, self.trusted_proxies)

    async def authenticate(self, handler, data):
        address, now = self.address(handler), time.monotonic()
        wait = self._addresses.wait(address, now)
        if wait:
            self.log.warning("login refused: too many failed logins from %s", address)
            raise web.HTTPError(429, f"Too many failed logins from your address: wait {wait} s and try again.")
        user = await super().authenticate(handler, data)
        if not user:
            self._addresses.add(address, now)
        return user
