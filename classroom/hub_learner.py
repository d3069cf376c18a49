"""A simulated learner on the class hub, for classroom/load.py and the tests:
logs in through the login form, starts a server, opens a notebook, runs its
cells over the kernel's websocket as Run All does, and changes its widgets
through the ipywidgets comm protocol, timing each redraw. Every wait is bounded."""

import contextlib
import json
import math
import queue
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone

import nbformat
import requests
import websocket
from jupyter_server.services.kernels.connection.base import deserialize_binary_message

from tools.notebooks import RAISES

WAIT = 300                 # seconds: the longest any one step may take


class Failed(RuntimeError):
    """A step of a learner's session did not succeed."""




@dataclass
class Learner:
    hub: str
    name: str
    password: str
    http: requests.Session = field(default_factory=requests.Session)

    def login(self):
        self.http.get(f"{self.hub}/hub/login", timeout=WAIT).raise_for_status()
        # the hub's own _xsrf cookie (its path /hub/): a learner who has opened their server holds that server's too
        form = {"username": self.name, "password": self.password, "_xsrf": self.http.cookies.get("_xsrf", path="/hub/")}
        reply = self.http.post(f"{self.hub}/hub/login", data=form, allow_redirects=False, timeout=WAIT)
        if reply.status_code != 302:
            raise Failed(f"{self.name}: login answered {reply.status_code}")

    def start(self, timeout=WAIT):
        """Start the server as the spawn page does, until ready; returns the seconds it took."""
        start = time.monotonic()
        reply = self.http.get(f"{self.hub}/hub/spawn", allow_redirects=False, timeout=WAIT)
        if reply.status_code not in (200, 302):
            raise Failed(f"{self.name}: spawn answered {reply.status_code}: {reply.text[:200]}")
        progress = f"{self.hub}/hub/api/users/{self.name}/server/progress"
        with self.http.get(progress, stream=True, timeout=timeout) as events:
            for line in events.iter_lines():
                event = json.loads(line[5:]) if line.startswith(b"data:") else {}
                if event.get("ready"):
                    return time.monotonic() - start
                if event.get("failed") or time.monotonic() - start > timeout:
                    raise Failed(f"{self.name}: server start failed: {event.get('message', 'timed out')}")
        raise Failed(f"{self.name}: the progress stream ended before the server was ready")

    def enter(self):
        """Open JupyterLab's page: the hub's OAuth, then the server's cookies."""
        reply = self.http.get(self.server_url("lab"), timeout=WAIT)
        if reply.status_code != 200 or not self.xsrf():
            raise Failed(f"{self.name}: JupyterLab page answered {reply.status_code}")

    def server_url(self, path):
        return f"{self.hub}/user/{self.name}/{path}"

    def xsrf(self):
        return self.http.cookies.get("_xsrf", path=f"/user/{self.name}/")

    def api(self, method, path, body=None):
        reply = self.http.request(method, self.server_url(f"api/{path}"), json=body, timeout=WAIT,
                                  headers={"X-XSRFToken": self.xsrf() or ""})
        if reply.status_code >= 400:
            raise Failed(f"{self.name}: {method} api/{path} answered {reply.status_code}")
        return reply.json() if reply.content else None

    def open(self, path):
        session = self.api("POST", "sessions", {"path": path, "name": path, "type": "notebook",
                                                "kernel": {"name": "python3"}})
        model = self.api("GET", f"contents/{path}?content=1")
        return Notebook(self, session, nbformat.from_dict(model["content"]))

    def stop(self):
        self.http.delete(f"{self.hub}/hub/api/users/{self.name}/server", timeout=WAIT,
                         headers={"X-XSRFToken": self.http.cookies.get("_xsrf", path="/hub/") or ""})


def widget_change(state):
    """A change of a control's state that asks for a new drawing (a slider's next
    step, a checkbox flipped, a list's next option); None for a widget that is not a control."""
    kind = state.get("_model_name")
    if kind == "CheckboxModel":
        return {"value": not state["value"]}
    if kind in ("IntSliderModel", "FloatSliderModel"):
        up = state["value"] + state["step"]
        return {"value": up if up <= state["max"] else state["value"] - state["step"]}
    if kind == "FloatLogSliderModel":
        exponent = math.log(state["value"], state["base"]) + state["step"]
        return {"value": state["base"] ** (exponent if exponent <= state["max"] else exponent - 2 * state["step"])}
    labels = state.get("_options_labels") or []
    if kind in ("DropdownModel", "ToggleButtonsModel", "RadioButtonsModel") and len(labels) > 1:
        return {"index": ((state.get("index") or 0) + 1) % len(labels)}
    return None


class Notebook:
    """An open notebook: its session, its kernel's websocket, its widgets. A thread
    reads the websocket all the time, as a page does, so the server's pings are
    answered (jupyter_server drops a websocket whose pings go unanswered 90 s);
    `receive` takes what it read, within its deadline."""

    def __init__(self, learner, session, nb):
        self.learner, self.session, self.nb = learner, session, nb
        self.ws = None
        self.connect()
        self.models = {}      # comm id -> the widget's state, from the kernel's comm_open

    def connect(self):
        self.disconnect()
        learner = self.learner
        url = learner.server_url(f"api/kernels/{self.session['kernel']['id']}/channels?session_id={uuid.uuid4().hex}")
        cookies = "; ".join(f"{c.name}={c.value}" for c in learner.http.cookies)
        self.ws = websocket.create_connection(url.replace("http", "ws", 1), cookie=cookies, timeout=WAIT)
        self.inbox = queue.SimpleQueue()
        self.reader = threading.Thread(target=_read, args=(self.ws, self.inbox), daemon=True,
                                       name=f"websocket {self.learner.name} {self.session['id'][:8]}")
        self.reader.start()

    def disconnect(self):
        """Close the websocket as a closed tab does (1001), the session and kernel left running.
        The socket is shut, which ends the reader at once (websocket-client's close() waits
        for the server's next ping)."""
        ws = self.ws
        if ws is None or ws.sock is None:
            return
        with contextlib.suppress(Exception):
            ws.send_close(websocket.STATUS_GOING_AWAY)
        with contextlib.suppress(OSError):
            ws.sock.shutdown(socket.SHUT_RDWR)
        self.reader.join(timeout=10)
        ws.shutdown()

    def ready(self, heard, timeout=10):
        """Whether a restarted kernel answers on a new websocket as a page asks (kernel_info, its
        status for it on iopub); `heard` gets what cells printed meanwhile."""
        self.connect()
        msg_id, deadline = self.send("kernel_info_request", {}), time.monotonic() + timeout
        with contextlib.suppress(Exception):      # the websocket closed, or timed out at the deadline
            while True:
                message = self.receive(deadline)
                if message["header"]["msg_type"] == "stream":
                    heard.append(message["content"]["text"])
                elif message["header"]["msg_type"] == "status" and message["parent_header"].get("msg_id") == msg_id:
                    return True
        return False

    def send(self, msg_type, content, channel="shell"):
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": msg_type, "session": self.session["id"], "username": "learner",
                  "date": datetime.now(timezone.utc).isoformat(), "version": "5.3"}
        self.ws.send(json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": content,
                                 "channel": channel, "buffers": []}))
        return msg_id

    def receive(self, deadline):
        """The next message; WebSocketTimeoutException past `deadline` (monotonic), or
        the error that ended the websocket."""
        try:
            frame = self.inbox.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise websocket.WebSocketTimeoutException(f"{self.learner.name}: no message from the kernel in time") \
                from None
        if isinstance(frame, Exception):
            self.inbox.put(frame)             # every later receive fails the same way
            raise frame
        message = deserialize_binary_message(frame) if isinstance(frame, bytes) else json.loads(frame)   # buffers
        if message.get("msg_type", message["header"]["msg_type"]) == "comm_open":
            content = message["content"]
            self.models[content["comm_id"]] = content["data"].get("state", {})
        return message

    def run_all(self, timeout=WAIT):
        """Run every code cell as Run All does (all sent at once); returns (seconds,
        [untagged cells that raised])."""
        start, deadline = time.monotonic(), time.monotonic() + timeout
        pending = {}
        for number, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code":
                tagged = RAISES in cell.metadata.get("tags", [])
                pending[self.send("execute_request", {"code": cell.source, "silent": False, "store_history": True,
                                                      "user_expressions": {}, "allow_stdin": False,
                                                      "stop_on_error": not tagged})] = (number, tagged)
        raised = []
        while pending:
            message = self.receive(deadline)
            parent = message["parent_header"].get("msg_id")
            if message["header"]["msg_type"] == "execute_reply" and parent in pending:
                number, tagged = pending.pop(parent)
                reply = message["content"]
                if reply["status"] != "ok" and not tagged:
                    raised.append(f"cell {number}: {reply.get('ename')} {reply.get('evalue')}")
        return time.monotonic() - start, raised

    def controls(self):
        """{comm id: a change that asks for a new drawing} of the widgets."""
        return {comm_id: change for comm_id, state in self.models.items() if (change := widget_change(state))}

    def change(self, comm_id, state, timeout=60):
        """Send a widget change as the page does; the seconds from the change sent to the new drawing
        received, or None if no drawing came."""
        sent = time.time()
        msg_id = self.send("comm_msg", {"comm_id": comm_id,
                                        "data": {"method": "update", "state": state, "buffer_paths": []}})
        deadline, redraw = time.monotonic() + timeout, None
        while True:
            message = self.receive(deadline)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["header"]["msg_type"], message["content"]
            if kind == "comm_msg" and redraw is None and "value" in content["data"].get("state", {}) and \
                    self.models.get(content["comm_id"], {}).get("_model_name") in ("HTMLModel", "OutputModel"):
                redraw = time.time() - sent
            elif kind == "status" and content["execution_state"] == "idle":
                self.models[comm_id].update(state)
                return redraw

    def close(self):
        """Close the tab with kernelShutdown on: the session and its kernel end."""
        self.disconnect()
        self.learner.api("DELETE", f"sessions/{self.session['id']}")


def _read(ws, inbox):
    """Put each message of `ws` in `inbox`, then the error that ended it (reading answers pings)."""
    while True:
        try:
            frame = ws.recv()
        except websocket.WebSocketTimeoutException:
            continue                      # a quiet kernel; a closed connection raises something else
        except (websocket.WebSocketException, OSError) as error:     # closed by either side, reset or shut
            inbox.put(error)
            return
        if not ws.connected:              # the server's close frame
            inbox.put(websocket.WebSocketConnectionClosedException("the server closed the websocket"))
            return
        if frame:                         # "" stands for a frame of another kind
            inbox.put(frame)
