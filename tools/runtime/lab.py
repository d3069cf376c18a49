"""`make lab` (JupyterLab) and `make notebook` (Jupyter Notebook 7) on the
learner's working copy (tools/runtime/working_copy.py): loopback only, token kept
on, opening the index notebook, with the learners' settings of jupyter/:
no news pop-up, idle kernels culled (Jupyter's own culler: a kernel with no
page connected, idle 30 minutes), every widget output saved with its widget
state (tools/runtime/widget_state.py). The user's own ~/.jupyter is never written.

    python -m tools.runtime.lab [--notebook] [--copy DIR] [--port N] [--no-browser]
    python -m tools.runtime.lab --refresh         `make refresh`
    python -m tools.runtime.lab --edit            `make edit`: notebooks/ itself, for a maintainer
    python -m tools.runtime.lab --prepare-only    the set-up without starting a server
    python -m tools.runtime.lab --binder          Binder's postBuild (see binder())

The tests use `lab_argv`."""

import argparse
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

from tools.runtime import working_copy

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "jupyter"
INDEX = "00-index.ipynb"
# The lab settings go beside any others in this environment, under their own name.
OVERRIDES = Path("share/jupyter/lab/settings/overrides.d/computational-graphs.json")
SERVER_CONFIG = Path("etc/jupyter/jupyter_server_config.json")
URLS = {"jupyterlab": "--LabApp.default_url=/lab/tree/{}", "notebook": "--JupyterNotebookApp.default_url=/notebooks/{}"}


def server_options():
    """jupyter/jupyter_server_config.json as command-line options (kernel
    culling, the save hook that keeps widget outputs drawable)."""
    config = json.loads((SETTINGS / "jupyter_server_config.json").read_text(encoding="utf-8"))
    return [f"--{section}.{name}={value}" for section, traits in config.items() for name, value in traits.items()]


def lab_argv(port=8888, open_browser=True, root=working_copy.COPY, app="jupyterlab"):
    """The command line for `jupyter lab` (app="notebook": `jupyter notebook`),
    serving `root` and opening its index notebook (at its top, or in its
    notebooks/) when it is there. Authentication stays on: no token or
    password option is passed, so Jupyter makes a random token."""
    if app not in URLS:
        raise ValueError(f"app must be one of {sorted(URLS)}, not {app!r}")
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
    """Put jupyter/overrides.json where JupyterLab and Notebook 7 of this
    environment read default settings (`prefix`/share/jupyter/lab/settings/
    overrides.d/); a user's own settings still win. Returns the path."""
    target = prefix / OVERRIDES
    text = (SETTINGS / "overrides.json").read_text(encoding="utf-8")
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return target


def binder(prefix=Path(sys.prefix)):
    """Binder serves notebooks/ itself, from a fresh image each session: the
    settings and the culling go into the image's environment, and the
    stored notebooks are trusted in place for the image's user."""
    install_settings(prefix)
    config_file = prefix / SERVER_CONFIG
    config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.exists() else {}
    for section, traits in json.loads((SETTINGS / "jupyter_server_config.json").read_text(encoding="utf-8")).items():
        config.setdefault(section, {}).update(traits)
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    working_copy.trust(working_copy.collection())


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.runtime.lab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", action="store_true", help="Jupyter Notebook 7 instead of JupyterLab")
    parser.add_argument("--copy", type=Path, default=working_copy.COPY, help="the working copy's folder")
    parser.add_argument("--port", type=int, default=8888)
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
    if args.edit:
        return edit(args.port, not args.no_browser, args.notebook)
    if args.refresh:
        return working_copy.refresh(args.copy.resolve())
    working_copy.make(args.copy.resolve())
    if not args.prepare_only:
        command = lab_argv(args.port, not args.no_browser, args.copy.resolve(),
                           "notebook" if args.notebook else "jupyterlab")
        serve(command)


def edit(port=8888, open_browser=True, notebook=False):
    """`make edit`: the stored notebooks themselves (notebooks/), served with the
    learners' settings. The kernel spec manager (tools/runtime/kernel.py) gives
    `python3` the kernel whose `language_info` the notebooks store, so opening
    and saving one changes no metadata; the stored notebooks are trusted in
    place, so their drawings show. Outputs still come from `make notebooks`."""
    working_copy.trust(working_copy.collection())
    serve(lab_argv(port, open_browser, working_copy.NOTEBOOKS, "notebook" if notebook else "jupyterlab"))


def serve(command):
    """Run the server's command line in place of this process, so that its
    Ctrl+C and exit status are the server's. Windows cannot replace a
    process: its os.execv starts a new one, joining the arguments unquoted
    (a space in the Python's path splits it), and gives the console back to
    the shell. There the server runs as a child and this process waits for
    it: Ctrl+C reaches both, and the server decides when it has stopped."""
    if sys.platform != "win32":
        os.execv(command[0], command)
    with subprocess.Popen(command) as server:
        while server.returncode is None:
            with contextlib.suppress(KeyboardInterrupt):    # the server had it too, and stops when done
                server.wait()
    raise SystemExit(server.returncode)


if __name__ == "__main__":
    main()
