"""What keeps one learner of `make hub` from another, piece by piece (classroom/hub_users.py,
hub_spawner.py, hub_kernel.py); test_hub.py drives `make hub` itself."""

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from learner import until
from tornado.httputil import HTTPHeaders
from tornado.web import HTTPError

from classroom import hub_spawner, hub_users
from classroom.hub_spawner import ClassPassword, client_address, socket_owner

ROOT = Path(__file__).resolve().parents[2]
AS_ROOT = os.geteuid() == 0 and sys.platform.startswith("linux")
needs_root = pytest.mark.skipif(not AS_ROOT and os.environ.get("CI") != "true",
                                reason="the mounts and users of make hub need root on Linux")


# ----- the isolation check make hub runs -----

@needs_root
def test_the_check_names_the_cause_when_a_mount_fails(monkeypatch):
    monkeypatch.setattr(hub_users, "PRIVATE_TMP", "size=not-a-size")
    said = hub_users.why_not_isolated()
    assert said.startswith("this machine does not let root give each learner a private /proc and /tmp")
    assert "mount tmpfs /tmp: Invalid argument" in said


@needs_root
def test_the_check_names_a_folder_or_an_installation_learners_cannot_reach(monkeypatch):
    base = Path(tempfile.mkdtemp(prefix="private-home-"))
    base.chmod(0o755)
    closed = base / "home" / "teacher"
    (closed / "env" / "bin").mkdir(parents=True)
    (closed / "env" / "bin" / "python").write_text("")
    closed.chmod(0o700)
    said = hub_users.why_not_isolated([closed / "env" / "bin" / "python"])
    assert f"cannot reach {closed / 'env' / 'bin' / 'python'}: {closed} is closed to other users (mode 0700)" in said
    assert said.endswith("make hub PYTHON=/usr/bin/python3")
    learners = base / "learners"
    (learners / "class").mkdir(parents=True)
    learners.chmod(0o700)
    said = hub_users.why_not_isolated([learners / "class"])
    assert said.endswith(f"chmod o+x {learners}; or put the class in a clone every user can read (under /srv or /opt)")
    command = "chmod " + said.split(": chmod ", 1)[1].split(";")[0]
    subprocess.run(command, shell=True, check=True)
    assert hub_users.why_not_isolated([learners / "class"]) is None       # the advice, run as printed, was enough
    installation = closed / ".pyenv"           # a venv made with --copies: its standard library lies there
    installation.mkdir()
    monkeypatch.setattr(sys, "base_prefix", str(installation))
    assert f"cannot reach {installation}" in hub_users.why_not_isolated(hub_users.class_paths(learners))
    closed.chmod(0o755)
    assert hub_users.why_not_isolated([closed / "env" / "bin" / "python"]) is None     # the file itself is bound back
    shutil.rmtree(base)


# ----- one Unix user per learner name -----

names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=400, deadline=None)
@given(st.lists(names, min_size=2, max_size=30, unique=True))
@example(["c5.bea", "c5bea-f4932269", "ada_", "ada", "Ada", "ada\u200b", "zoë", "zo", "a" * 25, "a" * 26])
def test_no_two_learner_names_share_a_unix_user(learners):
    users = [hub_users.unix_name(name) for name in learners]
    assert len(set(users)) == len(users), dict(zip(learners, users, strict=True))
    for user in users:
        assert len(user) <= 32 and user.isascii() and not user[len(hub_users.PREFIX):].startswith("-")


@pytest.fixture
def learners(tmp_path):
    """A class's folder of homes; the Unix users this test makes (hubi-*) are removed after it."""
    folder = tmp_path / "learners"
    (folder / "ada").mkdir(parents=True)
    try:
        yield folder
    finally:
        hub_users.remove_users(lambda entry: entry.pw_name.startswith("hubi-"))


@needs_root
def test_a_user_of_that_name_that_is_not_this_learners_is_refused(learners):
    unix = "hubi-collide"
    hub_users.ensure_user(unix, learners / "ada")
    assert hub_users.ensure_user(unix, learners / "ada").pw_name == unix      # the same learner again
    with pytest.raises(PermissionError, match="is not this learner's"):
        hub_users.ensure_user(unix, learners / "bob")
    with pytest.raises(PermissionError, match="is not this learner's"):
        hub_users.ensure_user("root", learners / "root")


@needs_root
def test_a_removed_learners_uid_is_not_handed_on_while_their_home_is_there(learners, tmp_path, monkeypatch):
    monkeypatch.setattr(hub_users, "UIDS_GIVEN", tmp_path / "uids-given")
    old = hub_users.ensure_user("hubi-old", learners / "ada")
    os.chown(learners / "ada", old.pw_uid, old.pw_gid)
    subprocess.run(["userdel", "hubi-old"], check=True, capture_output=True)
    (tmp_path / "other-class").mkdir()
    for unix, home in (("hubi-new", learners / "new"), ("hubi-class-b", tmp_path / "other-class" / "bea")):
        assert hub_users.ensure_user(unix, home).pw_uid != old.pw_uid, f"{unix} got the uid of a kept home"
    assert hub_users.given_uids() == {old.pw_uid: str(learners / "ada")}   # no other home
    assert (tmp_path / "uids-given").stat().st_mode & 0o777 == 0o600
    with open(tmp_path / "uids-given", "a") as ledger:
        ledger.write("\n# edited by hand\nnot-a-uid /\n")                       # passed over, not a crash
    assert hub_users.given_uids() == {old.pw_uid: str(learners / "ada")}


# ----- the login limit -----

PROXY_UID, LEARNER_UID = 0, 990


def request(headers=(), uid=PROXY_UID):
    """A request whose connection was opened by a process of `uid`."""
    held = HTTPHeaders()
    for key, value in headers:
        held.add(key, value)
    return SimpleNamespace(headers=held, remote_ip="127.0.0.1", uid=uid)


def address(req, trusted=()):
    return client_address(req, PROXY_UID, trusted, owner=lambda r: r.uid)


def test_only_the_class_proxys_connections_carry_an_address():
    # the proxy's and a learner's connections: test_no_header_a_client_sends_chooses_its_address
    assert address(request([("X-Forwarded-For", "203.0.113.7")], uid=None)) == "local"
    assert client_address(request([("X-Forwarded-For", "1.2.3.4")]), None, owner=lambda r: r.uid) == "local"
    # behind a reverse proxy the teacher names, the hop before it
    behind = [("X-Forwarded-For", "10.1.1.1, 198.51.100.4, 127.0.0.1")]
    assert address(request(behind), ["127.0.0.1"]) == "198.51.100.4"
    assert address(request([("X-Forwarded-For", "evil, 10.0.0.5")]), ["10.0.0.5"]) == "10.0.0.5"   # text: no key


header_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60).map(str.strip)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["X-Real-Ip", "X-Forwarded-For", "Forwarded", "X-Client-Ip",
                                           "True-Client-Ip", "X-Class-Proxy"]), header_text), max_size=8),
       st.sampled_from(["203.0.113.7", "198.51.100.4"]))
@example([], "203.0.113.7")
@example([("X-Real-Ip", "10.9.9.9"), ("X-Forwarded-For", "10.1.1.1")], "203.0.113.7")     # X-Real-Ip never read
def test_no_header_a_client_sends_chooses_its_address(sent, seen):
    # the class's proxy appends the address it saw to X-Forwarded-For, on a connection of its own uid
    forwarded = [v for k, v in sent if k == "X-Forwarded-For"]
    proxied = [(k, v) for k, v in sent if k != "X-Forwarded-For"] + [("X-Forwarded-For", ", ".join([*forwarded, seen]))]
    assert address(request(proxied)) == seen
    assert address(request(sent, uid=LEARNER_UID)) == "local"       # straight to the hub's port: no address at all


def authenticator(per_address=12):
    return ClassPassword(user_password="the-class-password", proxy_uid=PROXY_UID, failed_logins_per_address=per_address,
                         allow_all=True)


def login(auth, name, password, where="203.0.113.7", extra=(), uid=PROXY_UID):
    """The name, None (a wrong password), or (429, why)."""
    handler = SimpleNamespace(request=request([*extra, ("X-Forwarded-For", where)], uid))
    auth.address = lambda handler: address(handler.request)
    try:
        user = asyncio.run(auth.get_authenticated_user(handler, {"username": name, "password": password}))
        return user["name"] if isinstance(user, dict) else user
    except HTTPError as error:
        return error.status_code, error.log_message


def test_no_ones_typos_or_guesses_lock_out_a_learner_with_the_right_password():
    """A whole class behind one address mistyping 5 times each; someone guessing as bea."""
    auth = authenticator(per_address=hub_spawner.FAILED_LOGINS * 21)
    for classmate in range(20):
        for _ in range(hub_spawner.FAILED_LOGINS):
            login(auth, f"learner{classmate}", "typo")
    assert login(auth, "ada", "the-class-password") == "ada"
    assert login(auth, "learner0", "the-class-password") == "learner0"     # the one who mistyped, too
    assert [login(auth, "bea", "guess", where="198.51.100.66") for _ in range(20)] == [None] * 20
    assert login(auth, "bea", "the-class-password") == "bea"


def test_failures_are_forgotten_after_the_window():
    failures = hub_spawner.Failures(limit=2, window=60)
    now = time.monotonic()
    failures.add("k", now - 61)
    failures.add("k", now - 1)
    assert failures.wait("k", now) == 0
    failures.add("k", now)
    assert 0 < failures.wait("k", now) <= 60
    assert failures.wait("k", now + 61) == 0 and "k" not in failures.seen


# ----- a kernel stopped at the memory limit is named as such -----

@pytest.mark.parametrize("events, limit", [("memory.events", "memory.max"),
                                           ("memory.oom_control", "memory.limit_in_bytes")], ids=["v2", "v1"])
def test_the_next_kernel_to_run_a_cell_after_a_memory_kill_says_which_limit_once(tmp_path, capsys, events, limit):
    """A kernel restarted before its first cell leaves the notice to the next; no limit, nothing to tell."""
    from IPython.core.events import EventManager, available_events

    from classroom import hub_kernel

    def kernel():
        shell = SimpleNamespace(events=EventManager(None, available_events))
        hub_kernel.install(shell, group, seen)
        return shell.events

    def said():
        return capsys.readouterr().err.count("reached your memory limit of 1.5 GB")

    group, seen = tmp_path / "group", tmp_path / "home" / "seen"
    group.mkdir()
    (group / limit).write_text("1500000000\n")
    (group / events).write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    kernel().trigger("pre_run_cell", None)
    assert said() == 0                                                # the first kernel: nothing happened
    (group / events).write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    kernel()                                                          # restarted again before a cell ran
    running = kernel()
    running.trigger("pre_run_cell", None)
    running.trigger("pre_run_cell", None)
    assert said() == 1
    kernel().trigger("pre_run_cell", None)
    assert said() == 0                                                # the next kernel after it: said
    (group / limit).write_text("max\n")
    (group / events).write_text("oom_kill 2\n")
    kernel().trigger("pre_run_cell", None)
    assert "memory limit" not in capsys.readouterr().err


# ----- make hub STOP=1 finds every process of the class -----

RESPAWN = textwrap.dedent("""
    import os, signal, sys, time
    def again(*_):
        if os.fork() == 0:             # told to stop, it starts another of itself
            time.sleep(600)
    signal.signal(signal.SIGTERM, again)
    if len(sys.argv) > 1:
        os.setresuid(int(sys.argv[1]), 0, 0)     # a setuid program's view: the learner's real uid, root's effective
        os.chdir("/")
    time.sleep(600)
""")


@needs_root
def test_stop_finds_a_process_that_forks_when_told_to_stop_and_one_running_setuid(learners):
    entry = hub_users.ensure_user("hubi-stop", learners / "ada")
    unisolated_server = {**os.environ, "JUPYTERHUB_USER": "ada"}     # as the teacher, started by a hub
    started = [subprocess.Popen([sys.executable, "-c", RESPAWN], cwd=learners / "ada", env=unisolated_server),
               subprocess.Popen([sys.executable, "-c", RESPAWN, str(entry.pw_uid)], cwd="/")]
    teachers_shell = subprocess.Popen(["sleep", "60"], cwd=learners / "ada")      # looking at ada's work
    try:
        time.sleep(1)
        assert {p.pid for p in started} <= set(hub_users.class_processes(learners))
        assert teachers_shell.pid not in hub_users.class_processes(learners)
        hub_users.stop_all(lambda: hub_users.class_processes(learners))
        for process in started:
            process.wait(timeout=10)
        assert hub_users.class_processes(learners) == []
        assert teachers_shell.poll() is None, "make hub STOP=1 ended the teacher's own process"
    finally:
        teachers_shell.kill()
        teachers_shell.wait()


# forks a child that goes on, and exits, every 20 ms: each one is seen, none lives long
FORKER = "import os, time\nwhile True:\n    if os.fork():\n        os._exit(0)\n    time.sleep(0.02)\n"


@needs_root
def test_stop_ends_a_learners_process_that_forks_and_exits_in_a_loop(learners):
    """Kills by id trail it; ending the learner's user at once (kill(-1) as that user) does not."""
    entry = hub_users.ensure_user("hubi-forker", learners / "ada")

    def as_learner():
        os.setgroups([])
        os.setresgid(entry.pw_gid, entry.pw_gid, entry.pw_gid)
        os.setresuid(entry.pw_uid, entry.pw_uid, entry.pw_uid)
    subprocess.Popen([sys.executable, "-c", FORKER], cwd="/", preexec_fn=as_learner)  # noqa: PLW1509
    # a scan of /proc can miss a process that lives 20 ms: look again
    until(lambda: hub_users.user_processes(entry.pw_uid), bool, 20, "the forker is not running")
    hub_users.end_class(learners)
    seen = [hub_users.user_processes(entry.pw_uid) for _ in range(20) if not time.sleep(0.05)]
    assert seen == [[]] * 20, seen


def tcp_line(local, remote, state, uid):
    return f"   0: {local} {remote} {state} 00000000:00000000 00:00000000 00000000 {uid:>5} 0 123 1 0 20 4 30 10 -1"


def test_the_proxys_uid_is_believed_only_on_the_exact_live_connection(tmp_path):
    with socket.socket() as server:                 # from the kernel's own table
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()):
            accepted, _ = server.accept()
            with accepted:
                assert socket_owner(accepted.getpeername(), accepted.getsockname()) == os.geteuid()
                assert socket_owner(("127.0.0.1", 1), accepted.getsockname()) is None
    head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
    peer, hub = ("127.0.0.1", 40000), ("127.0.0.1", 8081)
    tcp = tmp_path / "tcp"
    here, there = "0100007F:9C40", "0100007F:1F91"
    tcp.write_text("\n".join([head,
                              tcp_line(here, there, "06", 0),                      # TIME_WAIT, root's
                              tcp_line("0300007F:9C40", there, "01", 0),           # 127.0.0.3, same ports
                              tcp_line(there, here, "01", 0),                      # the hub's own accepted end
                              tcp_line(here, there, "01", LEARNER_UID)]) + "\n")   # the live connection
    assert socket_owner(peer, hub, str(tcp)) == LEARNER_UID
    assert socket_owner(("127.0.0.2", 40000), hub, str(tcp)) is None


def test_a_hub_kernel_offers_no_debugger(tmp_path):
    """With the start-up file the learner's server writes (a debugger listens on loopback for anyone)."""
    from jupyter_client.manager import start_new_kernel

    from classroom import hub_kernel
    hub_kernel.write_startup(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path), "IPYTHONDIR": str(tmp_path / ".ipython")}
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        features = client.kernel_info(reply=True, timeout=60)["content"].get("supported_features", [])
        assert "debugger" not in features
        before = {c.laddr.port for c in psutil.Process(manager.provisioner.pid).net_connections()}
        client.control_channel.send(client.session.msg("debug_request", {"type": "request", "seq": 1,
                                                                          "command": "attach", "arguments": {}}))
        time.sleep(2)
        after = {c.laddr.port for c in psutil.Process(manager.provisioner.pid).net_connections()}
        assert after <= before, "a debugger port was opened"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@needs_root
def test_a_learner_back_after_their_user_was_removed_gets_their_files_back(tmp_path):
    home, outside = tmp_path / "ada", tmp_path / "outside"
    (home / "my-notebooks").mkdir(parents=True)
    (home / "my-notebooks" / "01.ipynb").write_text("{}")
    outside.write_text("not the learner's")
    (home / "link").symlink_to(outside)
    paths = (home, home / "my-notebooks", home / "my-notebooks" / "01.ipynb", home / "link")
    for path in paths:
        os.chown(path, 40001, 40001, follow_symlinks=False)
    new = SimpleNamespace(pw_uid=40002, pw_gid=40002)
    hub_users.give_back(home, new)
    assert {os.lstat(p).st_uid for p in paths} == {40002}
    assert outside.stat().st_uid == 0


@needs_root
def test_a_learners_processes_are_killed_though_the_learner_cannot_reach_the_classs_python(tmp_path, monkeypatch):
    """make hub STOP=1 after the venv moved under a folder of root's alone: kill_user runs no program as the learner."""
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    monkeypatch.setattr(sys, "executable", str(closed / "python"))
    uid = 40_000 + os.getpid() % 20_000
    sleeper = subprocess.Popen(["sleep", "60"], user=uid)
    try:
        assert sleeper.pid in hub_users.kill_user(uid)
        assert sleeper.wait(timeout=10) == -9
    finally:
        sleeper.kill()
