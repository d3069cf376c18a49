"""A learner's server, as the hub starts it here (`make hub`) or on Kubernetes
(hub/values.yaml): `python -m classroom.singleuser ARGS...` makes their working
copy, then runs jupyterhub-singleuser ARGS on it with jupyter/'s server options. A
kernel outlives a closed browser: only jupyter_server's idle culling ends it
(jupyter/jupyter_server_config.json: 30 idle minutes, no page connected), and
JupyterLab autosaves every `AUTOSAVE` seconds, so what a learner typed is on disk."""

import json
import os
import sys
from pathlib import Path

from classroom import hub_kernel
from tools.runtime import lab

AUTOSAVE = 30           # seconds between JupyterLab's saves of a changed notebook
DOCMANAGER = Path(".jupyter/lab/user-settings/@jupyterlab/docmanager-extension/plugin.jupyterlab-settings")


def main(args):
    """The working copy made in HOME as `make lab` makes it, then jupyterhub-singleuser on it."""
    home = os.environ["HOME"]
    copy = Path(home) / "my-notebooks"
    lab.main(["--prepare-only", "--copy", str(copy)])
    hub_kernel.write_startup(home)     # no debugger; a kernel stopped at the memory limit says so
    autosave = Path(home) / DOCMANAGER       # JupyterLab's autosave, written once (a learner's own is kept)
    if not autosave.exists():
        autosave.parent.mkdir(parents=True, exist_ok=True)
        autosave.write_text(json.dumps({"autosave": True, "autosaveInterval": AUTOSAVE}, indent=2) + "\n")
    line = [str(Path(sys.executable).parent / "jupyterhub-singleuser"), f"--ServerApp.root_dir={copy}",
            *lab.server_options(), *args]
    os.execv(line[0], line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
