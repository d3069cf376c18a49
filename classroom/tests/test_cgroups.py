"""classroom/cgroups.py; a group holding its limits and processes on this machine: test_hub.py."""

import os
import subprocess
import sys
import time
import uuid

import pytest

from classroom import cgroups

AS_ROOT = os.geteuid() == 0 and sys.platform.startswith("linux")


def test_v2_hands_the_controllers_down_and_writes_the_limits(tmp_path):
    fake_v2 = tmp_path
    (fake_v2 / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (fake_v2 / "cgroup.subtree_control").write_text("")
    group = cgroups.Group(("class-hub-1a2b", "hub-ada"), cgroups.Limits(2 ** 30, 0.5, 64), root=fake_v2)
    assert group.v2 and group.enforced == ["memory", "cpu", "pids"]
    for folder in (fake_v2, fake_v2 / "class-hub-1a2b"):
        assert (folder / "cgroup.subtree_control").read_text() == "+memory+cpu+pids"      # one write each
    ada = fake_v2 / "class-hub-1a2b" / "hub-ada"
    assert {name: (ada / name).read_text() for name in ("memory.max", "memory.swap.max", "cpu.max", "pids.max")} == {
        "memory.max": str(2 ** 30), "memory.swap.max": "0", "cpu.max": "50000 100000", "pids.max": "64"}
    assert (fake_v2 / "class-hub-1a2b").stat().st_mode & 0o777 == 0o711       # no learner lists the others
    assert group.task_files() == [str(ada / "cgroup.procs")]
    assert cgroups.Group(("class-hub-1a2b", "hub-ada"), root=fake_v2).enforced == ["memory", "cpu", "pids"]


def test_v1_with_no_controller_mounted_makes_and_claims_nothing(tmp_path):
    group = cgroups.Group(("grade-x",), cgroups.Limits(2 ** 30), root=tmp_path)
    assert not group.v2 and group.enforced == [] and group.task_files() == []
    assert list(tmp_path.iterdir()) == [], "a controller's mount was made where there was none"


@pytest.mark.skipif(not AS_ROOT, reason="making cgroups on the machine's own hierarchy needs root on Linux")
def test_a_process_that_forks_as_it_is_killed_does_not_outlast_its_group():
    parent = f"cgroups-test-{uuid.uuid4().hex[:8]}"
    group = cgroups.Group((parent, "forker"), cgroups.Limits(300 * 2 ** 20, 1.0, 1024))
    subprocess.Popen([sys.executable, "-c", FORKER], preexec_fn=lambda: group.join(os.getpid()))  # noqa: PLW1509
    try:
        time.sleep(1)
        assert group.procs(), "the forker is not in its group"
    finally:
        cgroups.remove_tree(parent)
    assert not group.procs() and not any(folder.exists() for folder in group.folders.values())


# forks a child that goes on, and exits, again and again
FORKER = "import os, time\nwhile True:\n    if os.fork():\n        os._exit(0)\n    time.sleep(0.001)\n"
