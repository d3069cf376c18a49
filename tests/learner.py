"""A new learner for the tests of `make lab` and `make notebook`: an empty home (HOME and Jupyter's directories
in a temporary folder) after `make lab`'s set-up, the server it starts, and helpers on that server's REST API."""

import contextlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tools.loopback import rest
from tools.runtime.lab import ROOT
from tools.testkit.browser import NB, serve, stop

TAB = "#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current"      # the active notebook's tab
VIEWPORT = {"width": 1366, "height": 768}    # a common laptop screen


@dataclass(frozen=True)
class Learner:
    home: Path
    env: dict        # HOME and Jupyter's directories, for every process the learner starts
    copy: Path       # the working copy `make lab` made
    printed: str     # what the set-up printed


def new_learner(folder):
    home = folder / "home"
    home.mkdir(parents=True)
    env = {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
           "JUPYTER_DATA_DIR": str(home / ".local/share/jupyter"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / ".jupyter/lab/user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / ".jupyter/lab/workspaces")}
    copy = home / "my-notebooks"
    done = subprocess.run([sys.executable, "-m", "tools.runtime.lab", "--prepare-only", "--copy", str(copy)],
                          cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    return Learner(home, env, copy, done.stdout)


@contextlib.contextmanager
def served(folder, app="jupyterlab", env=None, settings=None):
    """(learner, server info, process): a new learner under `folder`, their own JupyterLab `settings` ({file: value})
    and the server `make lab` (app="notebook": `make notebook`) starts on their working copy, stopped after."""
    learner = new_learner(folder)
    for name, value in (settings or {}).items():
        path = learner.home / ".jupyter/lab/user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    proc, info = serve(learner.copy, learner.home / "runtime", {**learner.env, **(env or {})}, app)
    try:
        yield learner, info, proc
    finally:
        stop(proc)


def api(info, path, method="GET"):
    """The JSON answer of the server `info` (its jpserver file) describes."""
    return rest(f"http://127.0.0.1:{info['port']}{path}", info["token"], method)


def until(read, test, timeout, what):
    """`read()`'s answer once `test` holds for it; else AssertionError naming `what` and the last answer."""
    deadline = time.monotonic() + timeout
    while True:
        found = read()
        if test(found):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout:g} s: last seen {found}")
        time.sleep(0.25)


def wait_for_kernels(info, test, timeout=60.0):
    return until(lambda: api(info, "/api/kernels"), test, timeout, "kernels not as expected")


def kernel_of(info, path, test=lambda kernel: True, timeout=60.0):
    """The kernel of the notebook at `path` once `test(kernel)` holds."""
    def read():
        return next((s["kernel"] for s in api(info, "/api/sessions") if s["path"] == path and s["kernel"]), None)
    return until(read, lambda kernel: kernel is not None and test(kernel), timeout, f"no kernel for {path}")


def attached(kernel):
    return kernel["execution_state"] == "idle" and kernel["connections"] > 0


def gone(info, kernel):
    wait_for_kernels(info, lambda kernels: kernel["id"] not in [k["id"] for k in kernels], timeout=30)


def lab_page(page, info, path):
    """`page` on JupyterLab with the notebook at `path` open, in a workspace of its own (no tabs restored)."""
    page.set_default_navigation_timeout(90_000)
    page.goto(f"http://127.0.0.1:{info['port']}/lab/workspaces/w{time.monotonic_ns()}/tree/{path}?token={info['token']}")
    page.locator(f"{NB} .jp-Cell").first.wait_for(timeout=90_000)
    return page


def close_tab(page, discard=False):
    """Close the active notebook's tab as a learner does (`discard`: answer Discard if asked to save)."""
    from playwright.sync_api import TimeoutError as UITimeout

    name = page.locator(TAB).inner_text().strip()
    page.locator(f"{TAB} .lm-TabBar-tabCloseIcon").click()
    if discard:
        with contextlib.suppress(UITimeout):
            page.get_by_role("button", name="Discard").click(timeout=3_000)
    page.locator(f"#jp-main-dock-panel .lm-TabBar-tab:has-text('{name}')").wait_for(state="detached", timeout=30_000)


def end_sessions(info, path):
    """Shut down the notebook's kernels as the Running panel does (a closed tab's is left to the cull)."""
    for session in [s for s in api(info, "/api/sessions") if s["path"] == path]:
        api(info, f"/api/sessions/{session['id']}", "DELETE")
        gone(info, session["kernel"])
