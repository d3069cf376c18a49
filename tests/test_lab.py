"""`make lab`'s server: loopback only, and a request without the token is refused."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import psutil
import pytest
from lab import lab_argv


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    runtime = tmp_path_factory.mktemp("runtime")
    port = _free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}
    proc = subprocess.Popen(lab_argv(port=port, open_browser=False), env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield port, _server_info(runtime, proc), proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


def _server_info(runtime, proc):
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, "jupyter lab exited early"
        found = list(runtime.glob("jpserver-*.json"))
        if found:
            return json.loads(found[0].read_text())
        time.sleep(0.5)
    raise TimeoutError("jupyter lab did not start within 90 s")


def _status(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        return err.code


def test_token_is_required(lab):
    port, info, _ = lab
    assert len(info["token"]) >= 32
    assert _status(f"http://127.0.0.1:{port}/api/contents/notebooks") == 403
    assert _status(f"http://127.0.0.1:{port}/api/contents/notebooks?token={info['token']}") == 200
    assert _status(f"http://127.0.0.1:{port}/api/contents/notebooks?token=wrong{info['token']}") == 403


def test_listens_on_loopback_only(lab):
    port, _, proc = lab
    sockets = [c for p in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
               for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN and c.laddr.port == port]
    assert sockets and {c.laddr.ip for c in sockets} == {"127.0.0.1"}


def test_opens_the_index(lab):
    port, info, _ = lab
    assert info["root_dir"] == str(lab_argv.__globals__["ROOT"])
    assert _status(f"http://127.0.0.1:{port}/lab/tree/notebooks/00-index.ipynb?token={info['token']}") == 200
    assert lab_argv()[-1] == "--LabApp.default_url=/lab/tree/notebooks/00-index.ipynb"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/?token={info['token']}", timeout=30) as reply:
        assert reply.url.split("?")[0].endswith("/lab/tree/notebooks/00-index.ipynb")
