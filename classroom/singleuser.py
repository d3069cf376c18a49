"""A learner's server, as the hub starts it, on this machine (`make hub`)
or in the course image on Kubernetes (hub/values.yaml):

    python -m classroom.singleuser ARGS...

ARGS go to jupyterhub-singleuser."""

import os
import sys
from pathlib import Path

from classroom import hub_kernel
from tools.runtime import lab


def main(args):
    """A learner's server, as the hub starts it (cwd and HOME are the
    learner's home, here or in the course image on Kubernetes): their working
    copy made as `make lab` makes it (tools/runtime/lab.py --prepare-only), then
    jupyterhub-singleuser serving it, with the server options of jupyter/
    (idle kernels culled, widget outputs saved with their widget state)."""
    copy = Path(os.environ["HOME"]) / "my-notebooks"
    lab.main(["--prepare-only", "--copy", str(copy)])
    hub_kernel.write_startup(os.environ["HOME"])     # no debugger; a kernel stopped at the memory limit says so
    command = [str(Path(sys.executable).parent / "jupyterhub-singleuser"), f"--ServerApp.root_dir={copy}",
               *lab.server_options(), *args]
    os.execv(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
