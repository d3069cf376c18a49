"""What hub/jupyterhub_config.py plugs into JupyterHub for `make hub`:

- `ClassSpawner`: each learner's server as a local process under a Unix user
  of their own (tools/classroom/hub_users.py: made on their first start, a
  home only they open, their own /proc view, /tmp and cgroup with the
  memory, CPU and task limits), never as root. Where the machine cannot
  isolate (not root, no mount namespace) it runs as the teacher's own user,
  as JupyterHub's SimpleLocalProcessSpawner does, and `make hub` says so.
- `ClassPassword`: the shared class password, with failed logins limited
  per client address (FAILED_LOGINS in WINDOW seconds, then 429 and how long
  to wait).

Both read their settings from the hub's config (hub/jupyterhub_config.py)."""

import asyncio
import os
import pwd
import shutil
import time
from pathlib import Path

from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
from jupyterhub.spawner import LocalProcessSpawner
from tornado import web
from traitlets import Bool, Integer, Unicode

from tools.classroom import hub_users
from tools.runtime import lab

FAILED_LOGINS = 5          # wrong passwords allowed from one address ...
WINDOW = 60                # ... in this many seconds


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
        return hub_users.preexec(pwd.getpwnam(self.unix), str(self.home), self.group(), self.limits())

    def user_env(self, env):
        env.update(USER=self.unix, LOGNAME=self.unix, HOME=str(self.home), SHELL=shutil.which("bash") or "/bin/sh")
        return env

    async def stop(self, now=False):
        await super().stop(now=now)
        if self.isolate:       # a kernel its server left behind (a server killed) goes with it
            left = await asyncio.to_thread(self.group().remove)
            if left:
                self.log.warning("%s: killed %s left in its cgroup", self.user.name, left)


class ClassPassword(SharedPasswordAuthenticator):
    failed_logins = Integer(FAILED_LOGINS, config=True, help="wrong passwords allowed from one address per window")
    failed_window = Integer(WINDOW, config=True, help="seconds over which failed logins are counted")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._failures = {}

    async def authenticate(self, handler, data):
        address, now = handler.request.remote_ip, time.monotonic()
        recent = [t for t in self._failures.get(address, []) if now - t < self.failed_window]
        if len(recent) >= self.failed_logins:
            wait = int(self.failed_window - (now - recent[0])) + 1
            self.log.warning("login refused: %d failed logins from %s", len(recent), address)
            raise web.HTTPError(429, f"Too many failed logins from your address: wait {wait} s and try again.")
        user = await super().authenticate(handler, data)
        if not user:
            recent.append(now)
        self._failures[address] = recent
        return user
