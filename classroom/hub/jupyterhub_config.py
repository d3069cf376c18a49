# JupyterHub for a class on one machine: `make hub` (classroom/hub.py) runs it and sets the
# variables read below. Each learner logs in with a name and the class password and gets a
# server of their own, as a Unix user of their own (classroom/hub_spawner.py). The hub
# restarts without stopping the class: servers and proxy are kept. Each number's reason is in
# classroom/README.md's table of settings, measured by `make load`.

import os
import sys
from pathlib import Path

import psutil

from classroom import deploy, hub_spawner

c = get_config()  # noqa: F821 (JupyterHub defines get_config for its config file)

ROOT = Path(__file__).resolve().parents[2]
STATE = Path(os.environ.get("HUB_STATE", ROOT / "build" / "hub" / "state"))
LEARNERS = Path(os.environ.get("HUB_LEARNERS", ROOT / "hub-learners"))


def kept(name, variable):
    """A secret classroom/hub.py keeps in the state folder (else, for a
    config read on its own, the environment's)."""
    path = STATE / name
    return path.read_text().strip() if path.exists() else os.environ.get(variable, "")


# ----- where things are; the state folder, classroom/hub.py's, is root's alone (the database, the secrets) -----
c.JupyterHub.bind_url = f"http://{os.environ.get('HUB_IP', '127.0.0.1')}:{os.environ.get('HUB_PORT', '8000')}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{os.environ.get('HUB_API_PORT', '8081')}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('HUB_PROXY_API_PORT', '8001')}"
# classroom/hub.py runs the proxy and keeps it across the hub's restarts
c.ConfigurableHTTPProxy.should_start = False
c.ConfigurableHTTPProxy.auth_token = kept("proxy-token", "CONFIGPROXY_AUTH_TOKEN")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = False       # a restarted hub takes the running servers back
if os.environ.get("HUB_SSL_CERT"):         # TLS on the hub's own address (classroom/README.md)
    c.JupyterHub.ssl_cert = os.environ["HUB_SSL_CERT"]
    c.JupyterHub.ssl_key = os.environ["HUB_SSL_KEY"]

# ----- who may log in: any name with the class password; a real course puts its own login here -----
c.JupyterHub.authenticator_class = hub_spawner.ClassPassword
c.ClassPassword.user_password = kept("class-password", "HUB_PASSWORD")
c.ClassPassword.trusted_proxies = os.environ.get("HUB_TRUSTED_PROXIES", "").split()
c.Authenticator.allow_all = True
# The teacher (make hub ADMIN=name): JupyterHub's own admin, with its own admin password
if os.environ.get("HUB_ADMIN"):
    c.Authenticator.admin_users = {os.environ["HUB_ADMIN"]}
    c.ClassPassword.admin_password = kept("admin-password", "HUB_ADMIN_PASSWORD")

# ----- each learner's server: a local process, as a Unix user of their own, in its own home -----
c.JupyterHub.spawner_class = hub_spawner.ClassSpawner
c.ClassSpawner.learners_dir = str(LEARNERS)
c.ClassSpawner.isolate = os.environ.get("HUB_ISOLATE", "1") == "1"
c.ClassSpawner.cgroup_parent = os.environ.get("HUB_CGROUP", "class-hub")
# the learner's working copy made, then jupyterhub-singleuser serving it
c.Spawner.cmd = [sys.executable, "-m", "classroom.singleuser"]
c.Spawner.default_url = "/lab/tree/00-index.ipynb"
c.Spawner.environment = {
    "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",   # Graphviz's dot is on it
    "LANG": "C.UTF-8",
}
# isolated: kernels' channels as Unix sockets in the learner's private /tmp (on loopback TCP any
# learner could subscribe to another's output); else as root, jupyter_server refuses root without --allow-root
c.Spawner.args = ["--KernelManager.transport=ipc"] if c.ClassSpawner.isolate else ["--allow-root"] * (os.geteuid() == 0)

# A class logging in at once starts every server at once: ~7.5 CPU-s each (deploy.py)
c.Spawner.start_timeout = c.Spawner.http_timeout = deploy.START_TIMEOUT
c.JupyterHub.concurrent_spawn_limit = deploy.concurrent_starts(psutil.cpu_count() or 1)
# enforced by each learner's cgroup (classroom/cgroups.py); past it their largest kernel is stopped
MEM_LIMIT_GB = deploy.gigabytes(os.environ.get("HUB_MEM_LIMIT") or f"{deploy.memory_limit_gb()}G")
c.Spawner.mem_limit = int(MEM_LIMIT_GB * 1e9)
c.Spawner.cpu_limit = 1.0
# every learner at their limit at once, and deploy.RESERVED_GB left for the machine
c.JupyterHub.active_server_limit = deploy.server_cap(psutil.virtual_memory().total / 1e9, MEM_LIMIT_GB)
# a whole class behind one address may each mistype 5 times a minute
c.ClassPassword.failed_logins_per_address = int(os.environ.get("HUB_FAILED_LOGINS_PER_ADDRESS") or (
    hub_spawner.FAILED_LOGINS * (max(c.JupyterHub.active_server_limit, 20) + 1)))

# ----- a server idle for an hour stopped; the culler gets SIGTERM when the hub dies, however it dies -----
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": ["setpriv", "--pdeathsig", "TERM", "--",
                sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600", "--cull-every=300"],
}]
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]

