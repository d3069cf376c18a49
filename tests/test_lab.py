"""`make lab` as a new learner (an empty home) meets it: its set-up, its server on the working copy (loopback,
token, settings, kernel culling); in headless Chromium, two tabs sharing a kernel, the index's first open, and
Run All clicked before the kernel exists."""

import contextlib
import json
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import psutil
import pytest
from learner import (
    VIEWPORT,
    api,
    attached,
    close_tab,
    end_sessions,
    kernel_of,
    lab_page,
    served,
    until,
    wait_for_kernels,
)
from nbformat.sign import NotebookNotary
from test_browser import check_first_open

from tools.notebooks import notebook_paths
from tools.runtime.lab import OVERRIDES, SERVER_CONFIG, SETTINGS, binder, lab_argv
from tools.testkit.browser import NB, PROMPTS, menu

CULLING = "Culling kernels with idle durations > 1800 seconds at 60 second intervals ..."


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with served(tmp_path_factory.mktemp("learner")) as found:
        yield found


def _status(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        return err.code


def test_the_working_copy_served_on_loopback_with_a_token_from_its_index(lab):
    learner, info, proc = lab
    assert "Made your working copy of the notebooks" in learner.printed
    assert sorted(p.name for p in learner.copy.glob("*.ipynb")) == [p.name for p in notebook_paths()]
    url, token = f"http://127.0.0.1:{info['port']}", info["token"]
    assert len(token) >= 32
    assert [_status(f"{url}/api/contents{query}") for query in ("", f"?token={token}", f"?token=wrong{token}")] \
        == [403, 200, 403]
    sockets = []
    for process in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):      # a kernel an earlier test shut down may just end
            sockets += [c for c in process.net_connections(kind="inet")
                        if c.status == psutil.CONN_LISTEN and c.laddr.port == info["port"]]
    assert sockets and {c.laddr.ip for c in sockets} == {"127.0.0.1"}
    assert info["root_dir"] == str(learner.copy)
    assert lab_argv(root=learner.copy)[-1] == "--LabApp.default_url=/lab/tree/00-index.ipynb"
    with urllib.request.urlopen(f"{url}/?token={token}", timeout=30) as reply:
        assert reply.url.split("?")[0].endswith("/lab/tree/00-index.ipynb")


def test_learner_settings_are_the_defaults(lab):
    """jupyter/overrides.json is where this environment's JupyterLab reads defaults; a user's own settings still win."""
    _, info, _ = lab
    assert (Path(sys.prefix) / OVERRIDES).read_text() == (SETTINGS / "overrides.json").read_text()
    notification = api(info, "/lab/api/settings/@jupyterlab/apputils-extension:notification")
    assert notification["schema"]["properties"]["fetchNews"]["default"] == "false"
    keys = api(info, "/lab/api/settings/@jupyterlab/shortcuts-extension:shortcuts")      # tools/build/shortcuts.py
    ours = json.loads((SETTINGS / "overrides.json").read_text())["@jupyterlab/shortcuts-extension:shortcuts"]
    assert keys["schema"]["properties"]["shortcuts"]["default"] == ours["shortcuts"] != []
    widgets = api(info, "/lab/api/settings/@jupyter-widgets/jupyterlab-manager:plugin")    # docs/maintaining.md: why
    assert widgets["schema"]["properties"]["saveState"]["default"] is False


def test_idle_kernels_are_culled(lab):
    """Its kernel manager logs the culling when it starts a kernel: proof the server read jupyter_server_config.json."""
    learner, info, _ = lab
    kernel = api(info, "/api/kernels", "POST")
    try:
        deadline = time.monotonic() + 30
        log = learner.home / "runtime" / "lab.log"
        while CULLING not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        text = log.read_text()
        assert CULLING in text, f"no culling line in {log}"
        assert "even if busy" not in text and "even with connected clients" not in text
    finally:
        api(info, f"/api/kernels/{kernel['id']}", "DELETE")
    wait_for_kernels(info, lambda kernels: kernels == [])


def test_binder_set_up(tmp_path, monkeypatch):
    """postBuild: settings into the image's environment (a server config there is kept), notebooks trusted in place."""
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    config = tmp_path / SERVER_CONFIG
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"ServerApp": {"terminals_enabled": False}}))
    binder(tmp_path)
    assert (tmp_path / OVERRIDES).read_text() == (SETTINGS / "overrides.json").read_text()
    ours = json.loads((SETTINGS / "jupyter_server_config.json").read_text())
    assert json.loads(config.read_text()) == {**ours, "ServerApp": {"terminals_enabled": False,
                                                                    **ours.get("ServerApp", {})}}
    notary = NotebookNotary(data_dir=str(tmp_path / "data"))
    assert all(notary.check_signature(nbformat.read(p, as_version=4)) for p in notebook_paths())


# ----- in the browser -----

def test_first_open_of_the_index(lab, browser, timings):
    """As the URL `make lab` prints opens it."""
    learner, info, _ = lab
    page = lab_page(browser.new_page(viewport=VIEWPORT), info, "00-index.ipynb")
    check_first_open(page, learner.copy, info, "00-index.ipynb", timings)
    page.close()


def test_two_tabs_of_one_notebook_keep_its_kernel(lab, browser):
    """Closing one tab leaves the kernel to the other; closing the last leaves it to the 30-minute cull."""
    learner, info, _ = lab
    name = "03-retain-graph.ipynb"
    pages = [lab_page(browser.new_page(viewport=VIEWPORT), info, name)]
    try:
        first = kernel_of(info, name, attached)
        pages.append(lab_page(browser.new_page(viewport=VIEWPORT), info, name))
        kernel_of(info, name, lambda kernel: kernel["id"] == first["id"] and kernel["connections"] >= 2)
        close_tab(pages[0])
        time.sleep(3)           # a kernel shut down is gone within a second
        kernels = api(info, "/api/kernels")
        assert first["id"] in [k["id"] for k in kernels], "closing one of two tabs shut the notebook's kernel down"
        cell = pages[1].locator(f"{NB} .jp-CodeCell").nth(1)      # the first whose input shows: the set-up's is hidden
        cell.locator(".jp-InputArea-editor").click()
        pages[1].keyboard.press("Shift+Enter")
        cell.locator(".jp-InputPrompt").filter(has_text=re.compile(r"\[\d+\]")).wait_for(timeout=60_000)
        close_tab(pages[1], discard=True)       # the run marked it changed
        time.sleep(3)
        assert first["id"] in [k["id"] for k in api(info, "/api/kernels")], "closing the last tab ended the kernel"
    finally:
        for page in pages:
            page.close()
        end_sessions(info, name)


# The notebook's session held until the test opens SESSION_GATE (a file), as a class all opening notebooks at
# once holds it: the click lands before the kernel exists, however fast the machine.
HELD_SESSIONS = """import asyncio, os, pathlib
from jupyter_server.services.sessions.sessionmanager import SessionManager
_create = SessionManager.create_session
async def _held(self, *args, **kwargs):
    for _ in range(1200):
        if pathlib.Path(os.environ["SESSION_GATE"]).exists():
            break
        await asyncio.sleep(0.05)
    return await _create(self, *args, **kwargs)
SessionManager.create_session = _held
"""
OPEN = {"jupyterlab": "/lab/workspaces/w{n}/tree/{name}", "notebook": "/notebooks/{name}"}


@pytest.mark.parametrize("app", OPEN)
def test_run_all_clicked_while_the_kernel_starts_runs_every_cell_once_it_is_ready(tmp_path, browser, app):
    """JupyterLab's own Run All, clicked before the session exists, runs nothing (its notice says the kernel is
    still initializing; without jupyter/overrides.json's setting it also cleared every output, silently).
    jupyter/labextensions/run-all-waits makes that one click wait for the kernel and run every cell."""
    held, gate = tmp_path / "held", tmp_path / "gate"
    held.mkdir()
    (held / "jupyter_server_config.py").write_text(HELD_SESSIONS)
    env = {"JUPYTER_CONFIG_PATH": str(held), "SESSION_GATE": str(gate)}
    with served(tmp_path, app=app, env=env) as (learner, info, _):
        name = "01-dynamic-control-flow.ipynb"
        cells = [c for c in nbformat.read(learner.copy / name, as_version=4).cells if c.cell_type == "code"]
        stored = sum(1 for c in cells if c.outputs)
        shown = f"""() => [...document.querySelectorAll('{NB} .jp-CodeCell')]
          .filter(c => c.querySelector('.jp-OutputArea-output')).length"""
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"http://127.0.0.1:{info['port']}{OPEN[app].format(n=time.monotonic_ns(), name=name)}"
                  f"?token={info['token']}", timeout=90_000)
        page.wait_for_function(f"() => ({shown})() === {stored}", timeout=60_000)
        assert api(info, "/api/sessions") == [], "the session existed before the click: it was not held"
        try:
            page.locator(f"{NB} .jp-Cell").first.click()
            menu(page, "Run", "Run All Cells")
            page.get_by_text("Run All starts as soon as the kernel is ready").first.wait_for(timeout=10_000)
            assert page.evaluate(shown) == stored, "Run All cleared the stored outputs before the kernel was there"
        finally:
            gate.touch()        # the server is not left holding the session, whatever happened
        # the set-up cell, first, has its input hidden: its run number shows on no prompt, the others count on from 2
        every = [f"[{n}]:" for n in range(2, len(cells) + 1)]
        until(lambda: page.evaluate(PROMPTS), lambda seen: seen == every, 180, "one click of Run All ran the cells")

