"""The class hub (classroom/hub.py's `Hub`, as make load runs it) with two
learners simulated by classroom/hub_learner.py: both run all of notebook 01 and
redraw a widget, each in their own trusted copy, everything on loopback; a
learner past the memory limit is stopped alone and told why; a kernel outlives
a closed browser; the hub killed and started again keeps the learners' kernels,
the proxy and one idle culler; once stopped, nothing is left. The class as a
teacher starts it, and what one learner can reach of another's, are
test_hub_command.py's."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import nbformat
import psutil
import pytest

from classroom import hub_users
from classroom.hub import NODE_HELP, UNENCRYPTED, Hub, addresses, banner
from classroom.hub_learner import Learner
from classroom.singleuser import IDLE_KERNEL

NOTEBOOK = "01-dynamic-control-flow.ipynb"
NAMES = ("ada", "bob")
RUNAWAY = "cy"
USERS = f"hubt{os.getpid() % 1000}-"     # this run's learners' Unix users (another run's differ), removed at its end
GONE_AFTER = 60             # seconds after which the learner's runtime ends a kernel whose page went away
MEM_LIMIT = "1G"            # a learner's limit in this hub: 01 open (0.6 GB) fits, 3 GB does not


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
    # the learners' homes must be reachable by their own Unix users: not under pytest's
    # root-only temporary folder
    learners = Path(tempfile.mkdtemp(prefix="hub-learners-"))
    learners.chmod(0o711)
    os.environ.update(HUB_MEM_LIMIT=MEM_LIMIT, HUB_USER_PREFIX=USERS)
    try:
        hub = Hub(tmp_path_factory.mktemp("hub"), learners=learners)
        with hub:
            yield hub
    finally:
        del os.environ["HUB_MEM_LIMIT"], os.environ["HUB_USER_PREFIX"]
        shutil.rmtree(learners, ignore_errors=True)
        hub_users.remove_users(hub_users.with_prefix(USERS))


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


def execute(notebook, code, timeout=60, heard=None):
    """Run `code` in an open notebook's kernel; returns (status, what it
    printed, the kernel's states seen on the way). `heard`, a list, also gets
    what any cell printed meanwhile (a request sent before, which a kernel that
    was restarting runs first)."""
    if not notebook.ws.connected:
        notebook.connect()
    msg_id = notebook.send("execute_request", {"code": code, "silent": False, "store_history": False,
                                                "user_expressions": {}, "allow_stdin": False,
                                                "stop_on_error": True})
    deadline, printed, states, status, idle = time.monotonic() + timeout, [], [], None, False
    while time.monotonic() < deadline and not (idle and status):
        try:
            message = notebook.receive(deadline)
        except Exception:                      # the websocket closed or timed out: the kernel is gone
            break
        kind, content = message["header"]["msg_type"], message["content"]
        if kind == "status":
            states.append(content["execution_state"])
            if content["execution_state"] in ("restarting", "dead"):
                break
        if kind == "stream" and heard is not None:
            heard.append(content["text"])
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        if kind == "stream":
            printed.append(content["text"])
        elif kind == "error":
            printed.append(f"{content['ename']}: {content['evalue']}")
        elif kind == "execute_reply":          # on the shell channel: it may come before or after idle
            status = content["status"]
        elif kind == "status" and content["execution_state"] == "idle":
            idle = True
    return status, "".join(printed), states


def server_pid(hub, name):
    return hub.api(f"/users/{name}")["servers"][""]["state"]["pid"]


def kernel_pids(hub, name):
    server = psutil.Process(server_pid(hub, name))
    return {p.pid for p in server.children(recursive=True)}


def test_a_learner_past_the_memory_limit_is_stopped_and_another_redraws(hub, sessions):
    runaway = Learner(hub.url, RUNAWAY, hub.password)
    runaway.login()
    runaway.start()
    runaway.enter()
    blank = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("")])
    runaway.api("PUT", "contents/runaway.ipynb", {"type": "notebook", "content": blank})
    notebook = runaway.open("runaway.ipynb")
    bob = sessions["bob"][1]
    comm_id = next(iter(bob.controls()))
    redraws = []
    chunk = 64 * 2 ** 20
    grow = f"chunks = []\nfor _ in range({3 * 2 ** 30 // chunk}):\n    chunks.append(bytearray({chunk}))\n" \
           "print('allocated 3 GB')"
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(zip(("status", "printed", "states"),
                                                                 execute(notebook, grow), strict=True)))
    thread.start()
    while thread.is_alive():
        redraws.append(bob.change(comm_id, bob.controls()[comm_id]))
        time.sleep(0.2)
    thread.join()
    assert "allocated 3 GB" not in outcome["printed"], f"{RUNAWAY} allocated 3 GB past a {MEM_LIMIT} limit"
    assert "restarting" in outcome["states"] or "dead" in outcome["states"], outcome
    assert redraws and all(r is not None for r in redraws), "bob's redraw did not answer while cy ran away"
    runaway.api("GET", "status")             # cy's server itself still answers
    deadline, heard, tries = time.monotonic() + 90, [], []
    while "memory limit" not in "".join(heard) and time.monotonic() < deadline:      # the restarted kernel says why
        if notebook.ready(heard):
            tries.append(execute(notebook, "1 + 1", timeout=15, heard=heard))   # its first cell may be an earlier try's
        else:
            time.sleep(0.5)
    said = "".join(heard) or tries
    assert f"reached your memory limit of {float(MEM_LIMIT[:-1]):.1f} GB" in said, said
    assert "memory limit" not in execute(notebook, "2 + 2")[1], "the notice is said once"


def restart(hub, how):
    """Stop the hub's process with `how` (a signal) and start it again
    with the same state, password and ports."""
    hub.process.send_signal(how)
    hub.process.wait(timeout=60)
    hub.__enter__()


def culler_processes(hub):
    """This hub's idle cullers (another test's hub may run one too), by the hub's API address they talk to."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if "jupyterhub_idle_culler" in " ".join(p.info["cmdline"] or []):
            with contextlib.suppress(psutil.Error):
                if f":{hub.ports['HUB_API_PORT']}/" in p.environ().get("JUPYTERHUB_API_URL", ""):
                    found.append(p)
    return found


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_the_hub_restarts_without_stopping_the_learners(hub, sessions, how):
    marker = uuid.uuid4().hex
    for name in NAMES:
        assert execute(sessions[name][1], f"marker = {marker!r}")[0] == "ok"
    kernels = {name: kernel_pids(hub, name) for name in NAMES}
    cullers = len(culler_processes(hub))
    old_hub = hub.process.pid
    restart(hub, how)
    for name in NAMES:
        assert kernel_pids(hub, name) == kernels[name], f"{name}'s kernels changed across the hub's restart"
        status, printed, _ = execute(sessions[name][1], "print(marker)")
        assert printed.strip() == marker, f"{name}'s kernel lost its state: {status} {printed}"
    assert not psutil.pid_exists(old_hub) or psutil.Process(old_hub).status() == psutil.STATUS_ZOMBIE
    assert cullers == 1 and len(culler_processes(hub)) == cullers, "an idle culler outlived the hub it belonged to"
    learner = Learner(hub.url, "ada", hub.password)
    learner.login()                           # the same password still lets a learner in
    assert (hub.state / "hub.log").read_text().count("started by classroom/hub.py") >= 2, \
        "the hub's log was overwritten by its restart"


@pytest.mark.parametrize(("env", "said"), [
    ({"HUB_PASSWORD": "short"}, "HUB_PASSWORD is 5 characters long; the class password needs at least 8."),
    ({"HUB_ADMIN_PASSWORD": "short-admin-password"},
     "HUB_ADMIN_PASSWORD is 20 characters long; the admin password needs at least 32."),
    ({"HUB_ADMIN_PASSWORD": "a-class-password-that-is-also-the-admins"},
     "HUB_ADMIN_PASSWORD is the class password; the teacher's must be another."),
])
def test_a_bad_password_setting_gets_one_line(tmp_path, env, said):
    env = {**os.environ, "HUB_PASSWORD": "a-class-password-that-is-also-the-admins", **env,
           "HUB_DIR": str(tmp_path / "hub"), "HUB_LEARNERS": str(tmp_path / "learners")}
    done = subprocess.run([sys.executable, "-m", "classroom.hub", "--admin", "teacher"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"make hub: {said}"]


def test_the_banner_names_the_address_learners_type_and_warns_on_a_network():
    hub = SimpleNamespace(ports={"HUB_PORT": 8000}, password="p" * 12, secrets=Path("s"), learners=Path("l"),
                          admin=None, state=Path("b"), cgroup="class-hub-banner-test")
    text = banner(hub, "0.0.0.0", None)
    assert "0.0.0.0" not in text and UNENCRYPTED in text
    assert all(f"http://{a}:8000" in text for a in addresses("0.0.0.0"))
    assert UNENCRYPTED not in banner(hub, "127.0.0.1", None)


def test_a_kernel_outlives_a_closed_browser_and_the_page_autosaves(sessions):
    """ada's page goes away (the browser closed: its connection closed with
    1001): her kernel is still there, with her variables, past the 60 s after
    which the learner's runtime ends such a kernel; it is left to
    jupyter_server's idle culling (30 minutes) and her page autosaves every 30 s."""
    learner, notebook, *_ = sessions["ada"]
    assert execute(notebook, "kept = 'still here'")[0] == "ok"
    kernel = notebook.session["kernel"]["id"]
    notebook.disconnect(going_away=True)
    time.sleep(GONE_AFTER + 5)
    assert [k["id"] for k in learner.api("GET", "kernels")] == [kernel]
    notebook.connect()
    assert execute(notebook, "print(kept)")[1].strip() == "still here"
    settings = learner.http.get(learner.server_url("lab/api/settings/@jupyterlab/docmanager-extension:plugin"),
                                timeout=30).json()
    assert settings["settings"]["autosave"] is True and settings["settings"]["autosaveInterval"] <= 60, settings
    server = next(p for p in psutil.process_iter(["cmdline"])
                  if "jupyterhub-singleuser" in " ".join(p.info["cmdline"] or [])
                  and f"{os.sep}ada{os.sep}" in " ".join(p.info["cmdline"] or []))
    assert f"--MappingKernelManager.cull_idle_timeout={IDLE_KERNEL}" in server.cmdline()


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
