"""What hub/jupyterhub_config.py plugs into JupyterHub for `make hub`:

- `ClassSpawner`: each learner's server as a local process under a Unix user
  of their own (classroom/hub_users.py: made on their first start, a
  home only they open, their own /proc view, /tmp and cgroup with the
  memory, CPU and task limits), never as root. Where the machine cannot
  isolate (not root, no mount namespace) it runs as the teacher's own user,
  as JupyterHub's SimpleLocalProcessSpawner does, and `make hub` says so.
- `ClassPassword`: the shared class password, with failed logins limited
  per learner name (FAILED_LOGINS in WINDOW seconds, then 429 and how long
  to wait) and per client address (enough for a class behind one address),
  the address believed only from the class's own proxy (by the uid that
  owns the connection's other end). A browser that has logged in under a
  name before carries a cookie the hub signed then, and its logins under
  that name are limited per name and browser, never by the address, so no
  one behind the same address can lock a returning learner out.

Both read their settings from the hub's config (hub/jupyterhub_config.py)."""

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import os
import pwd
import secrets
import shutil
import sys
import time
from pathlib import Path

from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
from jupyterhub.spawner import LocalProcessSpawner
from tornado import web
from traitlets import Bool, Integer, List, Unicode

from classroom import cgroups, hub_users
from tools.runtime import lab

FAILED_LOGINS = 5          # wrong passwords allowed for one learner name ...
WINDOW = 60                # ... in this many seconds
DEVICE_COOKIE = "class-hub-learner"     # signed by the hub: this browser logged in under this name
DEVICE_DAYS = 120          # how long a browser is remembered (a term)


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
        return cgroups.Limits(int(self.mem_limit or 0) or 2 ** 62, float(self.cpu_limit or os.cpu_count() or 1),
                              self.tasks_limit)

    def group(self, limits=None):
        return hub_users.learner_group(self.cgroup_parent, self.unix, limits)

    async def start(self):
        lab.install_settings()     # as root, so the learner's set-up step writes nothing into the environment
        self.home.mkdir(parents=True, exist_ok=True)
        if self.isolate:
            entry = await asyncio.to_thread(hub_users.ensure_user, self.unix, self.home)
            await asyncio.to_thread(hub_users.give_back, self.home, entry)     # a learner back after FORGET=1
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


def _endpoint(field):
    """(address, port) of an entry of /proc/net/tcp or tcp6 ("0100007F:1F90"),
    an IPv4-mapped IPv6 address as its IPv4 one."""
    address, port = field.rsplit(":", 1)
    raw = bytes.fromhex(address)
    if sys.byteorder == "little":          # the kernel writes each 32-bit word in host order
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(raw)
    return (ip.ipv4_mapped or ip) if ip.version == 6 else ip, int(port, 16)


def _address(host, port):
    ip = ipaddress.ip_address(host.split("%")[0])
    return (ip.ipv4_mapped or ip) if ip.version == 6 else ip, port


ESTABLISHED = "01"


def socket_owner(peer, mine, tables=("/proc/net/tcp", "/proc/net/tcp6")):
    """The uid owning the socket at the other end of a live connection
    whose ends are `peer` and `mine` ((host, port, ...) each): the entry of
    the kernel's socket tables whose own end is `peer` and far end is
    `mine`, exactly, and ESTABLISHED (a TIME_WAIT or closing entry on the
    same ports belongs to no one now); None where there is none."""
    want = (_address(*peer[:2]), _address(*mine[:2]))
    for table in tables:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            try:
                ends = (_endpoint(fields[1]), _endpoint(fields[2])) if len(fields) > 7 else None
                if fields[3:4] == [ESTABLISHED] and ends == want:
                    return int(fields[7])
            except ValueError:
                continue
    return None


def peer_uid(request):
    """The uid of the process that opened this request's connection (it came over loopback)."""
    try:
        sock = request.connection.stream.socket
        return socket_owner(sock.getpeername(), sock.getsockname())
    except (AttributeError, OSError, ValueError, IndexError):
        return None


def _is_address(text):
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def client_address(request, proxy_uid, trusted=(), owner=peer_uid):
    """The address a login came from. The hub listens on loopback only, so
    every request comes from this machine: from the class's proxy (run as
    `proxy_uid`, the hub's own user), which appends the address it saw to
    X-Forwarded-For, or from anything else on the machine (a learner's
    kernel), which could write any header it likes and so is "local". Only
    for the proxy's connections is the last X-Forwarded-For entry believed,
    or, past proxies the teacher trusts (`trusted`, a reverse proxy in
    front), the first entry from the right that is not one of them.
    X-Real-Ip is never read."""
    if proxy_uid is None or owner(request) != proxy_uid:
        return "local"
    hops = [hop.strip() for line in request.headers.get_list("X-Forwarded-For") for hop in line.split(",")]
    hops = [hop for hop in hops if _is_address(hop)]
    if not hops:
        return "local"
    for hop in reversed(hops):
        if hop not in trusted:
            return hop
    return hops[0]


class ClassPassword(SharedPasswordAuthenticator):
    """The class password, with failed logins limited per address
    (`failed_logins_per_address` a window, enough for a whole class behind
    one address to mistype) and reported per learner name (`failed_logins`).
    A right password is never refused for what others typed under a name
    (no one can lock a classmate out by guessing as them); an address past
    its limit is refused whatever is typed, except from a browser that has
    logged in under that name before (`returning`: its own limit of
    `failed_logins`), so one learner trying many names locks out only
    first logins from that address; no header a client sets chooses the
    address."""

    failed_logins = Integer(FAILED_LOGINS, config=True, help="wrong passwords for one name before it is told to wait")
    failed_logins_per_address = Integer(FAILED_LOGINS * 20, config=True,
                                        help="wrong passwords allowed from one address per window")
    failed_window = Integer(WINDOW, config=True, help="seconds over which failed logins are counted")
    proxy_uid = Integer(os.geteuid(), allow_none=True, config=True,
                        help="the uid the class's proxy runs as: only its X-Forwarded-For is believed")
    trusted_proxies = List(Unicode(), config=True, help="addresses of reverse proxies in front of the class's proxy")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._names = Failures(self.failed_logins, self.failed_window)
        self._addresses = Failures(self.failed_logins_per_address, self.failed_window)
        self._returning = Failures(self.failed_logins, self.failed_window)

    def address(self, handler):
        return client_address(handler.request, self.proxy_uid, self.trusted_proxies)

    def _password_tag(self, name):
        """What ties a browser's cookie to the class password it logged in
        with: a new password (HUB_PASSWORD=...) ends every such cookie."""
        return hmac.new(self.user_password.encode(), name.encode(), hashlib.sha256).hexdigest()[:32]

    def returning(self, handler, name):
        """The browser's own id when it logged in as `name` before, with the
        class password of now (it holds the cookie the hub signed then, with
        its cookie secret); None otherwise."""
        try:
            said = handler.get_secure_cookie(DEVICE_COOKIE, max_age_days=DEVICE_DAYS)
        except (AttributeError, TypeError, ValueError):     # no cookie secret: a handler of no hub
            return None
        who, _, rest = (said or b"").decode("utf-8", "replace").partition("\0")
        browser, _, tag = rest.partition("\0")
        return browser if said and who == name and browser and hmac.compare_digest(tag, self._password_tag(name)) \
            else None

    def remember(self, handler, name):
        """Give this browser the cookie that says it logged in as `name`
        (with an id of its own, and the password's tag)."""
        value = "\0".join((name, secrets.token_hex(8), self._password_tag(name)))
        with contextlib.suppress(AttributeError, TypeError, ValueError):
            handler.set_secure_cookie(DEVICE_COOKIE, value, expires_days=DEVICE_DAYS, httponly=True,
                                      secure=handler.request.protocol == "https", path=handler.hub.base_url)

    async def get_authenticated_user(self, handler, data):
        """JupyterHub's login, with its checks of the name (normalized,
        allowed, not blocked); the browser is remembered only once they passed."""
        user = await super().get_authenticated_user(handler, data)
        if user:
            self.remember(handler, user["name"])
        return user

    async def authenticate(self, handler, data):
        name = self.normalize_username(str((data or {}).get("username", "")))
        address, now = self.address(handler), time.monotonic()
        browser = self.returning(handler, name)
        returning = browser is not None
        # a returning learner's tries are counted per name and browser; anyone else's per address
        counted, key = (self._returning, (name, browser)) if returning else (self._addresses, address)
        wait = counted.wait(key, now)
        if wait:
            self.log.warning("login refused: too many failed logins from %s%s", address,
                             f" by a browser that logged in as {name!r} before" if returning else "")
            raise web.HTTPError(429, f"Too many failed logins from your {'browser' if returning else 'address'}: "
                                     f"wait {wait} s and try again.")
        user = await super().authenticate(handler, data)
        if user:
            self._names.seen.pop(name, None)
            return user
        counted.add(key, now)
        self._names.add(name, now)
        wait = self._names.wait(name, now)
        if wait:
            self.log.warning("%d failed logins for %r (%s)", len(self._names.seen.get(name, ())), name, address)
            raise web.HTTPError(429, f"Too many failed logins for the name {name!r}: check the class password "
                                     f"with your teacher (wait {wait} s before more tries count).")
        return None
