"""`make lab`'s server: loopback only, and a request without the token is refused."""

import urllib.error
import urllib.request

import psutil
import pytest
from tools.browser import serve, stop
from tools.lab import ROOT, lab_argv


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    proc, info = serve(ROOT, tmp_path_factory.mktemp("runtime"))
    try:
        yield info["port"], info, proc
    finally:
        stop(proc)


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
    assert info["root_dir"] == str(ROOT)
    assert _status(f"http://127.0.0.1:{port}/lab/tree/notebooks/00-index.ipynb?token={info['token']}") == 200
    assert lab_argv()[-1] == "--LabApp.default_url=/lab/tree/notebooks/00-index.ipynb"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/?token={info['token']}", timeout=30) as reply:
        assert reply.url.split("?")[0].endswith("/lab/tree/notebooks/00-index.ipynb")
