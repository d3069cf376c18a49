"""Talking to servers on this machine's loopback: a free port to start one
on, and a JSON request with a token. The class hub (classroom/) and
the test kit's JupyterLab (tools/testkit/browser.py) both use them."""

import json
import socket
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rest(url, token, method="GET"):
    """The JSON answer of a Jupyter server or hub at `url`, asked with `token`
    (None when the answer has no body)."""
    request = urllib.request.Request(url, method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        body = reply.read()
    return json.loads(body) if body else None
