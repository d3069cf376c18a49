"""Drive JupyterLab in headless Chromium (Debian's chromium, through
Playwright's Python package) for the browser tests."""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from tools.loopback import free_port
from tools.runtime.lab import lab_argv

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# Every cell stays in the page (no virtual scrolling), and no news pop-up.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
}
STARTED_WITHIN = 10       # seconds for a clicked Run All to queue its first cell
# The notebook in the active tab (others stay in the page, hidden).
NB = ".jp-NotebookPanel:not(.lm-mod-hidden)"
IDLE = f"{NB} .jp-Notebook-ExecutionIndicator[data-status='idle']"
# The kernel attached and idle at once: the toolbar names it and the indicator says idle. While the
# session is still initializing, the toolbar already names it but Run All runs nothing (jupyter/README.md).
KERNEL_READY = f"""() => {{ const name = document.querySelector('{NB} .jp-Toolbar-kernelName');
  return !!name && name.innerText.trim() !== '' && !name.innerText.includes('No Kernel')
    && !!document.querySelector("{IDLE}"); }}"""
# The run numbers of the code cells whose input shows: a hidden input (the set-up cell's) shows a
# placeholder, whose prompt is empty; the last cell's number counts every code cell.
PROMPTS = (f"[...document.querySelectorAll('{NB} .jp-CodeCell .jp-InputPrompt:not(.jp-Placeholder-prompt)')]"
           ".map(e => e.textContent.trim())")
DONE = f"""() => {{ const p = {PROMPTS}, n = document.querySelectorAll('{NB} .jp-CodeCell').length;
  return p.length > 0 && p[p.length - 1] === `[${{n}}]:` && p.every(t => /^\\[\\d+\\]:$/.test(t))
    && !!document.querySelector("{IDLE}"); }}"""
# a cell whose input is hidden (the set-up cell) shows its first line in a placeholder instead of its editor
CELLS = f"""() => [...document.querySelectorAll('{NB} .jp-CodeCell')].map(c => ({{
  source: (c.querySelector('.cm-content') || {{innerText: ''}}).innerText,
  placeholder: (c.querySelector('.jp-InputPlaceholder .jp-PlaceholderText') || {{innerText: ''}}).innerText,
  stderr: !!c.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')}}))"""


def serve(root, runtime, env=None):
    """Start the server with `make lab`'s command line, serving `root`, on a
    free port; return (process, its jpserver-*.json info). Ready once that file
    is written and the port accepts a connection."""
    runtime.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), **(env or {})}
    with open(runtime / "lab.log", "w") as log:
        proc = subprocess.Popen(lab_argv(free_port(), False, root), env=env, start_new_session=True,
                                stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while not (info := _listening(runtime)):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"jupyter lab did not start; see {runtime / 'lab.log'}")
        time.sleep(0.3)
    return proc, info


def _listening(runtime):
    """The server info in `runtime`'s jpserver file once its port accepts a connection, else None."""
    found = list(runtime.glob("jpserver-*.json"))
    if not found:
        return None
    try:
        info = json.loads(found[0].read_text())
        socket.create_connection(("127.0.0.1", info["port"]), timeout=5).close()
    except (ValueError, OSError):            # half written, or not bound yet
        return None
    return info


def start_lab(root, notebooks):
    """Serve a copy of `notebooks` from `root` (so nothing a test runs is
    saved over the stored notebooks); return (process, base URL, token)."""
    shutil.copytree(notebooks, root / "notebooks")
    for name, value in SETTINGS.items():
        (root / "settings" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "settings" / name).write_text(json.dumps(value))
    proc, info = serve(root, root / "runtime", {"JUPYTERLAB_SETTINGS_DIR": str(root / "settings")})
    return proc, f"http://127.0.0.1:{info['port']}", info["token"]


def stop(proc):
    """Stop the server and everything it started (kernels included)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def open_notebook(page, base, token, path):
    """Load JupyterLab on the notebook at `path` in `page`, which starts its
    kernel; returns once the page has loaded, not waiting for the kernel."""
    workspace = Path(path).stem              # a fresh workspace: no tabs restored from earlier tests
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{path}?token={token}")


def run_all(page, base, token, path, timeout=180):
    """Open the notebook, clear its outputs, click Run All once the kernel is
    ready (`KERNEL_READY`); return the seconds to the last cell's end. Not
    "Restart Kernel and Run All": a restart while the first websocket is set up
    makes jupyter_server misread the next frame and the run never ends."""
    from playwright.sync_api import TimeoutError as UITimeout

    if not (page.url.startswith(base) and Path(path).name in page.url):
        open_notebook(page, base, token, path)
    page.wait_for_function(KERNEL_READY, timeout=90_000, polling=100)
    page.locator(f"{NB} .jp-Cell").first.click()       # menus act on the active notebook
    menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function(f"() => {PROMPTS}.every(t => t === '[ ]:')", timeout=30_000, polling=100)
    start = time.perf_counter()
    menu(page, "Run", "Run All Cells")
    try:
        page.wait_for_function(f"() => {PROMPTS}.some(t => t !== '[ ]:')", timeout=STARTED_WITHIN * 1000, polling=100)
    except UITimeout:
        raise AssertionError("Run All, clicked once with the kernel attached and idle, sent no cell") from None
    page.wait_for_function(DONE, timeout=timeout * 1000, polling=200)
    return time.perf_counter() - start


def menu(page, heading, item):
    page.locator(".lm-MenuBar-itemLabel", has_text=heading).first.click()
    page.get_by_role("menuitem", name=item, exact=True).click()


def cells(page):
    """Each code cell's source (empty when its input is hidden), its hidden
    input's placeholder line, and whether it shows a stderr output."""
    return page.evaluate(CELLS)
