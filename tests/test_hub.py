"""`make hub` with two learners (tools/classroom/hub.py, hub/jupyterhub_config.py,
simulated by tools/classroom/hub_learner.py): both log in at once, start a server,
run all of notebook 01 over the kernel's websocket and change a widget,
which redraws; each has a working copy of their own; everything listens on
127.0.0.1; closing a notebook shuts its kernel down; and once the hub is
stopped nothing it started is left running or listening. The checks are
shown failing: a wrong password, a cell that raises without its tag, a
process and a socket left behind."""

import os
import shutil
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import nbformat
import psutil
import pytest

from tools.classroom.hub import NODE_HELP, Hub
from tools.classroom.hub_learner import Failed, Learner

NOTEBOOK = "01-dynamic-control-flow.ipynb"
NAMES = ("ada", "bob")


def session(hub, name):
    """Log in, start, Run All of 01, change its first widget."""
    learner = Learner(hub.url, name, hub.password)
    learner.login()
    started = learner.start()
    learner.enter()
    notebook = learner.open(NOTEBOOK)
    seconds, raised = notebook.run_all()
    comm_id, change = next(iter(notebook.controls().items()))
    return learner, notebook, started, seconds, raised, notebook.change(comm_id, change)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    if not (shutil.which("node") and shutil.which("npm")):
        if os.environ.get("CI") == "true":
            pytest.fail(NODE_HELP)
        pytest.skip(NODE_HELP)
    hub = Hub(tmp_path_factory.mktemp("hub"))
    with hub:
        yield hub


@pytest.fixture(scope="module")
def sessions(hub):
    with ThreadPoolExecutor(max_workers=len(NAMES)) as pool:
        return dict(zip(NAMES, pool.map(lambda name: session(hub, name), NAMES), strict=True))


def test_two_learners_run_01_and_redraw_a_widget(sessions, timings):
    for name, (_, _, started, seconds, raised, redraw) in sessions.items():
        timings.append(f"hub: {name} started in {started:.1f} s, ran 01 in {seconds:.1f} s, "
                       f"redraw {1000 * redraw.total:.0f} ms" if redraw else f"hub: {name}: no redraw")
        assert raised == [], f"{name}: {raised}"
        assert redraw is not None and redraw.total > redraw.kernel >= 0


def test_each_learner_works_in_their_own_trusted_copy(hub, sessions):
    """Made as `make lab` makes it: in their home, and trusted there, so its
    stored drawings show on first open."""
    for name in NAMES:
        copy = hub.learners / name / "my-notebooks"
        assert (copy / NOTEBOOK).exists()
        code = [c for c in sessions[name][1].nb.cells if c.cell_type == "code"]
        assert all(c.metadata.get("trusted") for c in code)
        server = psutil.Process(hub.api(f"/users/{name}")["servers"][""]["state"]["pid"])
        assert server.cwd() == str(copy.parent)
        assert any(a == f"--ServerApp.root_dir={copy}" for a in server.cmdline())


def test_everything_listens_on_loopback_only(hub, sessions):
    addresses = {c.laddr.ip for p in hub.processes() for c in p.net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN}
    assert addresses == {"127.0.0.1"}


def test_a_wrong_password_is_refused(hub):
    with pytest.raises(Failed, match="login answered 403"):
        Learner(hub.url, "mallory", "not-the-class-password").login()


def test_run_all_reports_a_cell_that_raises_untagged(sessions):
    learner = sessions["ada"][0]
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("1 / 0", metadata={"tags": ["raises-exception"]}),
        nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("x / 0")])
    learner.api("PUT", "contents/raises.ipynb", {"type": "notebook", "content": nb})
    notebook = learner.open("raises.ipynb")
    try:
        _, raised = notebook.run_all()
    finally:
        notebook.close()
    assert [line.split(":")[0] for line in raised] == ["cell 2"]


def test_closing_a_notebook_shuts_its_kernel_down(sessions):
    for learner, notebook, *_ in sessions.values():
        notebook.close()
        deadline = time.monotonic() + 30
        while learner.api("GET", "kernels") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert learner.api("GET", "kernels") == []


def test_stopping_the_hub_leaves_nothing(hub, sessions):
    servers = [hub.api(f"/users/{name}")["servers"][""]["state"]["pid"] for name in NAMES]
    hub.stop()
    assert hub.process.returncode is not None
    assert hub.leftovers() == []
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
                   for pid in servers)


def test_leftovers_finds_a_process_and_a_socket(tmp_path):
    """The check above fails when something is left: a process of the hub's
    tree still running, a socket still listening on one of its ports."""
    hub = Hub(tmp_path)
    stray = subprocess.Popen(["sleep", "60"])
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", hub.ports["HUB_PORT"]))
        listener.listen()
        hub.started = [psutil.Process(stray.pid)]
        try:
            assert set(hub.leftovers()) == {stray.pid, hub.ports["HUB_PORT"]}
        finally:
            stray.kill()
            stray.wait(timeout=10)
