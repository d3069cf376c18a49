"""Drive JupyterLab in headless Chromium (Debian's chromium, through
Playwright's Python package) for the browser tests."""

import json
import os
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
# Each code cell's source, the placeholder line a hidden input (the set-up cell's) shows instead, its stderr
CELLS = f"""() => [...document.querySelectorAll('{NB} .jp-CodeCell')].map(c => ({{
  source: (c.querySelector('.cm-content') || {{innerText: ''}}).innerText,
  placeholder: (c.querySelector('.jp-InputPlaceholder .jp-PlaceholderText') || {{innerText: ''}}).innerText,
  stderr: !!c.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')}}))"""


def serve(root, runtime, env=None, app="jupyterlab"):
    """Start the server with `make lab`'s command line (app="notebook": `make notebook`'s), serving `root`, on a
    free port; return (process, its jpserver-*.json info) once that file is written and the port accepts."""
    runtime.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), **(env or {})}
    with open(runtime / "lab.log", "w") as log:
        proc = subprocess.Popen(lab_argv(free_port(), False, root, app), env=env, start_new_session=True,
                                stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while not (info := _listening(runtime)):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"jupyter lab did not start; see {runtime / 'lab.log'}")
        time.sleep(0.3)
    return proc, info


def _listening(runtime):
    try:
        info = json.loads(next(runtime.glob("jpserver-*.json")).read_text())
        socket.create_connection(("127.0.0.1", info["port"]), timeout=5).close()
        return info
    except (StopIteration, ValueError, OSError):      # not written, half written, or not bound yet
        return None


def stop(proc):
    """The server and everything it started (kernels included); killed if it is not gone within 30 s
    (a request it still holds, say)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def open_notebook(page, base, token, path):
    """JupyterLab on `path` in a workspace of its own (no tabs restored from earlier tests), not waiting for the
    kernel."""
    page.goto(f"{base}/lab/workspaces/{Path(path).stem}/tree/{path}?token={token}")


def run_all(page, base, token, path, timeout=180):
    """Clear the notebook's outputs, click Run All once the kernel is ready; return the seconds to the last cell's
    end. Not "Restart Kernel and Run All": a restart while the first websocket is set up makes jupyter_server
    misread the next frame and the run never ends."""
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
