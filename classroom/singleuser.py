"""A learner's server, as the hub starts it, on this machine (`make hub`)
or in the course image on Kubernetes (hub/values.yaml):

    python -m classroom.singleuser ARGS...

ARGS go to jupyterhub-singleuser.

On the hub a learner's kernel outlives a closed browser: it ends only by
jupyter_server's own idle culling (`KERNELS`: 30 idle minutes with no page
connected, checked every minute), never because a page went away, and the
page saves a typed answer within `AUTOSAVE` seconds (JupyterLab's own
autosave, `@jupyterlab/docmanager-extension:plugin` `autosaveInterval`,
120 s by default), so what a learner typed is on disk long before anything
of theirs ends (the server itself after an idle hour, hub/jupyterhub_config.py)."""

import json
import os
import sys
from pathlib import Path

from classroom import hub_kernel
from tools.runtime import lab

IDLE_KERNEL = 1800      # seconds: a kernel with no page connected and no activity is culled
AUTOSAVE = 30           # seconds between JupyterLab's saves of a changed notebook
# jupyter_server's own kernel culling, stated here for the hub whatever the learner's runtime
# passes (each replaces lab.server_options()'s option of the same name: traitlets refuses one
# given twice), and its own kernel connection: no kernel is ended when its last page goes away.
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
    """The learner's JupyterLab setting of autosave every `seconds`, written
    once: a learner who changed their document settings keeps theirs."""
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
    """A learner's server, as the hub starts it (cwd and HOME are the
    learner's home, here or in the course image on Kubernetes): their working
    copy made as `make lab` makes it (tools/runtime/lab.py --prepare-only), then
    jupyterhub-singleuser serving it, with the server options of jupyter/
    (widget outputs saved with their widget state) and the hub's `KERNELS`."""
    home = os.environ["HOME"]
    lab.main(["--prepare-only", "--copy", str(Path(home) / "my-notebooks")])
    hub_kernel.write_startup(home)     # no debugger; a kernel stopped at the memory limit says so
    write_autosave(home)
    line = command(home, args)
    os.execv(line[0], line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
