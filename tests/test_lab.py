"""`make lab` as a new learner (an empty home) meets it: its set-up, then its
server on the working copy, on loopback with a token, opening the index, with
the learners' settings and kernel culling. In headless Chromium at 1366x768:
each notebook opened from the index, before anything runs, shows every stored
drawing and widget view (no text form) and is not marked changed; no news
pop-up; two tabs of one notebook share its kernel."""

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
from learner import api, attached, chromium, kernel_of, new_learner, wait_for_kernels
from nbformat.sign import NotebookNotary

from helpers.lessons import of
from tools.runtime.lab import OVERRIDES, SERVER_CONFIG, SETTINGS, binder, lab_argv
from tools.runtime.working_copy import collection
from tools.testkit.browser import open_notebook, serve, stop
from tools.testkit.first_open import output_count, rendered, stored
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import widget_cell

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
VIEWPORT = {"width": 1366, "height": 768}    # a common laptop screen
NB = ".jp-NotebookPanel:not(.lm-mod-hidden)"
TAB = "#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current"      # the notebook's tab
MODEL_NOT_FOUND = "Error displaying widget: model not found"
RELOADS = 2               # notebooks of a run whose first open may be loaded again (check_first_open)
RELOADED = []
NEWS = "notified about official Jupyter news"
CULLING = "Culling kernels with idle durations > 1800 seconds at 60 second intervals ..."
SHOWN_WITHIN = 150.0         # seconds to wait for stored outputs (60 s was passed on 2 cores busy with two suites)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    learner = new_learner(tmp_path_factory.mktemp("learner"))
    proc, info = serve(learner.copy, learner.home / "runtime", learner.env)
    try:
        yield learner, info, proc
    finally:
        stop(proc)


def _status(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        return err.code


def test_the_working_copy_served_on_loopback_with_a_token_from_its_index(lab):
    learner, info, proc = lab
    assert "Made your working copy of the notebooks" in learner.printed
    assert sorted(p.name for p in learner.copy.glob("*.ipynb")) == [p.name for p in collection()]
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
    """jupyter/overrides.json is where this environment's JupyterLab reads
    default settings, and the server hands them out (a user's own settings,
    none here, would still win)."""
    _, info, _ = lab
    assert (Path(sys.prefix) / OVERRIDES).read_text() == (SETTINGS / "overrides.json").read_text()
    notification = api(info, "/lab/api/settings/@jupyterlab/apputils-extension:notification")
    assert notification["schema"]["properties"]["fetchNews"]["default"] == "false"
    keys = api(info, "/lab/api/settings/@jupyterlab/shortcuts-extension:shortcuts")      # tools/build/shortcuts.py
    ours = json.loads((SETTINGS / "overrides.json").read_text())["@jupyterlab/shortcuts-extension:shortcuts"]
    assert keys["schema"]["properties"]["shortcuts"]["default"] == ours["shortcuts"] != []


def test_idle_kernels_are_culled(lab):
    """The running server read jupyter/jupyter_server_config.json: its kernel
    manager says so in the log when it starts its first kernel."""
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
    """postBuild's step: the settings into the image's environment (a server
    config already there is kept), the stored notebooks trusted in place."""
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
    assert all(notary.check_signature(nbformat.read(p, as_version=4)) for p in collection())


# ----- in the browser -----

@pytest.fixture(scope="module")
def browser(lab):
    with chromium() as browser:
        yield browser


def open_page(browser, info, path):
    """A new page on JupyterLab with the notebook at `path` open, as the URL
    `make lab` prints opens the index."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_navigation_timeout(90_000)
    open_notebook(page, f"http://127.0.0.1:{info['port']}", info["token"], path)
    page.locator(f"{NB} .jp-Cell").first.wait_for(timeout=90_000)
    return page


@pytest.fixture(scope="module")
def index_page(browser, lab):
    """The learner's page: the index, from which each notebook is opened by
    its link; with the seconds the page took to load."""
    _, info, _ = lab
    start = time.perf_counter()
    page = open_page(browser, info, "00-index.ipynb")
    yield page, time.perf_counter() - start
    page.close()


def shows(page, folder, path, within=SHOWN_WITHIN):
    """(what the file holds, what the page shows, (outputs in the file, in the
    page), the text of outputs that failed) once the page shows what the file
    holds, or after `within` seconds."""
    nb = nbformat.read(folder / path, as_version=4)
    expected, outputs = stored(nb), output_count(nb)
    deadline = time.monotonic() + within
    while True:
        shown, in_page, failed = rendered(page.locator(NB))
        if (shown, in_page) == (expected, outputs) or time.monotonic() > deadline:
            return expected, shown, (outputs, in_page), failed
        time.sleep(0.25)


def close_tab(page, discard=False):
    """Close the active notebook's tab, as a learner does (`discard`: saying
    Discard if JupyterLab asks whether to save)."""
    from playwright.sync_api import TimeoutError as UITimeout

    name = page.locator(TAB).inner_text().strip()
    page.locator(f"{TAB} .lm-TabBar-tabCloseIcon").click()
    if discard:
        with contextlib.suppress(UITimeout):
            page.get_by_role("button", name="Discard").click(timeout=3_000)
    page.locator(f"#jp-main-dock-panel .lm-TabBar-tab:has-text('{name}')").wait_for(state="detached", timeout=30_000)


def screenshot(page, name):
    """The first widget of 01 in view (its cell found by its tag), saved."""
    widget = of("01-dynamic-control-flow")[0]
    cell = widget_cell(page, cell_index(widget.notebook, widget.tag))
    cell.locator(".jp-OutputArea").scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))


def check_first_open(page, learner, info, name, timings):
    """What a first open must show. JupyterLab's widget manager can say it has
    restored its widgets before it has read the stored state; a widget drawn in
    between says "model not found" for good. A busy machine widens that window,
    so when that is all that failed the page is loaded once more (as
    docs/troubleshooting.md tells a learner), for at most RELOADS notebooks."""
    start = time.perf_counter()
    expected, shown, (outputs, in_page), failed = shows(page, learner.copy, name)
    if shown != expected and failed and set(failed) == {MODEL_NOT_FOUND}:
        RELOADED.append(name)
        assert len(RELOADED) <= RELOADS, (
            f"{', '.join(RELOADED)} each showed {MODEL_NOT_FOUND!r} on a first open: a learner would see it")
        timings.append(f"first open of {name}: a widget said {MODEL_NOT_FOUND!r}; the page was loaded again")
        page.reload()
        page.locator(f"#jp-main-dock-panel .lm-TabBar-tab:has-text('{name}')").click(timeout=90_000)
        page.locator(f"{NB} .jp-Cell").first.wait_for(timeout=90_000)
        expected, shown, (outputs, in_page), failed = shows(page, learner.copy, name)
    timings.append(f"first open of {name}: stored outputs drawn in {time.perf_counter() - start:.1f} s")
    assert in_page == outputs, f"{name} has {outputs} outputs, the page shows {in_page}"
    assert not failed, f"{name}: outputs that failed in the page: {failed}"
    assert shown == expected, (
        f"{name} shows {shown}, its stored outputs hold {expected}; outputs that failed: {failed}. A notebook's "
        "stored drawings and widget views must show on a first open, before anything runs. If this fails again "
        f"when run alone (pytest tests/test_lab.py -k '{name}'), re-execute the notebook (make notebooks) so that its "
        "widget state is stored")
    kernel = kernel_of(info, name, attached)
    assert page.get_by_text(NEWS).count() == 0, "the news pop-up is showing"
    assert page.locator(f"{TAB}.jp-mod-dirty").count() == 0, (
        f"opening {name} marked it changed (do its kernelspec and language_info equal what the collection's kernel, "
        "tools/runtime/kernel.py, reports?): closing it would ask to save")
    return kernel


def test_first_open_of_the_index(lab, index_page, timings):
    learner, info, _ = lab
    page, seconds = index_page
    timings.append(f"JupyterLab's page on the index loaded in {seconds:.1f} s")
    check_first_open(page, learner, info, "00-index.ipynb", timings)


@pytest.mark.parametrize("name", [p.name for p in collection()[1:]])
def test_first_open_from_the_index(lab, index_page, name, timings):
    """Each notebook opened by its link in the index's contents shows every
    stored drawing. Its tab closed, its kernel is left to the cull: the test
    ends it, as the Running panel would."""
    learner, info, _ = lab
    page, _ = index_page
    page.locator(f"{NB} .jp-RenderedMarkdown a[href*='/files/{name}?']").first.click()
    page.locator(f"{TAB}:has-text('{name}')").wait_for(timeout=30_000)
    try:
        kernel = check_first_open(page, learner, info, name, timings)
        if name.startswith("01-"):
            screenshot(page, "first-open-01-trusted.png")
    except BaseException:
        close_tab(page, discard=True)          # back to the index, for the next notebook
        raise
    close_tab(page)
    for session in api(info, "/api/sessions"):
        if session["path"] == name:
            api(info, f"/api/sessions/{session['id']}", "DELETE")
    wait_for_kernels(info, lambda kernels: kernel["id"] not in [k["id"] for k in kernels], timeout=30)


def test_two_tabs_of_one_notebook_keep_its_kernel(lab, browser):
    """A notebook open in two pages shares one kernel: closing one leaves it to
    the other, which still runs a cell; closing the last leaves it too, to the
    30-minute cull (jupyter/jupyter_server_config.json)."""
    learner, info, _ = lab
    name = "03-retain-graph.ipynb"
    pages = [open_page(browser, info, name)]
    try:
        first = kernel_of(info, name, attached)
        pages.append(open_page(browser, info, name))
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
        for session in api(info, "/api/sessions"):
            if session["path"] == name:
                api(info, f"/api/sessions/{session['id']}", "DELETE")
