"""`make hub` as a teacher types it: the Makefile's target with no terminal, on ports and
folders moved as a second class's, two learners driven by classroom/hub_learner.py.
classroom/README.md's table says which test holds which row."""

import contextlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import nbformat
import psutil
import pytest
from learner import until

from classroom import hub_users
from classroom.hub import NODE_HELP, UNENCRYPTED, addresses, banner, cgroup_name
from classroom.hub_learner import Failed, Learner
from tools.loopback import free_port
from tools.runtime import kernel

ROOT = Path(__file__).resolve().parents[2]
USERS = f"hubm{os.getpid() % 1000}-"     # this run's learners' Unix users (another run's differ), removed at its end
PASSWORD = "a-class-password-for-the-test"
ADMIN = "teacher"               # make hub ADMIN=teacher: the teacher's JupyterHub admin
FAILED_BEFORE = 1               # failed logins from this address by the tests before the address test
PER_ADDRESS = 12                # HUB_FAILED_LOGINS_PER_ADDRESS for this class
BANNER_WITHIN = 300             # seconds: make's checks, the proxy's install on a fresh clone, the hub's start
NOTEBOOK = "01-dynamic-control-flow.ipynb"
NAMES = ("ada", "bob")
RUNAWAY = "cy"
MEM_LIMIT = "1G"                # a learner's limit in this class: 01 open (0.6 GB) fits, 3 GB does not

pytestmark = pytest.mark.skipif(os.geteuid() != 0 and os.environ.get("CI") != "true",
                                reason="make hub isolates learners as root")


def make_hub(*args, env, log, wait=True):
    """The process, or when `wait`, (its exit status, what it printed)."""
    # the Python that made .venv, so make does not make it again with another; Ctrl-C ignored, as `make hub &`
    # in a script starts it
    command = ["sh", "-c", 'trap "" INT QUIT; exec "$@"', "sh", "make", "-s", "hub",
               f"PYTHON={os.path.realpath(sys.executable)}", *args]
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    if not wait:
        return process
    return process.wait(timeout=300), Path(log).read_text()


def wait_for(log_path, text, process, timeout=BANNER_WITHIN):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        said = Path(log_path).read_text(errors="replace")
        if text in said:
            return said
        if process.poll() is not None:
            pytest.fail(f"make hub ended ({process.returncode}) before printing {text!r}:\n{said[-3000:]}")
        time.sleep(0.5)
    pytest.fail(f"make hub printed no {text!r} within {timeout} s:\n{Path(log_path).read_text()[-3000:]}")


def class_env(tmp, learners, ports, **extra):
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("HUB_", "MAKE", "MFLAGS"))}
    return {**keep, "HUB_DIR": str(tmp / "hub"), "HUB_LEARNERS": str(learners), "HUB_PASSWORD": PASSWORD,
            "HUB_USER_PREFIX": USERS, "HUB_MEM_LIMIT": "1G", "HUB_API_PORT": str(ports[1]),
            "HUB_PROXY_API_PORT": str(ports[2]), "HUB_FAILED_LOGINS_PER_ADDRESS": str(PER_ADDRESS), **extra}


def start(teacher, log_name, *args):
    teacher["started"].append(make_hub(*args, env=teacher["env"], log=teacher["tmp"] / log_name, wait=False))
    return teacher["started"][-1]


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.fail(NODE_HELP) if os.environ.get("CI") == "true" else pytest.skip(NODE_HELP)
    tmp = tmp_path_factory.mktemp("make-hub")
    learners = Path(tempfile.mkdtemp(prefix="hub-learners-"))     # reachable by the learners' users
    learners.chmod(0o711)
    ports = [free_port(), free_port(), free_port()]
    env = class_env(tmp, learners, ports)
    found = {"url": f"http://127.0.0.1:{ports[0]}", "ports": ports, "env": env, "learners": learners,
             "hub": tmp / "hub", "tmp": tmp, "started": []}
    try:
        found["process"] = start(found, "make-hub.log", f"PORT={ports[0]}", f"ADMIN={ADMIN}")
        found["banner"] = wait_for(tmp / "make-hub.log", "make hub STOP=1 stops the class.", found["process"])
        yield found
    finally:
        make_hub("STOP=1", env=env, log=tmp / "stop.log")
        for process in found["started"]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        hub_users.remove_users(lambda entry: entry.pw_name.startswith(USERS))
        shutil.rmtree(learners, ignore_errors=True)


def test_the_banner_prints_without_a_terminal_and_says_each_learner_is_isolated(teacher):
    banner = teacher["banner"]
    assert f"learners open http://127.0.0.1:{teacher['ports'][0]}" in banner
    assert f"the class password: {PASSWORD}" in banner
    assert "Each learner runs as a Unix user of their own" in banner and "WARNING" not in banner
    assert "Not isolated" in banner and "the network" in banner          # what the class shares, said too
    assert "Traceback" not in banner
    admin_file = teacher["hub"] / "state" / "admin-password"
    admin_password = admin_file.read_text().strip()
    assert f"/hub/admin: log in as {ADMIN} with the admin password {admin_password}" in banner
    assert admin_file.stat().st_mode & 0o777 == 0o600 and admin_password != PASSWORD and len(admin_password) >= 32


def learner_server(name):
    """(pid, port, cgroup memory folder) of a learner's server, found as root."""
    uid = pwd.getpwnam(hub_users.unix_name(name, USERS)).pw_uid
    for pid in hub_users.user_processes(uid):
        with contextlib.suppress(psutil.Error):
            server = psutil.Process(pid)
            if "jupyterhub-singleuser" in command_line(server):
                url = server.environ()["JUPYTERHUB_SERVICE_URL"]
                memory = next(line.split(":", 2)[2] for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()
                              if ":memory:" in line or line.startswith("0::"))
                return pid, int(url.rsplit(":", 1)[1].split("/")[0]), memory
    raise AssertionError(f"no server of {name} found")


def session(url, name):
    """Log in, start, Run All of 01, change its first widget."""
    learner = Learner(url, name, PASSWORD)
    learner.login()
    started = learner.start()
    learner.enter()
    notebook = learner.open(NOTEBOOK)
    seconds, raised = notebook.run_all()
    comm_id, change = next(iter(notebook.controls().items()))
    return learner, notebook, started, seconds, raised, notebook.change(comm_id, change)


@pytest.fixture(scope="module")
def two(teacher):
    try:
        with ThreadPoolExecutor(max_workers=len(NAMES)) as pool:
            return dict(zip(NAMES, pool.map(lambda name: session(teacher["url"], name), NAMES), strict=True))
    except Failed as error:         # the hub's log says why (a 500's page does not)
        log = (teacher["hub"] / "hub.log").read_text(errors="replace")
        pytest.fail(f"{error}\nthe hub's log ends:\n{log[-4000:]}")


def test_two_learners_run_01_and_redraw_a_widget(two, timings):
    for name, (_, _, started, seconds, raised, redraw) in two.items():
        timings.append(f"hub: {name} started in {started:.1f} s, ran 01 in {seconds:.1f} s, "
                       f"redraw {1000 * redraw:.0f} ms" if redraw else f"hub: {name}: no redraw")
        assert raised == [], f"{name}: {raised}"
        assert redraw is not None and redraw > 0


def test_each_learner_works_in_their_own_trusted_copy_everything_on_loopback(teacher, two):
    for name in NAMES:
        copy = teacher["learners"] / name / "my-notebooks"
        assert (copy / NOTEBOOK).exists()
        code = [c for c in two[name][1].nb.cells if c.cell_type == "code"]
        assert all(c.metadata.get("trusted") for c in code)
        server = psutil.Process(learner_server(name)[0])
        assert server.cwd() == str(copy.parent)
        assert any(a == f"--ServerApp.root_dir={copy}" for a in server.cmdline())
    proxy = psutil.Process(int((teacher["hub"] / "state" / "proxy.pid").read_text()))
    processes = [proxy, *psutil.Process(teacher["process"].pid).children(recursive=True)]
    assert {address.ip for address in listening(processes)} == {"127.0.0.1"}, listening(processes)


def execute(notebook, code, timeout=60, heard=None):
    """(status, printed, states seen); `heard` also gets any cell's output (an earlier request runs first)."""
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


def kernel_pids(name):
    return {p.pid for p in psutil.Process(learner_server(name)[0]).children(recursive=True)}


def command_line(process):
    """"" for a process that ended (a zombie, or gone) while the tree was read."""
    try:
        return " ".join(process.cmdline())
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return ""


def children(pid, text):
    return [p for p in psutil.Process(pid).children(recursive=True) if text in command_line(p)]


def listening(processes=None):
    found = psutil.net_connections(kind="inet") if processes is None else [
        c for p in processes for c in p.net_connections(kind="inet")]
    return {c.laddr for c in found if c.status == psutil.CONN_LISTEN}


ATTACK = textwrap.dedent("""
    import http.client, json, os, signal
    given = json.loads({given!r})
    def attempt(do):
        try:
            do()
            return "done"
        except Exception as error:
            return type(error).__name__
    def change(do):                 # what would harm the class is tried only from the learner's kernel
        return attempt(do) if given["writes"] else "skipped"
    def write(path, text="x"):
        with open(path, "w") as handle:
            handle.write(text)
    def status(port, path, token=None):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        connection.request("GET", path, headers={{"Authorization": f"token {{token}}"}} if token else {{}})
        return connection.getresponse().status
    cg = "/sys/fs/cgroup/memory" if os.path.isdir("/sys/fs/cgroup/memory") else "/sys/fs/cgroup"
    mine = next(l.split(":", 2)[2] for l in open("/proc/self/cgroup").read().splitlines()
                if ":memory:" in l or l.startswith("0::"))
    limit = "memory.limit_in_bytes" if cg.endswith("memory") else "memory.max"
    found = {{
        "read bob's notebook": attempt(lambda: open(given["bob_notebook"]).read()),
        "list bob's home": attempt(lambda: os.listdir(given["bob_home"])),
        "write into bob's home": change(lambda: write(given["bob_home"] + "/planted")),
        "write bob's notebook": change(lambda: write(given["bob_notebook"])),
        "read bob's server's environment": attempt(lambda: open(f"/proc/{{given['bob_pid']}}/environ").read()),
        "signal bob's server": change(lambda: os.kill(given["bob_pid"], signal.SIGTERM)),
        "list the class's homes": attempt(lambda: os.listdir(given["learners"])),
        "list the hub's folder": attempt(lambda: os.listdir(given["hub"])),
        "read the class password": attempt(lambda: open(given["hub"] + "/state/class-password").read()),
        "read the proxy token": attempt(lambda: open(given["hub"] + "/state/proxy-token").read()),
        "read the hub's database": attempt(lambda: open(given["hub"] + "/state/jupyterhub.sqlite", "rb").read()),
        "read the hub's log": attempt(lambda: open(given["hub"] + "/hub.log").read()),
        "raise my own memory limit": change(lambda: write(cg + mine + "/" + limit, "99999999999")),
        "change bob's memory limit": change(lambda: write(cg + given["bob_cgroup"] + "/" + limit, "1")),
        "leave my cgroup": change(lambda: write(cg + "/cgroup.procs", str(os.getpid()))),
        "see the machine's /tmp file": "done" if os.path.exists(given["tmp_marker"]) else "absent",
        "see the machine's /var/tmp file": "done" if os.path.exists(given["var_marker"]) else "absent",
        "see bob's /tmp file": "done" if os.path.exists("/tmp/bob-was-here") else "absent",
        "see any other process": "done" if [p for p in os.listdir("/proc") if p.isdigit()
                                              and os.stat("/proc/" + p).st_uid != os.getuid()] else "absent",
    }}
    found["list the class's cgroups"] = attempt(lambda: os.listdir(cg + os.path.dirname(given["bob_cgroup"])))
    found["bob's server, no token"] = status(given["bob_port"], "/user/bob/api/contents")
    found["bob's server, ada's token"] = status(given["bob_port"], "/user/bob/api/contents",
                                                os.environ["JUPYTERHUB_API_TOKEN"])
    found["uid"] = os.getuid()
    print(json.dumps(found))
""")


def test_from_one_learners_kernel_nothing_of_anothers_or_the_hubs_is_reached(teacher, two):
    bob_pid, bob_port, bob_cgroup = learner_server("bob")
    assert execute(two["bob"][1], "open('/tmp/bob-was-here', 'w').write('b')")[0] == "ok"
    tmp_marker = Path(tempfile.mkstemp(prefix="machine-tmp-")[1])
    var_marker = Path("/var/tmp") / tmp_marker.name
    var_marker.write_text("the machine's")
    os.chmod(tmp_marker, 0o644)
    os.chmod(var_marker, 0o644)
    given = {"bob_notebook": str(teacher["learners"] / "bob" / "my-notebooks" / NOTEBOOK),
             "bob_home": str(teacher["learners"] / "bob"), "bob_pid": bob_pid, "bob_port": bob_port,
             "bob_cgroup": bob_cgroup, "learners": str(teacher["learners"]), "hub": str(teacher["hub"]),
             "tmp_marker": str(tmp_marker), "var_marker": str(var_marker), "writes": True}
    try:
        status, printed, _ = execute(two["ada"][1], ATTACK.format(given=json.dumps(given)))
        # the same probe run here, as root with no isolation, reaches them: it can tell
        reads = ATTACK.format(given=json.dumps({**given, "writes": False}))
        unisolated = subprocess.run([sys.executable, "-c", reads], capture_output=True,
                                    text=True, timeout=120, env={**os.environ, "JUPYTERHUB_API_TOKEN": "none"})
    finally:
        tmp_marker.unlink()
        var_marker.unlink()
    as_root = json.loads(unisolated.stdout.strip().splitlines()[-1])
    assert {as_root[k] for k in ("read bob's notebook", "read bob's server's environment", "read the class password",
                                 "see the machine's /tmp file", "see any other process")} == {"done"}, as_root
    assert status == "ok", printed
    found = json.loads(printed.strip().splitlines()[-1])
    assert found.pop("uid") != 0, "ada's kernel runs as root"
    http = {k: found.pop(k) for k in ("bob's server, no token", "bob's server, ada's token")}
    assert all(code in (302, 401, 403) for code in http.values()), http
    reached = {what: how for what, how in found.items() if how == "done"}
    assert reached == {}, f"ada's kernel reached: {reached}"
    assert psutil.pid_exists(bob_pid), "bob's server was stopped by ada"
    assert execute(two["bob"][1], "print(open('/tmp/bob-was-here').read())")[1].strip() == "b"


SUBSCRIBE = textwrap.dedent("""
    import time, zmq
    context, heard = zmq.Context(), []
    sockets = []
    for address in {addresses!r}:
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(address)
        sockets.append(sub)
    poller = zmq.Poller()
    for sub in sockets:
        poller.register(sub, zmq.POLLIN)
    deadline = time.monotonic() + {seconds}
    while time.monotonic() < deadline:
        for sub, _ in poller.poll(200):
            heard.append(b"".join(sub.recv_multipart()))
    print(sum(b"bob-secret" in message for message in heard), "messages of bob's heard")
""")
BOB_TALKS = "import time\nfor i in range(150):\n    print('bob-secret', i)\n    time.sleep(0.1)"   # 15 s


def bob_kernel_endpoints(pid):
    """bob's kernel's TCP ports, and its Unix sockets through its own mount namespace (/proc/<pid>/root)."""
    kernels = children(pid, f"-m {kernel.MODULE} ")
    assert kernels, "bob has no kernel"
    tcp = [f"tcp://127.0.0.1:{address.port}" for address in listening(kernels)]
    runtime = Path(f"/proc/{kernels[0].pid}/root/tmp/jupyter-runtime")
    ipc = [f"ipc://{path}" for path in runtime.glob("kernel-*-ipc-*")] if runtime.exists() else []
    return tcp, ipc


def test_one_learner_cannot_subscribe_to_anothers_kernel(teacher, two):
    bob_pid = learner_server("bob")[0]
    tcp, ipc = bob_kernel_endpoints(bob_pid)
    assert ipc, "bob's kernel has no Unix sockets: is the ipc transport off?"
    talking = threading.Thread(target=lambda: execute(two["bob"][1], BOB_TALKS, timeout=120))
    talking.start()
    time.sleep(2)
    try:       # both listen, 3 s each, while bob talks (15 s)
        root = subprocess.run([sys.executable, "-c", SUBSCRIBE.format(addresses=ipc, seconds=3)], capture_output=True,
                              text=True, timeout=60)
        status, printed, _ = execute(two["ada"][1], SUBSCRIBE.format(addresses=tcp, seconds=3))
    finally:
        talking.join()
    assert status == "ok" and printed.strip().endswith("0 messages of bob's heard"), printed
    assert root.returncode == 0 and not root.stdout.startswith("0 "), f"the probe hears nothing anywhere: {root}"


def test_a_learner_past_the_memory_limit_is_stopped_and_another_redraws(teacher, two):
    runaway = Learner(teacher["url"], RUNAWAY, PASSWORD)
    runaway.login()
    runaway.start()
    runaway.enter()
    blank = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("")])
    runaway.api("PUT", "contents/runaway.ipynb", {"type": "notebook", "content": blank})
    notebook = runaway.open("runaway.ipynb")
    bob = two["bob"][1]
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


LIMITS = textwrap.dedent("""
    import json, os, subprocess, sys, threading, time
    def cpu_seconds():
        t = os.times()
        return t.children_user + t.children_system
    before, started = cpu_seconds(), time.monotonic()
    spin = "import time\\nend = time.monotonic() + 4\\nwhile time.monotonic() < end: pass"
    busy = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    for b in busy:
        b.wait()
    cores = (cpu_seconds() - before) / (time.monotonic() - started)
    threads, refused = [], None
    stop = threading.Event()
    try:
        for _ in range(2000):
            t = threading.Thread(target=stop.wait)
            t.start()
            threads.append(t)
    except RuntimeError as error:
        refused = str(error)
    stop.set()
    for t in threads:
        t.join()
    print(json.dumps({"cores": cores, "threads": len(threads), "refused": refused,
                      "inductor": os.environ.get("TORCHINDUCTOR_CACHE_DIR"), "home": os.environ["HOME"],
                      "cgroup": open("/proc/self/cgroup").read()}))
""")


def test_a_learner_gets_one_core_and_their_task_limit_and_keeps_compile_caches_at_home(teacher, two):
    status, printed, _ = execute(two["ada"][1], LIMITS, timeout=120)
    assert status == "ok", printed
    found = json.loads(printed.strip().splitlines()[-1])
    assert found["cores"] < 1.25, f"two busy processes got {found['cores']:.2f} cores"
    assert found["refused"] and found["threads"] < 1024, found
    assert found["inductor"] == f"{found['home']}/.cache/torchinductor" and found["home"] == str(
        teacher["learners"] / "ada")
    unix = hub_users.unix_name("ada", USERS)
    assert f"/{cgroup_name(teacher['hub'])}/{unix}" in found["cgroup"], found["cgroup"]


def test_a_kernel_outlives_a_closed_browser_and_the_page_autosaves(two):
    learner, notebook, *_ = two["ada"]
    assert execute(notebook, "kept = 'still here'")[0] == "ok"
    kernel = notebook.session["kernel"]["id"]
    notebook.disconnect()                      # closed with 1001, as a browser closes
    time.sleep(5)
    assert [k["id"] for k in learner.api("GET", "kernels")] == [kernel]
    notebook.connect()
    assert execute(notebook, "print(kept)")[1].strip() == "still here"
    settings = learner.http.get(learner.server_url("lab/api/settings/@jupyterlab/docmanager-extension:plugin"),
                                timeout=30).json()
    assert settings["settings"]["autosave"] is True and settings["settings"]["autosaveInterval"] <= 60, settings
    server = psutil.Process(learner_server("ada")[0])
    assert "--MappingKernelManager.cull_idle_timeout=1800" in server.cmdline()      # 30 minutes


def test_make_load_on_the_running_class_removes_its_learners_when_interrupted(teacher, two):
    from classroom.load import NAMES
    env = {**teacher["env"], "PYTHONPATH": str(ROOT)}
    load = subprocess.Popen([sys.executable, "-m", "classroom.load", "--url", teacher["url"], "-n", "2"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    homes = [teacher["learners"] / f"{NAMES}{i:02d}" for i in range(2)]

    def users():
        return [e.pw_name for e in pwd.getpwall() if Path(e.pw_dir) in homes]
    deadline = time.monotonic() + 300
    while not (all(h.is_dir() for h in homes) and len(users()) == 2) and time.monotonic() < deadline:
        assert load.poll() is None, load.stdout.read()
        time.sleep(0.5)
    assert len(users()) == 2, "make load's learners never started"
    load.send_signal(signal.SIGTERM)
    said = load.communicate(timeout=180)[0]
    assert load.returncode != 0 and "removed the simulated learners' Unix users and folders" in said, said
    assert users() == [] and not any(h.exists() for h in homes), said
    assert hub_users.class_processes(teacher["learners"]) and all(psutil.pid_exists(learner_server(n)[0])
                                                                 for n in ("ada", "bob"))


def culler_processes(api_port):
    """This class's idle cullers (another test's hub may run one too), by the hub's API address."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if "jupyterhub_idle_culler" in " ".join(p.info["cmdline"] or []):
            with contextlib.suppress(psutil.Error):
                if f":{api_port}/" in p.environ().get("JUPYTERHUB_API_URL", ""):
                    found.append(p)
    return found


def test_the_hub_killed_and_started_on_other_ports_keeps_the_proxy_and_the_learners_kernels(teacher, two):
    marker = uuid.uuid4().hex
    for name in NAMES:
        assert execute(two[name][1], f"marker = {marker!r}")[0] == "ok"
    kernels = {name: kernel_pids(name) for name in NAMES}
    cullers = culler_processes(teacher["ports"][1])
    proxy = int((teacher["hub"] / "state" / "proxy.pid").read_text())
    jupyterhub = children(teacher["process"].pid, "-m jupyterhub -f")
    assert len(cullers) == 1 and len(jupyterhub) == 1, (cullers, jupyterhub)
    ignored = int(next(line for line in Path(f"/proc/{cullers[0].pid}/status").read_text().splitlines()
                       if line.startswith("SigIgn:")).split()[1], 16)
    assert not ignored >> (signal.SIGINT - 1) & 1, "the culler ignores SIGINT, which JupyterHub stops it with"
    jupyterhub[0].kill()
    assert teacher["process"].wait(timeout=120) != 0
    other = free_port()
    teacher["process"] = start(teacher, "restart.log", f"PORT={other}")
    said = wait_for(teacher["tmp"] / "restart.log", "make hub STOP=1 stops the class.", teacher["process"])
    notice = f"The class's proxy is running on 127.0.0.1:{teacher['ports'][0]}"
    assert notice in said and "it is kept, with its ports" in said and f"HUB_PORT={other} is not used" in said
    assert said.index(notice) < said.index("JupyterHub for the class"), said
    assert f"learners open http://127.0.0.1:{teacher['ports'][0]}" in said
    assert f"log in as {ADMIN} with the admin password" in said          # no ADMIN= again: the teacher is kept
    assert int((teacher["hub"] / "state" / "proxy.pid").read_text()) == proxy and psutil.pid_exists(proxy)
    for name in NAMES:
        assert kernel_pids(name) == kernels[name], f"{name}'s kernels changed across the hub's restart"
        status, printed, _ = execute(two[name][1], "print(marker)")
        assert printed.strip() == marker, f"{name}'s kernel lost its state: {status} {printed}"
    assert len(culler_processes(teacher["ports"][1])) == 1, "an idle culler outlived the hub it belonged to"
    assert (teacher["hub"] / "hub.log").read_text().count("started by classroom/hub.py") >= 2, \
        "the hub's log was overwritten by its restart"


def admin_api(teacher_session, url, path, method="GET"):
    reply = teacher_session.http.request(method, f"{url}/hub/api{path}", timeout=60, headers={
        "X-XSRFToken": teacher_session.http.cookies.get("_xsrf", path="/hub/") or ""})
    assert reply.status_code < 300, (method, path, reply.status_code, reply.text[:300])
    return reply.json() if reply.content else None


def test_the_teacher_has_jupyterhubs_admin_page_and_learners_do_not(teacher, two):
    url = teacher["url"]
    with pytest.raises(Failed, match="403"):
        Learner(url, ADMIN, PASSWORD).login()          # the class password makes no one the teacher (FAILED_BEFORE)
    admin = Learner(url, ADMIN, (teacher["hub"] / "state" / "admin-password").read_text().strip())
    admin.login()
    assert admin.http.get(f"{url}/hub/admin", timeout=60).status_code == 200
    users = {u["name"]: u for u in admin_api(admin, url, "/users")}
    assert {"ada", "bob"} <= set(users) and users["bob"]["servers"] and users[ADMIN]["admin"]
    assert not users["ada"]["admin"]
    def bob():
        return admin_api(admin, url, "/users/bob")["servers"]
    admin_api(admin, url, "/users/bob/server", "DELETE")
    until(bob, lambda servers: not servers, 120, "the teacher could not stop bob's server")
    assert psutil.pid_exists(learner_server("ada")[0])
    admin_api(admin, url, "/users/bob/server", "POST")
    until(bob, lambda servers: servers.get("", {}).get("ready"), 120, "the teacher could not start bob's server")
    ada = two["ada"][0]
    assert ada.http.get(f"{url}/hub/admin", timeout=60).status_code == 403
    assert ada.http.get(f"{url}/hub/api/users", timeout=60).status_code == 403


def test_an_address_is_refused_only_past_its_limit_and_no_header_resets_it(teacher, two):
    url = teacher["url"]
    for n in range(PER_ADDRESS - FAILED_BEFORE):
        with pytest.raises(Failed, match="403"):
            Learner(url, f"typo{n}", "not-the-password").login()
    spoofing = Learner(url, "carol", PASSWORD)
    spoofing.http.headers.update({"X-Real-Ip": "10.0.0.5", "X-Forwarded-For": "10.0.0.6", "X-Class-Proxy": "guess"})
    with pytest.raises(Failed, match="429"):
        spoofing.login()
    with pytest.raises(Failed, match="429"):
        Learner(url, "dan", PASSWORD).login()


def test_sigterm_stops_the_hub_alone_then_stop_leaves_nothing(teacher, two):
    make_process = teacher["process"]
    hub_py = children(make_process.pid, "classroom.hub")
    assert len(hub_py) == 1, hub_py
    servers = [learner_server(name)[0] for name in NAMES]
    hub_py[0].send_signal(signal.SIGTERM)
    assert make_process.wait(timeout=120) == 0, (teacher["tmp"] / "restart.log").read_text()[-2000:]
    assert all(psutil.pid_exists(pid) for pid in servers), "the class stopped with the hub"
    stopped, said = make_hub("STOP=1", env=teacher["env"], log=teacher["tmp"] / "stop-now.log")
    assert stopped == 0 and "the class is stopped" in said, said
    uids = [pwd.getpwnam(hub_users.unix_name(n, USERS)).pw_uid for n in NAMES]
    left = [pid for uid in uids for pid in hub_users.user_processes(uid)]
    assert left == [] and hub_users.class_processes(teacher["learners"]) == []
    assert not {address.port for address in listening()} & set(teacher["ports"])
    groups = [*Path("/sys/fs/cgroup").glob(cgroup_name(teacher["hub"])), *Path("/sys/fs/cgroup").glob(
        f"*/{cgroup_name(teacher['hub'])}")]
    assert groups == [], "the class's cgroups are left"


def test_after_the_course_one_command_removes_the_learners_users_and_keeps_their_notebooks(teacher, two):
    forgot, said = make_hub("FORGET=1", env=teacher["env"], log=teacher["tmp"] / "forget.log")
    unix = [hub_users.unix_name(name, USERS) for name in ("ada", "bob")]
    assert forgot == 0 and all(name in said for name in unix), said
    for name in unix:
        with pytest.raises(KeyError):
            pwd.getpwnam(name)
    assert (teacher["learners"] / "ada" / "my-notebooks" / NOTEBOOK).exists()
    assert hub_users.class_processes(teacher["learners"]) == []


def test_make_load_runs_a_class_on_a_hub_of_its_own_and_leaves_nothing():
    folder = Path(tempfile.mkdtemp(prefix="hub-load-"))        # reachable by the learner's Unix user
    folder.chmod(0o711)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    try:
        done = subprocess.run([sys.executable, "-m", "classroom.load", "-n", "1", "--changes", "1"], cwd=ROOT,
                              env={**env, "HUB_DIR": str(folder)}, capture_output=True, text=True, timeout=900)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "learners isolated: yes" in done.stdout and "| 1 | " in done.stdout
    assert done.stdout.rstrip().endswith("left running or listening after the hub stopped: nothing")


def test_a_class_that_cannot_be_isolated_is_refused_and_started_only_by_name(tmp_path):
    closed = tmp_path / "closed"             # pytest's folder is root's alone: no learner reaches it
    closed.mkdir()
    ports = [free_port(), free_port(), free_port()]
    env = class_env(tmp_path, closed / "learners", ports)
    refused, said = make_hub(f"PORT={ports[0]}", env=env, log=tmp_path / "refused.log")
    assert refused != 0 and "no isolation between learners here" in said and "UNISOLATED=1" in said, said
    assert ports[0] not in {address.port for address in listening()}
    process = make_hub(f"PORT={ports[0]}", "UNISOLATED=1", env=env, log=tmp_path / "unisolated.log", wait=False)
    try:
        banner = wait_for(tmp_path / "unisolated.log", "make hub STOP=1 stops the class.", process)
        assert "WARNING: no isolation between learners" in banner and "Traceback" not in banner
        assert f"the class password: {PASSWORD}" in banner
    finally:
        make_hub("STOP=1", env=env, log=tmp_path / "stop.log")
        process.wait(timeout=60)


@pytest.mark.parametrize(("env", "said"), [
    ({"HUB_PASSWORD": "short"}, "HUB_PASSWORD is 5 characters long; the class password needs at least 8."),
    ({"HUB_ADMIN_PASSWORD": "short-admin-password"},
     "HUB_ADMIN_PASSWORD is 20 characters long; the admin password needs at least 32."),
    ({"HUB_ADMIN_PASSWORD": "a-class-password-that-is-also-the-admins"},
     "HUB_ADMIN_PASSWORD is the class password; the teacher's must be another."),
    ({"HUB_API_PORT": "80 81"}, "HUB_API_PORT must be a port number, such as 8081 (it is '80 81')."),
])
def test_a_bad_password_or_port_setting_gets_one_line(tmp_path, env, said):
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
