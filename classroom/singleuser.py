"""A learner's server, as the hub starts it here (`make hub`) or on Kubernetes
(hub/values.yaml): `python -m classroom.singleuser ARGS...` makes their working
copy, then runs jupyterhub-singleuser ARGS on it. A kernel outlives a closed
browser: only jupyter_server's idle culling ends it (`KERNELS`), and JupyterLab
autosaves every `AUTOSAVE` seconds, so what a learner typed is on disk."""

import json
import os
import sys
from pathlib import Path

from classroom import hub_kernel
from tools.runtime import lab

IDLE_KERNEL = 1800      # seconds: a kernel with no page connected and no activity is culled
AUTOSAVE = 30           # seconds between JupyterLab's saves of a changed notebook
# jupyter_server's own culling and kernel connection (each replaces lab.server_options()'s
# option of the same name): no kernel ends when its last page goes away.
KERNELS = [
    f"--MappingKernelManager.cull_idle_timeout={IDLE_KERNEL}",
    "--MappingKernelManager.cull_interval=60",
    "--MappingKernelManager.cull_connected=False",
    "--MappingKernelManager.cull_busy=False",
    "--ServerApp.kernel_websocket_connection_class="
    "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection",
]
DOCMANAGER = Path(".jupyter/lab/user-settings/@jupyterlab/docmanager-extension/plugin.jupyterlab-settings")


def write_autosave(home, seconds=AUTOSAVE):
    """The learner's JupyterLab autosave setting, written once (a learner's own is kept)."""
    path = Path(home) / DOCMANAGER
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"autosave": True, "autosaveInterval": seconds}, indent=2) + "\n")
    return path


def command(home, args):
    """The jupyterhub-singleuser command line serving the learner's working copy."""
    copy = Path(home) / "my-notebooks"
    ours = {option.split("=", 1)[0] for option in KERNELS}
    runtime = [option for option in lab.server_options() if option.split("=", 1)[0] not in ours]
    return [str(Path(sys.executable).parent / "jupyterhub-singleuser"), f"--ServerApp.root_dir={copy}",
            *runtime, *KERNELS, *args]


def main(args):
    """The working copy made in HOME as `make lab` makes it, then jupyterhub-singleuser on it."""
    home = os.environ["HOME"]
    lab.main(["--prepare-only", "--copy", str(Path(home) / "my-notebooks")])
    hub_kernel.write_startup(home)     # no debugger; a kernel stopped at the memory limit says so
    write_autosave(home)
    line = command(home, args)
    os.execv(line[0], line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
