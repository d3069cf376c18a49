"""`make lab` (JupyterLab) and `make notebook` (Notebook 7) on the learner's
working copy (tools/runtime/working_copy.py), with jupyter/'s settings;
loopback only, token on. The user's own ~/.jupyter is never written.

    python -m tools.runtime.lab [--notebook] [--copy DIR] [--no-browser]
        [--refresh | --edit | --prepare-only | --binder]
"""

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tools.notebooks import INDEX, notebook_paths
from tools.runtime import working_copy

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "jupyter"
# The lab settings go beside any others in this environment, under their own name.
OVERRIDES = Path("share/jupyter/lab/settings/overrides.d/computational-graphs.json")
SERVER_CONFIG = Path("etc/jupyter/jupyter_server_config.json")
# The prebuilt JupyterLab extensions of jupyter/labextensions/ (made by make labextension), where
# JupyterLab and Notebook 7 find those of this environment.
EXTENSIONS = Path("share/jupyter/labextensions")
URLS = {"jupyterlab": "--LabApp.default_url=/lab/tree/{}", "notebook": "--JupyterNotebookApp.default_url=/notebooks/{}"}


def server_options():
    config = json.loads((SETTINGS / "jupyter_server_config.json").read_text(encoding="utf-8"))
    return [f"--{section}.{name}={value}" for section, traits in config.items() for name, value in traits.items()]


def lab_argv(port=8888, open_browser=True, root=working_copy.COPY, app="jupyterlab"):
    """The server's command line (app="notebook": Notebook 7), serving `root`
    and opening its index notebook; Jupyter makes a random token."""
    # Jupyter refuses to run as root without --allow-root; Windows has no such user (nor os.geteuid)
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    index = next((p for p in (INDEX, f"notebooks/{INDEX}") if (Path(root) / p).exists()), None)
    return [
        sys.executable, "-m", app, *as_root,
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.open_browser={open_browser}",
        *server_options(),
        # the URL printed (and opened) lands on the index notebook
        *([URLS[app].format(index)] if index else []),
    ]


def install_settings(prefix=Path(sys.prefix)):
    """Put jupyter/overrides.json where this environment's JupyterLab and
    Notebook 7 read default settings (a user's own still win), and
    jupyter/labextensions/ where they find prebuilt extensions."""
    target = prefix / OVERRIDES
    text = (SETTINGS / "overrides.json").read_text(encoding="utf-8")
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for extension in (SETTINGS / "labextensions").iterdir():
        installed = prefix / EXTENSIONS / extension.name
        manifest = installed / "package.json"       # names the build's files, hashes in their names
        if not manifest.exists() or manifest.read_bytes() != (extension / "package.json").read_bytes():
            shutil.rmtree(installed, ignore_errors=True)
            shutil.copytree(extension, installed)


def binder(prefix=Path(sys.prefix)):
    """Binder's postBuild: the settings and culling into the image's
    environment, the stored notebooks trusted in place."""
    install_settings(prefix)
    config_file = prefix / SERVER_CONFIG
    config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.exists() else {}
    for section, traits in json.loads((SETTINGS / "jupyter_server_config.json").read_text(encoding="utf-8")).items():
        config.setdefault(section, {}).update(traits)
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    working_copy.trust(notebook_paths())


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.runtime.lab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", action="store_true", help="Jupyter Notebook 7 instead of JupyterLab")
    parser.add_argument("--copy", type=Path, default=working_copy.COPY, help="the working copy's folder")
    parser.add_argument("--no-browser", action="store_true")
    steps = parser.add_mutually_exclusive_group()
    steps.add_argument("--refresh", action="store_true", help="replace the copy's notebooks (backing up changed ones)")
    steps.add_argument("--prepare-only", action="store_true", help="settings and working copy, no server")
    steps.add_argument("--binder", action="store_true", help="settings into this environment, notebooks/ trusted")
    steps.add_argument("--edit", action="store_true", help="serve notebooks/ itself, to edit the stored notebooks")
    args = parser.parse_args(argv)
    if args.binder:
        return binder()
    install_settings()
    app = "notebook" if args.notebook else "jupyterlab"
    if args.edit:          # notebooks/ trusted; tools/runtime/kernel.py keeps their metadata unchanged on save
        working_copy.trust(notebook_paths())
        return serve(lab_argv(open_browser=not args.no_browser, root=working_copy.NOTEBOOKS, app=app))
    if args.refresh:
        return working_copy.refresh(args.copy.resolve())
    working_copy.make(args.copy.resolve())
    if not args.prepare_only:
        serve(lab_argv(open_browser=not args.no_browser, root=args.copy.resolve(), app=app))


def serve(command):
    """Replace this process with the server, so a signal to `make lab` reaches it and
    its exit status is ours. Windows cannot (its os.execv starts a new process and
    splits a path with a space): there the server runs as a child this process waits
    for, Ctrl+C included."""
    if sys.platform != "win32":
        os.execv(command[0], command)
    with subprocess.Popen(command) as server:
        while server.returncode is None:
            with contextlib.suppress(KeyboardInterrupt):    # the server had it too, and stops when done
                server.wait()
    raise SystemExit(server.returncode)


if __name__ == "__main__":
    main()
