# JupyterHub for a class on one machine: `make hub` (classroom/hub.py) runs it.
#
# Each learner logs in with a name and the class password, and gets a Jupyter
# server of their own, started as a local process under a Unix user of their own
# (classroom/hub_spawner.py, hub_users.py: made on the first start, never
# root), in a home folder hub-learners/<name>/ only they can open (kept out of
# git and out of build/, which `make clean` removes), with a view of /proc that
# shows only their own processes, their own /tmp, and a cgroup that enforces
# their memory, CPU and task limits. The home holds their working copy of the
# notebooks, made the way `make lab` makes one (tools/runtime/working_copy.py:
# copied once, trusted, never overwritten), with the learners' JupyterLab
# settings of jupyter/, its kernels culled by jupyter_server after 30 idle minutes
# and JupyterLab autosaving every 30 s (classroom/singleuser.py).
#
# The hub restarts without stopping the class: the learners' servers are kept
# (cleanup_servers off) and taken back by the next hub, the proxy is started and
# kept by classroom/hub.py (it holds the learners' open pages meanwhile),
# and the idle culler ends with the hub that started it.
#
# Everything listens on 127.0.0.1 unless HUB_IP says otherwise. classroom/hub.py
# sets the variables read below; the figures behind each number are measured by
# `make load` (classroom/load.py) and tabled in classroom/README.md.

import os
import sys
from pathlib import Path

import psutil

from classroom import deploy, hub_spawner

c = get_config()  # noqa: F821 (JupyterHub defines get_config for its config file)

ROOT = Path(__file__).resolve().parents[2]
STATE = Path(os.environ.get("HUB_STATE", ROOT / "build" / "hub" / "state"))
LEARNERS = Path(os.environ.get("HUB_LEARNERS", ROOT / "hub-learners"))
IP = os.environ.get("HUB_IP", "127.0.0.1")
LOOPBACK = "127.0.0.1"

# ----- measured figures: classroom/deploy.py holds them (`make load`, classroom/README.md) -----
RESERVED_GB = deploy.RESERVED_GB        # the hub, the proxy and the system itself

# ----- where things are; only root reads the state (the database, the cookie secret, the password) -----
STATE.mkdir(parents=True, exist_ok=True)
STATE.chmod(0o700)


def kept(name, variable):
    """A secret classroom/hub.py keeps in the state folder (else, for a
    config read on its own, the environment's)."""
    path = STATE / name
    return path.read_text().strip() if path.exists() else os.environ.get(variable, "")


c.JupyterHub.bind_url = f"http://{IP}:{os.environ.get('HUB_PORT', '8000')}"
c.JupyterHub.hub_bind_url = f"http://{LOOPBACK}:{os.environ.get('HUB_API_PORT', '8081')}"
c.ConfigurableHTTPProxy.api_url = f"http://{LOOPBACK}:{os.environ.get('HUB_PROXY_API_PORT', '8001')}"
# classroom/hub.py runs the proxy and keeps it across the hub's restarts
c.ConfigurableHTTPProxy.should_start = False
c.ConfigurableHTTPProxy.auth_token = kept("proxy-token", "CONFIGPROXY_AUTH_TOKEN")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = False       # a restarted hub takes the running servers back
c.JupyterHub.cleanup_proxy = False
if os.environ.get("HUB_SSL_CERT"):         # TLS on the hub's own address (classroom/README.md)
    c.JupyterHub.ssl_cert = os.environ["HUB_SSL_CERT"]
    c.JupyterHub.ssl_key = os.environ["HUB_SSL_KEY"]

# ----- who may log in: any name with the class password (a trial), failed logins limited -----
# For a real course put an authenticator of your institution here, for example
# OAuthenticator's GitHubOAuthenticator or GenericOAuthenticator, or LTI from the
# course platform, and list who may log in (classroom/README.md says how).
c.JupyterHub.authenticator_class = hub_spawner.ClassPassword
c.ClassPassword.user_password = kept("class-password", "HUB_PASSWORD")
# Failed logins are counted per address and told per name; the address is the one the class's
# proxy saw, believed only on connections the proxy's own uid opened (this process's: a
# learner's kernel writing X-Forwarded-For to the hub's port counts as "local"; X-Real-Ip is
# never read). A reverse proxy in front: HUB_TRUSTED_PROXIES="10.0.0.2".
c.ClassPassword.proxy_uid = os.geteuid()
c.ClassPassword.trusted_proxies = os.environ.get("HUB_TRUSTED_PROXIES", "").split()
c.Authenticator.allow_all = True
# The teacher (make hub ADMIN=name): JupyterHub's own admin, with JupyterHub's own admin password
# (32 characters or more, never the class password; classroom/hub.py keeps it): /hub/admin lists
# who is logged in and stops or starts one learner's server. Learners are never admins.
if os.environ.get("HUB_ADMIN"):
    c.Authenticator.admin_users = {os.environ["HUB_ADMIN"]}
    c.ClassPassword.admin_password = kept("admin-password", "HUB_ADMIN_PASSWORD")

# ----- each learner's server: a local process, as a Unix user of their own, in its own home -----
c.JupyterHub.spawner_class = hub_spawner.ClassSpawner
c.ClassSpawner.learners_dir = str(LEARNERS)
c.ClassSpawner.isolate = os.environ.get("HUB_ISOLATE", "1") == "1"
c.ClassSpawner.cgroup_parent = os.environ.get("HUB_CGROUP", "class-hub")
c.Spawner.ip = LOOPBACK
# classroom/singleuser.py makes the learner's working copy (my-notebooks/ in their
# home, as `make lab --prepare-only` does) and then runs jupyterhub-singleuser on it.
c.Spawner.cmd = [sys.executable, "-m", "classroom.singleuser"]
c.Spawner.default_url = "/lab/tree/00-index.ipynb"
c.Spawner.environment = {
    "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",   # Graphviz's dot is on it
    "LANG": "C.UTF-8",
}
if os.geteuid() == 0 and not c.ClassSpawner.isolate:    # jupyter_server refuses root without it
    c.Spawner.args = ["--allow-root"]
if c.ClassSpawner.isolate:
    # A kernel's channels as Unix sockets in the learner's private /tmp (JUPYTER_RUNTIME_DIR,
    # hub_spawner.py), not TCP ports on loopback, where any learner could subscribe to another's
    # output: a kernel's messages to its server are not signed against readers.
    c.Spawner.args = ["--KernelManager.transport=ipc"]

# A class that logs in at once starts all its servers at once. A first start costs
# ~7.5 CPU-s (deploy.START_CPU_SECONDS: JupyterLab, and the working copy made), so N
# starts on K cores take about N x 7.5 / K seconds each. With JupyterHub's default
# 30 s, 15 of 20 learners gave up ("server never showed up ... after 30 seconds").
# start_timeout: 180 s (deploy.START_TIMEOUT). The slowest of 20 learners logging in
# within 4 s took 52 s on 2 otherwise idle cores, and 101 s on 2 cores already busy
# with other work (load average 10): 180 s covers both, with 1.8 times the latter.
c.Spawner.start_timeout = deploy.START_TIMEOUT
# http_timeout: the same 180 s. The process is up early; its HTTP port answers only
# once jupyter_server has loaded JupyterLab, the CPU-bound part of the start.
c.Spawner.http_timeout = deploy.START_TIMEOUT
# At most this many starts at a time (the rest are asked to retry): each start must
# end within half of start_timeout, 90 s, on this machine's cores:
# N x 7.5 / K <= 90 gives N <= 12 K (24 on 2 cores), deploy.concurrent_starts.
c.JupyterHub.concurrent_spawn_limit = deploy.concurrent_starts(psutil.cpu_count() or 1)
# Per-learner memory and CPU, enforced by each learner's cgroup (classroom/cgroups.py):
# deploy.memory_limit_gb(), a server and three notebooks, 0.15 + 3 x 0.45 = 1.5 GB
# unless HUB_MEM_LIMIT (make hub MEM_LIMIT=1.1G) says otherwise; past it the kernel
# kills the learner's largest process (a kernel) and JupyterLab restarts it. One core:
# a Run All or a start is one Python thread.
MEM_LIMIT_GB = deploy.gigabytes(os.environ.get("HUB_MEM_LIMIT") or f"{deploy.memory_limit_gb()}G")
c.Spawner.mem_limit = int(MEM_LIMIT_GB * 1e9)
c.Spawner.cpu_limit = 1.0
# At most this many servers running: every learner may reach their enforced limit at
# once and the machine still keeps RESERVED_GB (24 GB: (24 - 2) / 1.5 = 14 learners;
# MEM_LIMIT=1.1G: 20), deploy.server_cap.
c.JupyterHub.active_server_limit = deploy.server_cap(psutil.virtual_memory().total / 1e9, MEM_LIMIT_GB)
# A whole class behind one address (one machine, one NAT) may each mistype 5 times a minute
# and the address is still not refused: a name is refused after 5 (the per-name limit), so
# only more names than a class has lock the address (HUB_FAILED_LOGINS_PER_ADDRESS= to change).
c.ClassPassword.failed_logins_per_address = int(os.environ.get("HUB_FAILED_LOGINS_PER_ADDRESS") or (
    hub_spawner.FAILED_LOGINS * (max(c.JupyterHub.active_server_limit, 20) + 1)))

# ----- idle servers stopped (kernels are culled inside each server, classroom/singleuser.py) -----
# A learner's server holds ~0.2 GB with no kernel and its kernels are culled by jupyter_server
# after 30 idle minutes with no page connected (a closed browser ends none); the server itself is stopped
# after an hour without activity, so a learner who leaves frees their share. The culler
# is the hub's child and ends with it, however the hub ends (classroom/hub_service.py).
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "classroom.hub_service",
                sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600", "--cull-every=300"],
}]
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]

# ----- a token for this project's tools (the tests, make load's own hub), only when they start the hub -----
if os.environ.get("HUB_TOOLS_TOKEN"):
    c.JupyterHub.services.append({"name": "course-tools", "api_token": os.environ["HUB_TOOLS_TOKEN"]})
    c.JupyterHub.load_roles.append({
        "name": "course-tools",
        "scopes": ["admin:users", "admin:servers", "admin:server_state"],
        "services": ["course-tools"],
    })
