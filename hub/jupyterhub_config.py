# JupyterHub for a class on one machine: `make hub` (tools/classroom/hub.py) runs it.
#
# Each learner logs in with a name and the class password, and gets a Jupyter
# server of their own, started as a local process under the same system user
# (no system accounts are made), in a home folder hub-learners/<name>/ (kept out
# of git and out of build/, which `make clean` removes)
# that holds their working copy of the notebooks, made the way `make lab` makes
# one (tools/runtime/working_copy.py: copied once, trusted, never overwritten), with the
# learners' JupyterLab settings and kernel culling of jupyter/.
#
# Everything listens on 127.0.0.1 unless HUB_IP says otherwise. tools/classroom/hub.py
# sets the variables read below; the figures behind each number are measured by
# `make load` (tools/classroom/load.py) and tabled in docs/teaching.md.

import os
import sys
from pathlib import Path

import psutil

from tools.classroom import deploy

c = get_config()  # noqa: F821 (JupyterHub defines get_config for its config file)

ROOT = Path(__file__).resolve().parent.parent
STATE = Path(os.environ.get("HUB_STATE", ROOT / "build" / "hub" / "state"))
LEARNERS = Path(os.environ.get("HUB_LEARNERS", ROOT / "hub-learners"))
IP = os.environ.get("HUB_IP", "127.0.0.1")
LOOPBACK = "127.0.0.1"

# ----- measured figures: tools/classroom/deploy.py holds them (`make load`, docs/teaching.md) -----
RESERVED_GB = 2.0           # the hub, the proxy and the system itself

# ----- where things are -----
STATE.mkdir(parents=True, exist_ok=True)
c.JupyterHub.bind_url = f"http://{IP}:{os.environ.get('HUB_PORT', '8000')}"
c.JupyterHub.hub_bind_url = f"http://{LOOPBACK}:{os.environ.get('HUB_API_PORT', '8081')}"
c.ConfigurableHTTPProxy.api_url = f"http://{LOOPBACK}:{os.environ.get('HUB_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [os.environ.get("HUB_PROXY", "configurable-http-proxy")]
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True        # stopping the hub stops every learner's server
c.JupyterHub.cleanup_proxy = True

# ----- who may log in: any name with the class password (a trial) -----
# For a real course put an authenticator of your institution here, for example
# OAuthenticator's GitHubOAuthenticator or GenericOAuthenticator, or LTI from the
# course platform, and list who may log in (docs/teaching.md says how).
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ["HUB_PASSWORD"]
c.Authenticator.allow_all = True

# ----- each learner's server: a local process, in its own home -----
c.JupyterHub.spawner_class = "simple"      # SimpleLocalProcessSpawner: no system users
c.SimpleLocalProcessSpawner.home_dir_template = str(LEARNERS / "{username}")
c.Spawner.ip = LOOPBACK
# tools/runtime/singleuser.py makes the learner's working copy (my-notebooks/ in their
# home, as `make lab --prepare-only` does) and then runs jupyterhub-singleuser on it.
c.Spawner.cmd = [sys.executable, "-m", "tools.runtime.singleuser"]
c.Spawner.default_url = "/lab/tree/00-index.ipynb"
c.Spawner.environment = {
    "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",   # Graphviz's dot is on it
    "LANG": "C.UTF-8",
}
if os.geteuid() == 0:                      # jupyter_server refuses root without it
    c.Spawner.args = ["--allow-root"]

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
# At most this many servers running: the machine's memory less RESERVED_GB, at a
# server and one notebook each (deploy.memory_guarantee_gb(): 0.15 + 0.45 = 0.6 GB
# RSS; 24 GB: (24 - 2) / 0.6 = 36 learners). Pages shared between learners' processes
# (PSS is ~0.1 GB less each) are the margin for a learner with a second notebook open.
MEMORY_GB = psutil.virtual_memory().total / 1e9
c.JupyterHub.active_server_limit = max(1, int((MEMORY_GB - RESERVED_GB) / deploy.memory_guarantee_gb()))
# Per-learner memory and CPU: with local processes these are told to the server
# (MEM_LIMIT and CPU_LIMIT) but not enforced; on Kubernetes (hub/values.yaml) they
# are. deploy.memory_limit_gb(): a server and three notebooks, 0.15 + 3 x 0.45 = 1.5 GB;
# one core: a Run All or a start is one Python thread.
c.Spawner.mem_limit = f"{int(deploy.memory_limit_gb() * 1000)}M"
c.Spawner.cpu_limit = 1.0

# ----- idle servers stopped (kernels are culled inside each server, jupyter/) -----
# A learner's server holds ~0.2 GB with no kernel and its kernels are culled after
# 30 idle minutes (jupyter/jupyter_server_config.json); the server itself is stopped
# after an hour without activity, so a learner who leaves frees their share.
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600", "--cull-every=300"],
}]
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]

# ----- a token for this project's tools (tools/classroom/load.py, the tests), when they set one -----
if os.environ.get("HUB_TOOLS_TOKEN"):
    c.JupyterHub.services.append({"name": "course-tools", "api_token": os.environ["HUB_TOOLS_TOKEN"]})
    c.JupyterHub.load_roles.append({
        "name": "course-tools",
        "scopes": ["admin:users", "admin:servers", "admin:server_state"],
        "services": ["course-tools"],
    })
