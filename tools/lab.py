"""Start JupyterLab on the collection: loopback only, token kept on,
opening the index notebook. `make lab` runs this; the tests use `lab_argv`."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INDEX = "notebooks/00-index.ipynb"


def lab_argv(port=8888, open_browser=True, root=ROOT):
    """The command line for `jupyter lab`, serving `root` and opening the
    index notebook when it is there. Authentication stays on: no token or
    password option is passed, so Jupyter makes a random token."""
    as_root = ["--allow-root"] if os.geteuid() == 0 else []
    return [
        sys.executable, "-m", "jupyterlab", *as_root,
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.open_browser={open_browser}",
        # the URL printed (and opened) lands on the index notebook
        *([f"--LabApp.default_url=/lab/tree/{INDEX}"] if (root / INDEX).exists() else []),
    ]


if __name__ == "__main__":
    os.chdir(ROOT)
    argv = lab_argv()
    os.execv(argv[0], argv)
