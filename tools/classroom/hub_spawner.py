"""What hub/jupyterhub_config.py plugs into JupyterHub for `make hub`:

- `ClassSpawner`: each learner's server as a local process under a Unix user
  of their own (tools/classroom/hub_users.py: made on their first start, a
  home only they open, their own /proc view, /tmp and cgroup with the
  memory, CPU and task limits), never as root. Where the machine cannot
  isolate (not root, no mount namespace) it runs as the teacher's own user,
  as JupyterHub's SimpleLocalProcessSpawner does, and `make hub` says so.
- `ClassPassword`: the shared class password, with failed logins limited
  per learner name (FAILED_LOGINS in WINDOW seconds, then 429 and how long
  to wait) and per client address (enough for a class behind one address),
  the address taken only from what the class's own proxy vouches for.

Both read their settings from the hub's config (hub/jupyterhub_config.py)."""

import asyncio
import hmac
import os
import pwd
import shutil
import time
from pathlib import Path

from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
from jupyterhub.spawner import LocalProcessSpawner
from tornado import web
from traitlets import Bool, Integer, List, Unicode

from tools.classroom import hub_users
from tools.runtime import lab

FAILED_LOGINS = 5          # wrong passwords allowed for one learner name ...
WINDOW = 60                # ... in this many seconds
PROXY_HEADER = "X-Class-Proxy"    # the class's proxy adds it (tools/classroom/hub.py), with the hub's secret


class ClassSpawner(LocalProcessSpawner):
    learners_dir = Unicode(config=True, help="where each learner's home <name>/ is made")
    isolate = Bool(True, config=True, help="a Unix user, mounts and a cgroup per learner (needs root)")
    cgroup_parent = Unicode("class-hub", config=True, help="the cgroup folder holding one per learner")
    tasks_limit = Integer(1024, config=True, help="processes and threads a learner may run")

    @property
    def home(self):
        return Path(self.learners_dir) / self.user.name

    @property
    def unix(self):
        return hub_users.unix_name(self.user.name) if self.isolate else pwd.getpwuid(os.getuid()).pw_name

    def limits(self):
        return hub_users.Limits(int(self.mem_limit or 0) or 2 ** 62, float(self.cpu_limit or os.cpu_count() or 1),
                                self.tasks_limit)

    def group(self, limits=None):
        return hub_users.Group(self.cgroup_parent, self.unix, limits)

    async def start(self):
        lab.install_settings()     # as root, so the learner's set-up step writes nothing into the environment
        self.home.mkdir(parents=True, exist_ok=True)
        if self.isolate:
            entry = await asyncio.to_thread(hub_users.ensure_user, self.unix, self.home)
            os.chown(self.home, entry.pw_uid, entry.pw_gid)
            self.home.chmod(0o700)
            group = self.group(self.limits())
            self.log.info("%s runs as %s, limits enforced by cgroup: %s", self.user.name, self.unix,
                          ", ".join(group.enforced) or "none (resource limits only)")
        return await super().start()

    def make_preexec_fn(self, name):
        if not self.isolate:
            home = str(self.home)
            return lambda: os.chdir(home)
        return hub_users.preexec(pwd.getpwnam(self.unix), str(self.home), self.group(), self.limits(),
                                 keep=hub_users.class_paths(self.learners_dir))

    def user_env(self, env):
        env.update(USER=self.unix, LOGNAME=self.unix, HOME=str(self.home), SHELL=shutil.which("bash") or "/bin/sh",
                   # torch.compile's caches in the learner's own home, not in a /tmp folder named after them
                   TORCHINDUCTOR_CACHE_DIR=str(self.home / ".cache" / "torchinductor"),
                   TRITON_CACHE_DIR=str(self.home / ".cache" / "triton"))
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
        recent = [t for t in self.seen.get(key, ()) if now - t < self.window]
        if recent:
            self.seen[key] = recent
        else:
            self.seen.pop(key, None)
        return int(self.window - (now - recent[0])) + 1 if len(recent) >= self.limit else 0

    def add(self, key, now):
        self.seen.setdefault(key, []).append(now)
        if len(self.seen) > 10_000:          # forget keys whose failures are all older than the window
            self.seen = {k: v for k, v in self.seen.items() if now - v[-1] < self.window}


def client_address(request, proxy_secret, trusted=()):
    """The address a login came from. Only a request that came through the
    class's own proxy (which adds the header PROXY_HEADER with its secret,
    overwriting any a client sent) carries an address worth believing: the
    last one the proxy appended to X-Forwarded-For, or, past proxies the
    teacher trusts (`trusted`, a reverse proxy in front), the first address
    from the right that is not one of them. X-Real-Ip is never read. Anything
    else came straight to the hub's own port, from this machine: "local"."""
    if not proxy_secret or not hmac.compare_digest(request.headers.get(PROXY_HEADER, ""), proxy_secret):
        return "local"
    hops = [hop.strip() for line in request.headers.get_list("X-Forwarded-For") for hop in line.split(",")]
    hops = [hop for hop in hops if hop]
    if not hops:
        return "local"
    for hop in reversed(hops):
        if hop not in trusted:
            return hop
    return hops[0]


class ClassPassword(SharedPasswordAuthenticator):
    """The class password, with failed logins limited per learner name
    (`failed_logins` a window) and per address (`failed_logins_per_address`,
    enough for a whole class behind one address to mistype): a classmate's
    typos count against their own name, and only a flood of names locks an address."""

    failed_logins = Integer(FAILED_LOGINS, config=True, help="wrong passwords allowed for one name per window")
    failed_logins_per_address = Integer(FAILED_LOGINS * 20, config=True,
                                        help="wrong passwords allowed from one address per window")
    failed_window = Integer(WINDOW, config=True, help="seconds over which failed logins are counted")
    proxy_secret = Unicode("", config=True, help=f"what the class's proxy puts in {PROXY_HEADER}")
    trusted_proxies = List(Unicode(), config=True, help="addresses of reverse proxies in front of the class's proxy")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._names = Failures(self.failed_logins, self.failed_window)
        self._addresses = Failures(self.failed_logins_per_address, self.failed_window)

    async def authenticate(self, handler, data):
        name = self.normalize_username(str((data or {}).get("username", "")))
        address, now = client_address(handler.request, self.proxy_secret, self.trusted_proxies), time.monotonic()
        for failures, key, whose in ((self._names, name, f"for the name {name!r}"),
                                     (self._addresses, address, "from your address")):
            wait = failures.wait(key, now)
            if wait:
                self.log.warning("login refused: too many failed logins %s (%s)", whose, address)
                raise web.HTTPError(429, f"Too many failed logins {whose}: wait {wait} s and try again.")
        user = await super().authenticate(handler, data)
        if not user:
            self._names.add(name, now)
            self._addresses.add(address, now)
        return user
