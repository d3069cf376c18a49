"""The README's Windows route, `python -m tools.runtime.lab` in a conda environment, run here without what
Windows lacks: no os.geteuid, and an os.execv that cannot replace a process (the server runs as a child
this process waits for, Ctrl+C included)."""

import os
import subprocess
import sys

import pytest

from tools.runtime import lab


class Replaced(Exception):
    """os.execv was called: this process would have become the server."""


@pytest.mark.parametrize("euid, allowed", [(None, False), (0, True), (1000, False)])
def test_the_command_line_allows_root_only_as_root(monkeypatch, tmp_path, euid, allowed):
    """Windows has no os.geteuid (euid None)."""
    if euid is None:
        monkeypatch.delattr(os, "geteuid")
    else:
        monkeypatch.setattr(os, "geteuid", lambda: euid)
    argv = lab.lab_argv(root=tmp_path)
    assert argv[:3] == [sys.executable, "-m", "jupyterlab"] and ("--allow-root" in argv) == allowed
    assert f"--ServerApp.root_dir={tmp_path}" in argv and "--ServerApp.ip=127.0.0.1" in argv


def _no_exec(path, argv):
    raise Replaced(argv)


def test_the_server_replaces_this_process_or_on_windows_runs_as_a_child(monkeypatch):
    monkeypatch.setattr(os, "execv", _no_exec)
    with pytest.raises(Replaced):
        lab.serve([sys.executable, "-c", "pass"])
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(SystemExit) as stopped:
        lab.serve([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert stopped.value.code == 3


def test_on_windows_ctrl_c_waits_for_the_server_to_stop(monkeypatch, tmp_path):
    """Ctrl+C in the console reaches the server and this process alike: this one must go on waiting."""
    monkeypatch.setattr(sys, "platform", "win32")
    wait, interrupts = subprocess.Popen.wait, []

    def interrupted_once(server, timeout=None):
        if not interrupts:
            interrupts.append(server.pid)
            raise KeyboardInterrupt
        return wait(server, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", interrupted_once)
    finished = tmp_path / "finished"
    code = f"import pathlib, time; time.sleep(0.5); pathlib.Path({str(finished)!r}).write_text('done')"
    with pytest.raises(SystemExit) as stopped:
        lab.serve([sys.executable, "-c", code])
    assert interrupts and stopped.value.code == 0 and finished.exists()


def test_python_m_tools_lab_on_windows(monkeypatch, tmp_path):
    """The working copy made and trusted, then the server started on it, without os.geteuid."""
    monkeypatch.delattr(os, "geteuid")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(lab, "install_settings", lambda: None)      # it writes into this environment
    served = []
    monkeypatch.setattr(lab, "serve", served.append)
    copy = tmp_path / "my-notebooks"
    lab.main(["--copy", str(copy), "--no-browser"])
    assert (copy / lab.INDEX).exists() and served == [lab.lab_argv(open_browser=False, root=copy)]
