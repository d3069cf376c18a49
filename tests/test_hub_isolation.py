"""What keeps one learner of `make hub` from another, piece by piece
(tools/classroom/hub_users.py, hub_spawner.py): the isolation check the hub
itself runs (`missing`), proven to pass here and to name the cause when the
mounts break; one Unix user per learner name, for every name (generated);
a removed learner's uid not handed on while their home is there; a private
/tmp and /var/tmp wherever the checkout lies; and the login limit, whose
address no header a client sets can choose (a corpus of hostile headers and
generated ones). tests/test_hub_command.py drives `make hub` itself."""

import asyncio
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tornado.httputil import HTTPHeaders
from tornado.web import HTTPError

from tools.classroom import hub_spawner, hub_users
from tools.classroom.hub_spawner import PROXY_HEADER, ClassPassword, client_address

ROOT = Path(__file__).resolve().parent.parent
AS_ROOT = os.geteuid() == 0 and sys.platform.startswith("linux")
needs_root = pytest.mark.skipif(not AS_ROOT and os.environ.get("CI") != "true",
                                reason="the mounts and users of make hub need root on Linux")
SECRET = "s3cret-of-the-class-proxy"


# ----- the isolation check make hub runs -----

@needs_root
def test_the_hubs_own_check_finds_isolation_possible_here():
    learners = Path(tempfile.mkdtemp(prefix="hub-learners-"))
    try:
        learners.chmod(0o711)
        assert hub_users.missing(hub_users.class_paths(learners)) is None
        assert hub_users.missing() is None          # with nothing to keep, as the old call made it
    finally:
        learners.rmdir()


@needs_root
def test_the_check_names_the_cause_when_a_mount_fails(monkeypatch):
    monkeypatch.setattr(hub_users, "PRIVATE_TMP", "size=not-a-size")
    said = hub_users.missing()
    assert said.startswith("this machine does not let root give each learner a private /proc and /tmp")
    assert "mount tmpfs /tmp: Invalid argument" in said


@needs_root
def test_the_check_names_a_folder_learners_cannot_reach():
    base = Path(tempfile.mkdtemp(prefix="private-home-"))
    base.chmod(0o755)
    closed = base / "home" / "teacher"
    (closed / "env" / "bin").mkdir(parents=True)
    (closed / "env" / "bin" / "python").write_text("")
    closed.chmod(0o700)
    said = hub_users.missing([closed / "env" / "bin" / "python"])
    assert f"cannot reach {closed / 'env' / 'bin' / 'python'}: {closed} is closed to other users (mode 0700)" in said
    assert "make hub PYTHON=/usr/bin/python3" in said
    closed.chmod(0o755)
    assert hub_users.missing([closed / "env" / "bin" / "python"]) is None     # the file itself is bound back
    shutil.rmtree(base)


# ----- one Unix user per learner name -----

names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=400, deadline=None)
@given(st.lists(names, min_size=2, max_size=30, unique=True))
def test_no_two_learner_names_share_a_unix_user(learners):
    users = [hub_users.unix_name(name) for name in learners]
    assert len(set(users)) == len(users), dict(zip(learners, users, strict=True))
    for user in users:
        assert len(user) <= 32 and user.isascii() and not user[len(hub_users.PREFIX):].startswith("-")


@pytest.mark.parametrize("one, other", [("c5.bea", "c5bea-f4932269"), ("ada_", "ada"), ("Ada", "ada"),
                                        ("ada", "ada\u200b"), ("zoë", "zo"), ("a" * 25, "a" * 26)])
def test_names_the_old_mapping_let_share_a_user_now_differ(one, other):
    assert hub_users.unix_name(one) != hub_users.unix_name(other)


@needs_root
def test_a_user_of_that_name_that_is_not_this_learners_is_refused(tmp_path):
    learners = tmp_path / "learners"
    learners.mkdir()
    unix = "hubi-collide"
    try:
        hub_users.ensure_user(unix, learners / "ada")
        assert hub_users.ensure_user(unix, learners / "ada").pw_name == unix      # the same learner again
        with pytest.raises(hub_users.Collision, match="is not this learner's"):
            hub_users.ensure_user(unix, learners / "bob")
        with pytest.raises(hub_users.Collision, match="is not this learner's"):
            hub_users.ensure_user("root", learners / "root")
    finally:
        hub_users.remove_users("hubi-")


@needs_root
def test_a_removed_learners_uid_is_not_handed_on_while_their_home_is_there(tmp_path):
    learners = tmp_path / "learners"
    (learners / "old").mkdir(parents=True)
    try:
        old = hub_users.ensure_user("hubi-old", learners / "old")
        os.chown(learners / "old", old.pw_uid, old.pw_gid)
        subprocess.run(["userdel", "hubi-old"], check=True, capture_output=True)
        new = hub_users.ensure_user("hubi-new", learners / "new")
        assert new.pw_uid != old.pw_uid, "the new learner was given the uid that owns the old learner's home"
    finally:
        hub_users.remove_users("hubi-")


# ----- a private /tmp and /var/tmp wherever the checkout lies -----

SEE = textwrap.dedent("""
    import os, sys
    from tools.classroom import hub_users
    keep, marker = sys.argv[1], sys.argv[2]
    hub_users.private_mounts([keep])
    print(os.path.exists(os.path.join(keep, "mine")), os.path.exists(marker),
          os.path.exists("/var/tmp/" + os.path.basename(marker)), sorted(os.listdir("/tmp")) == [keep.split("/")[2]])
""")


@needs_root
def test_tmp_is_private_even_when_the_class_lies_under_it(tmp_path):
    keep = Path(tempfile.mkdtemp(prefix="class-under-tmp-"))
    marker = Path(tempfile.mkstemp(prefix="machine-tmp-")[1])
    var_marker = Path("/var/tmp") / marker.name
    var_marker.write_text("the machine's /var/tmp")
    (keep / "mine").write_text("the learner's home")
    try:
        done = subprocess.run([sys.executable, "-c", SEE, str(keep), str(marker)], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        # the kept folder is still there; the machine's /tmp and /var/tmp files are not; /tmp holds only the path
        assert done.stdout.split() == ["True", "False", "False", "True"], done.stdout
    finally:
        (keep / "mine").unlink()
        keep.rmdir()
        marker.unlink()
        var_marker.unlink()


# ----- the login limit -----

def request(headers=()):
    held = HTTPHeaders()
    for key, value in headers:
        held.add(key, value)
    return SimpleNamespace(headers=held, remote_ip="127.0.0.1")


def test_only_the_class_proxy_vouches_for_an_address():
    via_proxy = [(PROXY_HEADER, SECRET), ("X-Forwarded-For", "203.0.113.7")]
    assert client_address(request(via_proxy), SECRET) == "203.0.113.7"
    assert client_address(request([("X-Forwarded-For", "203.0.113.7")]), SECRET) == "local"
    assert client_address(request([(PROXY_HEADER, "guess"), ("X-Forwarded-For", "203.0.113.7")]), SECRET) == "local"
    assert client_address(request(via_proxy), "") == "local"          # a hub with no secret trusts no header
    # a client's own X-Forwarded-For entries come before the one the proxy appends; X-Real-Ip is never read
    spoofed = [(PROXY_HEADER, SECRET), ("X-Real-Ip", "10.9.9.9"), ("X-Forwarded-For", "10.1.1.1, 203.0.113.7")]
    assert client_address(request(spoofed), SECRET) == "203.0.113.7"
    # behind a reverse proxy the teacher names, the hop before it
    behind = [(PROXY_HEADER, SECRET), ("X-Forwarded-For", "10.1.1.1, 198.51.100.4, 127.0.0.1")]
    assert client_address(request(behind), SECRET, ["127.0.0.1"]) == "198.51.100.4"


header_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60).map(str.strip)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["X-Real-Ip", "X-Forwarded-For", PROXY_HEADER, "Forwarded",
                                           "X-Client-Ip", "True-Client-Ip"]), header_text), max_size=8),
       st.sampled_from(["203.0.113.7", "198.51.100.4"]))
def test_no_header_a_client_sends_chooses_its_address(sent, seen):
    """What a client sends, followed by what the class's proxy sets: its
    secret (overwriting the client's) and the address it saw, appended."""
    theirs = [(k, v) for k, v in sent if k.lower() != PROXY_HEADER.lower()]
    forwarded = [v for k, v in theirs if k == "X-Forwarded-For"]
    proxied = [(k, v) for k, v in theirs if k != "X-Forwarded-For"] + [
        ("X-Forwarded-For", ", ".join([*forwarded, seen])), (PROXY_HEADER, SECRET)]
    assert client_address(request(proxied), SECRET) == seen
    assume(SECRET not in (v.strip() for _, v in sent))
    assert client_address(request(sent), SECRET) == "local"          # straight to the hub's port: no address at all


def authenticator(per_address=12):
    return ClassPassword(user_password="the-class-password", proxy_secret=SECRET, failed_logins_per_address=per_address)


def login(auth, name, password, address="203.0.113.7", extra=()):
    """What the hub answers a login that came through the class's proxy from
    `address`: the name, None (a wrong password), or (429, why)."""
    handler = SimpleNamespace(request=request([(PROXY_HEADER, SECRET), *extra, ("X-Forwarded-For", address)]))
    try:
        user = asyncio.run(auth.authenticate(handler, {"username": name, "password": password}))
        return user["name"] if isinstance(user, dict) else user
    except HTTPError as error:
        return error.status_code, error.log_message


def test_a_classmates_typos_never_lock_out_a_learner_with_the_right_password():
    auth = authenticator(per_address=hub_spawner.FAILED_LOGINS * 21)
    for classmate in range(20):                    # a whole class behind one address mistyping 5 times each
        for _ in range(hub_spawner.FAILED_LOGINS + 2):
            login(auth, f"learner{classmate}", "typo")
    assert login(auth, "learner0", "the-class-password")[0] == 429        # that name waits ...
    assert login(auth, "ada", "the-class-password") == "ada"               # ... nobody else does


def test_a_name_is_limited_and_no_header_resets_it():
    auth = authenticator()
    answers = [login(auth, "mallory", "guess") for _ in range(hub_spawner.FAILED_LOGINS)]
    assert answers == [None] * hub_spawner.FAILED_LOGINS
    for extra, address in [((), "203.0.113.7"), ((("X-Real-Ip", "10.0.0.99"),), "203.0.113.7"),
                           ((), "198.51.100.200"), ((("X-Forwarded-For", "10.0.0.1"),), "198.51.100.201")]:
        status, message = login(auth, "mallory", "the-class-password", address, extra)
        assert status == 429 and "for the name 'mallory'" in message


def test_an_address_is_limited_across_names_and_no_header_resets_it():
    auth = authenticator(per_address=12)
    for n in range(12):
        assert login(auth, f"guess{n}", "wrong") is None
    status, message = login(auth, "fresh", "the-class-password")
    assert status == 429 and "from your address" in message
    spoof = (("X-Real-Ip", "10.0.0.99"), ("X-Forwarded-For", "10.0.0.98"))
    assert login(auth, "fresh", "the-class-password", extra=spoof)[0] == 429
    assert login(auth, "fresh", "the-class-password", address="198.51.100.9") == "fresh"   # another address


def test_failures_are_forgotten_after_the_window():
    failures = hub_spawner.Failures(limit=2, window=60)
    now = time.monotonic()
    failures.add("k", now - 61)
    failures.add("k", now - 1)
    assert failures.wait("k", now) == 0
    failures.add("k", now)
    assert 0 < failures.wait("k", now) <= 60
    assert failures.wait("k", now + 61) == 0 and "k" not in failures.seen


def test_the_teachers_name_needs_no_login_terminal():
    from tools.classroom.hub import teacher
    done = subprocess.run([sys.executable, "-c", "from tools.classroom.hub import teacher; print(teacher())"],
                          cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, start_new_session=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == pwd.getpwuid(os.geteuid()).pw_name == teacher()


# ----- a kernel stopped at the memory limit is named as such -----

@pytest.mark.parametrize("events, limit", [("memory.events", "memory.max"),
                                           ("memory.oom_control", "memory.limit_in_bytes")], ids=["v2", "v1"])
def test_the_next_kernel_after_a_memory_kill_says_which_limit(tmp_path, events, limit):
    from tools.runtime import limit_notice
    group, seen = tmp_path / "group", tmp_path / "home" / "seen"
    group.mkdir()
    (group / limit).write_text("1500000000\n")
    (group / events).write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    assert limit_notice.pending(group, seen) is None                    # the first kernel: nothing happened
    (group / events).write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    said = limit_notice.pending(group, seen)
    assert said and "reached your memory limit of 1.5 GB" in said and "Shut Down Kernel" in said
    assert limit_notice.pending(group, seen) is None                    # said once
    (group / limit).write_text("max\n")
    (group / events).write_text("oom_kill 2\n")
    assert limit_notice.pending(group, seen) is None                    # no limit, nothing to tell


def test_the_memory_cgroup_is_found_in_either_layout(tmp_path):
    from tools.runtime import limit_notice
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    v1.write_text("12:pids:/class/hub-ada\n9:memory:/class/hub-ada\n1:name=systemd:/x\n")
    v2.write_text("0::/class/hub-ada\n")
    assert limit_notice.memory_folder(Path("/cg"), v1) == Path("/cg/memory/class/hub-ada")
    assert limit_notice.memory_folder(Path("/cg"), v2) == Path("/cg/class/hub-ada")
    assert limit_notice.memory_folder(Path("/cg"), tmp_path / "missing") is None
